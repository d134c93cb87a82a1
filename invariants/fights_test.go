package invariants_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/invariants/tracebuild"
	"github.com/cachelab/cachelab/sim"
)

// fightRun: a converged run, then ctrl and the competitor set the replicas
// of ctrl's Deployment back and forth, rounds times each (the competitor
// first, reacting, never at a plan step).
func fightRun(rounds int) (*healthyRun, []int) {
	h := newHealthyRun()
	b := h.b
	d := b.Create(ctrl, tracebuild.Obj{Resource: "deployments", Namespace: "ns", Name: "web", Owner: h.parent.UID, Replicas: tracebuild.Int(2)})
	b.Desired(ctrl, true, "")
	var pos []int
	for i := range rounds {
		b.At(5*sec + sec*time.Duration(i))
		d.Replicas = tracebuild.Int(5)
		b.Update("competitor", "patch", d)
		pos = append(pos, b.Last())
		d.Replicas = tracebuild.Int(2)
		b.Update(ctrl, "update", d)
		pos = append(pos, b.Last())
	}
	return h, pos
}

// Issue 27: a write war until the deadline fails stable-reconciliation,
// naming both writers, the field and the counts.
func TestAFightUntilTheDeadlineFailsStableReconciliation(t *testing.T) {
	h, pos := fightRun(6)
	b := h.b
	b.At(9 * sec)
	b.CacheOfServer(ctrl, "bellerophons", "bellerophons")
	b.Final()
	tr := b.Trace("deadline")
	v := invariants.StableReconciliation(tr)
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, pos[2])
	for _, want := range []string{"ctrl fought with competitor over spec.replicas of deployments/ns/web", "6 write(s) against 6", "deadline"} {
		if !strings.Contains(v.Reason, want) {
			t.Errorf("reason lacks %q: %s", want, v.Reason)
		}
	}
	c := invariants.EventualConvergence(tr)
	wantStatus(t, c, invariants.Fail)
	if !strings.Contains(c.Reason, "fought with competitor") {
		t.Errorf("eventual-convergence of a run cut short by a fight should give the fight as its reason: %s", c.Reason)
	}
}

// One competitor write that the controller repairs once is no fight.
func TestOneCompetitorWriteRepairedOncePassesStableReconciliation(t *testing.T) {
	h, _ := fightRun(1)
	b := h.b
	b.At(9 * sec)
	b.Final()
	v := invariants.StableReconciliation(b.Trace("quiet"))
	wantStatus(t, v, invariants.Pass)
}

// A back-and-forth the plan drives (a user step each time, each repaired
// by the controller) is not a fight, even when the run is cut short.
func TestAUserChangingAFieldByPlanStepsIsNotAFight(t *testing.T) {
	h := newHealthyRun()
	b := h.b
	d := b.Create(ctrl, tracebuild.Obj{Resource: "deployments", Namespace: "ns", Name: "web", Owner: h.parent.UID, Replicas: tracebuild.Int(2)})
	b.Desired(ctrl, true, "")
	for i := range 4 {
		b.At(5*sec + sec*time.Duration(i))
		b.Add(sim.Record{Kind: sim.RecStep, Actor: "user", Op: "patch", Step: i})
		d.Replicas = tracebuild.Int(5)
		b.Update("user", "patch", d)
		d.Replicas = tracebuild.Int(2)
		b.Update(ctrl, "update", d)
	}
	b.Final()
	v := invariants.StableReconciliation(b.Trace("deadline"))
	if v.Status == invariants.Fail && strings.Contains(v.Reason, "fought") {
		t.Fatalf("plan steps are not a fight: %s", v.Reason)
	}
}

// eventual-convergence quotes the reason of the end of the run (RecFinal's
// Detail, recorded by the sim), not the one of the first false state.
func TestEventualConvergenceQuotesTheLastStatesReason(t *testing.T) {
	h := newHealthyRun()
	b := h.b
	b.Desired(ctrl, false, "wants 4 pods and has no ReplicaSet")
	b.At(10 * sec)
	b.CacheOfServer(ctrl, "bellerophons", "bellerophons")
	b.CacheOfServer(ctrl, "pods", "pods")
	final := b.Final()
	tr := b.Trace("deadline")
	tr.Records[final.Pos].Detail = "wants 1 pod and has 2 ReplicaSets of its template"
	v := invariants.EventualConvergence(tr)
	wantStatus(t, v, invariants.Fail)
	if !strings.Contains(v.Reason, "wants 1 pod and has 2") {
		t.Fatalf("reason should be the last state's: %s", v.Reason)
	}
}

// convergedWithStatus: a converged run, then ctrl writes p's status
// terminating=0 (the content at convergence) and the run settles.
func convergedWithStatus() (*healthyRun, tracebuild.Obj) {
	h := newHealthyRun()
	p := h.parent
	p.Status = map[string]any{"terminating": 0}
	p = h.b.Update(ctrl, "update/status", p)
	h.b.Desired(ctrl, true, "")
	return h, p
}

// H6's job-156 shape: the controller deletes two Pods, writes status
// terminating=2 from its cache (still showing them), its informer then
// delivers the Pods' removal, and it writes terminating=0 again. Each
// write reports what the informer had delivered: not a flap.
func TestAStatusThatFollowsDeliveredEventsIsNotAFlap(t *testing.T) {
	for _, heard := range []bool{true, false} {
		h, p := convergedWithStatus()
		h.b.At(5 * sec)
		pod0 := h.b.Delete(ctrl, "pods", "ns", "p-0")
		p.Status = map[string]any{"terminating": 2}
		h.b.Update(ctrl, "update/status", p)
		if heard {
			h.b.Handle(ctrl, "pods", "DELETED", pod0)
		}
		p.Status = map[string]any{"terminating": 0}
		h.b.Update(ctrl, "update/status", p)
		back := h.b.Last()
		h.b.At(9 * sec)
		h.b.Final()
		v := invariants.StableReconciliation(h.b.Trace("quiet"))
		if heard {
			wantStatus(t, v, invariants.Pass)
			continue
		}
		// The same writes with nothing heard in between: same inputs,
		// different outputs, a flap.
		wantStatus(t, v, invariants.Fail)
		wantPositions(t, v, back)
	}
}

// H6's job-4 shape: after convergence the controller strips the last
// finalizer of a terminating Pod: the store records the Pod's last state
// (finalizer still listed) and the watch says DELETED. A removal is not a
// write that changed nothing; the same record with no removal is.
func TestAPatchThatStripsTheLastFinalizerIsNotANoOp(t *testing.T) {
	for _, removed := range []bool{true, false} {
		h, _ := convergedWithStatus()
		pod := h.pod0
		pod.Finalizers = []string{"batch.kubernetes.io/job-tracking"}
		pod = h.b.Update("user", "update", pod)
		h.b.Desired(ctrl, true, "")
		h.b.At(5 * sec)
		if removed {
			last := h.b.RemoveByUpdate(ctrl, pod)
			h.b.Sent(ctrl, "ctrl/pods#1", "DELETED", last)
		} else {
			h.b.Update(ctrl, "patch", pod)
		}
		h.b.At(9 * sec)
		h.b.Final()
		v := invariants.StableReconciliation(h.b.Trace("quiet"))
		if removed {
			wantStatus(t, v, invariants.Pass)
		} else {
			wantStatus(t, v, invariants.Fail)
		}
	}
}
