package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

type runOptions struct {
	subject  string
	out      string
	random   int
	seed     uint64
	parallel int
	timeout  time.Duration
	repeat   int
	shuffle  bool
	shard    string
}

func runFlags() (*flag.FlagSet, *runOptions) {
	o := &runOptions{}
	fs := newFlagSet("run")
	fs.StringVar(&o.subject, "subject", "", "run only this subject (default: every subject the scenario's expectations name; for --random: bellerophon, or the one controller your own binary registers)")
	fs.StringVar(&o.out, "out", "out", "folder for traces, plans, reports, index.html, course.html and junit.xml (\"\" writes nothing)")
	fs.IntVar(&o.random, "random", 0, "run N random plans instead of scenarios (a failed invariant is unexpected; sync-soundness verdicts are reported as measurements)")
	fs.BoolVar(&o.shuffle, "shuffle", false, "with --random, run each plan under a shuffled delivery schedule (plan.shuffleSchedule = its seed) instead of the canonical order: other interleavings, each as reproducible")
	fs.Uint64Var(&o.seed, "seed", 1, "with --random, the first plan's generator seed: the plans random-SEED ... random-SEED+N-1 are drawn from seeds SEED, SEED+1... (the same seed gives the same plan; each plan has its own fault seed)")
	fs.IntVar(&o.parallel, "parallel", runtime.GOMAXPROCS(0), "runs at a time")
	fs.StringVar(&o.shard, "shard", "", "run only shard `i/n` of the campaign (i counted from 0: 0/4 ... 3/4), a deterministic round-robin part of its runs; default from JOB_COMPLETION_INDEX and CACHELAB_SHARDS (a Kubernetes Indexed Job); cachelab merge joins the shards' folders")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "wall-clock limit for each run: a run that goes on longer (a livelock in virtual time never ends) is named and the command exits (0: no limit)")
	return fs, o
}

func runCmd(env *Env, args []string) int {
	fs, o := runFlags()
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(env, "run", fs, err)
	}
	if o.random < 0 {
		fmt.Fprintf(env.Stderr, "cachelab run: --random must be the number of random plans to run (1 or more), got %d\n", o.random)
		return ExitUsage
	}
	if o.parallel < 1 {
		fmt.Fprintf(env.Stderr, "cachelab run: --parallel must be the number of runs at a time (1 or more), got %d\n", o.parallel)
		return ExitUsage
	}
	if o.timeout < 0 {
		fmt.Fprintf(env.Stderr, "cachelab run: --timeout must be a positive duration such as 10m (0: no limit), got %s\n", o.timeout)
		return ExitUsage
	}
	if o.subject != "" {
		if err := checkSubject(o.subject); err != nil {
			printErr(env, "run", err)
			return ExitUsage
		}
	}
	jobs, err := buildJobs(pos, o)
	if err != nil {
		printErr(env, "run", err)
		return ExitUsage
	}
	if len(jobs) == 0 {
		fmt.Fprintf(env.Stderr, "cachelab run: nothing to run: no scenario names subject %q in its expectations (`%s list` shows the scenarios; name one to run it with any subject)\n", o.subject, env.Prog)
		return ExitUsage
	}
	shard, err := pickShard(env, o.shard)
	if err != nil {
		printErr(env, "run", err)
		return ExitUsage
	}
	campaign := len(jobs)
	jobs = shard.Jobs(jobs)
	if shard.Sharded() {
		fmt.Fprintf(env.Stdout, "shard %s: %d of the campaign's %d runs\n", shard, len(jobs), campaign)
	}
	return runJobs(env, jobs, o, batchTitle(pos, o), shard, campaign)
}

// pickShard is --shard's text, else the Indexed Job's environment, else
// the whole campaign (run's and hunt's).
func pickShard(env *Env, text string) (lab.Shard, error) {
	if text != "" {
		return lab.ParseShard(text)
	}
	getenv := env.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	s, _, err := lab.ShardFromEnv(getenv)
	return s, err
}

func batchTitle(pos []string, o *runOptions) string {
	switch {
	case o.random > 0:
		return fmt.Sprintf("cachelab: %d random plans from seed %d", o.random, o.seed)
	case len(pos) == 0:
		return "cachelab: every built-in scenario"
	}
	return "cachelab: " + strings.Join(pos, ", ")
}

// buildJobs turns the arguments into jobs.
func buildJobs(pos []string, o *runOptions) ([]lab.Job, error) {
	if o.random > 0 {
		if len(pos) > 0 {
			return nil, fmt.Errorf("--random runs generated plans: give no scenario name or file with it (got %q)", pos)
		}
		subject := o.subject
		if subject == "" {
			var err error
			if subject, err = defaultSubject(); err != nil {
				return nil, err
			}
		}
		if err := checkSubject(subject); err != nil {
			return nil, err
		}
		var jobs []lab.Job
		for i := 0; i < o.random; i++ {
			p := scenarios.Random(o.seed+uint64(i), subject)
			if o.shuffle {
				p.ShuffleSchedule = o.seed + uint64(i)
				if p.ShuffleSchedule == 0 {
					p.ShuffleSchedule = 1 << 63
				}
			}
			jobs = append(jobs, lab.NewJob(&p, nil))
		}
		return jobs, nil
	}
	if len(pos) == 0 {
		all, err := scenarios.All()
		if err != nil {
			return nil, err
		}
		var jobs []lab.Job
		for _, s := range all {
			if err := s.Validate(subjectNames(), lab.InvariantNames()); err != nil {
				return nil, err
			}
			for _, j := range lab.ScenarioJobs(s, "") {
				if o.subject == "" || j.Plan.Subject == o.subject {
					jobs = append(jobs, j)
				}
			}
		}
		return jobs, nil
	}
	var jobs []lab.Job
	for _, arg := range pos {
		if strings.HasSuffix(arg, ".json") || strings.HasSuffix(arg, ".jsonl") {
			in, err := lab.LoadInput(arg)
			if err != nil {
				return nil, err
			}
			p := in.Plan
			if o.subject != "" {
				p.Subject = o.subject
			}
			if err := checkSubject(p.Subject); err != nil {
				return nil, fmt.Errorf("%s: %w", arg, err)
			}
			jobs = append(jobs, lab.NewJob(p, lab.MatchScenario(p)))
			continue
		}
		s, err := resolveScenario(arg)
		if err != nil {
			return nil, err
		}
		if err := s.ValidateInvariants(lab.InvariantNames()); err != nil {
			return nil, err
		}
		for _, j := range lab.ScenarioJobs(s, o.subject) {
			if err := checkSubject(j.Plan.Subject); err != nil {
				return nil, fmt.Errorf("%s: %w", s.File, err)
			}
			jobs = append(jobs, j)
		}
	}
	return jobs, nil
}

// runJobs runs jobs, prints a line per run and the summary, writes the
// batch files, and returns the exit code.
func runJobs(env *Env, jobs []lab.Job, o *runOptions, title string, shard lab.Shard, campaign int) int {
	start := time.Now()
	prog := lab.StartProgress(env.Stderr, len(jobs), env.TTY)
	var mu sync.Mutex
	running := map[string]time.Time{}
	// Lines are printed in job order, each as soon as every run before it
	// has finished, so the output reads the same on every run.
	index := map[string]int{}
	nameW, subjW := 0, 0
	for i, j := range jobs {
		index[j.ID] = i
		nameW = max(nameW, len(runName(j.Plan)))
		subjW = max(subjW, len(j.Plan.Subject))
	}
	finished := make([]*lab.Result, len(jobs))
	next := 0
	stopWatchdog := watchdog(env, o.timeout, func() map[string]time.Time {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(running)
	})
	defer stopWatchdog()
	opt := lab.Options{
		Reference:  true,
		Out:        o.out,
		Replay:     func(path string) string { return env.Prog + " replay " + path },
		Sequential: o.parallel <= 1,
		Parallel:   o.parallel,
		// Lines and batch files need only each run's verdicts and summary:
		// a campaign's memory stays flat (issue 17: 1.5 MB per run before).
		DropTraces: true,
		OnStart: func(j lab.Job) {
			mu.Lock()
			running[j.ID] = time.Now()
			mu.Unlock()
		},
		OnDone: func(r *lab.Result) {
			mu.Lock()
			delete(running, r.Job.ID)
			mu.Unlock()
			prog.Clear()
			finished[index[r.Job.ID]] = r
			for next < len(finished) && finished[next] != nil {
				printResult(env.Stdout, finished[next], env, nameW, subjW)
				next++
			}
			prog.Done(!r.OK())
		},
	}
	host := env.Host
	if host == nil {
		host = lab.MainHost(o.parallel)
	}
	results, hostOut := lab.RunBatch(host, jobs, opt)
	prog.Stop()

	var unexpected, caught, unjudged, errs int
	var share invariants.UnknownShare
	for _, r := range results {
		share.Add(r.Verdicts)
		if !r.OK() {
			unexpected++
		}
		if r.Err != nil {
			errs++
		}
		if len(r.Caught()) > 0 {
			caught++
		}
		if len(r.Unjudged()) > 0 {
			unjudged++
		}
	}
	w := env.Stdout
	fmt.Fprintf(w, "\n%s in %s: %d as expected, %d unexpected", plural(len(results), "run"), time.Since(start).Round(time.Millisecond), len(results)-unexpected, unexpected)
	if errs > 0 {
		fmt.Fprintf(w, " (%d of them could not run)", errs)
	}
	fmt.Fprintln(w, ".")
	if caught > 0 {
		fmt.Fprintf(w, "%s caught a mutant's bug (failed invariants as its scenario expects, or a mutant's random plan failed): the lab working.\n", plural(caught, "run"))
	}
	if unjudged > 0 {
		fmt.Fprintf(w, "%s failed invariants the scenario does not judge (\"also failed\"; not counted).\n", plural(unjudged, "run"))
	}
	if sh := share.String(); sh != "" {
		fmt.Fprintf(w, "Could not judge, %s.\n", sh)
	}
	if hostOut != "" {
		fmt.Fprintf(env.Stderr, "\nThe testing framework reported failures:\n%s\n", indent(hostOut, "  "))
	}
	if o.out != "" {
		batchTitle := title
		if shard.Sharded() {
			batchTitle += fmt.Sprintf(" (shard %s)", shard)
		}
		err := lab.WriteBatch(o.out, batchTitle, results, opt)
		if err == nil {
			err = lab.WriteResults(o.out, title, shard, campaign, results)
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "cachelab run: %v\n", err)
		} else {
			fmt.Fprintf(w, "Reports: %s (JUnit: %s)\n", filepath.Join(o.out, lab.IndexFile), filepath.Join(o.out, lab.JUnitFile))
		}
	}
	if unexpected > 0 {
		return ExitUnexpected
	}
	return ExitOK
}

// watchdog exits the command when one run has gone on for longer than
// limit (wall clock): a run whose goroutines never leave virtual time
// alone (a livelock: writes and events chasing each other within one
// instant) never ends, and nothing inside the bubble can stop it. It names
// the runs over the limit. The limit is per run, not the batch's: a
// campaign of 10,000 runs takes as long as it takes.
func watchdog(env *Env, limit time.Duration, running func() map[string]time.Time) (stop func()) {
	if limit <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(min(limit/10, time.Second))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				late := overdue(now, running(), limit)
				if len(late) == 0 {
					continue
				}
				fmt.Fprintf(env.Stderr, "\ncachelab run: a run took longer than %s (--timeout): %s\nA run that never ends is usually a livelock in virtual time; replay its plan alone to look at it.\n", limit, strings.Join(late, ", "))
				exit := env.Exit
				if exit == nil {
					exit = os.Exit
				}
				exit(ExitUnexpected)
				return
			}
		}
	}()
	return func() { close(done) }
}

// overdue returns the runs of running (ID -> start) that started more than
// limit before now, sorted.
func overdue(now time.Time, running map[string]time.Time, limit time.Duration) []string {
	var late []string
	for id, start := range running {
		if now.Sub(start) > limit {
			late = append(late, id)
		}
	}
	slices.Sort(late)
	return late
}

// printResult prints one run's line, and for an unexpected run what was
// unexpected and the replay command.
func printResult(w io.Writer, r *lab.Result, env *Env, nameW, subjW int) {
	status := "ok  "
	if !r.OK() {
		status = "FAIL"
	}
	fmt.Fprintf(w, "%s  %-*s  %-*s  %s\n", status, nameW, runName(r.Job.Plan), subjW, r.Job.Plan.Subject, verdictSummary(r))
	for _, u := range r.Unexpected() {
		fmt.Fprintf(w, "      unexpected: %s\n", firstLine(u))
	}
	if r.WriteErr != nil {
		fmt.Fprintf(w, "      (files: %v)\n", r.WriteErr)
	}
	if !r.OK() && r.Dir != "" {
		fmt.Fprintf(w, "      replay: %s replay %s\n", env.Prog, filepath.Join(r.Dir, lab.PlanFile))
	}
}

// runName is the plan's name, or "plan-<seed>".
func runName(p *sim.Plan) string {
	if p.Name == "" {
		return fmt.Sprintf("plan-%d", p.Seed)
	}
	return p.Name
}

// verdictSummary is "10 pass, 1 fail, 1 unknown, 1 n/a (could not judge:
// ...); caught as expected: x;
// unsound sync definitions (measured, not failures): y": the properties
// of the subject counted by status, the measurements apart.
func verdictSummary(r *lab.Result) string {
	if r.Err != nil && r.Outcome == "" {
		return "did not run"
	}
	t := invariants.Count(r.Verdicts)
	accepted := r.AcceptedFailures()
	s := fmt.Sprintf("%d pass, %d fail", t.Pass, t.Fail-len(accepted))
	if len(accepted) > 0 {
		s += fmt.Sprintf(", %d expected fail", len(accepted))
	}
	s += fmt.Sprintf(", %d unknown", t.Unknown)
	if t.NotApplicable > 0 {
		s += fmt.Sprintf(", %d n/a", t.NotApplicable)
	}
	if why := invariants.UnknownSummary(r.Verdicts); why != "" {
		s += " (could not judge: " + why + ")"
	}
	if len(accepted) > 0 {
		s += "; expected fail: " + strings.Join(accepted, ", ")
	}
	if c := r.Caught(); len(c) > 0 {
		s += "; caught as expected: " + strings.Join(c, ", ")
	}
	if u := r.Unjudged(); len(u) > 0 {
		s += "; also failed: " + strings.Join(u, ", ")
	}
	if m := r.Measured(); len(m) > 0 {
		s += "; measured unsound (not failures): " + strings.Join(m, ", ")
	}
	if c := invariants.Costs(r.Verdicts); len(c) > 0 {
		s += "; measured (not failures): " + strings.Join(c, ", ")
	}
	if r.Outcome != "" {
		s += fmt.Sprintf("  [%s virtual, %s]", r.End.D().Round(time.Millisecond), r.Wall.Round(time.Millisecond))
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

func replayFlags() (*flag.FlagSet, *runOptions) {
	o := &runOptions{}
	fs := newFlagSet("replay")
	fs.StringVar(&o.subject, "subject", "", "replay with this subject instead of the plan's")
	fs.IntVar(&o.repeat, "repeat", 1, "replay N times and report how many replays reproduced the recorded run (needs its trace)")
	return fs, o
}

func replayCmd(env *Env, args []string) int {
	fs, o := replayFlags()
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(env, "replay", fs, err)
	}
	if len(pos) != 1 {
		fmt.Fprintf(env.Stderr, "cachelab replay: give one plan or trace file, as `%s replay out/tombstone-after-410/bellerophon/plan.json`\n", env.Prog)
		return ExitUsage
	}
	in, err := lab.LoadInput(pos[0])
	if err != nil {
		printErr(env, "replay", err)
		return ExitUsage
	}
	p := in.Plan
	if o.subject != "" {
		p.Subject = o.subject
	}
	if err := checkSubject(p.Subject); err != nil {
		printErr(env, "replay", fmt.Errorf("%s: %w", pos[0], err))
		return ExitUsage
	}
	sc := lab.MatchScenario(p)
	job := lab.NewJob(p, sc)
	host := env.Host
	if host == nil {
		host = lab.MainHost(1)
	}
	w := env.Stdout
	fmt.Fprintf(w, "replaying %s: plan %q, subject %s, seed %d\n", pos[0], p.Name, p.Subject, p.Seed)
	if sc != nil {
		fmt.Fprintf(w, "judged by scenario %s (%s)\n", sc.Name, sc.File)
	}
	if o.repeat < 1 {
		fmt.Fprintf(env.Stderr, "cachelab replay: --repeat %d: want a number of replays >= 1\n", o.repeat)
		return ExitUsage
	}
	if o.repeat > 1 && in.Recorded == nil {
		fmt.Fprintf(env.Stderr, "cachelab replay: --repeat needs the recorded run to compare with: give its trace.jsonl (or a plan.json with trace.jsonl beside it)\n")
		return ExitUsage
	}
	var (
		results []*lab.Result
		hostOut string
		rep     lab.Reproduction
	)
	if in.Recorded != nil {
		var err error
		rep, results, err = lab.Reproduce(host, in, o.repeat)
		if err != nil {
			hostOut = err.Error()
		}
	} else {
		results, hostOut = lab.RunBatch(host, []lab.Job{job}, lab.Options{Sequential: true, Reference: true})
	}
	r := results[0]
	if hostOut != "" {
		fmt.Fprintf(env.Stderr, "The testing framework reported failures:\n%s\n", indent(hostOut, "  "))
	}
	if r.Err != nil {
		fmt.Fprintf(w, "the run failed: %v\n", r.Err)
	}
	for _, v := range r.Verdicts {
		mark := ""
		for _, m := range r.Mismatches {
			if m.Invariant == v.Invariant {
				mark = fmt.Sprintf("   <- expected %s (line %d)", m.Want, m.Line)
			}
		}
		fmt.Fprintf(w, "  %-7s %-36s %s%s\n", v.Label(), v.Invariant, firstLine(v.Reason), mark)
	}
	for _, m := range r.Mismatches {
		if m.Claim != "" {
			fmt.Fprintf(w, "  %-7s %-36s %s   <- the story claims it (line %d)\n", "false", "claim", m.Claim+": "+m.Reason, m.Line)
		}
	}
	if r.Trace != nil {
		fmt.Fprintf(w, "ended %s at %s virtual, %d records, in %s\n", r.Trace.Outcome, r.Trace.End, len(r.Trace.Records), r.Wall.Round(time.Millisecond))
	}
	// How each replay followed the recorded run, or why it followed none.
	for i, res := range results {
		label := "this replay"
		if len(results) > 1 {
			label = fmt.Sprintf("replay %d", i+1)
		}
		how := lab.HowFollowed(res.Trace)
		if how == "" && res.Trace != nil {
			how = lab.WhyNotFollowed(p, in.Recorded)
		}
		if how != "" {
			fmt.Fprintf(w, "%s: %s\n", label, how)
		}
	}
	if in.Recorded != nil && r.Trace != nil {
		same, desc := lab.FaultDiff(in.Recorded, r.Trace)
		out := lab.ReplayTracePath(in.RecordedPath)
		if same {
			fmt.Fprintf(w, "fault schedule: %s\n", desc)
		} else {
			fmt.Fprintf(w, "fault schedule DIFFERS from %s: %s\n", in.RecordedPath, desc)
		}
		if diffs := lab.DiffVerdicts(rep.RecordedVerdicts, r.Verdicts); len(diffs) > 0 {
			fmt.Fprintf(w, "verdicts or measurements differ from the recorded run:\n")
			for _, d := range diffs {
				fmt.Fprintf(w, "  %s\n", d)
			}
		} else {
			fmt.Fprintf(w, "verdicts and measurements: same as the recorded run\n")
		}
		if err := lab.WriteTraceFile(out, r.Trace); err != nil {
			fmt.Fprintf(env.Stderr, "cachelab replay: writing %s: %v\n", out, err)
		} else {
			fmt.Fprintf(w, "kept both traces: recorded %s, replayed %s\n", in.RecordedPath, out)
		}
	}
	if in.Recorded == nil && r.Trace != nil {
		// A plan without a recorded run: keep the replay's trace beside
		// it (plan.json -> plan.replay.jsonl), for `cachelab report`.
		out := strings.TrimSuffix(lab.ReplayTracePath(pos[0]), filepath.Ext(pos[0])) + ".jsonl"
		if err := lab.WriteTraceFile(out, r.Trace); err != nil {
			fmt.Fprintf(env.Stderr, "cachelab replay: writing %s: %v\n", out, err)
		} else {
			fmt.Fprintf(w, "trace: %s (render it: %s report %s)\n", out, env.Prog, out)
		}
	}
	if in.Recorded != nil {
		fmt.Fprintf(w, "reproduction: %s\n", rep)
		for i, d := range rep.Differences {
			if i == 5 {
				fmt.Fprintf(w, "  ... and %d more\n", len(rep.Differences)-5)
				break
			}
			fmt.Fprintf(w, "  %s\n", d)
		}
		if !rep.Reproduced() {
			fmt.Fprintf(w, "NOT REPRODUCED: %d of %d replays failed a different set of invariants than the recorded run\n", rep.Runs-rep.SameFailed, rep.Runs)
			return ExitNotReproduced
		}
	}
	return replayExit(w, r)
}

// replayExit is replay's exit code, said in a last line: a replay asks
// "does this plan still fail?", so a failed property exits 1 whether or
// not its scenario expects it (a mutant caught), as does a run that
// could not run or a verdict its scenario did not expect; 0 when the
// replayed run failed no property (measurements are never failures).
func replayExit(w io.Writer, r *lab.Result) int {
	var failed []string
	for _, v := range r.Verdicts {
		if v.Failed() {
			failed = append(failed, v.Invariant)
		}
	}
	switch {
	case r.Err != nil:
		fmt.Fprintf(w, "exit %d: the replayed run could not run\n", ExitUnexpected)
	case !r.OK():
		fmt.Fprintf(w, "exit %d: the replayed run has unexpected verdicts\n", ExitUnexpected)
	case len(failed) > 0 && r.Judged():
		fmt.Fprintf(w, "exit %d: the replayed run failed %s, as its scenario expects\n", ExitUnexpected, strings.Join(failed, ", "))
	case len(failed) > 0:
		fmt.Fprintf(w, "exit %d: the replayed run failed %s\n", ExitUnexpected, strings.Join(failed, ", "))
	default:
		return ExitOK
	}
	return ExitUnexpected
}

func reportFlags() (*flag.FlagSet, *string) {
	fs := newFlagSet("report")
	out := fs.String("o", "", "HTML file to write (default: report.html next to a trace.jsonl, else TRACE with .html)")
	return fs, out
}

func reportCmd(env *Env, args []string) int {
	fs, out := reportFlags()
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(env, "report", fs, err)
	}
	if len(pos) != 1 {
		fmt.Fprintf(env.Stderr, "cachelab report: give one trace file, as `%s report out/tombstone-after-410/bellerophon/trace.jsonl -o r.html`\n", env.Prog)
		return ExitUsage
	}
	path := *out
	if path == "" {
		path = lab.DefaultReportPath(pos[0])
	}
	vs, err := lab.ReportTrace(pos[0], path, func(planPath string) string { return env.Prog + " replay " + planPath })
	if err != nil {
		printErr(env, "report", err)
		if errors.Is(err, lab.ErrWrite) {
			return ExitUnexpected
		}
		return ExitUsage
	}
	var fails []string
	for _, v := range vs {
		if v.Status == invariants.Fail {
			fails = append(fails, v.Invariant)
		}
	}
	fmt.Fprintf(env.Stdout, "wrote %s (%d verdicts", path, len(vs))
	if len(fails) > 0 {
		fmt.Fprintf(env.Stdout, "; failed: %s", strings.Join(fails, ", "))
	}
	fmt.Fprintln(env.Stdout, ")")
	return ExitOK
}
