package invariants_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/klog/v2"
	"pgregory.net/rapid"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// Property tests: random Plans (scenarios.PlanGen) run through sim.RunInBubble
// inside rapid.SyncTest bubbles, judged by the invariants. Flags work as rapid
// users expect:
//
//	go test ./invariants -run 'TestPropertiesHold' -rapid.checks=200 -rapid.seed=7
//
// Without -rapid.checks, the default run draws defaultChecks plans per
// property (rapid's 100 is for explicit, longer runs). A failure writes the
// shrunk Plan to testdata/plans/<test>.json (rapid writes its own fail file
// under testdata/rapid/) and prints the command that replays it.

// defaultChecks is the number of plans per property when -rapid.checks is
// not given, so that `make test` stays fast.
const defaultChecks = "4"

// defaultSeed is the first seed of the default run (no -rapid.checks and no
// -rapid.seed given): each property of TestPropertiesHoldForEverySubject
// draws from its own seed, defaultSeed plus its index, so `make test`
// checks the same few plans every time instead of a random handful that
// may or may not show a rare bug. Give -rapid.checks (and -rapid.seed, or
// none for a random one) to explore.
const defaultSeed = 1

// defaultRun is true when TestMain applied defaultChecks and defaultSeed.
var defaultRun bool

func TestMain(m *testing.M) {
	flag.Parse()
	explicit := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	if !explicit["rapid.checks"] && os.Getenv("RAPID_CHECKS") == "" {
		if err := flag.Set("rapid.checks", defaultChecks); err != nil {
			fmt.Fprintln(os.Stderr, "cannot set -rapid.checks:", err)
			os.Exit(2)
		}
		defaultRun = !explicit["rapid.seed"] && os.Getenv("RAPID_SEED") == ""
	}
	// apimachinery's HandleError rate limiter sleeps for decades of virtual
	// time inside a bubble: see sim.PrepareClientGo.
	sim.PrepareClientGo()
	// client-go's reflector warnings about the faults we inject are noise
	// here: the trace records them.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	os.Exit(m.Run())
}

// propertySubjects are the subjects whose properties the default run
// checks: each must hold every invariant of invariants.SubjectInvariants on
// every generated plan.
var propertySubjects = []string{"bellerophon", "informer-realfifo", "legacy-deltafifo"}

// notClaimed lists, per subject, invariants it does not claim to hold: the
// mirror controller behind informer-realfifo and legacy-deltafifo does not
// wait for its own writes to reach its cache (it recreates a mirror it just
// created when an update of the source arrives first: a 2-step plan shows
// it), which is what read-your-writes checks.
var notClaimed = map[string][]string{
	"informer-realfifo": {invariants.NameReadYourWrites},
	"legacy-deltafifo":  {invariants.NameReadYourWrites},
}

// claimedInvariants returns the subject invariants subject claims to hold.
func claimedInvariants(subject string) []invariants.Invariant {
	var out []invariants.Invariant
	for _, inv := range invariants.SubjectInvariants() {
		if !slices.Contains(notClaimed[subject], inv.Name) {
			out = append(out, inv)
		}
	}
	return out
}

func TestPropertiesHoldForEverySubject(t *testing.T) {
	for _, subject := range propertySubjects {
		if _, ok := sim.LookupSubject(subject); !ok {
			t.Errorf("subject %q is not registered (known: %v)", subject, subjectNames())
			continue
		}
		t.Run(subject, func(t *testing.T) {
			for i, inv := range invariants.SubjectInvariants() {
				if slices.Contains(notClaimed[subject], inv.Name) {
					continue
				}
				t.Run(inv.Name, func(t *testing.T) {
					if defaultRun {
						if err := flag.Set("rapid.seed", strconv.Itoa(defaultSeed+i)); err != nil {
							t.Fatalf("cannot set -rapid.seed: %v", err)
						}
					}
					before := unclean.Load()
					rapid.Check(t, property(subject, nil, inv))
					if n := unclean.Load() - before; n > 0 {
						t.Logf("%d run(s) skipped: goroutines outlived them (a sim or subject defect)", n)
					}
				})
			}
		})
	}
}

func subjectNames() []string {
	var out []string
	for _, s := range sim.Subjects() {
		out = append(out, s.Name)
	}
	return out
}

// runPlan runs plan in a synctest bubble of its own (rapid.SyncTest) and
// returns the trace.
func runPlan(t *rapid.T, plan *sim.Plan) *sim.Trace {
	var tr *sim.Trace
	var err error
	crashed := func() (p any) {
		defer func() { p = recover() }()
		rapid.SyncTest(t, func(t *rapid.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tr, err = sim.RunInBubble(ctx, plan)
		})
		return nil
	}()
	if crashed != nil {
		msg := fmt.Sprint(crashed)
		if strings.Contains(msg, "blocked goroutines remain") {
			// A goroutine of the sim or the subject outlived the run: a
			// defect of theirs, which says nothing about the invariants.
			// The plan is skipped (rapid draws another) and counted.
			unclean.Add(1)
			t.Skipf("the run did not end cleanly, plan skipped: %s", firstLine(msg))
		}
		panic(crashed)
	}
	if err != nil {
		t.Fatalf("the sim could not run the generated plan: %v", err)
	}
	return tr
}

// unclean counts the runs skipped because goroutines outlived them.
var unclean atomic.Int64

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// probe, when non-nil, is told about every property evaluation (the
// mutation score uses it).
type probe interface {
	evaluated(plan *sim.Plan, failed []invariants.Verdict)
}

// shrinkRuns is how many times a plan is run, once the property has
// failed, before it counts as passing. Goroutine interleavings are not
// seeded, so a plan that shows a bug may pass a run; rapid stops shrinking
// at the first smaller plan that fails once and then passes its second
// run. Running each candidate up to shrinkRuns times while shrinking, and
// remembering the plans that failed (rapid runs every accepted candidate
// twice), keeps the shrinking going; the search for the first failure
// runs each plan once, so the CPU time to the first failure is not
// affected. A shrunk plan has failed at least once: its replay may need a
// few runs to show the failure again.
const shrinkRuns = 3

// failedRun is what a failing run of a plan showed.
type failedRun struct {
	verdicts []invariants.Verdict
	outcome  string
}

// property returns the rapid property "every inv holds on subject's traces".
func property(subject string, pr probe, invs ...invariants.Invariant) func(*rapid.T) {
	var mu sync.Mutex
	failedPlans := map[string]failedRun{} // plan JSON -> its failing run
	return func(t *rapid.T) {
		// Drawn as a readablePlan, so that rapid's log of the draw (and of
		// a shrunk failure) shows the plan's steps, not Go's dump of bytes.
		plan := sim.Plan(rapid.Map(scenarios.PlanGen(subject), func(p sim.Plan) readablePlan { return readablePlan(p) }).Draw(t, "plan"))
		pj, err := json.Marshal(plan)
		if err != nil {
			t.Fatalf("the generated plan does not marshal: %v", err)
		}
		mu.Lock()
		seen, known := failedPlans[string(pj)]
		runs := 1
		if len(failedPlans) > 0 {
			runs = shrinkRuns
		}
		mu.Unlock()
		failed, outcome := seen.verdicts, seen.outcome
		for i := 0; i < runs && !known; i++ {
			tr := runPlan(t, &plan)
			failed, outcome = nil, string(tr.Outcome)
			for _, inv := range invs {
				if v := inv.Check(tr); v.Status == invariants.Fail {
					failed = append(failed, v)
				}
			}
			if len(failed) > 0 {
				mu.Lock()
				failedPlans[string(pj)] = failedRun{failed, outcome}
				mu.Unlock()
				break
			}
		}
		if pr != nil {
			pr.evaluated(&plan, failed)
		}
		if len(failed) == 0 {
			return
		}
		file := savePlan(t, subject, &plan)
		for _, v := range failed {
			t.Logf("%s: %s (positions %v)", v.Invariant, v.Reason, v.Positions)
			if v.Detail != "" {
				t.Logf("%s", v.Detail)
			}
		}
		t.Logf("%s on a plan of %d steps (outcome %s):\n%sreplay the plan: go run ./cmd/cachelab replay %s",
			subject, len(plan.Steps), outcome, scenarios.FormatPlan(plan), file)
		t.Fatalf(failureMessage, subject)
	}
}

// readablePlan prints as the plan's steps in scenario-file syntax
// (scenarios.FormatPlan) when rapid logs a draw with %#v.
type readablePlan sim.Plan

// GoString is scenarios.FormatPlan.
func (p readablePlan) GoString() string { return "\n" + scenarios.FormatPlan(sim.Plan(p)) }

// failureMessage is the failure a property reports: the same words for
// every failing plan of a subject. rapid shrinks a failure only while each
// smaller plan fails with the same message (and reproduces it on a second
// run), so a message that quoted trace positions or reasons, which depend
// on goroutine interleavings, would stop the shrinking at the first plan.
// What failed, the plan and the replay command are logged just above it.
const failureMessage = "%s broke an invariant (logged above, with the plan and the command that replays it)"

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// savePlan writes plan under testdata/plans, named after the running test
// (and the subject);
// the last failing (shrunk) plan overwrites the earlier ones.
func savePlan(t *rapid.T, subject string, plan *sim.Plan) string {
	dir := filepath.Join("testdata", "plans")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("cannot save the plan: %v", err)
		return "(not saved)"
	}
	base := t.Name()
	if !strings.Contains(base, subject) {
		base += "_" + subject
	}
	file := filepath.Join(dir, unsafeChars.ReplaceAllString(base, "_")+".json")
	f, err := os.Create(file)
	if err != nil {
		t.Logf("cannot save the plan: %v", err)
		return "(not saved)"
	}
	defer f.Close()
	if err := plan.Save(f); err != nil {
		t.Logf("cannot save the plan: %v", err)
	}
	abs, _ := filepath.Abs(file)
	return abs
}

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// mutantProbe records, for the mutation score, the CPU time to the first
// failing plan and the last (shrunk) failing plan.
type mutantProbe struct {
	mu          sync.Mutex
	start       time.Duration
	firstFail   time.Duration
	firstAt     int // the evaluation that failed first (1-based)
	evaluations int
	failures    int
	lastPlan    *sim.Plan
	lastFailed  []string
	// progress, when set, gets a line every progressEvery plans.
	progress  io.Writer
	lastShown time.Time
}

// progressEvery is how often (wall clock) a property run prints progress.
const progressEvery = 5 * time.Second

func (p *mutantProbe) evaluated(plan *sim.Plan, failed []invariants.Verdict) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.evaluations++
	if p.progress != nil && time.Since(p.lastShown) >= progressEvery {
		p.lastShown = time.Now()
		state := "no failure yet"
		if p.failures > 0 {
			state = fmt.Sprintf("failing since plan %d, shrinking", p.firstAt)
		}
		fmt.Fprintf(p.progress, "  %d plans checked, %s (%s CPU)\n", p.evaluations, state, (cpuTime() - p.start).Round(time.Millisecond))
	}
	if len(failed) == 0 {
		return
	}
	if p.failures == 0 {
		p.firstFail = cpuTime() - p.start
		p.firstAt = p.evaluations
	}
	p.failures++
	p.lastPlan = plan
	p.lastFailed = p.lastFailed[:0]
	for _, v := range failed {
		p.lastFailed = append(p.lastFailed, v.Invariant)
	}
}

// mutantResult is what a child process reports to TestMutationScore.
type mutantResult struct {
	Subject     string        `json:"subject"`
	Seed        string        `json:"seed,omitempty"`
	Found       bool          `json:"found"`
	FirstFail   time.Duration `json:"firstFailCPU"`
	TotalCPU    time.Duration `json:"totalCPU"`
	Evaluations int           `json:"evaluations"`
	// ChecksToFirstFail is the number of plans run up to and including the
	// first failing one.
	ChecksToFirstFail int `json:"checksToFirstFail,omitempty"`
	ShrunkSteps       int `json:"shrunkSteps"`
	// ShrunkObjects is the number of initial objects of the shrunk plan.
	ShrunkObjects int      `json:"shrunkObjects"`
	Invariants    []string `json:"invariants,omitempty"`
}

// TestPropertyOfOneSubject property-tests the subject named by
// CACHELAB_PROPERTY_SUBJECT on every subject invariant it claims: `make
// property SUBJECT=bellerophon/no-uid-check CHECKS=100 [SEED=7]`. It prints
// the seed first, progress as it goes, and on failure the shrunk plan as
// steps, rapid's failfile and the command that replays the plan. It is
// also the child process of TestMutationScore, which sets
// CACHELAB_PROPERTY_OUT to collect a mutantResult. Skipped otherwise.
func TestPropertyOfOneSubject(t *testing.T) {
	subject, out := os.Getenv("CACHELAB_PROPERTY_SUBJECT"), os.Getenv("CACHELAB_PROPERTY_OUT")
	if subject == "" {
		t.Skip("set CACHELAB_PROPERTY_SUBJECT=<subject> (make property SUBJECT=...), or CACHELAB_MUTATION=1 for the mutation score")
	}
	if _, ok := sim.LookupSubject(subject); !ok {
		t.Fatalf("subject %q is not registered (known: %v)", subject, subjectNames())
	}
	seed := flag.Lookup("rapid.seed").Value.String()
	if seed == "0" {
		seed = strconv.FormatUint(uint64(time.Now().UnixNano())>>1, 10)
		if err := flag.Set("rapid.seed", seed); err != nil {
			t.Fatalf("cannot set -rapid.seed: %v", err)
		}
	}
	checks := flag.Lookup("rapid.checks").Value.String()
	fmt.Fprintf(os.Stderr, "property-testing %s: %s plans, seed %s (the same search again: make property SUBJECT=%s CHECKS=%s SEED=%s)\n", subject, checks, seed, subject, checks, seed)
	pr := &mutantProbe{start: cpuTime()}
	if out == "" {
		pr.progress = os.Stderr
	}
	defer func() {
		if out == "" {
			if pr.failures > 0 {
				fmt.Fprintf(os.Stderr, "%s: FAILED %v after %d plans (first failure at plan %d); the shrunk plan, the failfile and the replay command are above\n", subject, pr.lastFailed, pr.evaluations, pr.firstAt)
			} else {
				fmt.Fprintf(os.Stderr, "%s: every claimed invariant held on %d plans (seed %s)\n", subject, pr.evaluations, seed)
			}
			return
		}
		res := mutantResult{Subject: subject, Found: pr.failures > 0, FirstFail: pr.firstFail, Seed: seed,
			TotalCPU: cpuTime() - pr.start, Evaluations: pr.evaluations, ChecksToFirstFail: pr.firstAt, Invariants: pr.lastFailed}
		if pr.lastPlan != nil {
			res.ShrunkSteps, res.ShrunkObjects = len(pr.lastPlan.Steps), len(pr.lastPlan.Objects)
		}
		b, _ := json.Marshal(res)
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Errorf("cannot write the result: %v", err)
		}
	}()
	rapid.Check(t, property(subject, pr, claimedInvariants(subject)...))
}
