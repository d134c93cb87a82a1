package lab_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// interleavedWorkload is one Bellerophon scaled 1 -> 2, with a user step
// that fails in every run (a patch of a Bellerophon that does not exist).
func interleavedWorkload(subject string) *sim.Plan {
	at := func(d time.Duration) sim.Duration { return sim.Duration(d) }
	return &sim.Plan{Version: sim.PlanVersion, Name: "interleaved", Seed: 5, Subject: subject,
		Objects:  []json.RawMessage{json.RawMessage(`{"apiVersion":"lab.cachelab.dev/v1alpha1","kind":"Bellerophon","metadata":{"name":"a","namespace":"default"},"spec":{"replicas":1,"version":"v1"}}`)},
		Kubelet:  &sim.Kubelet{ReadyAfter: at(time.Second)},
		Faults:   sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: at(20 * time.Millisecond)}},
		Deadline: at(time.Minute),
		Steps: []sim.Step{
			{At: at(500 * time.Millisecond), Actor: "user", Op: "patch", Resource: "bellerophons", Namespace: "default", Name: "ghost", Patch: json.RawMessage(`{"spec":{"replicas":2}}`)},
			{At: at(3 * time.Second), Actor: "user", Op: "patch", Resource: "bellerophons", Namespace: "default", Name: "a", Patch: json.RawMessage(`{"spec":{"replicas":2}}`)},
		}}
}

// An interleaved-writer plan adds a competitor's write to the workload: its
// reference must have that write too. With a workload step that fails in
// every run (left out of the targeted plan's reference), the reference plan
// had as many steps as the workload's and hunt took the workload's
// reference run (no competitor label): the correct Bellerophon failed
// matches-reference. It passes every plan now; the planted stale-status
// (a status merge patch from its cached copy) fails one. (drops-conflicts
// passes this workload: a later event brings its dropped key back.)
func TestHuntInterleavedWriterJudgesAgainstAReferenceWithTheCompetitorsWrite(t *testing.T) {
	for _, c := range []struct {
		subject  string
		wantFail bool
	}{
		{"bellerophon", false},
		{"bellerophon/stale-status", true},
	} {
		t.Run(c.subject, func(t *testing.T) {
			rep, err := lab.HuntPlans(lab.TestHost(t), []*sim.Plan{interleavedWorkload(c.subject)},
				lab.HuntOptions{Parallel: 1, Classes: []string{scenarios.ClassInterleaved}})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Rows) == 0 {
				t.Fatalf("no interleaved-writer plan generated (pruned: %+v)", rep.Pruned)
			}
			failed := rep.Failures()
			for _, r := range failed {
				t.Logf("#%d %s: %s %v %v", r.Index, r.Perturbation, r.Verdict, r.Reasons, r.Err)
			}
			if got := len(failed) > 0; got != c.wantFail {
				t.Errorf("%d of %d plans failed, want failures: %v", len(failed), len(rep.Rows), c.wantFail)
			}
		})
	}
}

// The lifecycle workloads of a mutant are its base subject's catalogue
// stories with a user delete, planned for the mutant; a subject no scenario
// names has none.
func TestLifecycleWorkloadsAreTheCataloguesStoriesWithADelete(t *testing.T) {
	ws, err := lab.LifecycleWorkloads("bellerophon/finalizer-never-removed")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range ws {
		names = append(names, w.Name)
		if w.Subject != "bellerophon/finalizer-never-removed" {
			t.Errorf("%s: subject %q", w.Name, w.Subject)
		}
		deletes := false
		for _, s := range w.Steps {
			deletes = deletes || (s.Actor == "user" && s.Op == "delete")
		}
		if !deletes {
			t.Errorf("%s: no user delete", w.Name)
		}
	}
	if !slices.Contains(names, "finalizer-cleanup") {
		t.Errorf("lifecycle workloads %v: want finalizer-cleanup (a Bellerophon deleted and left to its finalizer)", names)
	}
	if slices.Contains(names, "competing-writer") {
		t.Errorf("lifecycle workloads %v: competing-writer deletes nothing", names)
	}
	if ws, err := lab.LifecycleWorkloads("no-such-subject"); err != nil || len(ws) != 0 {
		t.Errorf("no-such-subject: %d workloads, %v; want none", len(ws), err)
	}
}

// HuntOrder runs the first plan of each (class, kind, target) before every
// repeat from a later workload, and in each tier the kinds take turns; no
// plan is dropped. Before, a campaign ran its plans in generation order: a
// workload's every stale-state plan before its first unobserved-state one,
// and every workload's Pod-create failure before the next kind.
func TestHuntOrderTakesEachKindInTurnAndRepeatsLast(t *testing.T) {
	mk := func(name, class, kind, target string) scenarios.Targeted {
		return scenarios.Targeted{Class: class, Kind: kind, Target: target, Perturbation: name}
	}
	ts := []scenarios.Targeted{
		// workload 1
		mk("A", scenarios.ClassStale, scenarios.KindStaleRestart, "x"),
		mk("B", scenarios.ClassStale, scenarios.KindStaleRestart, "y"),
		mk("C", scenarios.ClassUnobserved, scenarios.KindDownAcross, "z"),
		mk("D", scenarios.ClassRequest, scenarios.KindWriteFails, "create pods"),
		mk("H", scenarios.ClassRequest, scenarios.KindWriteTimesOut, "create pods"),
		// workload 2: E and F repeat A and D; G is new
		mk("E", scenarios.ClassStale, scenarios.KindStaleRestart, "x"),
		mk("F", scenarios.ClassRequest, scenarios.KindWriteFails, "create pods"),
		mk("G", scenarios.ClassRequest, scenarios.KindWriteFails, "create configmaps"),
		// workload 3: a qualified target (the kind's preferred moment)
		// goes before its kind's unqualified plans of every workload
		mk("Q", scenarios.ClassUnobserved, scenarios.KindDownAcross, "y (preferred)"),
	}
	var got []string
	for _, i := range lab.HuntOrder(ts) {
		got = append(got, ts[i].Perturbation)
	}
	// Tier 0: kinds in turn (stale restart, down across, write fails,
	// write times out): A Q D H, then B C G; tier 1: E F.
	want := []string{"A", "Q", "D", "H", "B", "C", "G", "E", "F"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if len(lab.HuntOrder(nil)) != 0 {
		t.Errorf("no plans: want an empty order")
	}
}

// The read-own-writes class on the catalogue's read-your-writes story
// (the user deletes web-config; the controller recreates it in a reconcile
// that writes no status): the ConfigMap create fails while the controller's
// watch of Bellerophons is held, so the Degraded it reports and the status
// that clears it are both writes its cache does not show yet. The real
// Bellerophon (it reads its own last write) passes every plan of the
// class; no-read-your-writes compares the cleared status with its cached
// copy, finds it unchanged and leaves Degraded on the server. Before the
// class, no targeted plan found this mutant (a failure alone, or a lag
// alone, leaves nothing to flip).
func TestHuntReadOwnWritesFindsAStatusComparedWithACopyOlderThanItsOwnWrite(t *testing.T) {
	s, err := scenarios.Get("read-your-writes")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		subject  string
		wantFail bool
	}{
		{"bellerophon", false},
		{"bellerophon/no-read-your-writes", true},
	} {
		t.Run(c.subject, func(t *testing.T) {
			p := s.PlanFor(c.subject)
			rep, err := lab.HuntPlans(lab.TestHost(t), []*sim.Plan{&p}, lab.HuntOptions{Parallel: 1, Classes: []string{scenarios.ClassOwnWrites}})
			if err != nil {
				t.Fatal(err)
			}
			kinds := 0
			for _, r := range rep.Rows {
				if r.Plan != nil && slices.ContainsFunc(r.Plan.Steps, func(st sim.Step) bool { return st.Op == "fail-next" }) {
					kinds++
				}
			}
			if kinds == 0 {
				t.Fatalf("no read-own-writes plan with a failed write generated (pruned: %+v)", rep.Pruned)
			}
			failed := rep.Failures()
			for _, r := range failed {
				t.Logf("#%d %s: %s %v %s", r.Index, r.Perturbation, r.Verdict, r.Reasons, r.Err)
			}
			if !c.wantFail && len(failed) > 0 {
				t.Errorf("%d of %d plans failed, want none", len(failed), len(rep.Rows))
			}
			if c.wantFail && !slices.ContainsFunc(failed, func(r lab.HuntRow) bool {
				return r.Verdict == "fail" && slices.Contains(r.Failed, "eventual-convergence") && strings.Contains(r.Perturbation, "fail the controller's write")
			}) {
				t.Errorf("no plan with a failed write failed eventual-convergence (%d failed of %d)", len(failed), len(rep.Rows))
			}
		})
	}
}

// With StopAtFirst, a workload whose fault-free reference run fails (the
// workload alone shows the bug: a finalizer never removed after the user's
// delete) is the campaign's first failure: it stops before any targeted
// plan, with one row of class reference naming the failed invariants.
// Before, the campaign ran targeted plans until one failed (plan 26 of
// 323 for finalizer-never-removed, though the fifth reference had already
// failed). The correct Bellerophon's reference passes: its targeted plans
// run.
func TestHuntStopsAtAReferenceThatFailsAlone(t *testing.T) {
	s, err := scenarios.Get("finalizer-cleanup")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		subject string
		stops   bool
	}{
		{"bellerophon/finalizer-never-removed", true},
		{"bellerophon", false},
	} {
		t.Run(c.subject, func(t *testing.T) {
			p := s.PlanFor(c.subject)
			rep, err := lab.HuntPlans(lab.TestHost(t), []*sim.Plan{&p}, lab.HuntOptions{Parallel: 1, StopAtFirst: true, Classes: []string{scenarios.ClassIntermediate}})
			if err != nil {
				t.Fatal(err)
			}
			f := rep.First()
			if !c.stops {
				if f != nil {
					t.Fatalf("the correct controller failed: %s %v %v", f.Class, f.Failed, f.Reasons)
				}
				if len(rep.Rows) == 0 || slices.ContainsFunc(rep.Rows, func(r lab.HuntRow) bool { return r.Class == lab.ClassReference }) {
					t.Fatalf("want the targeted plans run and no reference row: %d rows", len(rep.Rows))
				}
				return
			}
			if f == nil || f.Class != lab.ClassReference || len(rep.Rows) != 1 {
				t.Fatalf("want one row, the failing reference; got %d rows, first %+v", len(rep.Rows), f)
			}
			if !slices.Contains(f.Failed, "finalizers") || f.CPU <= 0 || f.Plan == nil {
				t.Errorf("the reference row: failed %v, CPU %s, plan %v", f.Failed, f.CPU, f.Plan != nil)
			}
		})
	}
}

// Within a kind, a plan aimed at the controller's repair of a user's
// change (scenarios.Targeted.Repair) runs before the kind's other
// qualified targets and the rest, whichever workload it comes from: the
// read-your-writes story's failed ConfigMap recreate went after the random
// workloads' failed creates (plan 135 of 333 for no-read-your-writes).
func TestHuntOrderRunsRepairsFirstInTheirKind(t *testing.T) {
	mk := func(name, target string, repair bool) scenarios.Targeted {
		return scenarios.Targeted{Class: scenarios.ClassOwnWrites, Kind: scenarios.KindErrorUnseen, Target: target, Perturbation: name, Repair: repair}
	}
	ts := []scenarios.Targeted{
		mk("A", "create pods", false),
		mk("B", "create pods (its reconcile wrote no status)", false),
		mk("C", "create configmaps (repairs the user's delete of one it made; its reconcile wrote no status)", true),
	}
	var got []string
	for _, i := range lab.HuntOrder(ts) {
		got = append(got, ts[i].Perturbation)
	}
	if want := []string{"C", "B", "A"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// A recreate behind a relist (a successor handed over as an update of its
// deleted predecessor) runs first in every tier, from whichever workload:
// the upstream Job's recreate finding came from the campaign's last
// workload, and its kind, first seen there, waited for every other kind's
// turn (plan 13 of 125 on seed 1001, random plan 5).
func TestHuntOrderRunsARecreateBehindARelistFirst(t *testing.T) {
	mk := func(name, kind, target string) scenarios.Targeted {
		return scenarios.Targeted{Class: scenarios.ClassUnobserved, Kind: kind, Target: target, Perturbation: name}
	}
	ts := []scenarios.Targeted{
		mk("A", scenarios.KindTombstone, "pods deleted by the controller"),
		mk("B", scenarios.KindDownAcross, "jobs patch by user"),
		// a later workload
		mk("C", scenarios.KindTombstone, "pods deleted by user"),
		mk("R", scenarios.KindRecreateHidden, "jobs removed by user and created again under the same name by user"),
		mk("S", scenarios.KindRecreateHidden, "jobs removed by user and created again under the same name by user"),
	}
	var got []string
	for _, i := range lab.HuntOrder(ts) {
		got = append(got, ts[i].Perturbation)
	}
	// Tier 0: R, then the kinds in turn (tombstone, down across), then
	// the tombstone's second target; tier 1: S.
	if want := []string{"R", "A", "B", "C", "S"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// A workload step that fails in its fault-free run with nothing written
// (interleavedWorkload's patch of a Bellerophon that does not exist; random
// workloads draw such steps: a create of an object that exists) is left out
// of the workload once, its reference run again without it: the targeted
// plans perturb the workload as it happens, and their reference is the
// workload's, served. Before, each targeted plan left the step out of its
// own reference and ran that reference: one fault-free run per plan (random
// workload 1 of seed 1: each of its plans cost two runs).
func TestHuntLeavesAWorkloadsFailingStepOutOnceNotOncePerPlan(t *testing.T) {
	w := interleavedWorkload("bellerophon")
	rep, err := lab.HuntPlans(lab.TestHost(t), []*sim.Plan{w},
		lab.HuntOptions{Parallel: 1, Classes: []string{scenarios.ClassRequest, scenarios.ClassIntermediate}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) < 2 {
		t.Fatalf("want several targeted plans, got %d (pruned %+v)", len(rep.Rows), rep.Pruned)
	}
	ghost := func(p *sim.Plan) bool {
		return slices.ContainsFunc(p.Steps, func(s sim.Step) bool { return s.Name == "ghost" })
	}
	if ref := rep.References[0].Job.Plan; ghost(ref) || rep.ReferenceRuns != 2 {
		t.Errorf("the workload's reference: ghost step kept %v, %d reference runs; want it left out, 2 runs (the first, then without it)", ghost(ref), rep.ReferenceRuns)
	}
	for _, r := range rep.Rows {
		if ghost(r.Plan) {
			t.Errorf("#%d %s: the plan keeps the step that fails in every run", r.Index, r.Perturbation)
		}
		if r.Verdict != "pass" {
			t.Errorf("#%d %s: the correct Bellerophon %s %v %v %s", r.Index, r.Perturbation, r.Verdict, r.Failed, r.Reasons, r.Err)
		}
	}
	if rep.JudgingRuns >= len(rep.Rows) {
		t.Errorf("%d fault-free judging runs for %d targeted plans: each plan ran a reference of its own", rep.JudgingRuns, len(rep.Rows))
	}
	t.Logf("%d plans, %d reference runs, %d judging runs", len(rep.Rows), rep.ReferenceRuns, rep.JudgingRuns)
}

// In its kind, a create of a name the server generates answered 504
// (scenarios.Targeted.Duplicates) runs before a repair and every other
// plan: made again, it is a duplicate child.
func TestHuntOrderRunsADuplicatingCreateFirstInItsKind(t *testing.T) {
	mk := func(name, target string, repair, dup bool) scenarios.Targeted {
		return scenarios.Targeted{Class: scenarios.ClassRequest, Kind: scenarios.KindWriteTimesOut, Target: target, Perturbation: name, Repair: repair, Duplicates: dup}
	}
	ts := []scenarios.Targeted{
		mk("A", "update bellerophons", false, false),
		mk("C", "create configmaps (repairs the user's delete of one it made)", true, false),
		mk("D", "create pods (a name the server generates: made again, a second object)", false, true),
	}
	var got []string
	for _, i := range lab.HuntOrder(ts) {
		got = append(got, ts[i].Perturbation)
	}
	if want := []string{"D", "C", "A"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
