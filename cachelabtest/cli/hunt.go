package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/fakeapi/fakeapibench"
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

type huntOptions struct {
	subject   string
	workloads int
	seed      uint64
	classes   string
	parallel  int
	out       string
	shrink    bool
	first     bool
	random    int
	lifecycle bool
	derive    bool
	order     string
	shard     string
	plansOut  string
	plans     string
}

func huntFlags() (*flag.FlagSet, *huntOptions) {
	o := &huntOptions{}
	fs := newFlagSet("hunt")
	fs.StringVar(&o.subject, "subject", "", "the subject to hunt (see cachelab list; default: bellerophon, or the one controller your own binary registers)")
	fs.IntVar(&o.workloads, "workloads", 3, "without NAME|FILE arguments: perturb the user actions of this many random plans (the plans of cachelab run --random, from --seed), their faults removed")
	fs.Uint64Var(&o.seed, "seed", 1, "the first random workload's (and --random baseline's) generator seed")
	fs.StringVar(&o.classes, "class", "", "only these classes, comma-separated ("+strings.Join(scenarios.TargetedClasses, ", ")+"; default all)")
	fs.IntVar(&o.parallel, "parallel", runtime.GOMAXPROCS(0), "runs at a time")
	fs.StringVar(&o.out, "out", "out/hunt", "folder for each targeted run's files (\"\" writes nothing)")
	fs.BoolVar(&o.shrink, "shrink", true, "shrink each failing plan (drop workload steps while it still fails)")
	fs.BoolVar(&o.first, "first", false, "stop after the batch holding the first failure (for plans and CPU to the first failure)")
	fs.BoolVar(&o.lifecycle, "lifecycle", true, "also perturb the catalogue's lifecycle stories for the subject (its scenarios whose user deletes something: finalizer-cleanup, delete-recreate-during-gap...), after the other workloads; by default only without NAME|FILE arguments and when the catalogue has some for the subject (--lifecycle=false: none)")
	fs.BoolVar(&o.derive, "derive-lifecycle", false, "also perturb a lifecycle workload derived from the first workload's fault-free reference run, for any controller: each main object (what the user made that owns what the controller made) deleted and created again under the same name, one of its children deleted, at the moments the reference shows the controller acting on them (docs/targeted-faults.md)")
	fs.StringVar(&o.order, "order", "interleaved", "the order the plans run in: interleaved (each reference moment's first plan before the repeats, the kinds of perturbation taking turns) or generation (workload by workload, class by class)")
	fs.StringVar(&o.shard, "shard", "", "run only shard `i/n` of the campaign (i counted from 0: 0/4 ... 3/4): every shard runs the references and generates the plans, then runs those whose index k has (k-1) mod n == i; default from JOB_COMPLETION_INDEX and CACHELAB_SHARDS (a Kubernetes Indexed Job), and --out DIR/shard-i; cachelab merge joins the shards' folders (their hunt.json)")
	fs.StringVar(&o.plansOut, "plans-out", "", "run the references, generate and order the targeted plans, write them to DIR/plans.json and run none: shards given --plans DIR then run exactly these plans, whatever order their own reference runs see")
	fs.StringVar(&o.plans, "plans", "", "run the plans of DIR/plans.json (written by --plans-out) instead of generating them: its subject, workloads and --derive-lifecycle; the references are run again to judge against, and must be the list's")
	fs.IntVar(&o.random, "random", 0, "also run up to N random plans (those of cachelab run --random, from --seed) until the first failure, as a baseline: plans and CPU to it, side by side")
	return fs, o
}

func huntCommand() command {
	return command{"hunt", "targeted campaign: perturb where a fault-free reference run shows the controller reading and writing (stale, unobserved, intermediate state)",
		"[NAME|FILE ...] [--subject S] [--workloads N --seed S] [--class C] [--out DIR] [--random N] [--shard i/n]",
		"cachelab hunt --subject bellerophon/lists-stale-replica --workloads 3\n  cachelab hunt time-travel-stale-replica --subject bellerophon --class stale-state\n  cachelab hunt --subject bellerophon --shard 0/2 --out out/hunt-0   # and 1/2 into out/hunt-1; then: cachelab merge out/hunt-0 out/hunt-1", huntCmd}
}

func huntCmd(env *Env, args []string) int {
	fs, o := huntFlags()
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(env, "hunt", fs, err)
	}
	if o.parallel < 1 || o.workloads < 0 || o.random < 0 {
		fmt.Fprintf(env.Stderr, "cachelab hunt: --parallel must be 1 or more, --workloads and --random 0 or more\n")
		return ExitUsage
	}
	if o.order != "interleaved" && o.order != "generation" {
		fmt.Fprintf(env.Stderr, "cachelab hunt: --order %q: want interleaved or generation\n", o.order)
		return ExitUsage
	}
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	explicitLifecycle, explicitOut := explicit["lifecycle"], explicit["out"]
	var list *lab.HuntPlanList
	if o.plans != "" {
		if list, err = plansList(o, pos, explicit); err != nil {
			fmt.Fprintf(env.Stderr, "cachelab hunt: %v\n", err)
			return ExitUsage
		}
		o.subject, o.derive = list.Subject, list.DeriveLifecycle
	}
	if o.plansOut != "" && (o.shard != "" || o.random > 0 || o.first) {
		fmt.Fprintf(env.Stderr, "cachelab hunt: --plans-out runs no targeted plan: give --shard, --random and --first to the runs of --plans DIR\n")
		return ExitUsage
	}
	shard, err := pickShard(env, o.shard)
	if err != nil {
		fmt.Fprintf(env.Stderr, "cachelab hunt: %v\n", err)
		return ExitUsage
	}
	if shard.Sharded() {
		if o.random > 0 {
			fmt.Fprintf(env.Stderr, "cachelab hunt: --random with --shard: every shard would run the same baseline; run it once, without --shard\n")
			return ExitUsage
		}
		if !explicitOut {
			// Shards on one machine do not overwrite each other's
			// hunt.json.
			o.out = fmt.Sprintf("%s/shard-%d", o.out, shard.Index)
		}
	}
	if o.subject == "" {
		if o.subject, err = defaultSubject(); err != nil {
			fmt.Fprintf(env.Stderr, "cachelab hunt: %v\n", err)
			return ExitUsage
		}
	}
	if _, ok := sim.LookupSubject(o.subject); !ok {
		fmt.Fprintf(env.Stderr, "cachelab hunt: unknown subject %q (see `%s list`)\n", o.subject, env.Prog)
		return ExitUsage
	}
	var workloads []*sim.Plan
	if list != nil {
		workloads = list.Workloads
		pos, o.workloads, o.lifecycle = nil, 0, false
	}
	for _, a := range pos {
		p, err := loadWorkload(a, o.subject)
		if err != nil {
			fmt.Fprintf(env.Stderr, "cachelab hunt: %v\n", err)
			return ExitUsage
		}
		workloads = append(workloads, p)
	}
	if len(pos) == 0 {
		for i := range o.workloads {
			p := scenarios.Random(o.seed+uint64(i), o.subject)
			workloads = append(workloads, &p)
		}
	}
	if o.lifecycle && (explicitLifecycle || len(pos) == 0) {
		lw, err := lab.LifecycleWorkloads(o.subject)
		if err != nil {
			fmt.Fprintf(env.Stderr, "cachelab hunt: %v\n", err)
			return ExitUnexpected
		}
		if len(lw) == 0 && explicitLifecycle {
			fmt.Fprintf(env.Stderr, "cachelab hunt: --lifecycle: no scenario of the catalogue names %s with a user delete\n", o.subject)
			return ExitUsage
		}
		workloads = append(workloads, lw...)
	}
	opt := lab.HuntOptions{Parallel: o.parallel, Out: o.out, Shrink: o.shrink, StopAtFirst: o.first, GenerationOrder: o.order == "generation", DeriveLifecycle: o.derive,
		Replay: func(path string) string { return env.Prog + " replay " + path }, Shard: shard, Plans: list, GenerateOnly: o.plansOut != ""}
	if o.classes != "" {
		opt.Classes = strings.Split(o.classes, ",")
	}
	host := env.Host
	if host == nil {
		host = lab.MainHost(o.parallel)
	}
	// One call of the host (a process's testing.M runs once); the
	// campaign's batches run as its subtests.
	var rep *lab.HuntReport
	_, out := host(func(t *testing.T) {
		inner := lab.TestHost(t)
		rep, err = lab.HuntPlans(inner, workloads, opt)
		if err != nil {
			return
		}
		if opt.GenerateOnly {
			if err = lab.WritePlanList(o.plansOut, rep.PlanList); err == nil {
				fmt.Fprintf(env.Stdout, "%d targeted plans of %s (digest %s, %d references run, %s CPU) written to %s; run them: %s hunt --plans %s --shard i/n --out DIR\n",
					rep.Generated, rep.Subject, lab.ShortDigest(rep.Digest), rep.ReferenceRuns, rep.CPU.Round(time.Millisecond), filepath.Join(o.plansOut, lab.PlansFile), env.Prog, o.plansOut)
			}
			return
		}
		rep.WriteTable(env.Stdout)
		if f := rep.First(); f != nil && f.Class == lab.ClassReference {
			fmt.Fprintf(env.Stdout, "targeted: first failure before any targeted plan: %s fails with no fault (the workload alone; %d references run), %s CPU\n",
				f.Plan.Name, len(rep.References), f.CPU.Round(time.Millisecond))
		} else if f != nil {
			in := ""
			if shard.Sharded() {
				in = fmt.Sprintf(" in shard %s (which holds %d of them; the shard's CPU)", shard, rep.ShardPlans)
			}
			fmt.Fprintf(env.Stdout, "targeted: first failure at plan %d of %d (%s)%s, %s CPU\n", f.Index, rep.Generated, f.Class, in, f.CPU.Round(time.Millisecond))
		} else {
			fmt.Fprintf(env.Stdout, "targeted: no failure in %d plans, %s CPU\n", len(rep.Rows), rep.CPU.Round(time.Millisecond))
		}
		if o.random > 0 {
			randomBaseline(env, inner, o)
		}
	})
	if err != nil || rep == nil {
		fmt.Fprintf(env.Stderr, "cachelab hunt: %v\n%s", err, out)
		return ExitUnexpected
	}
	if o.out != "" && !opt.GenerateOnly {
		if err := lab.WriteHunt(o.out, rep); err != nil {
			fmt.Fprintf(env.Stderr, "cachelab hunt: %v\n", err)
			return ExitUnexpected
		}
		fmt.Fprintf(env.Stdout, "hunt record: %s\n", filepath.Join(o.out, lab.HuntFile))
	}
	if len(rep.Failures()) > 0 {
		return ExitUnexpected
	}
	return ExitOK
}

// plansList reads --plans, refusing what the list fixes: workload
// arguments, --workloads, --seed, --class, --order, --lifecycle,
// --derive-lifecycle, --plans-out, and a --subject other than its own.
func plansList(o *huntOptions, pos []string, explicit map[string]bool) (*lab.HuntPlanList, error) {
	if len(pos) > 0 {
		return nil, fmt.Errorf("--plans %s: the list names its workloads; give no NAME|FILE (%s)", o.plans, strings.Join(pos, " "))
	}
	for _, f := range []string{"workloads", "seed", "class", "order", "lifecycle", "derive-lifecycle", "plans-out"} {
		if explicit[f] {
			return nil, fmt.Errorf("--plans %s: the list fixes the plans; --%s changes nothing (give it to --plans-out)", o.plans, f)
		}
	}
	list, err := lab.LoadPlanList(o.plans)
	if err != nil {
		return nil, err
	}
	if o.subject != "" && o.subject != list.Subject {
		return nil, fmt.Errorf("--plans %s holds plans of %s, not %s", o.plans, list.Subject, o.subject)
	}
	return list, nil
}

// loadWorkload reads a workload: a scenario's plan for subject, or a plan
// file (its subject replaced).
func loadWorkload(arg, subject string) (*sim.Plan, error) {
	if _, err := os.Stat(arg); err == nil {
		p, err := sim.LoadPlanFile(arg)
		if err != nil {
			return nil, err
		}
		p.Subject = subject
		return p, nil
	}
	s, err := scenarios.Get(arg)
	if err != nil {
		return nil, err
	}
	p := s.PlanFor(subject)
	return &p, nil
}

// randomBaseline runs random plans from o.seed, o.parallel at a time, until
// the batch holding the first failure, and prints plans and CPU to it.
func randomBaseline(env *Env, host lab.Host, o *huntOptions) {
	start := fakeapibench.ProcessCPU()
	for lo := 0; lo < o.random; lo += o.parallel {
		var jobs []lab.Job
		for i := lo; i < min(lo+o.parallel, o.random); i++ {
			p := scenarios.Random(o.seed+uint64(i), o.subject)
			jobs = append(jobs, lab.NewJob(&p, nil))
		}
		results, _ := lab.RunBatch(host, jobs, lab.Options{Parallel: o.parallel, DropTraces: true, Reference: true})
		for j, r := range results {
			var failed []string
			for _, v := range r.Verdicts {
				if v.Failed() && !lab.IsMeasurement(v.Invariant) {
					failed = append(failed, v.Invariant)
				}
			}
			if r.Err != nil {
				failed = append(failed, "error: "+r.Err.Error())
			}
			if len(failed) > 0 {
				fmt.Fprintf(env.Stdout, "random: first failure at plan %d (%s: %s), %s CPU\n", lo+j+1, r.Job.Plan.Name, strings.Join(failed, ","),
					(fakeapibench.ProcessCPU() - start).Round(time.Millisecond))
				return
			}
		}
	}
	fmt.Fprintf(env.Stdout, "random: no failure in %d plans, %s CPU\n", o.random, (fakeapibench.ProcessCPU() - start).Round(time.Millisecond))
}
