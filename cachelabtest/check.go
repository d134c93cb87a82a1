package cachelabtest

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"pgregory.net/rapid"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// planFlag replays one saved plan instead of the test's plans: the replay
// command a failure prints.
var planFlag = flag.String("cachelab.plan", "", "cachelabtest: run only this saved plan (the replay command of a failure)")

// keepGoingFlag makes random plans go on after a failing plan, so that one
// failing class does not hide the others (see runRandom).
var keepGoingFlag = flag.Bool("cachelab.keepgoing", false, "cachelabtest: random plans go on after a failing plan (each failure reported unshrunk, in its own folder) and the test logs the failing plans per invariant at the end; default: stop at the first failure and shrink it")

// Plans are the plans a Test runs: Random (the default), Scenarios or
// Files.
type Plans struct {
	random    bool
	gen       scenarios.GenOptions
	cost      time.Duration
	scenarios []string
	files     []string
	plans     []*sim.Plan
	schema    *schemaPlans
	// errs are the wrong inputs given to These or Random's options: Test
	// and Catch report each as an error of the test, and run nothing of
	// these Plans.
	errs []error
}

// These runs the given plans (their Subject is set to the controller). A
// nil plan is an error of the test.
func These(plans ...*sim.Plan) Plans {
	ps := Plans{plans: plans}
	for i, p := range plans {
		if p == nil {
			ps.errs = append(ps.errs, fmt.Errorf("These: plan %d of %d is nil (give *sim.Plan values, as sim.LoadPlanFile returns them)", i+1, len(plans)))
		}
	}
	return ps
}

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
// Children, so that they delete it and fault its resource too. For a
// controller of other kinds name them with Primary (and Examples): the
// plans then act on those, drawn from their CRDs' schemas, and on the
// children the controller makes, whatever their kinds.
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
// instant they are asked. A negative d is an error of the test.
func RequestCost(d time.Duration) RandomOption {
	return func(p *Plans) {
		if d < 0 {
			p.errs = append(p.errs, fmt.Errorf("RequestCost(%s): a request cannot take negative time (give 0 to answer at once, or a duration such as %s)", d, DefaultRequestCost))
			return
		}
		p.cost = d
	}
}

// Children says what the controller keeps for each ConfigMap: objects of
// resource ("secrets") named by nameFormat, "%s" standing for the
// ConfigMap's name ("%s", "%s-copy"). Random plans then delete those
// children, let another writer change them, and hold, fail and time out
// their watches and writes.
//
// A resource the lab's server does not serve (neither built in nor one of
// the Controller's CRDs), and a name format without "%s", are errors of
// the test.
func Children(resource, nameFormat string) RandomOption {
	return func(p *Plans) {
		switch {
		case resource == "":
			p.errs = append(p.errs, fmt.Errorf("Children(%q, %q): give the resource of the children, as a plural name (\"secrets\", \"configmaps\")", resource, nameFormat))
			return
		case !strings.Contains(nameFormat, "%s"):
			p.errs = append(p.errs, fmt.Errorf("Children(%q, %q): the name format has no %%s, so every ConfigMap would name the same child %q: write where the ConfigMap's name goes, as \"%%s\" or \"%%s-copy\"", resource, nameFormat, nameFormat))
			return
		}
		p.gen.ChildResource = resource
		p.gen.ChildName = func(name string) string { return strings.ReplaceAll(nameFormat, "%s", name) }
	}
}

// Scenarios runs the named scenarios of the lab's catalogue (`cachelab
// list`; none named: all of them) with the controller as subject, each
// re-aimed at the controller's primary kind: a scenario's objects of a
// kind the controller does not serve (the catalogue's Bellerophons) become
// objects of the primary kind, and its steps and faults on them act on
// it. The primary kind is the one Primary names (Scenarios().With(
// Primary("foos"), Examples("config/samples"))), else the controller's
// only CRD, else ConfigMaps. A scenario that cannot be re-aimed (it
// changes a Bellerophon's spec or status in a way the primary kind has no
// equivalent for, or needs two foreign kinds) is skipped, as a skipped
// subtest saying why; a summary line says how many ran, re-aimed or not,
// and how many were skipped.
func Scenarios(names ...string) Plans {
	if len(names) == 0 {
		names = scenarios.Names()
	}
	return Plans{scenarios: names}
}

// Files runs plan files (JSON, as `cachelab run` saves them) and
// scenario files (.txt, the catalogue's syntax: see package scenarios),
// with the controller as subject. A scenario file of your own needs no
// title, edge or expectations line and names no subject.
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
// A plan that cannot run (malformed, a scenario or file not found, a nil
// plan, a wrong option, an Expect naming no invariant) is an error of the
// test, never a pass. A failure the Controller's Expect accepts does not
// fail the plan; the failure text and report show it as expected, with its
// reason.
//
// Each call runs each plan once, whatever go test's -count (which runs
// the whole test again).
//
// The files of a failed plan (plan.json, trace.jsonl, report.html,
// verdicts.json) are written under testdata/cachelab/<test name>/ in the
// package's folder.
func Test(t *testing.T, c Controller, plans ...Plans) {
	t.Helper()
	if err := checkSetup(c, plans); err != nil {
		t.Fatal(err)
	}
	run(t, t.Name(), c, nil, plans)
}

// Register makes c a subject of the cachelab command built into your own
// binary (cachelabtest/cli.Run), under c.Name, with its CRDs and its
// Expect: `cachelab run --subject <c.Name> --random 20` runs it as Test
// does, and its run lines, index and reports show a failure its Expect
// accepts as expected, with the reason (never as a pass, nor as a plain
// failure). Call it from main before cli.Run.
//
// random, when given, are the controller's own random plans, as Test
// takes them (Random(Primary("foos"), Examples(...)) or Random(Children(...))):
// `cachelab run --random`, `cachelab hunt`'s workloads and `cachelab
// time-to-bug` then draw from them; without it they are the lab's
// ConfigMap plans. More than one Plans, Plans that are not Random, a
// Controller without a Name, or an Expect that names no invariant, are
// errors.
func Register(c Controller, random ...Plans) error {
	if c.Name == "" {
		return fmt.Errorf("cachelabtest.Register: the Controller needs a Name (the subject's name on the command line)")
	}
	if len(random) > 1 {
		return fmt.Errorf("cachelabtest.Register: give at most one Random(...) (the plans of cachelab run --random for %q), got %d", c.Name, len(random))
	}
	for _, ps := range random {
		if !ps.random || len(ps.files) > 0 || len(ps.plans) > 0 || len(ps.scenarios) > 0 {
			return fmt.Errorf("cachelabtest.Register: the plans given must be Random(...) (the controller's random plans, for cachelab run --random); scenarios, files and plans are run by name or path on the command line")
		}
		if err := errors.Join(ps.errs...); err != nil {
			return fmt.Errorf("cachelabtest.Register: %w", err)
		}
	}
	if err := checkSetup(c, random); err != nil {
		return err
	}
	expect, err := c.expectations()
	if err != nil {
		return fmt.Errorf("cachelabtest.Register: %w", err)
	}
	if err := sim.ReplaceSubject(c.subjectInfo("a controller registered by cachelabtest.Register")); err != nil {
		return fmt.Errorf("cachelabtest.Register: %w", err)
	}
	scenarios.SetPlanGen(c.Name, nil)
	for _, ps := range random {
		if err := servesChildren(c.Name, ps.gen.ChildResource); err != nil {
			return fmt.Errorf("cachelabtest.Register: %w", err)
		}
		scenarios.SetPlanGen(c.Name, ps.costed(ps.planGen(c.Name)))
	}
	lab.SetAccepted(c.Name, expect)
	lab.SetJudgedAsTest(c.Name, true)
	return nil
}

// costed gives gen's plans ps's request cost, as Test's random plans have
// it (a plan that sets its own request latency keeps it).
func (ps Plans) costed(gen *rapid.Generator[sim.Plan]) *rapid.Generator[sim.Plan] {
	return rapid.Map(gen, func(p sim.Plan) sim.Plan {
		if ps.cost > 0 && p.Faults.RequestLatency.Kind == "" {
			p.Faults.RequestLatency = sim.Distribution{Kind: "fixed", Max: sim.Duration(ps.cost)}
		}
		return p
	})
}

// Failure is one failed plan.
type Failure struct {
	// Plan is the plan that failed (for random plans, the shrunk one
	// when rapid could shrink it).
	Plan *sim.Plan
	// Failed are the failed verdicts (a run that itself failed is a
	// verdict "run") that the Controller's Expect does not accept.
	Failed []invariants.Verdict
	// Expected are the failed verdicts of the plan that the
	// Controller's Expect accepts.
	Expected []invariants.Verdict
	// Report is the failure's text, as Test prints it.
	Report string
	// ReportPath is the HTML report's path; ReplayCommand the command
	// that replays the plan.
	ReportPath, ReplayCommand string
	// Runs is how many plans had run when this one failed (rapid's
	// shrinking included): for the first failure, the plans to find it.
	// Plans whose failures the Controller's Expect accepts count as run,
	// not as failures.
	Runs int
}

// Catch runs c under plans as Test does, but returns the failures instead
// of failing t: for a test that asserts the lab catches a planted bug. The
// plans run as subtests of t that pass (a failure is logged, seen with
// -v); random plans are shrunk as in Test, and the last failure is the
// shrunk one. A failure the Controller's Expect accepts is not returned.
//
// A plan that cannot run is an error of t (never a caught failure, never
// a pass). Each call runs each plan once, whatever go test's -count.
//
//	if f := cachelabtest.Catch(t, buggy); len(f) == 0 {
//		t.Fatal("the lab did not catch the planted bug")
//	}
func Catch(t *testing.T, c Controller, plans ...Plans) []*Failure {
	t.Helper()
	if err := checkSetup(c, plans); err != nil {
		t.Fatal(err)
	}
	var failures []*Failure
	run(t, t.Name(), c, &failures, plans)
	return failures
}

// run is Test, and Catch when sink is not nil: failures go to sink then,
// and the plans' subtests pass. top is the name of the go test that
// replays a plan.
func run(t *testing.T, top string, c Controller, sink *[]*Failure, plans []Plans) {
	t.Helper()
	name := c.Name
	if name == "" {
		name = lab.Safe(t.Name())
	}
	c.Name = name
	expect, err := c.expectations()
	if err != nil {
		t.Errorf("cachelabtest: %v", err)
		return
	}
	if err := sim.ReplaceSubject(c.subjectInfo("a controller under test (" + t.Name() + ")")); err != nil {
		t.Fatal(err)
	}
	sim.PrepareClientGo()
	out := filepath.Join("testdata", "cachelab", lab.Safe(top))
	rep := &reporter{top: top, sink: sink, expect: expect}
	lab.SetAccepted(name, expect)
	defer rep.logShare(t)
	if *planFlag != "" {
		// A relative path is the package folder's, where go test starts
		// the binary (and where the replay command's path is from), even
		// when the test has changed its working directory since.
		path := *planFlag
		if !filepath.IsAbs(path) {
			path = filepath.Join(startDir, path)
		}
		p, err := sim.LoadPlanFile(path)
		if err != nil {
			t.Fatalf("cachelabtest: -cachelab.plan: %v", err)
		}
		p.Subject = name
		// The recorded run beside the plan, when there is one: the
		// replay follows its delivery schedule (and starts over while
		// client-go hands a batch out in another order than it did).
		// The failure text and the -v summary say how it followed, or
		// why it did not.
		recorded, err := sim.ReadTraceFile(filepath.Join(filepath.Dir(path), lab.TraceFile))
		switch {
		case err == nil:
			rep.notFollowed = lab.WhyNotFollowed(p, recorded)
			p = lab.FollowRecorded(p, recorded)
		case errors.Is(err, fs.ErrNotExist):
			rep.notFollowed = lab.WhyNotFollowed(p, nil)
		case len(p.Schedule) == 0:
			rep.notFollowed = fmt.Sprintf("the %s beside the plan cannot be read (%v): it ran in the canonical order, not necessarily the recorded run's", lab.TraceFile, err)
		}
		if jobs := runnable(t, []lab.Job{lab.NewJob(p, nil)}); len(jobs) > 0 {
			runJobs(t, rep, jobs, out)
		}
		return
	}
	if len(plans) == 0 {
		plans = []Plans{Random()}
	}
	for _, ps := range plans {
		if len(ps.errs) > 0 {
			for _, err := range ps.errs {
				t.Errorf("cachelabtest: %v", err)
			}
			continue
		}
		var jobs []lab.Job
		jobs = append(jobs, scenarioJobs(t, c, ps)...)
		for _, f := range ps.files {
			p, err := lab.LoadFile(f, name)
			if err != nil {
				t.Errorf("cachelabtest: %v", err)
				continue
			}
			jobs = append(jobs, lab.NewJob(p, nil))
		}
		for _, p := range ps.plans {
			p = p.Clone()
			p.Subject = name
			jobs = append(jobs, lab.NewJob(p, nil))
		}
		if jobs = runnable(t, jobs); len(jobs) > 0 {
			runJobs(t, rep, jobs, out)
		}
		if ps.random {
			if err := servesChildren(name, ps.gen.ChildResource); err != nil {
				t.Errorf("cachelabtest: %v", err)
				continue
			}
			runRandom(t, rep, name, ps, out)
		}
	}
}

// runnable returns the jobs whose plans can run, and reports each that
// cannot as an error of t: a malformed plan is never a pass, nor a failure
// of the controller.
func runnable(t *testing.T, jobs []lab.Job) []lab.Job {
	t.Helper()
	var ok []lab.Job
	for _, j := range jobs {
		if err := j.Plan.Validate(); err != nil {
			t.Errorf("cachelabtest: plan %q cannot run: %v", j.Plan.Name, strings.ReplaceAll(err.Error(), "\n", "; "))
			continue
		}
		ok = append(ok, j)
	}
	return ok
}

// servesChildren returns an error when resource (Children's) is not served
// to subject: neither a built-in resource of the lab's server nor one of
// the subject's CRDs.
func servesChildren(subject, resource string) error {
	if resource == "" {
		return nil
	}
	var served []string
	add := func(gvr schema.GroupVersionResource) {
		served = append(served, gvr.Resource)
		if gvr.Group != "" {
			served = append(served, gvr.Resource+"."+gvr.Group)
		}
	}
	for _, r := range fakeapi.NewServer(fakeapi.Options{}).Resources() {
		add(r.GVR)
	}
	if info, ok := sim.LookupSubject(subject); ok {
		for _, c := range info.CRDs {
			add(c.GVR)
		}
	}
	if slices.Contains(served, resource) {
		return nil
	}
	slices.Sort(served)
	served = slices.Compact(served)
	return fmt.Errorf("Children(%q, ...): the lab's server does not serve %q%s: give a built-in resource's plural name (%s) or add its CRD to Controller.CRDs",
		resource, resource, scenarios.Suggest(resource, served), strings.Join(served, ", "))
}

// reporter reports the failures of one Test or Catch.
type reporter struct {
	top  string
	sink *[]*Failure
	// expect are the failures the Controller accepts, by invariant.
	expect []lab.Acceptance
	mu     sync.Mutex
	runs   int
	// refs keeps the reference runs' end states (matches-reference).
	refs lab.ReferenceCache
	// share counts the verdicts that could not judge, over every run.
	share invariants.UnknownShare
	// notFollowed says, for a -cachelab.plan replay that does not follow
	// the run recorded beside its plan, why (lab.WhyNotFollowed).
	notFollowed string
}

// howReplayed says how r's run followed the recorded run it replays
// (lab.HowFollowed), or why it followed none; "" for a run that is no
// replay.
func (rep *reporter) howReplayed(r *lab.Result) string {
	s := lab.HowFollowed(r.Trace)
	if s == "" {
		s = rep.notFollowed
	}
	return s
}

// ran counts a finished run and its verdicts.
func (rep *reporter) ran(r *lab.Result) {
	rep.mu.Lock()
	rep.runs++
	rep.share.Add(r.Verdicts)
	rep.mu.Unlock()
}

// logShare logs, once the plans have run, how many property verdicts
// could not judge, unknown and n/a apart, and why (seen with -v, or with
// a failure).
func (rep *reporter) logShare(t *testing.T) {
	t.Helper()
	rep.mu.Lock()
	s := rep.share.String()
	rep.mu.Unlock()
	if s != "" {
		t.Logf("cachelab: could not judge, %s", s)
	}
}

// startDir is the folder the test binary started in: go test runs it in
// the package's folder.
var startDir, _ = os.Getwd()

// replayCommand is the command that replays the plan saved at path, as
// run from the module's root (where `go test ./...` is run): the package's
// path, then the test, -v (so that a replay that passes still shows how it
// followed the recorded run, or that it could not), then the plan's path
// from the package's folder (absolute when the plan is outside it).
func (rep *reporter) replayCommand(path string) string {
	return fmt.Sprintf("go test %s -run '^%s$' -v -cachelab.plan=%s", packageArg(), strings.ReplaceAll(rep.top, "/", "$/^"), shellQuote(planArg(path)))
}

// packageArg is the test's package as go test takes it from the module's
// root ("./cachelabtest"), or "." when no go.mod is found above it.
func packageArg() string {
	for dir := startDir; dir != ""; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, startDir)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel)
		}
		up := filepath.Dir(dir)
		if up == dir {
			break
		}
		dir = up
	}
	return "."
}

// planArg is path as the test binary, started in the package's folder,
// reads it: relative to that folder when inside it, else absolute.
func planArg(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(startDir, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return abs
}

// shellQuote quotes s for a POSIX shell when it holds a character the
// shell would read.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"$`\\*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// runJobs runs jobs, one subtest each, and reports their failures.
func runJobs(t *testing.T, rep *reporter, jobs []lab.Job, out string) {
	t.Helper()
	used := map[string]int{}
	for _, job := range jobs {
		id, _, _ := strings.Cut(job.ID, "/")
		if used[id]++; used[id] > 1 {
			id = fmt.Sprintf("%s-%d", id, used[id])
		}
		t.Run(id, func(t *testing.T) {
			r := &lab.Result{Job: job}
			start := time.Now()
			tr, err := lab.RunWatched(t, job.Plan)
			r.Wall = time.Since(start)
			lab.Judge(r, tr, err)
			lab.SaveStacks(r, filepath.Join(out, id))
			runRef := func(p *sim.Plan) (*sim.Trace, error) { return lab.RunWatched(t, p) }
			rep.judgeReference(r, runRef)
			rep.ran(r)
			failures, expected := rep.failures(r)
			switch {
			case len(failures) > 0 && rep.sink != nil:
				t.Log("caught: " + rep.report(r, failures, expected, filepath.Join(out, id), runRef))
			case len(failures) > 0:
				t.Error(rep.report(r, failures, expected, filepath.Join(out, id), runRef))
			case testing.Verbose():
				t.Log(rep.summary(r))
			}
		})
	}
}

// runRandom checks random plans with rapid. For Catch, rapid reports to a
// catcher, so that a failing plan is shrunk and returned without failing
// t.
func runRandom(t *testing.T, rep *reporter, subject string, ps Plans, out string) {
	t.Helper()
	gen := rapid.Map(ps.costed(ps.planGen(subject)), func(p sim.Plan) drawnPlan { return drawnPlan{p} })
	var tb rapid.TB = t
	if rep.sink != nil {
		tb = &catcher{T: t}
	}
	stuck, skipped := false, 0
	defer func() {
		if skipped > 0 {
			// rapid counts the skipped draws as passed tests ("OK, passed
			// 100 tests"): say what it did not say.
			t.Logf("cachelab: %d of rapid's plans were not run: a run before them was stuck (its report above); rapid's count of passed tests includes them", skipped)
		}
	}()
	keep := keepGoing{on: *keepGoingFlag, byInvariant: map[string]int{}}
	defer keep.log(t)
	// The run of the last failing plan, saved by an earlier go test: the
	// same plan drawn again (rapid's failfile, the same -rapid.seed)
	// follows its interleaving, as -cachelab.plan does.
	saved := lab.ReadSavedRun(filepath.Join(out, "random"))
	rapid.Check(tb, func(rt *rapid.T) {
		p := gen.Draw(rt, "plan").Plan
		if stuck {
			skipped++
			return // a run was stuck: the rest are not run (see below)
		}
		keep.plans++
		q := lab.FollowSaved(&p, saved)
		r := &lab.Result{Job: lab.NewJob(q, nil)}
		start := time.Now()
		tr, err := lab.RunWatched(t, q)
		r.Wall = time.Since(start)
		lab.Judge(r, tr, err)
		runRef := func(p *sim.Plan) (*sim.Trace, error) { return lab.RunWatched(t, p) }
		rep.judgeReference(r, runRef)
		rep.ran(r)
		if _, ok := r.Err.(*lab.StuckError); ok {
			// Not shrunk: each smaller plan rapid tried could hang as
			// long again, and leave one more bubble behind. The plan
			// drawn is reported as is, and the random plans after it
			// are not run (each could hang as long).
			stuck = true
			lab.SaveStacks(r, filepath.Join(out, "random-stuck"))
			failures, expected := rep.failures(r)
			text := rep.report(r, failures, expected, filepath.Join(out, "random-stuck"), nil)
			if rep.sink == nil {
				t.Error(text)
			}
			return
		}
		failures, expected := rep.failures(r)
		if keep.on {
			keep.accepted(expected)
		}
		if len(failures) > 0 && keep.on {
			// Keep going: report this plan as drawn (not shrunk: a
			// shrink would run many more plans per failure), in a
			// folder of its own, and draw the next.
			dir := filepath.Join(out, fmt.Sprintf("random-%d", keep.plans))
			text := rep.report(r, failures, expected, dir, runRef)
			if rep.sink == nil {
				t.Error(text)
			}
			keep.failed(failures)
			return
		} else if len(failures) > 0 {
			// The last failing plan (rapid's shrunk one, which it runs
			// last) is what the folder holds at the end. rapid logs the
			// report of that last run; the failure itself names only the
			// failed verdicts, which rapid requires to be the same when
			// it runs a smaller plan twice to accept it (times and
			// positions may differ from run to run).
			rt.Log(rep.report(r, failures, expected, filepath.Join(out, "random"), runRef))
			names := make([]string, 0, len(failures))
			for _, v := range failures {
				names = append(names, v.Invariant)
			}
			rt.Fatalf("cachelab: %s failed %s (report and replay command below)", subject, strings.Join(names, ", "))
		}
	})
}

// keepGoing counts, under -cachelab.keepgoing, the random plans run, the
// failing ones by invariant, and those with failures the Controller's
// Expect accepts, by invariant (a count of failing plans that left them
// out would read as a cleaner run than it was).
type keepGoing struct {
	on            bool
	plans         int
	failedPlans   int
	byInvariant   map[string]int
	acceptedPlans int
	byAccepted    map[string]int
}

// accepted counts one plan whose failures include accepted ones.
func (k *keepGoing) accepted(expected []invariants.Verdict) {
	if len(expected) == 0 {
		return
	}
	if k.byAccepted == nil {
		k.byAccepted = map[string]int{}
	}
	k.acceptedPlans++
	for _, v := range expected {
		k.byAccepted[v.Invariant]++
	}
}

// failed counts one failing plan and its failed invariants.
func (k *keepGoing) failed(failures []invariants.Verdict) {
	k.failedPlans++
	for _, v := range failures {
		k.byInvariant[v.Invariant]++
	}
}

// log logs, when on, the summary.
func (k *keepGoing) log(t *testing.T) {
	t.Helper()
	if k.on {
		t.Log(k.summary())
	}
}

// summary says how many random plans failed and, per invariant, in how
// many plans; then how many plans had failures Expect accepts: "cachelab:
// keep-going: 2 of 100 random plans failed; failing plans per invariant:
// matches-reference 1, read-your-writes 2; 4 plans with failures
// Controller.Expect accepts: no-panics 4".
func (k *keepGoing) summary() string {
	s := fmt.Sprintf("cachelab: keep-going: %d of %d random plans failed", k.failedPlans, k.plans)
	if len(k.byInvariant) > 0 {
		s += "; failing plans per invariant: " + perInvariant(k.byInvariant)
	}
	if k.acceptedPlans > 0 {
		s += fmt.Sprintf("; %d plans with failures Controller.Expect accepts: %s", k.acceptedPlans, perInvariant(k.byAccepted))
	}
	return s
}

// perInvariant is "a 1, b 2", by invariant name.
func perInvariant(n map[string]int) string {
	names := slices.Sorted(maps.Keys(n))
	parts := make([]string, 0, len(names))
	for _, name := range names {
		parts = append(parts, fmt.Sprintf("%s %d", name, n[name]))
	}
	return strings.Join(parts, ", ")
}

// catcher is the testing.TB rapid reports to under Catch: it keeps rapid's
// verdict on the random plans from failing the test, and passes the rest
// (Name, Helper, Skip, Cleanup) to the test. The plans' bubbles run on the
// test itself (RunPlan), never failing it.
type catcher struct {
	*testing.T
	mu     sync.Mutex
	failed bool
}

func (c *catcher) fail() {
	c.mu.Lock()
	c.failed = true
	c.mu.Unlock()
}

// Errorf records that rapid found a failing plan; the message is rapid's
// (seed, failfile), dropped: the Failure holds the report.
func (c *catcher) Errorf(string, ...any) { c.fail() }

// Error is Errorf.
func (c *catcher) Error(...any) { c.fail() }

// Fatalf is Errorf: rapid calls it after its last check.
func (c *catcher) Fatalf(string, ...any) { c.fail() }

// Fatal is Errorf.
func (c *catcher) Fatal(...any) { c.fail() }

// Fail is Errorf.
func (c *catcher) Fail() { c.fail() }

// FailNow is Errorf: rapid calls it last, so returning is stopping.
func (c *catcher) FailNow() { c.fail() }

// Failed reports whether rapid found a failing plan.
func (c *catcher) Failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}

// Log drops rapid's lines: each failing plan's report is in its Failure.
func (c *catcher) Log(...any) {}

// Logf is Log.
func (c *catcher) Logf(string, ...any) {}

// failures splits r's failures into those the Controller's Expect does
// not accept (they fail the plan) and those it accepts.
func (rep *reporter) failures(r *lab.Result) (failed, expected []invariants.Verdict) {
	for _, v := range r.Failures() {
		if _, ok := rep.accepts(v); ok {
			expected = append(expected, v)
		} else {
			failed = append(failed, v)
		}
	}
	return failed, expected
}

// report writes r's files into dir and returns the failure's text.
//
// When matches-reference failed, the fault-free reference run is run again
// with runRef (same plan, same code: the same run) and its files are
// written into dir/reference, so that the two runs can be read side by
// side; runRef may be nil (then only the failing run is written).
func (rep *reporter) report(r *lab.Result, failures, expected []invariants.Verdict, dir string, runRef func(*sim.Plan) (*sim.Trace, error)) string {
	var b strings.Builder
	p := r.Job.Plan
	fmt.Fprintf(&b, "cachelab: %s failed plan %q (seed %d, %d steps; %s virtual, %s wall):\n", p.Subject, p.Name, p.Seed, len(p.Steps), endOf(r.Trace), r.Wall.Round(time.Millisecond))
	line := func(v invariants.Verdict, prefix string) {
		fmt.Fprintf(&b, "  %s%s: %s", prefix, v.Invariant, lab.FirstLineOf(v.Reason))
		if len(v.Positions) > 0 && r.Trace != nil && v.Positions[0] < len(r.Trace.Records) {
			rec := r.Trace.Records[v.Positions[0]]
			fmt.Fprintf(&b, " (trace #%d, t=%s)", rec.Pos, rec.At)
		}
		b.WriteString("\n")
		if v.Invariant == invariants.NameMatchesReference && v.Detail != "" {
			// The diff of the end states is the finding: print it.
			b.WriteString("    " + strings.ReplaceAll(v.Detail, "\n", "\n    ") + "\n")
		}
	}
	for _, v := range failures {
		line(v, "")
	}
	for _, v := range expected {
		a, _ := rep.accepts(v)
		line(v, "expected (Controller.Expect: "+a.Reason+") ")
	}
	if how := rep.howReplayed(r); how != "" {
		b.WriteString("  this replay: " + strings.ReplaceAll(how, "\n", "\n  ") + "\n")
	}
	r.Dir = dir
	opt := lab.Options{Replay: rep.replayCommand, Accepted: lab.AcceptedIn(rep.expect, r.Verdicts)}
	if err := os.RemoveAll(dir); err == nil {
		r.WriteErr = lab.WriteRun(r, opt)
	}
	if r.WriteErr != nil {
		fmt.Fprintf(&b, "  (files not written: %v)\n", r.WriteErr)
	} else {
		fmt.Fprintf(&b, "  report: %s\n", filepath.Join(dir, lab.ReportFile))
		if line := rep.writeReference(r, failures, filepath.Join(dir, ReferenceDir), runRef); line != "" {
			b.WriteString(line)
		}
	}
	replay := rep.replayCommand(filepath.Join(dir, lab.PlanFile))
	fmt.Fprintf(&b, "  replay (from the module's root): %s", replay)
	if rep.sink != nil {
		rep.mu.Lock()
		*rep.sink = append(*rep.sink, &Failure{Plan: p, Failed: failures, Expected: expected, Report: b.String(),
			ReportPath: filepath.Join(dir, lab.ReportFile), ReplayCommand: replay, Runs: rep.runs})
		rep.mu.Unlock()
	}
	return b.String()
}

// ReferenceDir is the folder, inside a failing run's folder, that holds
// the fault-free reference run's plan, trace and report when the run
// failed matches-reference.
const ReferenceDir = "reference"

// writeReference writes the reference run of r into dir when r failed
// matches-reference, and returns the line that names it ("" when nothing
// was written; a line with the error when writing failed).
func (rep *reporter) writeReference(r *lab.Result, failures []invariants.Verdict, dir string, runRef func(*sim.Plan) (*sim.Trace, error)) string {
	if runRef == nil || r.Trace == nil || !slices.ContainsFunc(failures, func(v invariants.Verdict) bool { return v.Invariant == invariants.NameMatchesReference }) {
		return ""
	}
	ref, faulty := lab.ReferencePlanOf(r.Trace)
	if !faulty {
		return ""
	}
	rr := &lab.Result{Job: lab.NewJob(ref, nil), Dir: dir}
	tr, ok := rep.refs.Trace(ref)
	var err error
	if !ok {
		// The verdict took the reference's end state from the cache:
		// run the plan again (the same plan and code, the same run).
		start := time.Now()
		tr, err = runRef(ref)
		rr.Wall = time.Since(start)
	}
	lab.Judge(rr, tr, err)
	if err := lab.WriteRun(rr, lab.Options{Replay: rep.replayCommand, Accepted: lab.AcceptedIn(rep.expect, rr.Verdicts)}); err != nil {
		return fmt.Sprintf("  (reference run not written: %v)\n", err)
	}
	return fmt.Sprintf("  reference run (the same user actions, no fault): %s\n", filepath.Join(dir, lab.ReportFile))
}

// accepts returns the Controller's expectation that accepts failure v, if
// one does.
func (rep *reporter) accepts(v invariants.Verdict) (lab.Acceptance, bool) {
	return lab.AcceptanceOf(rep.expect, v)
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

// summary is one line on a passing run: its verdicts counted, for -v;
// the failures the Controller's Expect accepts are named, with why.
func (rep *reporter) summary(r *lab.Result) string {
	n := invariants.Count(r.Verdicts)
	_, expected := rep.failures(r)
	s := fmt.Sprintf("cachelab: plan %q (seed %d, %d steps): %d pass, %d fail, %d unknown", r.Job.Plan.Name, r.Job.Plan.Seed,
		len(r.Job.Plan.Steps), n.Pass, n.Fail-len(expected), n.Unknown)
	if n.NotApplicable > 0 {
		s += fmt.Sprintf(", %d n/a", n.NotApplicable)
	}
	for _, v := range expected {
		a, _ := rep.accepts(v)
		s += fmt.Sprintf("; expected fail: %s (Controller.Expect: %s)", v.Invariant, a.Reason)
	}
	s += fmt.Sprintf("; %s virtual, %d records, %s wall", endOf(r.Trace), recordsOf(r.Trace), r.Wall.Round(time.Millisecond))
	if how := rep.howReplayed(r); how != "" {
		s += "\n  this replay: " + strings.ReplaceAll(how, "\n", "\n  ")
	}
	return s
}

func recordsOf(tr *sim.Trace) int {
	if tr == nil {
		return 0
	}
	return len(tr.Records)
}
