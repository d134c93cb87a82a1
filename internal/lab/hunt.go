package lab

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/cachelab/cachelab/fakeapi/fakeapibench"
	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// HuntOptions configures a targeted campaign (HuntPlans, Hunt). The zero
// value is the default.
type HuntOptions struct {
	// Classes keeps only these classes (scenarios.ClassStale, ...).
	// Optional; default all three.
	Classes []string
	// Parallel is how many runs go at a time. Optional; default GOMAXPROCS.
	Parallel int
	// Out, when set, is the folder where each targeted run's files (plan,
	// trace, report, verdicts) are written, under Out/<run id>.
	Out string
	// Shrink, when set, shrinks each failing plan: it drops the base
	// plan's steps one at a time (last first) and keeps each drop after
	// which the plan still fails an invariant it failed. Each try is one
	// more run.
	Shrink bool
	// StopAtFirst stops the campaign after the batch holding the first
	// failure (plans are run in the campaign's order, Parallel at a
	// time). A workload whose reference run fails with no fault is that
	// first failure: the campaign stops before any targeted plan, with
	// one row of class ClassReference.
	StopAtFirst bool
	// Targeted tunes the plans (scenarios.TargetedOptions).
	Targeted scenarios.TargetedOptions
	// GenerationOrder runs the plans in generation order: workload by
	// workload, and in each class by class (TargetedClasses), moment by
	// moment. Default: HuntOrder's (every kind of perturbation early,
	// each reference moment's first plan before the repeats).
	GenerationOrder bool
	// DeriveLifecycle adds a lifecycle workload derived from the first
	// workload's reference run that shows a main object
	// (scenarios.LifecyclePlan: for any controller, from what the
	// reference records; each object the user made that owns what the
	// controller made is deleted and created again under the same name, and
	// one child the controller made is deleted, at moments the reference
	// shows the controller acting on them). Its own reference run is run,
	// and its targeted plans join the campaign after the other workloads'.
	// Random workloads seldom delete and recreate an object a moment after
	// the controller has acted on it, and a campaign perturbs only what its
	// workloads do.
	DeriveLifecycle bool
	// Replay returns the command that replays the plan saved at a path.
	// Optional; default "cachelab replay PATH".
	Replay func(planPath string) string
	// Shard runs only one part of the campaign: every shard runs the
	// workloads' references and generates and orders the plans as the
	// whole campaign does, then runs the plans whose 1-based index k in
	// that order has (k-1) mod Count == Index, each row keeping k
	// (HuntReport.Digest tells whether two shards generated the same
	// plans; MergeHunt joins the shards). Optional; default the whole
	// campaign.
	Shard Shard
	// Plans, when set, are the campaign's plans, generated and ordered
	// once (GenerateOnly, WritePlanList): the references are run (the
	// differential oracle judges against them) but the plans are not
	// generated again, so shards run from one list cannot disagree. The
	// workloads given must be the list's, and their references the ones
	// the list was made from (an error says which differs).
	Plans *HuntPlanList
	// GenerateOnly stops the campaign after the references and the
	// ordering: HuntReport.PlanList holds the ordered plans, none is run.
	GenerateOnly bool
}

// ClassReference is the class of a HuntRow that is no targeted plan but a
// workload's fault-free reference run that fails on its own (the workload
// alone shows the bug; HuntOptions.StopAtFirst).
const ClassReference = "reference"

// HuntRow is one targeted plan of a campaign and its verdict.
type HuntRow struct {
	// Class and Perturbation say what the plan does (scenarios.Targeted).
	Class, Perturbation string
	// Plan is the plan run.
	Plan *sim.Plan
	// Verdict is "pass", "fail" (Failed names the failed invariants) or
	// "error" (the run could not be judged: Err).
	Verdict string
	Failed  []string
	Err     string
	// Reasons are the failed verdicts' reasons, one per Failed name.
	Reasons []string
	// Minimal is the shrunk plan (HuntOptions.Shrink, failures only).
	Minimal *sim.Plan
	// Dir is the run's folder (HuntOptions.Out), and Replay the command
	// that replays its plan ("" without Out).
	Dir, Replay string
	// CPU is the process CPU time spent from the campaign's start to the
	// end of this run (with Parallel 1: the CPU to this plan, the plans
	// before it and the references included; a run judged against a
	// reference of its own adds that run's CPU); Index the plan's 1-based
	// position in the order the plans ran (HuntOrder, or generation
	// order), in the whole campaign's order (a shard's rows keep theirs;
	// its CPU is the shard's).
	CPU   time.Duration
	Index int
}

// HuntReport is a targeted campaign's result.
type HuntReport struct {
	// Subject is the subject hunted.
	Subject string
	// References are the reference runs' results, one per workload.
	References []*Result
	// Rows are the targeted plans run, in generation order.
	Rows []HuntRow
	// Pruned are the perturbations not generated, with why.
	Pruned []scenarios.Pruned
	// Generated counts the targeted plans generated (Rows may hold fewer
	// with StopAtFirst).
	Generated int
	// CPU is the campaign's process CPU time (references included).
	CPU time.Duration
	// ReferenceRuns counts the workloads' fault-free reference runs (a
	// workload run again without the user steps that failed in its first
	// reference counts twice); JudgingRuns the other fault-free runs made
	// to judge targeted plans: a plan's own reference when its user steps
	// are not its workload's (a competitor's write added, a step that
	// failed in its run left out), and matches-reference's late-start,
	// settled and aligned runs.
	ReferenceRuns, JudgingRuns int
	// Lifecycle says what HuntOptions.DeriveLifecycle derived (the
	// workload it came from and each step it added), or why it derived
	// nothing.
	Lifecycle []string
	// Shard is the part of the campaign run (HuntOptions.Shard; zero: the
	// whole), ShardPlans how many of the Generated plans it holds, and
	// Digest the sha256 of the whole campaign's ordered plan list
	// (HuntDigest): shards that generated the same plans have the same
	// digest.
	Shard      Shard
	ShardPlans int
	Digest     string
	// StopAtFirst is HuntOptions.StopAtFirst: the campaign (or shard)
	// stopped after the batch holding its first failure.
	StopAtFirst bool
	// PlanList is the campaign's ordered plans (HuntOptions.GenerateOnly
	// only).
	PlanList *HuntPlanList
}

// Failures returns the rows that failed or could not be judged.
func (r *HuntReport) Failures() []HuntRow {
	var out []HuntRow
	for _, row := range r.Rows {
		if row.Verdict != "pass" {
			out = append(out, row)
		}
	}
	return out
}

// First returns the first failing row in generation order, or nil.
func (r *HuntReport) First() *HuntRow {
	for i := range r.Rows {
		if r.Rows[i].Verdict != "pass" {
			return &r.Rows[i]
		}
	}
	return nil
}

// WriteTable writes the campaign as a table: class, perturbation,
// verdict, shrunk plan, replay command; then the pruned perturbations by
// reason.
func (r *HuntReport) WriteTable(w io.Writer) {
	if r.Shard.Sharded() {
		fmt.Fprintf(w, "shard %s: %d of the campaign's %d plans (plans digest %s)\n", r.Shard, r.ShardPlans, r.Generated, ShortDigest(r.Digest))
	}
	fmt.Fprintf(w, "targeted campaign on %s: %d plans generated, %d run, %d failed, %d pruned; %d reference and %d judging runs (fault-free); %s CPU\n",
		r.Subject, r.Generated, len(r.Rows), len(r.Failures()), len(r.Pruned), r.ReferenceRuns, r.JudgingRuns, r.CPU.Round(time.Millisecond))
	var names []string
	for _, ref := range r.References {
		names = append(names, strings.TrimSuffix(ref.Job.Plan.Name, "-reference"))
	}
	fmt.Fprintf(w, "workloads: %s\n", strings.Join(names, ", "))
	for _, l := range r.Lifecycle {
		fmt.Fprintf(w, "lifecycle: %s\n", l)
	}
	for _, ref := range r.References {
		if v, failed, err := judgeHunt(ref); v != "pass" {
			// The workload alone, without a fault, shows a failure: every
			// targeted plan of it inherits it.
			fmt.Fprintf(w, "reference %s: %s %s%s (no fault: the workload alone fails)\n", ref.Job.Plan.Name, v, strings.Join(failed, ","), err)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tclass\tverdict\tperturbation\tshrunk plan\treplay")
	for _, row := range r.Rows {
		verdict := row.Verdict
		if len(row.Failed) > 0 {
			verdict += ": " + strings.Join(row.Failed, ",")
		}
		if row.Err != "" {
			verdict += ": " + FirstLineOf(row.Err)
		}
		shrunk := "-"
		if row.Minimal != nil {
			shrunk = fmt.Sprintf("%d of %d steps", len(row.Minimal.Steps), len(row.Plan.Steps))
			if row.Dir != "" {
				shrunk += " (" + filepath.Join(row.Dir, "minimal.json") + ")"
			}
		}
		replay := row.Replay
		if replay == "" {
			replay = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", row.Index, row.Class, verdict, row.Perturbation, shrunk, replay)
	}
	tw.Flush()
	for _, row := range r.Rows {
		for _, why := range row.Reasons {
			fmt.Fprintf(w, "#%d %s\n", row.Index, FirstLineOf(why))
		}
	}
	why := map[string]int{}
	var reasons []string
	for _, p := range r.Pruned {
		k := p.Class + ": " + p.Why
		if why[k] == 0 {
			reasons = append(reasons, k)
		}
		why[k]++
	}
	for _, k := range reasons {
		fmt.Fprintf(w, "pruned %d × %s\n", why[k], k)
	}
}

// HuntPlans runs the targeted campaign of each workload: its reference run
// (scenarios.ReferencePlan: the same user actions, no fault), then every
// targeted plan scenarios.TargetedPlans generates from it, under host,
// each judged by the lab's invariants and the differential oracle
// (matches-reference: its end state against the workload's reference run);
// every failed verdict but the measurements counts. The workloads' Subject
// is the subject hunted.
func HuntPlans(host Host, workloads []*sim.Plan, opt HuntOptions) (*HuntReport, error) {
	if len(workloads) == 0 {
		return nil, fmt.Errorf("hunt: no workload plan (give the user actions to perturb: a scenario, a plan file, random plans)")
	}
	for _, c := range opt.Classes {
		if !slices.Contains(scenarios.TargetedClasses, c) {
			return nil, fmt.Errorf("hunt: unknown class %q (known: %s)", c, strings.Join(scenarios.TargetedClasses, ", "))
		}
	}
	start := fakeapibench.ProcessCPU()
	rep := &HuntReport{Subject: workloads[0].Subject}
	var refJobs []Job
	for _, w := range workloads {
		if w.Subject != rep.Subject {
			return nil, fmt.Errorf("hunt: workloads of two subjects (%s, %s): hunt one subject at a time", rep.Subject, w.Subject)
		}
		ref := scenarios.ReferencePlan(w)
		if ref.Name == "" {
			ref.Name = "workload-reference"
		}
		refJobs = append(refJobs, NewJob(ref, nil))
	}
	refCPU := map[*sim.Plan]time.Duration{}
	refs, out := RunBatch(host, refJobs, Options{Parallel: opt.Parallel, OnDone: func(r *Result) {
		refCPU[r.Job.Plan] = fakeapibench.ProcessCPU() - start
	}})
	if opt.DeriveLifecycle {
		refJobs, refs, out = deriveLifecycle(host, rep, refJobs, refs, out, opt, func(r *Result) {
			refCPU[r.Job.Plan] = fakeapibench.ProcessCPU() - start
		})
	}
	rep.ReferenceRuns = len(refs)
	refJobs, refs = withoutFailedSteps(host, refJobs, refs, opt, func(r *Result) {
		refCPU[r.Job.Plan] = fakeapibench.ProcessCPU() - start
		rep.ReferenceRuns++
	})
	rep.References = refs
	var targeted []scenarios.Targeted
	// ends[i] is workload i's reference end state (nil: not comparable),
	// of[j] the workload of targeted plan j: every targeted plan's
	// reference run is its workload's (its perturbation is faults and
	// controller steps only, and makes no user step fail).
	var refTraces []*sim.Trace
	var of []int
	for i, r := range refs {
		if r.Err != nil || r.Trace == nil {
			return rep, fmt.Errorf("hunt: the reference run of workload %d (%s) failed: %v %s", i+1, refJobs[i].Plan.Name, r.Err, out)
		}
		if r.Trace.Plan == nil {
			r.Trace.Plan = refJobs[i].Plan
		}
		refTraces = append(refTraces, r.Trace)
		// The perturbation is added to the workload's user actions alone
		// (its reference plan), as Sieve perturbs a fault-free workload.
		ts, pruned := scenarios.TargetedPlans(refJobs[i].Plan, r.Trace, opt.Targeted)
		for _, t := range ts {
			if len(opt.Classes) == 0 || slices.Contains(opt.Classes, t.Class) {
				targeted = append(targeted, t)
				of = append(of, i)
			}
		}
		rep.Pruned = append(rep.Pruned, pruned...)
	}
	if !opt.GenerationOrder {
		order := huntOrder(targeted, func(i int) int { return len(refTraces[of[i]].Records) })
		t2, of2 := make([]scenarios.Targeted, len(order)), make([]int, len(order))
		for i, j := range order {
			t2[i], of2[i] = targeted[j], of[j]
		}
		targeted, of = t2, of2
	}
	if opt.Plans != nil {
		// The list's plans, not this process's: shards run from one list
		// cannot disagree.
		var err error
		if targeted, of, err = opt.Plans.use(refJobs); err != nil {
			return rep, err
		}
	}
	rep.Generated = len(targeted)
	rep.Digest = HuntDigest(targeted)
	if opt.GenerateOnly {
		rep.PlanList = newPlanList(rep, workloads, opt, refJobs, targeted, of)
		rep.CPU = fakeapibench.ProcessCPU() - start
		return rep, nil
	}
	rep.Shard, rep.StopAtFirst = opt.Shard, opt.StopAtFirst
	// index[j] is plan j's 1-based position in the whole campaign's order.
	targeted, of, index := shardPlans(opt.Shard, targeted, of)
	rep.ShardPlans = len(targeted)
	if opt.StopAtFirst {
		// The workload alone fails: every targeted plan of it inherits
		// the failure, and none is needed to show it.
		for i, r := range refs {
			if v, failed, err := judgeHunt(r); v != "pass" {
				row := HuntRow{Class: ClassReference, Perturbation: "none: the workload's fault-free reference run (" + refJobs[i].Plan.Name + ")",
					Plan: refJobs[i].Plan, Verdict: v, Failed: failed, Err: err, CPU: refCPU[refJobs[i].Plan], Index: 0}
				for _, v := range r.Verdicts {
					if v.Failed() && !IsMeasurement(v.Invariant) {
						row.Reasons = append(row.Reasons, v.Invariant+": "+v.Reason)
					}
				}
				rep.Rows = append(rep.Rows, row)
				rep.CPU = fakeapibench.ProcessCPU() - start
				return rep, nil
			}
		}
	}
	refs0 := &ReferenceCache{}
	var judging atomic.Int64 // the judging runs (HuntReport.JudgingRuns)
	defer func() { rep.JudgingRuns = int(judging.Load()) }()
	replay := opt.Replay
	if replay == nil {
		replay = func(path string) string { return "cachelab replay " + path }
	}
	batch := len(targeted)
	if opt.StopAtFirst {
		batch = max(opt.Parallel, 1)
	}
	for lo := 0; lo < len(targeted); lo += batch {
		hi := min(lo+batch, len(targeted))
		var jobs []Job
		workload := map[*sim.Plan]int{}
		for i := lo; i < hi; i++ {
			p := targeted[i].Plan
			jobs = append(jobs, NewJob(&p, nil))
			workload[&p] = of[i]
		}
		// The differential oracle: the targeted run's end state against
		// its workload's reference (judged before the trace is dropped).
		// As Test judges it (ReferenceCache.Verdict, ReferencePlanOf): a
		// user step that failed in the targeted run (a recreate refused
		// 409 while the predecessor was still terminating, a patch of an
		// object the crash kept from being created yet) is left out of
		// its reference too, and that reference is run after the batch;
		// otherwise the workload's reference run is the targeted plan's.
		type pendingRef struct {
			res  *Result
			tr   *sim.Trace
			plan *sim.Plan
		}
		var pending []pendingRef
		done := map[*sim.Plan]time.Duration{} // CPU at each run's end
		judgeRef := func(r *Result) {
			// The CPU at the run's end, its judging included (a late-start
			// run the verdict makes).
			defer func() { done[r.Job.Plan] = fakeapibench.ProcessCPU() - start }()
			if r.Trace == nil || r.Err != nil {
				return
			}
			if r.Trace.Plan == nil {
				r.Trace.Plan = r.Job.Plan
			}
			refPlan, faulty := ReferencePlanOf(r.Trace)
			if !faulty {
				return
			}
			w := workload[r.Job.Plan]
			// Its own reference unless the steps are the workload's: a
			// user step left out (it failed here) or a competitor's write
			// added (interleaved-writer), or both, as many steps as the
			// workload or not.
			if !reflect.DeepEqual(refPlan.Steps, refJobs[w].Plan.Steps) {
				pending = append(pending, pendingRef{res: r, tr: r.Trace, plan: refPlan})
				return
			}
			r.Verdicts = append(r.Verdicts, refs0.Verdict(r.Trace, refPlan, invariants.ReferenceOptions{}, servedRun(host, refTraces[w], nil, &judging)))
		}
		results, _ := RunBatch(host, jobs, Options{Parallel: opt.Parallel, Out: opt.Out, Replay: replay, DropTraces: true, OnDone: judgeRef})
		if len(pending) > 0 {
			var rjobs []Job
			for _, p := range pending {
				rjobs = append(rjobs, NewJob(p.plan.Clone(), nil))
			}
			// Each reference's CPU (the CPU between the end of the run
			// before it and its own: exact one at a time) counts towards
			// the plan it judges.
			refCPU := map[*sim.Plan]time.Duration{}
			prev := fakeapibench.ProcessCPU()
			judging.Add(int64(len(rjobs)))
			rres, _ := RunBatch(host, rjobs, Options{Parallel: opt.Parallel, OnDone: func(r *Result) {
				now := fakeapibench.ProcessCPU()
				refCPU[r.Job.Plan], prev = now-prev, now
			}})
			for i, p := range pending {
				rr := rres[i]
				p.res.Verdicts = append(p.res.Verdicts, refs0.Verdict(p.tr, p.plan, invariants.ReferenceOptions{}, servedRun(host, rr.Trace, rr.Err, &judging)))
				done[p.res.Job.Plan] += refCPU[rjobs[i].Plan]
			}
		}
		cpu := fakeapibench.ProcessCPU() - start
		for j, res := range results {
			t := targeted[lo+j]
			at, ok := done[res.Job.Plan]
			if !ok {
				at = cpu
			}
			row := HuntRow{Class: t.Class, Perturbation: t.Perturbation, Plan: res.Job.Plan, Index: index[lo+j], CPU: at, Dir: res.Dir}
			row.Verdict, row.Failed, row.Err = judgeHunt(res)
			for _, v := range res.Verdicts {
				if v.Failed() && !IsMeasurement(v.Invariant) {
					row.Reasons = append(row.Reasons, v.Invariant+": "+v.Reason)
				}
			}
			if res.Dir != "" {
				row.Replay = replay(filepath.Join(res.Dir, PlanFile))
			}
			rep.Rows = append(rep.Rows, row)
		}
		if opt.StopAtFirst && rep.First() != nil {
			break
		}
	}
	if opt.Shrink {
		for i := range rep.Rows {
			if rep.Rows[i].Verdict == "fail" {
				rep.Rows[i].Minimal = shrinkHunt(host, rep.Rows[i], workloads, opt)
				if d := rep.Rows[i].Dir; d != "" && rep.Rows[i].Minimal != nil {
					if f, err := os.Create(filepath.Join(d, "minimal.json")); err == nil {
						_ = rep.Rows[i].Minimal.Save(f)
						_ = f.Close()
					}
				}
			}
		}
	}
	rep.CPU = fakeapibench.ProcessCPU() - start
	return rep, nil
}

// withoutFailedSteps runs again, once, the reference of each workload whose
// fault-free run had user steps fail with nothing written (a create of an
// object that exists, a patch of one already gone: random workloads draw
// such steps), without those steps: the workload as it happens, the plan
// its targeted plans perturb. Their runs then leave out no step the
// reference kept, and the workload's reference run is theirs (served, not
// run again); a targeted plan whose perturbation makes another step fail
// still gets a reference of its own. A workload whose run without them
// fails a step again, or fails to run, keeps its first reference; with
// StopAtFirst and a reference that fails alone, nothing is run again (the
// campaign stops there).
func withoutFailedSteps(host Host, refJobs []Job, refs []*Result, opt HuntOptions, done func(*Result)) ([]Job, []*Result) {
	if opt.StopAtFirst && slices.ContainsFunc(refs, func(r *Result) bool { v, _, _ := judgeHunt(r); return v != "pass" }) {
		return refJobs, refs // the campaign stops at that reference
	}
	var again []Job
	var at []int
	for i, r := range refs {
		if r.Err != nil || r.Trace == nil {
			continue
		}
		if r.Trace.Plan == nil {
			r.Trace.Plan = refJobs[i].Plan
		}
		if len(FailedSteps(r.Trace)) == 0 {
			continue
		}
		p, _ := ReferencePlanOf(r.Trace)
		p.Name = refJobs[i].Plan.Name
		again = append(again, NewJob(p, nil))
		at = append(at, i)
	}
	if len(again) == 0 {
		return refJobs, refs
	}
	res, _ := RunBatch(host, again, Options{Parallel: opt.Parallel, OnDone: done})
	refJobs, refs = slices.Clone(refJobs), slices.Clone(refs)
	for j, r := range res {
		if r.Err != nil || r.Trace == nil {
			continue
		}
		if r.Trace.Plan == nil {
			r.Trace.Plan = again[j].Plan
		}
		if len(FailedSteps(r.Trace)) > 0 {
			continue
		}
		refJobs[at[j]], refs[at[j]] = again[j], r
	}
	return refJobs, refs
}

// deriveLifecycle derives the campaign's lifecycle workload
// (HuntOptions.DeriveLifecycle) from the first workload whose reference
// run shows a main object, runs its reference, and returns the reference
// jobs and results with it appended; rep.Lifecycle says what was derived,
// or why nothing was.
func deriveLifecycle(host Host, rep *HuntReport, refJobs []Job, refs []*Result, out string, opt HuntOptions, done func(*Result)) ([]Job, []*Result, string) {
	var whyNot []string
	for i, r := range refs {
		if r.Err != nil || r.Trace == nil {
			continue
		}
		lo, why := scenarios.LifecyclePlan(refJobs[i].Plan, r.Trace)
		if lo == nil {
			whyNot = append(whyNot, strings.TrimSuffix(refJobs[i].Plan.Name, "-reference")+": "+why)
			continue
		}
		ref := scenarios.ReferencePlan(lo.Plan)
		job := NewJob(ref, nil)
		res, more := RunBatch(host, []Job{job}, Options{Parallel: opt.Parallel, OnDone: done})
		rep.Lifecycle = append(rep.Lifecycle, fmt.Sprintf("%s, derived from %s's reference: %s", lo.Plan.Name,
			strings.TrimSuffix(refJobs[i].Plan.Name, "-reference"), strings.Join(lo.Steps, "; ")))
		return append(refJobs, job), append(refs, res...), out + more
	}
	rep.Lifecycle = append(rep.Lifecycle, "none derived ("+strings.Join(whyNot, "; ")+")")
	return refJobs, refs, out
}

// servedRun is the run function a targeted run's matches-reference verdict
// (ReferenceCache.Verdict) gets: a plan with the steps of ref's plan (the
// reference run, already run: the workload's, or the targeted plan's own)
// is served ref (and err), both times the cache asks for a fault-free run
// of it (the second run, which finds the controller's own
// nondeterminism, is not made again); any other plan (the late-start run,
// LateStartPlan, when the faulted run ends unlike the reference with its
// desired state held) is run under host, one at a time, as Test runs it.
// Before, every plan was served ref: the late-start run was the
// reference again, and a plan that ends as a controller started after the
// user's last step failed matches-reference in a campaign while Test
// passed it.
func servedRun(host Host, ref *sim.Trace, err error, runs *atomic.Int64) func(*sim.Plan) (*sim.Trace, error) {
	return func(p *sim.Plan) (*sim.Trace, error) {
		if ref == nil || ref.Plan == nil || reflect.DeepEqual(p.Steps, ref.Plan.Steps) {
			return ref, err
		}
		runs.Add(1)
		res, _ := RunBatch(host, []Job{NewJob(p.Clone(), nil)}, Options{Sequential: true, DropTraces: false})
		return res[0].Trace, res[0].Err
	}
}

// judgeHunt turns a targeted run's result into a verdict: "error" when the
// run could not be judged, "fail" with the failed invariants (measurements
// excluded), else "pass".
func judgeHunt(r *Result) (verdict string, failed []string, err string) {
	if r.Err != nil {
		return "error", nil, r.Err.Error()
	}
	for _, v := range r.Verdicts {
		if v.Failed() && !IsMeasurement(v.Invariant) {
			failed = append(failed, v.Invariant)
		}
	}
	if len(failed) > 0 {
		return "fail", failed, ""
	}
	return "pass", nil, ""
}

// shrinkHunt drops the failing plan's steps that came from its workload,
// one at a time, last first, keeping each drop after which the plan still
// fails one of the invariants it failed; the perturbation's own steps stay.
func shrinkHunt(host Host, row HuntRow, workloads []*sim.Plan, opt HuntOptions) *sim.Plan {
	cur := row.Plan.Clone()
	isWorkload := func(s sim.Step) bool {
		return s.Actor != sim.ActorFaults && s.Actor != "controller"
	}
	for i := len(cur.Steps) - 1; i >= 0; i-- {
		if !isWorkload(cur.Steps[i]) || referencedStep(cur, i) {
			continue
		}
		try := cur.Clone()
		try.Steps = slices.Delete(try.Steps, i, i+1)
		renumberAsOf(try, i)
		res, _ := RunBatch(host, []Job{NewJob(try, nil)}, Options{Parallel: 1, DropTraces: true})
		if v, failed, _ := judgeHunt(res[0]); v == "fail" && slices.ContainsFunc(failed, func(f string) bool { return slices.Contains(row.Failed, f) }) {
			cur = try
		}
	}
	cur.Name = row.Plan.Name + "-min"
	return cur
}

// referencedStep reports whether a stale-replica step of p names step i
// (asOf=step:i): it must stay.
func referencedStep(p *sim.Plan, i int) bool {
	for _, s := range p.Steps {
		if kind, n, err := sim.ParseMoment(s.AsOf); err == nil && kind == sim.MomentStep && n == i {
			return true
		}
	}
	return false
}

// renumberAsOf shifts asOf=step:N for N > removed after step removed was
// dropped.
func renumberAsOf(p *sim.Plan, removed int) {
	for j := range p.Steps {
		if kind, n, err := sim.ParseMoment(p.Steps[j].AsOf); err == nil && kind == sim.MomentStep && n > removed {
			p.Steps[j].AsOf = sim.FormatMoment(kind, n-1)
		}
	}
}

// HuntOrder returns the order in which a campaign runs ts, the targeted
// plans of its workloads in generation order (workload by workload), as
// indexes into ts. Sieve's prioritisation, in the lab's terms:
//
//   - the first plan of each (class, kind, target) comes before every
//     repeat (a workload's plan that perturbs the same kind of moment as
//     an earlier workload's: the Pod create failing in each of three
//     random workloads): tier n holds the (n+1)-th plans of each;
//   - in a tier, the kinds take turns (scenarios.Targeted.Kind, in the
//     order they first appear: stale-state's first, then
//     unobserved-state's, ...), but a recreate behind a relist
//     (scenarios.KindRecreateHidden: a successor handed over as an update
//     of its deleted predecessor) first of all: a class with many moments
//     no longer delays every other class's first plan;
//   - a kind's plans aimed at a repair (scenarios.Targeted.Repair: the
//     controller making again what the user deleted of its children) go
//     first, from every workload; then those whose target is otherwise
//     qualified (the generator's preferred moment of the kind: "create
//     configmaps (its reconcile wrote no status)"); then the others; each
//     in generation order (workload, then the reference's moments in
//     order).
//
// No plan is dropped: a repeat may still be the one whose workload shows
// the bug.
func HuntOrder(ts []scenarios.Targeted) []int { return huntOrder(ts, nil) }

// huntOrder is HuntOrder with, when cost is not nil, the cheaper plans of a
// kind and rank first within each tier (cost(i): what plan i's run costs,
// its workload's reference run's record count), generation order between
// equals.
func huntOrder(ts []scenarios.Targeted, cost func(i int) int) []int {
	seen := map[string]int{}
	tier := make([]int, len(ts))
	var kinds []string
	for i, t := range ts {
		sig := t.Class + "\x00" + t.Kind + "\x00" + t.Target
		tier[i] = seen[sig]
		seen[sig]++
		if k := t.Class + "\x00" + t.Kind; !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	// A recreate behind a relist (the informer hands a successor over as
	// an update of its deleted predecessor, another UID) goes first: a
	// name that now names another object is where the lab's and Sieve's
	// stale and unobserved bugs meet (a Job's expectations and finalizers
	// left to the predecessor, a read-your-own-writes client waiting for
	// a delete it never sees, a child deleted by name for the successor).
	slices.SortStableFunc(kinds, func(a, b string) int {
		first := func(k string) bool { return k == scenarios.ClassUnobserved+"\x00"+scenarios.KindRecreateHidden }
		switch {
		case first(a) == first(b):
			return 0
		case first(a):
			return -1
		}
		return 1
	})
	maxTier := slices.Max(append(tier, 0))
	order := make([]int, 0, len(ts))
	for n := 0; n <= maxTier; n++ {
		queue := map[string][]int{}
		for i, t := range ts {
			if tier[i] == n {
				k := t.Class + "\x00" + t.Kind
				queue[k] = append(queue[k], i)
			}
		}
		for k, q := range queue {
			// Repairs first, then the other qualified targets, then the
			// rest.
			rank := func(i int) int {
				switch {
				case ts[i].Duplicates:
					return 0
				case ts[i].Repair:
					return 1
				case strings.Contains(ts[i].Target, " ("):
					return 2
				}
				return 3
			}
			slices.SortStableFunc(q, func(a, b int) int {
				if d := rank(a) - rank(b); d != 0 || cost == nil {
					return d
				}
				return cost(a) - cost(b)
			})
			queue[k] = q
		}
		for left := true; left; {
			left = false
			for _, k := range kinds {
				if q := queue[k]; len(q) > 0 {
					order = append(order, q[0])
					queue[k] = q[1:]
					left = true
				}
			}
		}
	}
	return order
}
