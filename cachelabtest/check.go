package cachelabtest

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// planFlag replays one saved plan instead of the test's plans: the replay
// command a failure prints.
var planFlag = flag.String("cachelab.plan", "", "cachelabtest: run only this saved plan (the replay command of a failure)")

// Plans are the plans a Test runs: Random (the default), Scenarios or
// Files.
type Plans struct {
	random    bool
	gen       scenarios.GenOptions
	cost      time.Duration
	scenarios []string
	files     []string
	plans     []*sim.Plan
}

// These runs the given plans (their Subject is set to the controller).
func These(plans ...*sim.Plan) Plans { return Plans{plans: plans} }

// Random runs rapid-generated random plans (rapid.Check, each run in a
// synctest bubble with rapid.SyncTest): a few user actions on ConfigMaps
// "a" and "b" in namespace "default" (create, change data, delete, delete
// and recreate, delete the child "<name>-mirror", another writer's label),
// each wrapped in at most one fault (held or expired watches, a crash and
// restart, a write that fails or times out after it was applied, a
// compaction), with latency and request errors. rapid's flags work:
// -rapid.checks (plans per test, default 100), -rapid.seed, and on failure
// the failfile; a failure is shrunk to the fewest, simplest episodes
// (-rapid.shrinktime bounds the time spent shrinking, default 30s).
//
// Tell the plans what your controller keeps for each ConfigMap with
// Children, so that they delete it and fault its resource too.
//
// Every request takes DefaultRequestCost of virtual time (see
// RequestCost), as on a real cluster: a controller that loops on requests
// (creating what the garbage collector deletes at once, while its cache
// lags) moves the clock, and its cache catches up, instead of spinning
// at one instant until the run ends as a livelock.
func Random(opts ...RandomOption) Plans {
	p := Plans{random: true, cost: DefaultRequestCost}
	for _, o := range opts {
		o(&p)
	}
	return p
}

// DefaultRequestCost is the virtual time a request of a Random plan takes.
const DefaultRequestCost = time.Millisecond

// RandomOption adapts Random's plans to a controller.
type RandomOption func(*Plans)

// RequestCost sets the virtual time every request of a Random plan takes
// (the plan's Faults.RequestLatency, fixed); 0 answers requests at the
// instant they are asked.
func RequestCost(d time.Duration) RandomOption { return func(p *Plans) { p.cost = d } }

// Children says what the controller keeps for each ConfigMap: objects of
// resource ("secrets") named by nameFormat, "%s" standing for the
// ConfigMap's name ("%s", "%s-copy"). Random plans then delete those
// children, let another writer change them, and hold, fail and time out
// their watches and writes.
func Children(resource, nameFormat string) RandomOption {
	return func(p *Plans) {
		p.gen.ChildResource = resource
		p.gen.ChildName = func(name string) string { return strings.ReplaceAll(nameFormat, "%s", name) }
	}
}

// Scenarios runs the named scenarios of the lab's catalogue (`cachelab
// list`) with the controller as subject.
func Scenarios(names ...string) Plans { return Plans{scenarios: names} }

// Files runs plan files (JSON, as `cachelab run` saves them).
func Files(paths ...string) Plans { return Plans{files: paths} }

// Test runs c under plans (Random() if none) and reports through t: one
// t.Errorf per failed plan, naming each failed invariant and why, the HTML
// report and the one command that replays the plan. A passing plan logs
// nothing. A controller that panics (in a handler, a reconcile, or a
// goroutine recovered by utilruntime.HandleCrash), whose start fails, or
// whose goroutines outlive its context, fails its plan and the test goes on
// with the next plan. A panic in a goroutine of the controller's own that
// does not recover it ends the test binary, as in production: the lab
// cannot catch it.
//
// The files of a failed plan (plan.json, trace.jsonl, report.html,
// verdicts.json) are written under testdata/cachelab/<test name>/ in the
// package's folder.
func Test(t *testing.T, c Controller, plans ...Plans) {
	t.Helper()
	if err := c.CRDs.Err(); err != nil {
		t.Fatal(err)
	}
	run(t, t.Name(), c, nil, plans)
}

// Failure is one failed plan.
type Failure struct {
	// Plan is the plan that failed (for random plans, the shrunk one
	// when rapid could shrink it).
	Plan *sim.Plan
	// Failed are the failed verdicts (a run that itself failed is a
	// verdict "run").
	Failed []invariants.Verdict
	// Report is the failure's text, as Test prints it.
	Report string
	// ReportPath is the HTML report's path; ReplayCommand the command
	// that replays the plan.
	ReportPath, ReplayCommand string
	// Runs is how many plans had run when this one failed (rapid's
	// shrinking included): for the first failure, the plans to find it.
	Runs int
}

// Catch runs c under plans as Test does, but returns the failures instead
// of failing t: for a test that asserts the lab catches a planted bug.
// The runs happen in a test of their own (testing.RunTests, named as t),
// whose output is discarded; the last failure is the shrunk one.
//
//	if f := cachelabtest.Catch(t, buggy); len(f) == 0 {
//		t.Fatal("the lab did not catch the planted bug")
//	}
func Catch(t *testing.T, c Controller, plans ...Plans) []*Failure {
	t.Helper()
	if err := c.CRDs.Err(); err != nil {
		t.Fatal(err)
	}
	var failures []*Failure
	name := t.Name()
	always := func(string, string) (bool, error) { return true, nil }
	saved := os.Stdout
	if devnull, err := os.Open(os.DevNull); err == nil {
		os.Stdout = devnull
		defer devnull.Close()
	}
	testing.RunTests(always, []testing.InternalTest{{Name: name, F: func(it *testing.T) {
		run(it, name, c, &failures, plans)
	}}})
	os.Stdout = saved
	return failures
}

// run is Test, and Catch when sink is not nil: failures go to sink too.
// top is the name of the go test that replays a plan.
func run(t *testing.T, top string, c Controller, sink *[]*Failure, plans []Plans) {
	t.Helper()
	name := c.Name
	if name == "" {
		name = safe(t.Name())
	}
	c.Name = name
	if err := sim.ReplaceSubject(sim.SubjectInfo{Name: name, Summary: "a controller under test (" + t.Name() + ")",
		CRDs: c.CRDs.served(), New: func() sim.Subject { return newSubject(c) }}); err != nil {
		t.Fatal(err)
	}
	sim.PrepareClientGo()
	out := filepath.Join("testdata", "cachelab", safe(top))
	rep := &reporter{top: top, sink: sink}
	if *planFlag != "" {
		p, err := sim.LoadPlanFile(*planFlag)
		if err != nil {
			t.Fatalf("cachelabtest: -cachelab.plan: %v", err)
		}
		p.Subject = name
		runJobs(t, rep, []Job{NewJob(p, nil)}, out)
		return
	}
	if len(plans) == 0 {
		plans = []Plans{Random()}
	}
	for _, ps := range plans {
		var jobs []Job
		for _, n := range ps.scenarios {
			s, err := scenarios.Get(n)
			if err != nil {
				t.Errorf("cachelabtest: %v", err)
				continue
			}
			p := s.PlanFor(name)
			jobs = append(jobs, NewJob(&p, nil))
		}
		for _, f := range ps.files {
			p, err := sim.LoadPlanFile(f)
			if err != nil {
				t.Errorf("cachelabtest: %v", err)
				continue
			}
			p.Subject = name
			jobs = append(jobs, NewJob(p, nil))
		}
		for _, p := range ps.plans {
			p = p.Clone()
			p.Subject = name
			jobs = append(jobs, NewJob(p, nil))
		}
		if len(jobs) > 0 {
			runJobs(t, rep, jobs, out)
		}
		if ps.random {
			runRandom(t, rep, name, ps, out)
		}
	}
}

// reporter reports the failures of one Test or Catch.
type reporter struct {
	top  string
	sink *[]*Failure
	mu   sync.Mutex
	runs int
}

// ran counts a finished run.
func (rep *reporter) ran() {
	rep.mu.Lock()
	rep.runs++
	rep.mu.Unlock()
}

// replayCommand is the command that replays the plan saved at path.
func (rep *reporter) replayCommand(path string) string {
	return fmt.Sprintf("go test -run '^%s$' -cachelab.plan=%s", strings.ReplaceAll(rep.top, "/", "$/^"), path)
}

// runJobs runs jobs, one subtest each, and reports their failures.
func runJobs(t *testing.T, rep *reporter, jobs []Job, out string) {
	t.Helper()
	used := map[string]int{}
	for _, job := range jobs {
		id, _, _ := strings.Cut(job.ID, "/")
		if used[id]++; used[id] > 1 {
			id = fmt.Sprintf("%s-%d", id, used[id])
		}
		t.Run(id, func(t *testing.T) {
			r := &Result{Job: job}
			start := time.Now()
			tr, err := runPlan(t, job.Plan)
			r.Wall = time.Since(start)
			judge(r, tr, err)
			rep.ran()
			if failures := r.failures(); len(failures) > 0 {
				t.Error(rep.report(r, failures, filepath.Join(out, id)))
			} else if testing.Verbose() {
				t.Log(summary(r))
			}
		})
	}
}

// runRandom checks random plans with rapid.
func runRandom(t *testing.T, rep *reporter, subject string, ps Plans, out string) {
	t.Helper()
	gen := rapid.Map(scenarios.PlanGenWith(subject, ps.gen), func(p sim.Plan) drawnPlan { return drawnPlan{p} })
	rapid.Check(t, func(rt *rapid.T) {
		p := gen.Draw(rt, "plan").Plan
		if ps.cost > 0 && p.Faults.RequestLatency.Kind == "" {
			p.Faults.RequestLatency = sim.Distribution{Kind: "fixed", Max: sim.Duration(ps.cost)}
		}
		r := &Result{Job: NewJob(&p, nil)}
		start := time.Now()
		tr, err := runPlanRapid(rt, &p)
		r.Wall = time.Since(start)
		judge(r, tr, err)
		rep.ran()
		if failures := r.failures(); len(failures) > 0 {
			// The last failing plan (rapid's shrunk one, which it runs
			// last) is what the folder holds at the end. rapid logs the
			// report of that last run; the failure itself names only the
			// failed verdicts, which rapid requires to be the same when
			// it runs a smaller plan twice to accept it (times and
			// positions may differ from run to run).
			rt.Log(rep.report(r, failures, filepath.Join(out, "random")))
			names := make([]string, 0, len(failures))
			for _, v := range failures {
				names = append(names, v.Invariant)
			}
			rt.Fatalf("cachelab: %s failed %s (report and replay command below)", subject, strings.Join(names, ", "))
		}
	})
}

// runPlanRapid runs p in a bubble of rapid's (rapid.SyncTest), keeping the
// trace when goroutines outlive the run.
func runPlanRapid(rt *rapid.T, p *sim.Plan) (tr *sim.Trace, err error) {
	defer func() {
		if x := recover(); x != nil {
			msg := fmt.Sprint(x)
			if !strings.Contains(msg, "blocked goroutines remain") && !strings.Contains(msg, "deadlock") {
				panic(x)
			}
			err = fmt.Errorf("%s: goroutines of the controller were still blocked when the run ended (a goroutine that does not return after its context ends)", firstLineOf(msg))
		}
	}()
	rapid.SyncTest(rt, func(rt *rapid.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		tr, err = sim.RunInBubble(ctx, p)
	})
	return tr, err
}

// judge fills r from a run's trace and error: the invariants' verdicts and
// the controller's health.
func judge(r *Result, tr *sim.Trace, err error) {
	r.Trace, r.Err = tr, err
	if tr == nil {
		return
	}
	if tr.Plan == nil {
		tr.Plan = r.Job.Plan
	}
	if r.Err == nil && stopped(tr.Outcome) {
		r.Err = fmt.Errorf("%s", tr.Outcome)
	}
	r.Verdicts = append(checkTrace(tr), HealthVerdicts(tr)...)
}

// failures lists what failed in r: the run's error, then each failed
// verdict that judges the controller (not the sync-soundness
// measurements).
func (r *Result) failures() []invariants.Verdict {
	var out []invariants.Verdict
	if r.Err != nil {
		out = append(out, invariants.Verdict{Invariant: "run", Status: invariants.Fail, Reason: r.Err.Error()})
	}
	for _, v := range r.Verdicts {
		if v.Status == invariants.Fail && !IsMeasurement(v.Invariant) {
			out = append(out, v)
		}
	}
	return out
}

// report writes r's files into dir and returns the failure's text.
func (rep *reporter) report(r *Result, failures []invariants.Verdict, dir string) string {
	var b strings.Builder
	p := r.Job.Plan
	fmt.Fprintf(&b, "cachelab: %s failed plan %q (seed %d, %d steps; %s virtual, %s wall):\n", p.Subject, p.Name, p.Seed, len(p.Steps), endOf(r.Trace), r.Wall.Round(time.Millisecond))
	for _, v := range failures {
		fmt.Fprintf(&b, "  %s: %s", v.Invariant, firstLineOf(v.Reason))
		if len(v.Positions) > 0 && r.Trace != nil && v.Positions[0] < len(r.Trace.Records) {
			rec := r.Trace.Records[v.Positions[0]]
			fmt.Fprintf(&b, " (trace #%d, t=%s)", rec.Pos, rec.At)
		}
		b.WriteString("\n")
	}
	r.Dir = dir
	opt := Options{Replay: rep.replayCommand}
	if err := os.RemoveAll(dir); err == nil {
		r.WriteErr = writeRun(r, opt)
	}
	if r.WriteErr != nil {
		fmt.Fprintf(&b, "  (files not written: %v)\n", r.WriteErr)
	} else {
		fmt.Fprintf(&b, "  report: %s\n", filepath.Join(dir, ReportFile))
	}
	replay := rep.replayCommand(filepath.Join(dir, PlanFile))
	fmt.Fprintf(&b, "  replay: %s", replay)
	if rep.sink != nil {
		rep.mu.Lock()
		*rep.sink = append(*rep.sink, &Failure{Plan: p, Failed: failures, Report: b.String(),
			ReportPath: filepath.Join(dir, ReportFile), ReplayCommand: replay, Runs: rep.runs})
		rep.mu.Unlock()
	}
	return b.String()
}

func endOf(tr *sim.Trace) string {
	if tr == nil {
		return "0s"
	}
	return tr.End.String()
}

// drawnPlan is a drawn plan as rapid logs it: its JSON, not a Go literal
// of byte slices.
type drawnPlan struct{ sim.Plan }

// GoString returns the plan's JSON, on one line.
func (d drawnPlan) GoString() string {
	b, err := json.Marshal(&d.Plan)
	if err != nil {
		return fmt.Sprintf("%+v", d.Plan)
	}
	return string(b)
}

// summary is one line on a passing run: its verdicts counted, for -v.
func summary(r *Result) string {
	n := map[invariants.Status]int{}
	for _, v := range r.Verdicts {
		if !IsMeasurement(v.Invariant) {
			n[v.Status]++
		}
	}
	return fmt.Sprintf("cachelab: plan %q (seed %d, %d steps): %d pass, %d fail, %d unknown; %s virtual, %d records, %s wall",
		r.Job.Plan.Name, r.Job.Plan.Seed, len(r.Job.Plan.Steps), n[invariants.Pass], n[invariants.Fail], n[invariants.Unknown],
		endOf(r.Trace), recordsOf(r.Trace), r.Wall.Round(time.Millisecond))
}

func recordsOf(tr *sim.Trace) int {
	if tr == nil {
		return 0
	}
	return len(tr.Records)
}
