package lab

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/invariants/tracebuild"
	"github.com/cachelab/cachelab/sim"
)

// The controller of the tests below keeps, for ConfigMap "a", three
// children made one after the other (as a StatefulSet makes its Pods in
// order), each from the n "a" showed when it was made, and never changes
// them (as OnDelete keeps a Pod's template). With no fault it makes a-0
// at 1s, a-1 at 3s and a-2 at 5s; the user sets n=1 at 2s (userPatchPlan).

// child is one of the children a run makes: when, and from which n.
type child struct {
	at time.Duration
	n  string
}

// childrenRun builds the trace of a run of plan p in which the controller
// made children (named a-0, a-1, ... in order; extra adds a leftover) and
// the user's patch of step patch was played at patchAt (none when patch
// < 0). desired is the subject's last RecDesired; reordered has the
// controller's ConfigMap watch deliver "a" patched, then "a" as it was
// (per-object-order fails).
func childrenRun(p *sim.Plan, uid string, children []child, patch int, patchAt time.Duration, extra, desired, reordered bool) *sim.Trace {
	b := tracebuild.New("ctrl")
	a := b.Create(sim.ClientSetup, tracebuild.Obj{Resource: "configmaps", Namespace: "default", Name: "a", UID: uid + "-a", Spec: map[string]any{"n": "0"}})
	patched := patch < 0
	doPatch := func() {
		b.At(patchAt)
		b.Add(sim.Record{Kind: sim.RecStep, Actor: "user", Step: patch, Op: "patch"})
		was := a
		a.Spec = map[string]any{"n": "1"}
		now := b.Update("user", "patch", a)
		if reordered {
			b.Deliver("ctrl", "ctrl/configmaps#1", "MODIFIED", now)
			b.Deliver("ctrl", "ctrl/configmaps#1", "MODIFIED", was)
		}
		patched = true
	}
	for i, c := range children {
		if !patched && patchAt <= c.at {
			doPatch()
		}
		b.At(c.at)
		b.Create("ctrl", tracebuild.Obj{Resource: "configmaps", Namespace: "default", Name: "a-" + string(rune('0'+i)), UID: uid + "-" + string(rune('0'+i)), Owner: a.UID, Spec: map[string]any{"n": c.n}})
	}
	if !patched {
		doPatch()
	}
	if extra {
		b.Create("ctrl", tracebuild.Obj{Resource: "configmaps", Namespace: "default", Name: "a-leftover", UID: uid + "-left", Owner: a.UID})
	}
	b.Desired("ctrl", desired, "")
	b.At(30 * time.Second)
	b.Final()
	tr := b.Trace("quiet")
	tr.Plan = p
	return tr
}

// orderedRuns serves the fault-free runs of the ordered controller,
// computed from each plan as the controller would run it: the children at
// 1s, 3s and 5s after its start (0s, or its restart), each from n=1 if
// the user's patch came before it. A wait-quiet before the patch lets all
// three be made first. alignedDesired is the desired state of a run whose
// patch is not at 2s (the aligned run), alignedReordered whether its
// watch delivers an older "a" after a newer. runs counts every run.
func orderedRuns(alignedDesired, alignedReordered bool, runs *int) func(*sim.Plan) (*sim.Trace, error) {
	return func(p *sim.Plan) (*sim.Trace, error) {
		*runs++
		start, patch, patchAt, desired, reordered := time.Duration(0), -1, time.Hour, true, false
		waits := false
		for i, s := range p.Steps {
			switch {
			case s.Actor == "controller" && s.Op == "restart":
				start = s.At.D()
			case s.Actor == "user" && s.Op == "wait-quiet":
				waits = true
			case s.Actor == "user" && s.Op == "patch":
				patch, patchAt = i, s.At.D()
			}
		}
		seen := patchAt
		if waits {
			seen = start + 5*time.Second + p.Quiet.D()
			patchAt = seen
		}
		if patch >= 0 && patchAt != 2*time.Second && !waits && start == 0 {
			desired, reordered = alignedDesired, alignedReordered
		}
		var children []child
		for _, at := range []time.Duration{time.Second, 3 * time.Second, 5 * time.Second} {
			c := child{at: start + at, n: "0"}
			if patch >= 0 && seen <= c.at {
				c.n = "1"
			}
			children = append(children, c)
		}
		return childrenRun(p, "run", children, patch, patchAt, false, desired, reordered), nil
	}
}

// fasterPlan is userPatchPlan with a fault (request errors from 0.5s)
// that, in the runs below, made the controller make a-1 at 1.5s, before
// the user's patch.
func fasterPlan() *sim.Plan {
	p := userPatchPlan()
	p.Steps = append(p.Steps, sim.Step{At: sim.Duration(500 * time.Millisecond), Actor: sim.ActorFaults, Op: "hold", Resource: "configmaps", Target: "ctrl", For: sim.Duration(time.Second)})
	return p
}

func judgeOrdered(t *testing.T, got *sim.Trace, alignedDesired, alignedReordered bool) (invariants.Verdict, *ReferenceCache, int) {
	t.Helper()
	ref, faulty := ReferencePlanOf(got)
	if !faulty {
		t.Fatal("the faulted plan reads as fault-free")
	}
	runs := 0
	c := &ReferenceCache{}
	v := c.Verdict(got, ref, invariants.ReferenceOptions{}, orderedRuns(alignedDesired, alignedReordered, &runs))
	return v, c, runs
}

// A controller whose faults made it faster than with no fault (a-1 made
// at 1.5s, before the user's patch at 2s) ends with a-0 and a-1 at n=0
// and a-2 at n=1: an end state the plan allows (a controller as fast with
// no fault ends so), but that neither the reference (a-1 after the patch:
// 0, 1, 1), nor the late-start run (1, 1, 1), nor the settled run (0, 0,
// 0) reaches. The aligned run plays the patch right after the fault-free
// controller made a-1 (3s), as this run's had made it before the patch,
// and ends as this run does: the verdict passes and says which run
// matched. StatefulSet seed 138 (docs/upstream.md, H2) is this class.
// Red before the aligned run (the verdict failed).
func TestMatchesReferencePassesAnEndStateAControllerAlignedWithTheRunsTimingReaches(t *testing.T) {
	p := fasterPlan()
	got := childrenRun(p, "f", []child{{time.Second, "0"}, {1500 * time.Millisecond, "0"}, {5 * time.Second, "1"}}, 0, 2*time.Second, false, true, false)
	v, c, runs := judgeOrdered(t, got, true, false)
	if v.Status != invariants.Pass {
		t.Fatalf("verdict %s: %s\n%s", v.Status, v.Reason, v.Detail)
	}
	for _, want := range []string{"due at 2s at 3.5s", "each group as long after the controller had made the creates and deletes it had made before it in this run as in this run", "found in 2 fault-free runs", "configmaps/default/a-1"} {
		if !strings.Contains(v.Reason, want) {
			t.Errorf("reason lacks %q: %s", want, v.Reason)
		}
	}
	// The reference twice, MoreReferenceRuns more (which end as it
	// does), the late-start and settled runs, then the search's one run
	// (the patch left out) and the aligned run.
	if want := 6 + MoreReferenceRuns; runs != want || c.AlignedRuns() != 2 || c.MoreRuns() != MoreReferenceRuns {
		t.Errorf("%d fault-free runs (%d aligned, %d more), want %d (2 aligned, %d more)", runs, c.AlignedRuns(), c.MoreRuns(), want, MoreReferenceRuns)
	}
	// The same faulted run judged again takes the aligned run from the
	// cache.
	ref, _ := ReferencePlanOf(got)
	if v := c.Verdict(got, ref, invariants.ReferenceOptions{}, orderedRuns(true, false, &runs)); v.Status != invariants.Pass || runs != 6+MoreReferenceRuns || c.AlignedRuns() != 2 {
		t.Errorf("judged again: %s, %d runs (%d aligned), want a pass and no new run", v.Status, runs, c.AlignedRuns())
	}
}

// What no fault-free timing reaches still fails, and the failure lists the
// timings tried: a child made from n=0 after one made from n=1 (a stale
// read), a leftover child, or an aligned run that misses the desired
// state or fails an invariant (its timing races the controller: an end
// state it reaches through a bug is no evidence).
func TestMatchesReferenceStillFailsWhatNoAlignedRunReaches(t *testing.T) {
	p := fasterPlan()
	faster := []child{{time.Second, "0"}, {1500 * time.Millisecond, "0"}, {5 * time.Second, "1"}}
	cases := map[string]struct {
		got                              *sim.Trace
		alignedDesired, alignedReordered bool
	}{
		"stale child":                          {childrenRun(p, "f", []child{{time.Second, "0"}, {3 * time.Second, "1"}, {5 * time.Second, "0"}}, 0, 2*time.Second, false, true, false), true, false},
		"leftover child":                       {childrenRun(p, "f", faster, 0, 2*time.Second, true, true, false), true, false},
		"aligned run misses the desired state": {childrenRun(p, "f", faster, 0, 2*time.Second, false, true, false), false, false},
		"aligned run fails an invariant":       {childrenRun(p, "f", faster, 0, 2*time.Second, false, true, false), true, true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			v, _, _ := judgeOrdered(t, c.got, c.alignedDesired, c.alignedReordered)
			if v.Status != invariants.Fail || !strings.Contains(v.Reason, "fault-free reference run's") {
				t.Fatalf("verdict %s, want the reference's failure: %s", v.Status, v.Reason)
			}
			wants := []string{"under other timing, none of which ends so", "started only after the last of them", "given time to settle", "as long after the controller had made"}
			switch {
			case c.alignedReordered:
				wants = append(wants, "no yardstick: the run failed per-object-order")
			case !c.alignedDesired:
				wants = append(wants, "no yardstick: the run did not reach the desired state")
			}
			for _, want := range wants {
				if !strings.Contains(v.Detail, want) {
					t.Errorf("detail lacks %q:\n%s", want, v.Detail)
				}
			}
		})
	}
}

// The aligned plan moves each group of the user's steps to just after the
// write that completes what the faulted run's controller had made before
// it, counts its runs, and says why there is none: a plan over the budget
// (no run made), a write no fault-free run makes.
func TestAlignedPlanPlacesEachGroupAfterTheWritesTheRunHadMadeBeforeIt(t *testing.T) {
	p := fasterPlan()
	got := childrenRun(p, "f", []child{{time.Second, "0"}, {1500 * time.Millisecond, "0"}, {5 * time.Second, "1"}}, 0, 2*time.Second, false, true, false)
	ref, _ := ReferencePlanOf(got)
	runs := 0
	aligned, n, err := AlignedPlan(got, ref, AlignedRunBudget, orderedRuns(true, false, &runs))
	if err != nil {
		t.Fatal(err)
	}
	if err := aligned.Validate(); err != nil {
		t.Fatalf("the aligned plan is invalid: %v", err)
	}
	if n != 1 || runs != 1 {
		t.Errorf("%d runs counted, %d made, want 1 (the steps at 0s alone)", n, runs)
	}
	if len(aligned.Steps) != 1 || aligned.Steps[0].Op != "patch" || aligned.Steps[0].At.D() != 3500*time.Millisecond {
		t.Errorf("aligned steps %+v, want the patch at 3.5s", aligned.Steps)
	}

	// A write no fault-free run makes: there is no aligned plan.
	odd := childrenRun(p, "f", []child{{time.Second, "0"}, {1500 * time.Millisecond, "0"}, {5 * time.Second, "1"}}, 0, 2*time.Second, false, true, false)
	for i, r := range odd.Records {
		if r.Kind == sim.RecWrite && r.Name == "a-1" {
			odd.Records[i].Name = "a-9"
		}
	}
	if _, _, err := AlignedPlan(odd, ref, AlignedRunBudget, orderedRuns(true, false, &runs)); err == nil || !strings.Contains(err.Error(), "never made") || !strings.Contains(err.Error(), "create configmaps/default/a-9 x1") {
		t.Errorf("error %v, want the write no fault-free run made", err)
	}

	// More groups than the budget allows: no run at all.
	many := ref.Clone()
	for i := 3; i <= AlignedRunBudget+1; i++ {
		s := many.Steps[0]
		s.At = sim.Duration(time.Duration(i) * time.Second)
		many.Steps = append(many.Steps, s)
	}
	runs = 0
	if _, n, err := AlignedPlan(got, many, AlignedRunBudget, orderedRuns(true, false, &runs)); err == nil || !strings.Contains(err.Error(), "over the budget") || n != 0 || runs != 0 {
		t.Errorf("error %v after %d runs, want over the budget and no run", err, runs)
	}
}

// The contract the user reads states the budget the code keeps.
func TestTheReferenceContractStatesTheAlignedRunBudget(t *testing.T) {
	if want := fmt.Sprintf("found in at most %d\nfault-free runs", AlignedRunBudget); !strings.Contains(invariants.ReferenceContract, want) {
		t.Errorf("invariants.ReferenceContract does not say %q", want)
	}
}
