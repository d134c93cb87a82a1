package lab

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/invariants/tracebuild"
	"github.com/cachelab/cachelab/sim"
)

// The user's plan of the tests below: ConfigMap "a" exists with n=0 and
// the user sets n=1 at 2s.
func userPatchPlan() *sim.Plan {
	return &sim.Plan{Version: sim.PlanVersion, Name: "patch", Seed: 1, Subject: "ctrl",
		Objects: []json.RawMessage{json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"n":"0"}}`)},
		Steps: []sim.Step{{At: sim.Duration(2 * time.Second), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "a",
			Patch: json.RawMessage(`{"data":{"n":"1"}}`)}},
		Deadline: sim.Duration(time.Minute), Quiet: sim.Duration(10 * time.Second)}
}

// copyRun builds the trace of a run of a controller that keeps, for
// ConfigMap "a", a child "a-copy" made from the n "a" had when the child
// was created (a StatefulSet Pod below its partition keeps its template
// so): the user's "a" ends at n=1, the copy at copied. extra adds a
// second child (a leftover). desired is the subject's last RecDesired
// (none when nil).
func copyRun(p *sim.Plan, uid, copied string, extra bool, desired *bool) *sim.Trace {
	b := tracebuild.New("ctrl")
	a := b.Create(sim.ClientSetup, tracebuild.Obj{Resource: "configmaps", Namespace: "default", Name: "a", UID: uid + "-a", Spec: map[string]any{"n": "0"}})
	b.At(time.Second)
	b.Create("ctrl", tracebuild.Obj{Resource: "configmaps", Namespace: "default", Name: "a-copy", UID: uid + "-copy", Owner: a.UID, Spec: map[string]any{"n": copied}})
	if extra {
		b.Create("ctrl", tracebuild.Obj{Resource: "configmaps", Namespace: "default", Name: "a-leftover", UID: uid + "-left", Owner: a.UID})
	}
	b.At(2 * time.Second)
	a.Spec = map[string]any{"n": "1"}
	b.Update("user", "patch", a)
	if desired != nil {
		b.Desired("ctrl", *desired, "")
	}
	b.At(20 * time.Second)
	b.Final()
	tr := b.Trace("quiet")
	tr.Plan = p
	return tr
}

// faultedCopyPlan is userPatchPlan with the controller down from 0.5s to
// 3s: it never sees n=0.
func faultedCopyPlan() *sim.Plan {
	p := userPatchPlan()
	p.Steps = append(p.Steps,
		sim.Step{At: sim.Duration(500 * time.Millisecond), Actor: "controller", Op: "crash"},
		sim.Step{At: sim.Duration(3 * time.Second), Actor: "controller", Op: "restart"})
	return p
}

// copyRuns serves the reference's runs: the fault-free plan's controller
// copies n=0, the late-start plan's (its restart) n=1. It counts the
// late-start runs.
func copyRuns(lateDesired *bool, lateRuns *int) func(*sim.Plan) (*sim.Trace, error) {
	yes := true
	return func(p *sim.Plan) (*sim.Trace, error) {
		for _, s := range p.Steps {
			if s.Actor == "controller" && s.Op == "restart" {
				*lateRuns++
				return copyRun(p, "late", "1", false, lateDesired), nil
			}
		}
		return copyRun(p, "ref", "0", false, &yes), nil
	}
}

func judgeCopy(t *testing.T, got *sim.Trace, lateDesired *bool) (invariants.Verdict, int) {
	t.Helper()
	ref, faulty := ReferencePlanOf(got)
	if !faulty {
		t.Fatal("the faulted plan reads as fault-free")
	}
	late := 0
	var c ReferenceCache
	v := c.Verdict(got, ref, invariants.ReferenceOptions{}, copyRuns(lateDesired, &late))
	return v, late
}

// A controller whose end state depends, with no fault, on which of the
// user's states it saw (the copy keeps the n it was made from) ends a run
// in which it never saw n=0 as a controller started after the user's
// patch does: one of the end states the plan allows. Before the late-start
// run this failed matches-reference (the StatefulSet's class H2, the
// HPA's H3 in docs/upstream.md).
func TestMatchesReferencePassesAnEndStateALateStartedControllerReaches(t *testing.T) {
	yes := true
	got := copyRun(faultedCopyPlan(), "f", "1", false, &yes)
	v, late := judgeCopy(t, got, &yes)
	if v.Status != invariants.Pass {
		t.Fatalf("verdict %s: %s\n%s", v.Status, v.Reason, v.Detail)
	}
	if late != 1 {
		t.Errorf("%d late-start runs, want 1", late)
	}
	for _, want := range []string{"started only after the last of them (2s, no fault)", "configmaps/default/a-copy", "depends on which of the user's states it saw"} {
		if !strings.Contains(v.Reason, want) {
			t.Errorf("reason lacks %q: %s", want, v.Reason)
		}
	}
	if !strings.Contains(v.Detail, `"0"`) {
		t.Errorf("detail does not show the reference's copy (n=0):\n%s", v.Detail)
	}
}

// The same run fails when it ends unlike both fault-free runs: a leftover
// child, or a copy of a value the user never set.
func TestMatchesReferenceStillFailsAnEndStateNoFaultFreeRunReaches(t *testing.T) {
	yes := true
	for name, got := range map[string]*sim.Trace{
		"leftover child": copyRun(faultedCopyPlan(), "f", "1", true, &yes),
		"wrong copy":     copyRun(faultedCopyPlan(), "f", "7", false, &yes),
	} {
		t.Run(name, func(t *testing.T) {
			v, _ := judgeCopy(t, got, &yes)
			if v.Status != invariants.Fail {
				t.Fatalf("verdict %s, want fail: %s", v.Status, v.Reason)
			}
			if !strings.Contains(v.Reason, "fault-free reference run's") {
				t.Errorf("the failure should be the comparison with the reference: %s", v.Reason)
			}
		})
	}
}

// Without a desired state that holds at the end of the run and of the
// late-start run, the reference's end state stays the only one: a
// controller with no other contract, or a late-start run that misses it,
// is no evidence that the plan allows another.
func TestMatchesReferenceNeedsTheDesiredStateForAnotherEndState(t *testing.T) {
	yes, no := true, false
	cases := map[string]struct{ run, late *bool }{
		"no desired state":             {nil, nil},
		"run misses its desired state": {&no, &yes},
		"late start misses it":         {&yes, &no},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			v, _ := judgeCopy(t, copyRun(faultedCopyPlan(), "f", "1", false, c.run), c.late)
			if v.Status != invariants.Fail {
				t.Fatalf("verdict %s, want fail: %s", v.Status, v.Reason)
			}
		})
	}
}

func TestLateStartPlanStartsTheControllerAfterTheLastStep(t *testing.T) {
	ref, _ := ReferencePlan(faultedCopyPlan())
	late, ok := LateStartPlan(ref)
	if !ok {
		t.Fatal("no late-start plan for a plan with a step at 2s")
	}
	if err := late.Validate(); err != nil {
		t.Fatalf("the late-start plan is invalid: %v", err)
	}
	first, last := late.Steps[0], late.Steps[len(late.Steps)-1]
	if first.Actor != "controller" || first.Op != "crash" || first.At != 0 {
		t.Errorf("first step %+v, want the controller's crash at 0s", first)
	}
	if last.Actor != "controller" || last.Op != "restart" || last.At != sim.Duration(2*time.Second) {
		t.Errorf("last step %+v, want the controller's restart at 2s", last)
	}
	if len(late.Steps) != len(ref.Steps)+2 || len(ref.Steps) != 1 {
		t.Errorf("late-start plan %d steps from %d, want the reference's one user step and the two controller steps", len(late.Steps), len(ref.Steps))
	}
	noSteps := userPatchPlan()
	noSteps.Steps[0].At = 0
	if _, ok := LateStartPlan(noSteps); ok {
		t.Error("a plan with no step after 0s has nothing a controller could miss: no late-start plan")
	}
}

// The cache keeps the latest reference run's trace, for the failing run's
// report to write beside it without running the reference again; another
// plan's is not handed out.
func TestReferenceCacheKeepsTheLatestReferenceTrace(t *testing.T) {
	yes := true
	got := copyRun(faultedCopyPlan(), "f", "1", false, &yes)
	ref, _ := ReferencePlanOf(got)
	var c ReferenceCache
	if _, ok := c.Trace(ref); ok {
		t.Fatal("an empty cache handed out a trace")
	}
	runs := 0
	run := func(p *sim.Plan) (*sim.Trace, error) {
		runs++
		return copyRun(p, "ref", "0", false, &yes), nil
	}
	c.Verdict(got, ref, invariants.ReferenceOptions{}, run)
	tr, ok := c.Trace(ref)
	if !ok || tr == nil || tr.Plan == nil || tr.Plan.Name != ref.Name {
		t.Fatalf("Trace(ref) = %v, %v after the reference ran, want its trace", tr, ok)
	}
	other := ref.Clone()
	other.Name += "-other"
	if _, ok := c.Trace(other); ok {
		t.Error("another plan was handed the reference's trace")
	}
	if runs == 0 {
		t.Error("the reference never ran")
	}
}

// twoCopiesRun builds the trace of a run of a controller that makes, for
// ConfigMap "a", child a-0 at 1s and a-1 at 3s (one at a time, as a
// StatefulSet makes its Pods in order), each from the n "a" showed it
// then, and keeps them (as OnDelete keeps a Pod's template). The user sets
// n=1 at 2s. first and second are the children's n; extra adds a
// leftover child; desired is the subject's last RecDesired.
func twoCopiesRun(p *sim.Plan, uid, first, second string, extra bool, desired *bool) *sim.Trace {
	b := tracebuild.New("ctrl")
	a := b.Create(sim.ClientSetup, tracebuild.Obj{Resource: "configmaps", Namespace: "default", Name: "a", UID: uid + "-a", Spec: map[string]any{"n": "0"}})
	b.At(time.Second)
	b.Create("ctrl", tracebuild.Obj{Resource: "configmaps", Namespace: "default", Name: "a-0", UID: uid + "-0", Owner: a.UID, Spec: map[string]any{"n": first}})
	b.At(2 * time.Second)
	a.Spec = map[string]any{"n": "1"}
	b.Update("user", "patch", a)
	b.At(3 * time.Second)
	b.Create("ctrl", tracebuild.Obj{Resource: "configmaps", Namespace: "default", Name: "a-1", UID: uid + "-1", Owner: a.UID, Spec: map[string]any{"n": second}})
	if extra {
		b.Create("ctrl", tracebuild.Obj{Resource: "configmaps", Namespace: "default", Name: "a-leftover", UID: uid + "-left", Owner: a.UID})
	}
	if desired != nil {
		b.Desired("ctrl", *desired, "")
	}
	b.At(20 * time.Second)
	b.Final()
	tr := b.Trace("quiet")
	tr.Plan = p
	return tr
}

// heldCopyPlan is userPatchPlan with the controller's ConfigMap watch held
// from 1.5s for 2s: it sees n=1 only at 3.5s, after it made a-1.
func heldCopyPlan() *sim.Plan {
	p := userPatchPlan()
	p.Steps = append(p.Steps, sim.Step{At: sim.Duration(1500 * time.Millisecond), Actor: sim.ActorFaults, Op: "hold", Resource: "configmaps", Target: "ctrl", For: sim.Duration(2 * time.Second)})
	return p
}

// twoCopiesRuns serves the fault-free runs of heldCopyPlan: the
// reference's controller makes a-1 after the patch (n=1), the late-start
// run's both from n=1, the settled run's (its wait-quiet before the
// patch) both from n=0. It counts the settled runs.
func twoCopiesRuns(settledDesired *bool, settledRuns *int) func(*sim.Plan) (*sim.Trace, error) {
	yes := true
	return func(p *sim.Plan) (*sim.Trace, error) {
		for _, s := range p.Steps {
			switch {
			case s.Actor == "controller" && s.Op == "restart":
				return twoCopiesRun(p, "late", "1", "1", false, &yes), nil
			case s.Actor == "user" && s.Op == "wait-quiet":
				*settledRuns++
				return twoCopiesRun(p, "settled", "0", "0", false, settledDesired), nil
			}
		}
		return twoCopiesRun(p, "ref", "0", "1", false, &yes), nil
	}
}

func judgeTwoCopies(t *testing.T, got *sim.Trace, settledDesired *bool) (invariants.Verdict, int) {
	t.Helper()
	ref, faulty := ReferencePlanOf(got)
	if !faulty {
		t.Fatal("the faulted plan reads as fault-free")
	}
	settled := 0
	var c ReferenceCache
	v := c.Verdict(got, ref, invariants.ReferenceOptions{}, twoCopiesRuns(settledDesired, &settled))
	return v, settled
}

// A controller that saw an older state late (its watch held over the
// user's patch) and made a-1 from it, as it would have made it had it been
// fast enough to finish before the patch, ends the run as a controller
// given time to settle on each of the user's states does: one of the end
// states the plan allows (the StatefulSet's class H2 left in
// docs/upstream.md: seeds 76, 85, 138 gate on, 76 off). Neither the
// reference (a-1 from n=1) nor the late-start run (both from n=1) ends so:
// before the settled run this failed matches-reference.
func TestMatchesReferencePassesAnEndStateAControllerSettlingOnEachStateReaches(t *testing.T) {
	yes := true
	v, settled := judgeTwoCopies(t, twoCopiesRun(heldCopyPlan(), "f", "0", "0", false, &yes), &yes)
	if v.Status != invariants.Pass {
		t.Fatalf("verdict %s: %s\n%s", v.Status, v.Reason, v.Detail)
	}
	if settled != 1 {
		t.Errorf("%d settled runs, want 1", settled)
	}
	for _, want := range []string{"given time to settle on each of them before the next (no fault)", "configmaps/default/a-1", "depends on which of the user's states it saw, and when"} {
		if !strings.Contains(v.Reason, want) {
			t.Errorf("reason lacks %q: %s", want, v.Reason)
		}
	}
}

// The same run still fails when it ends unlike all three fault-free
// runs (a leftover child, a value the user never set), or when the
// settled run misses the desired state.
func TestMatchesReferenceStillFailsWhatNoSettledRunReaches(t *testing.T) {
	yes, no := true, false
	cases := map[string]struct {
		got     *sim.Trace
		settled *bool
	}{
		"leftover child":           {twoCopiesRun(heldCopyPlan(), "f", "0", "0", true, &yes), &yes},
		"a value never set":        {twoCopiesRun(heldCopyPlan(), "f", "0", "7", false, &yes), &yes},
		"settled run misses it":    {twoCopiesRun(heldCopyPlan(), "f", "0", "0", false, &yes), &no},
		"run misses desired state": {twoCopiesRun(heldCopyPlan(), "f", "0", "0", false, &no), &yes},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			v, _ := judgeTwoCopies(t, c.got, c.settled)
			if v.Status != invariants.Fail || !strings.Contains(v.Reason, "fault-free reference run's") {
				t.Fatalf("verdict %s, want the reference's failure: %s", v.Status, v.Reason)
			}
		})
	}
}

// The settled plan waits for quiet before each group of the user's steps
// after 0s, keeps every step, and gives each wait a deadline's room.
func TestSettledPlanWaitsForQuietBeforeEachGroupOfSteps(t *testing.T) {
	ref, _ := ReferencePlan(userPatchPlan())
	ref.Steps = append(ref.Steps, ref.Steps[0], sim.Step{At: sim.Duration(4 * time.Second), Actor: "user", Op: "delete", Resource: "configmaps", Namespace: "default", Name: "a"})
	settled, ok := SettledPlan(ref)
	if !ok {
		t.Fatal("no settled plan for a plan with steps at 2s and 4s")
	}
	if err := settled.Validate(); err != nil {
		t.Fatalf("the settled plan is invalid: %v", err)
	}
	var ops []string
	for _, s := range settled.Steps {
		ops = append(ops, s.At.String()+" "+s.Actor+" "+s.Op)
	}
	want := []string{"2s user wait-quiet", "2s user patch", "2s user patch", "4s user wait-quiet", "4s user delete"}
	if strings.Join(ops, "; ") != strings.Join(want, "; ") {
		t.Errorf("steps %q, want %q", ops, want)
	}
	if settled.Deadline != 3*ref.Deadline {
		t.Errorf("deadline %s, want 3 x %s (two waits)", settled.Deadline, ref.Deadline)
	}
	noSteps := userPatchPlan()
	noSteps.Steps = nil
	if _, ok := SettledPlan(noSteps); ok {
		t.Error("a plan with no step after 0s has no state to settle on: no settled plan")
	}
}

// drawnRuns serves fault-free runs of a controller whose copy of "a"
// holds, with no fault, a value it draws per run (a message naming the
// first resource met ranging over a Go map): the i-th fault-free run
// (from 0) copies draws[i], or the last one past the end. It counts the
// runs. No desired state is recorded: only more fault-free runs can tell
// the draw from a fault's effect.
func drawnRuns(draws []string, runs *int) func(*sim.Plan) (*sim.Trace, error) {
	return func(p *sim.Plan) (*sim.Trace, error) {
		d := draws[min(*runs, len(draws)-1)]
		*runs++
		return copyRun(p, "ref", d, false, nil), nil
	}
}

// Two fault-free runs that drew alike do not make the value deterministic:
// when the faulted run differs on a path they agreed on, more fault-free
// runs are made (at most MoreReferenceRuns), and a path on which one of
// them differs is left out as the first two's disagreements are. Kueue's
// Pending message, which names cpu or memory by a map's order, failed so
// on random seeds (docs/real-operators.md).
func TestMatchesReferenceRunsMoreFaultFreeRunsWhenTheFirstTwoAgreedByChance(t *testing.T) {
	got := copyRun(faultedCopyPlan(), "f", "memory", false, nil)
	ref, _ := ReferencePlanOf(got)
	runs := 0
	var c ReferenceCache
	v := c.Verdict(got, ref, invariants.ReferenceOptions{}, drawnRuns([]string{"cpu", "cpu", "memory"}, &runs))
	if v.Status != invariants.Pass {
		t.Fatalf("verdict %s: %s\n%s", v.Status, v.Reason, v.Detail)
	}
	if want := "left out: differs between two fault-free runs: configmaps/default/a-copy spec.n"; !strings.Contains(v.Reason, want) {
		t.Errorf("reason %q: want %q", v.Reason, want)
	}
	if runs != 3 {
		t.Errorf("%d fault-free runs, want 3 (the third drew otherwise: no more needed)", runs)
	}
	// The next faulted run of the same plan uses what the cache learnt.
	again := copyRun(faultedCopyPlan(), "g", "cpu", false, nil)
	if v := c.Verdict(again, ref, invariants.ReferenceOptions{}, drawnRuns([]string{"cpu"}, &runs)); v.Status != invariants.Pass || runs != 3 {
		t.Errorf("second faulted run: verdict %s after %d runs, want a pass with no more run: %s", v.Status, runs, v.Reason)
	}
}

// A value every fault-free run agrees on is the plan's: the faulted run
// that ends otherwise still fails, after MoreReferenceRuns more runs and
// no more, and a later failing run of the same plan makes none.
func TestMatchesReferenceStillFailsWhatEveryFaultFreeRunAgreesOn(t *testing.T) {
	got := copyRun(faultedCopyPlan(), "f", "memory", false, nil)
	ref, _ := ReferencePlanOf(got)
	runs := 0
	var c ReferenceCache
	v := c.Verdict(got, ref, invariants.ReferenceOptions{}, drawnRuns([]string{"cpu"}, &runs))
	if v.Status != invariants.Fail || !strings.Contains(v.Reason, "configmaps/default/a-copy") {
		t.Fatalf("verdict %s: %s, want a failure naming a-copy", v.Status, v.Reason)
	}
	if want := 2 + MoreReferenceRuns; runs != want {
		t.Errorf("%d fault-free runs, want %d", runs, want)
	}
	v = c.Verdict(copyRun(faultedCopyPlan(), "g", "memory", false, nil), ref, invariants.ReferenceOptions{}, drawnRuns([]string{"cpu"}, &runs))
	if v.Status != invariants.Fail || runs != 2+MoreReferenceRuns {
		t.Errorf("second faulted run: verdict %s after %d runs, want a failure with no more run", v.Status, runs)
	}
}

// The contract the user reads states how many more fault-free runs the
// code makes.
func TestTheReferenceContractStatesTheMoreRuns(t *testing.T) {
	if want := fmt.Sprintf("up to %d more times without faults", MoreReferenceRuns); !strings.Contains(invariants.ReferenceContract, want) {
		t.Errorf("invariants.ReferenceContract does not say %q", want)
	}
}
