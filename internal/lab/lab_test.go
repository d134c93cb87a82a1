package lab

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/reports"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// leaky is a subject that leaves a goroutine blocked forever, ignoring its
// context: the bubble cannot end cleanly.
type leaky struct{}

func (leaky) Start(ctx context.Context, env sim.Env) error {
	go func() { select {} }()
	return nil
}

func init() {
	sim.RegisterSubject(sim.SubjectInfo{Name: "lab-test/leaky", Summary: "leaves a goroutine blocked (lab tests only)", New: func() sim.Subject { return leaky{} }})
	sim.RegisterSubject(sim.SubjectInfo{Name: "lab-test/mutant", Summary: "a mutant (lab tests only)", Mutant: true, New: func() sim.Subject { return leaky{} }})
}

func TestARunThatLeavesGoroutinesBlockedKeepsItsTraceAndIsReportedAsAnError(t *testing.T) {
	p := &sim.Plan{Version: sim.PlanVersion, Name: "leak", Subject: "lab-test/leaky", Steps: []sim.Step{}, Deadline: sim.Duration(time.Minute), Quiet: sim.Duration(time.Second)}
	out := t.TempDir()
	results, _ := RunBatch(TestHost(t), []Job{NewJob(p, nil)}, Options{Out: out})
	r := results[0]
	if r.Err == nil || !strings.Contains(r.Err.Error(), "blocked goroutines remain") {
		t.Fatalf("Err = %v, want the bubble's deadlock reported", r.Err)
	}
	if r.Trace == nil || len(r.Verdicts) != len(invariants.All()) {
		t.Fatalf("trace %v, %d verdicts: the run's trace and verdicts were lost", r.Trace != nil, len(r.Verdicts))
	}
	if r.OK() {
		t.Errorf("a run error must count as unexpected")
	}
	if _, err := os.Stat(filepath.Join(out, "leak", "lab-test_leaky", TraceFile)); err != nil {
		t.Errorf("the trace file was not written: %v", err)
	}
}

func TestJUnitPassesExpectedFailuresAndFailsMismatches(t *testing.T) {
	s, err := scenarios.Parse("data/x.txt", []byte("scenario x\ntitle t\nedge 7\nat 1s user delete configmaps default/a\n----\nnaivecache: no-lost-deletes=fail eventual-convergence=pass\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := s.PlanFor("naivecache")
	r := &Result{Job: NewJob(&p, s), Verdicts: []invariants.Verdict{
		{Invariant: "no-lost-deletes", Status: invariants.Fail, Reason: "kept a deleted object"},
		{Invariant: "eventual-convergence", Status: invariants.Fail, Reason: "cache differs"},
		{Invariant: "per-object-order", Status: invariants.Fail, Reason: "not judged"},
		{Invariant: "sync-soundness/desired", Status: invariants.Fail, Reason: "measured"},
	}}
	r.Mismatches = s.Compare("naivecache", r.Verdicts)
	got := map[string]invariants.Verdict{}
	for _, v := range junitVerdicts(r) {
		got[v.Invariant] = v
	}
	for inv, want := range map[string]invariants.Status{
		"no-lost-deletes":      invariants.Pass,    // failed as expected
		"eventual-convergence": invariants.Fail,    // expected pass
		"per-object-order":     invariants.Unknown, // not judged
	} {
		if got[inv].Status != want {
			t.Errorf("%s: JUnit status %s (%s), want %s", inv, got[inv].Status, got[inv].Reason, want)
		}
	}
	if d := got["sync-soundness/desired"]; d.Label() != "unsound" {
		t.Errorf("sync-soundness/desired: JUnit shows %+v, want an unsound measurement (which reports.JUnit never fails on)", d)
	}
	if u := r.Unexpected(); len(u) != 1 || !strings.Contains(u[0], "eventual-convergence") {
		t.Errorf("Unexpected = %q, want the one mismatch", u)
	}
	if e := r.ExpectedFailures(); len(e) != 1 || e[0] != "no-lost-deletes" {
		t.Errorf("ExpectedFailures = %q", e)
	}
	if u, m := r.Unjudged(), r.Measured(); len(u) != 1 || u[0] != "per-object-order" || len(m) != 1 || m[0] != "desired" {
		t.Errorf("Unjudged = %q, Measured = %q", u, m)
	}
}

func TestAStoryClaimTheRunDoesNotBearOutIsUnexpectedAndFailsInJUnit(t *testing.T) {
	s, err := scenarios.Parse("data/x.txt", []byte("scenario x\ntitle t\nedge 7\nat 1s user delete configmaps default/a\n----\nnaivecache: no-lost-deletes=pass\nclaim naivecache: count write verb=delete = 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := s.PlanFor("naivecache")
	tr := &sim.Trace{Records: []sim.Record{{Kind: sim.RecStep, Op: "delete"}}}
	r := &Result{Job: NewJob(&p, s), Trace: tr, Verdicts: []invariants.Verdict{{Invariant: "no-lost-deletes", Status: invariants.Pass}}}
	r.Mismatches = append(s.Compare("naivecache", r.Verdicts), s.CheckClaims("naivecache", tr)...)
	if u := r.Unexpected(); len(u) != 1 || !strings.Contains(u[0], "count write verb=delete = 1") || !strings.Contains(u[0], "the run has 0") {
		t.Errorf("Unexpected = %q, want the false claim", u)
	}
	if e, why := expectation(r); e != reports.Unexpected || !strings.Contains(why, "claim") {
		t.Errorf("expectation = %v %q", e, why)
	}
	var found bool
	for _, v := range junitVerdicts(r) {
		if v.Invariant == "claim: count write verb=delete = 1" {
			found = v.Status == invariants.Fail && strings.Contains(v.Reason, "line 7")
		}
	}
	if !found {
		t.Errorf("JUnit has no failed claim: %+v", junitVerdicts(r))
	}
}

func TestRandomAndFilePlansCountEveryFailedPropertyButNotMeasurements(t *testing.T) {
	p := &sim.Plan{Name: "random-1", Subject: "naivecache"}
	r := &Result{Job: NewJob(p, nil), Verdicts: []invariants.Verdict{
		{Invariant: "no-lost-deletes", Status: invariants.Fail, Reason: "kept"},
		{Invariant: "sync-soundness/quiescence-synced", Status: invariants.Fail, Reason: "early"},
		{Invariant: "per-object-order", Status: invariants.Pass},
	}}
	if u := r.Unexpected(); len(u) != 1 || !strings.HasPrefix(u[0], "no-lost-deletes") {
		t.Errorf("Unexpected = %q", u)
	}
	if m := r.Measured(); len(m) != 1 || m[0] != "quiescence-synced" {
		t.Errorf("Measured = %q", m)
	}
}

// TestAMutantCaughtByARandomPlanIsCaughtAsInAScenario: "caught" means
// the same in a scenario and a random plan; a real subject's failure
// outside a scenario stays unexpected.
func TestAMutantCaughtByARandomPlanIsCaughtAsInAScenario(t *testing.T) {
	vs := []invariants.Verdict{
		{Invariant: "no-lost-deletes", Status: invariants.Fail, Reason: "kept"},
		{Invariant: "sync-soundness/desired", Status: invariants.Fail, Reason: "early", Measurement: true},
	}
	mut := &Result{Job: NewJob(&sim.Plan{Name: "random-1", Subject: "lab-test/mutant"}, nil), Verdicts: vs}
	if !mut.OK() || len(mut.Caught()) != 1 || mut.Caught()[0] != "no-lost-deletes" {
		t.Errorf("mutant: OK = %v, Caught = %q, Unexpected = %q; want caught no-lost-deletes", mut.OK(), mut.Caught(), mut.Unexpected())
	}
	if e, why := expectation(mut); e != reports.AsExpected || !strings.Contains(why, "caught: no-lost-deletes") {
		t.Errorf("mutant: expectation = %v %q", e, why)
	}
	for _, v := range junitVerdicts(mut) {
		if v.Invariant == "no-lost-deletes" && v.Status != invariants.Pass {
			t.Errorf("mutant: JUnit shows the catch as %s", v.Status)
		}
	}
	missed := &Result{Job: NewJob(&sim.Plan{Name: "random-2", Subject: "lab-test/mutant"}, nil), Verdicts: vs[1:]}
	if e, why := expectation(missed); e != reports.AsExpected || !strings.Contains(why, "not caught by this plan") {
		t.Errorf("mutant not caught: expectation = %v %q", e, why)
	}
	real := &Result{Job: NewJob(&sim.Plan{Name: "random-1", Subject: "naivecache"}, nil), Verdicts: vs}
	if real.OK() || len(real.Caught()) != 0 {
		t.Errorf("real subject: OK = %v, Caught = %q; want its failure unexpected", real.OK(), real.Caught())
	}
}

func TestRunIDFlattensTheSubjectsSlash(t *testing.T) {
	if got := RunID(&sim.Plan{Name: "tombstone-after-410", Subject: "bellerophon/no-uid-check"}); got != "tombstone-after-410/bellerophon_no-uid-check" {
		t.Errorf("RunID = %q", got)
	}
	if got := RunID(&sim.Plan{Seed: 9, Subject: "x"}); got != "plan-9/x" {
		t.Errorf("RunID of an unnamed plan = %q", got)
	}
}

func TestFaultDiffIgnoresTheOrderOfFaultsWithinOneInstantButNotTheirTimes(t *testing.T) {
	at := func(ms int) sim.Duration { return sim.Duration(time.Duration(ms) * time.Millisecond) }
	rec := func(pos int, t sim.Duration, fault string) sim.Record {
		return sim.Record{Pos: pos, At: t, Kind: sim.RecFault, Fault: fault}
	}
	a := &sim.Trace{Records: []sim.Record{rec(0, at(5000), "fail-next-503"), rec(1, at(5000), "compact")}}
	b := &sim.Trace{Records: []sim.Record{rec(0, at(5000), "compact"), rec(1, at(5000), "fail-next-503")}}
	if same, desc := FaultDiff(a, b); !same {
		t.Errorf("same faults at one instant in another order: %s", desc)
	}
	c := &sim.Trace{Records: []sim.Record{rec(0, at(5000), "compact"), rec(1, at(5800), "fail-next-503")}}
	if same, desc := FaultDiff(a, c); same || !strings.Contains(desc, "fault schedules differ at fault #1") {
		t.Errorf("a fault at another time: same=%v %s", same, desc)
	}
	d := &sim.Trace{Records: []sim.Record{rec(0, at(5000), "compact")}}
	if same, desc := FaultDiff(a, d); same || !strings.Contains(desc, "a has 1 more faults") || !strings.Contains(desc, "a = the recorded trace") {
		t.Errorf("a missing fault: same=%v %s", same, desc)
	}
}

func TestTheIndexSaysWhichRunsWentAsExpectedAndWhy(t *testing.T) {
	s, err := scenarios.Parse("data/x.txt", []byte("scenario x\ntitle t\nedge 7\nat 1s user delete configmaps default/a\n----\nnaivecache: no-lost-deletes=fail\nlegacy-deltafifo: no-lost-deletes=pass\n"))
	if err != nil {
		t.Fatal(err)
	}
	pn, pl := s.PlanFor("naivecache"), s.PlanFor("legacy-deltafifo")
	fails := []invariants.Verdict{
		{Invariant: "no-lost-deletes", Status: invariants.Fail, Reason: "kept a deleted object"},
		{Invariant: "sync-soundness/desired", Status: invariants.Fail, Reason: "measured"},
	}
	caught := &Result{Job: NewJob(&pn, s), Verdicts: fails}
	caught.Mismatches = s.Compare("naivecache", fails)
	missed := &Result{Job: NewJob(&pl, s), Verdicts: fails}
	missed.Mismatches = s.Compare("legacy-deltafifo", fails)
	random := &Result{Job: NewJob(&sim.Plan{Name: "random-1", Subject: "naivecache"}, nil), Verdicts: fails[1:]}
	out := t.TempDir()
	if err := WriteBatch(out, "cachelab: test batch", []*Result{caught, missed, random}, Options{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(out, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	html := string(data)
	for _, want := range []string{
		"cachelab: test batch: 3 runs",
		`2 as expected</span>`, `1 unexpected</span>`,
		"caught: no-lost-deletes; unsound sync: desired",
		"unexpected: no-lost-deletes (expected pass, got fail)",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("index lacks %q", want)
		}
	}
}

func TestAServedTraceIsReportedWithoutAReplayCommandAndReplayExplainsWhy(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, TraceFile)
	// As `cachelab serve` writes it: a plan with no subject and no steps.
	tr := &sim.Trace{Version: sim.TraceVersion, Plan: &sim.Plan{Version: sim.PlanVersion, Name: "serve"}, Outcome: "shutdown"}
	if err := sim.WriteTraceFile(trace, tr); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadInput(trace); err == nil || !strings.Contains(err.Error(), "recorded by `cachelab serve`") || !strings.Contains(err.Error(), "cachelab report "+trace) {
		t.Errorf("LoadInput of a served trace: err = %v, want it to say the trace comes from serve and how to render it", err)
	}
	html := filepath.Join(dir, ReportFile)
	if _, err := ReportTrace(trace, html, func(p string) string { return "cachelab replay " + p }); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "cachelab replay") {
		t.Errorf("the report of a served trace offers a replay command that cannot work")
	}
}

func TestNaturalLessSortsRandomPlansByNumber(t *testing.T) {
	ids := []string{"random-10/bellerophon", "random-2/bellerophon", "random-1/bellerophon", "a/x", "random-02/b"}
	sort.SliceStable(ids, func(i, j int) bool { return NaturalLess(ids[i], ids[j]) })
	want := []string{"a/x", "random-1/bellerophon", "random-02/b", "random-2/bellerophon", "random-10/bellerophon"}
	if !slices.Equal(ids, want) {
		t.Errorf("sorted %q, want %q", ids, want)
	}
}
