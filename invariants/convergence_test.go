package invariants_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/invariants/tracebuild"
	"github.com/cachelab/cachelab/sim"
)

func TestConvergedRunPassesEventualConvergence(t *testing.T) {
	tr := newHealthyRun().end().Trace("quiet")
	wantStatus(t, invariants.EventualConvergence(tr), invariants.Pass)
}

func TestCacheMissingAPodFailsEventualConvergenceWithDiff(t *testing.T) {
	h := newHealthyRun()
	b := h.b
	b.At(10 * sec)
	b.CacheOfServer(ctrl, "bellerophons", "bellerophons")
	snap := b.Cache(ctrl, "pods", "pods", h.pod0) // p-1 never arrived
	fin := b.Final()
	v := invariants.EventualConvergence(b.Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, snap.Pos, fin.Pos)
	if !strings.Contains(v.Detail, "pods/ns/p-1") {
		t.Fatalf("detail should show the missing pod p-1, got:\n%s", v.Detail)
	}
}

func TestCacheHoldingAStaleRVFailsEventualConvergence(t *testing.T) {
	h := newHealthyRun()
	b := h.b
	b.At(5 * sec)
	b.Update("kubelet", "update", tracebuild.Obj{Resource: "pods", Namespace: "ns", Name: "p-0", Owner: h.parent.UID, Status: map[string]any{"phase": "Running"}})
	b.At(10 * sec)
	b.CacheOfServer(ctrl, "bellerophons", "bellerophons")
	b.Cache(ctrl, "pods", "pods", h.pod0, h.pod1) // still the old p-0
	b.Final()
	wantStatus(t, invariants.EventualConvergence(b.Trace("quiet")), invariants.Fail)
}

func TestDesiredStateNotHoldingAtTheEndFailsEventualConvergence(t *testing.T) {
	h := newHealthyRun()
	d := h.b.Desired(ctrl, false, "status.readyReplicas is 0, want 2")
	tr := h.end().Trace("quiet")
	v := invariants.EventualConvergence(tr)
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, d.Pos)
	if !strings.Contains(v.Reason, "readyReplicas") {
		t.Fatalf("reason should carry the sim's why, got %q", v.Reason)
	}
}

func TestSettlingLaterThanTheBoundAfterTheLastDisturbanceFailsEventualConvergence(t *testing.T) {
	h := newHealthyRun()
	b := h.b
	// The subject only reacts to a user's scale 3 minutes later.
	b.At(20 * sec)
	p := h.parent
	p.Replicas = tracebuild.Int(1)
	p = b.Update("user", "update", p)
	b.Desired(ctrl, false, "2 pods, want 1")
	b.At(200 * sec)
	b.Handle(ctrl, "bellerophons", "MODIFIED", p)
	b.Delete(ctrl, "pods", "ns", "p-1")
	b.Desired(ctrl, true, "")
	b.CacheOfServer(ctrl, "bellerophons", "bellerophons")
	b.CacheOfServer(ctrl, "pods", "pods")
	b.Final()
	tr := b.Trace("quiet")
	wantStatus(t, invariants.EventualConvergence(tr), invariants.Fail)
	// With a bound of 5 minutes the same trace converges.
	inv, _ := invariants.Lookup(invariants.NameEventualConvergence)
	wantStatus(t, inv.CheckWith(tr, invariants.Options{Bound: 5 * time.Minute}), invariants.Pass)
}

func TestTraceWithoutFinalStateIsUnknownForEventualConvergence(t *testing.T) {
	h := newHealthyRun()
	h.b.CacheOfServer(ctrl, "pods", "pods")
	wantStatus(t, invariants.EventualConvergence(h.b.Trace("deadline")), invariants.Unknown)
}

func TestFailedRunIsUnknownForEventualConvergence(t *testing.T) {
	tr := newHealthyRun().end().Trace("error: subject failed to start")
	wantStatus(t, invariants.EventualConvergence(tr), invariants.Unknown)
}

func TestNoWriteAfterConvergencePassesStableReconciliation(t *testing.T) {
	tr := newHealthyRun().end().Trace("quiet")
	wantStatus(t, invariants.StableReconciliation(tr), invariants.Pass)
}

func TestNoOpWriteAfterConvergenceFailsStableReconciliation(t *testing.T) {
	h := newHealthyRun()
	h.b.At(30 * sec)
	h.b.Update(ctrl, "update", h.parent) // the same content again
	churn := h.b.Last()
	v := invariants.StableReconciliation(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	if v.Positions[0] != churn {
		t.Fatalf("first cited position is %d, want the no-op write at %d", v.Positions[0], churn)
	}
}

func TestFlappingStatusAfterConvergenceFailsStableReconciliation(t *testing.T) {
	h := newHealthyRun()
	h.b.At(30 * sec)
	p := h.parent
	p.Status = map[string]any{"phase": "A"}
	h.b.Update(ctrl, "update/status", p)
	p.Status = map[string]any{"phase": "B"}
	h.b.Update(ctrl, "update/status", p)
	p.Status = map[string]any{"phase": "A"}
	h.b.Update(ctrl, "update/status", p)
	flap := h.b.Last()
	v := invariants.StableReconciliation(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, flap)
}

func TestOneSettlingWriteAfterConvergencePassesStableReconciliation(t *testing.T) {
	// A condition turning False once everything is Ready: a real change,
	// made once.
	h := newHealthyRun()
	p := h.parent
	p.Status = map[string]any{"progressing": "False"}
	h.b.Update(ctrl, "update/status", p)
	wantStatus(t, invariants.StableReconciliation(h.end().Trace("quiet")), invariants.Pass)
}

func TestStillWritingWhenTheDeadlineCutTheRunShortFailsStableReconciliation(t *testing.T) {
	h := newHealthyRun()
	p := h.parent
	for i := 0; i < 5; i++ {
		h.b.At(time.Duration(20+i) * sec)
		p.Status = map[string]any{"tick": i}
		h.b.Update(ctrl, "update/status", p)
	}
	wantStatus(t, invariants.StableReconciliation(h.end().Trace("deadline")), invariants.Fail)
}

func TestEventObjectsAfterConvergenceDoNotBreakStableReconciliation(t *testing.T) {
	h := newHealthyRun()
	h.b.At(30 * sec)
	h.b.Create(ctrl, tracebuild.Obj{Resource: "events", Namespace: "ns", Name: "p.synced"})
	wantStatus(t, invariants.StableReconciliation(h.end().Trace("quiet")), invariants.Pass)
}

func TestWritesReactingToALaterUserChangeDoNotBreakStableReconciliation(t *testing.T) {
	h := newHealthyRun()
	b := h.b
	b.At(20 * sec)
	p := h.parent
	p.Replicas = tracebuild.Int(1)
	p = b.Update("user", "update", p)
	b.Desired(ctrl, false, "2 pods, want 1")
	b.Handle(ctrl, "bellerophons", "MODIFIED", p)
	b.Delete(ctrl, "pods", "ns", "p-1")
	b.Desired(ctrl, true, "")
	wantStatus(t, invariants.StableReconciliation(h.end().Trace("quiet")), invariants.Pass)
}

func TestSubjectWithoutDesiredRecordsIsUnknownForStableReconciliation(t *testing.T) {
	b := tracebuild.New(ctrl)
	o := b.Create("user", tracebuild.Obj{Resource: "configmaps", Name: "a"})
	b.Handle(ctrl, "configmaps", "ADDED", o)
	b.Final()
	wantStatus(t, invariants.StableReconciliation(b.Trace("quiet")), invariants.Unknown)
}

func TestNeverConvergedIsUnknownForStableReconciliation(t *testing.T) {
	h := newHealthyRun()
	h.b.Desired(ctrl, false, "never")
	wantStatus(t, invariants.StableReconciliation(h.end().Trace("quiet")), invariants.Unknown)
}

func TestSnapshotOfAnExternalStoreIsNotComparedWithTheServer(t *testing.T) {
	// Bellerophon snapshots its "backups" store (the world outside the
	// cluster) as a RecCache: it mirrors no server resource.
	h := newHealthyRun()
	h.b.Add(sim.Record{Kind: sim.RecCache, Actor: ctrl, Handler: "backup-store",
		Objects: []sim.ObjectState{{Resource: "backups", Namespace: "ns", Name: "p", UID: h.parent.UID}}})
	wantStatus(t, invariants.EventualConvergence(h.end().Trace("quiet")), invariants.Pass)
}

func TestDesiredRecordMadeStaleByAnUnseenRemovalIsUnknownForEventualConvergence(t *testing.T) {
	// The sim computes desired == actual from the write records; an update
	// that empties a terminating object's finalizers is recorded with the
	// object's last state, so only the DELETED event shows it went.
	h, p := finalizerRun()
	h.b.Desired(ctrl, false, "Bellerophon ns/p is terminating and still carries "+fin)
	gone := h.b.RemoveByUpdate(ctrl, p)
	h.b.Sent(ctrl, "ctrl/bellerophons#1", "DELETED", gone)
	tr := h.end().Trace("quiet")
	wantStatus(t, invariants.EventualConvergence(tr), invariants.Unknown)
	// Without the DELETED event nothing shows the removal: the verdict
	// stands as recorded.
	h2, p2 := finalizerRun()
	h2.b.Desired(ctrl, false, "Bellerophon ns/p is terminating and still carries "+fin)
	h2.b.Update(ctrl, "update", p2)
	wantStatus(t, invariants.EventualConvergence(h2.end().Trace("quiet")), invariants.Fail)
}

// A controller with a periodic resync (the HPA syncs every 15 s: a read and
// a reconcile, no write) never lets the run end quiet: the deadline cuts it.
// One settling write long before the cut, then only reads for longer than
// the plan's quiet period, is a controller that settled (upstream/hpa seed
// 15: a status condition back to True at 1m6s, then 4 minutes of reads);
// the same write within the quiet period before the cut is not.
func TestASettlingWriteFollowedByAQuietPeriodOfReadsBeforeTheDeadlinePasses(t *testing.T) {
	for _, writeAt := range []time.Duration{20 * sec, 290 * sec} {
		h := newHealthyRun()
		p := h.parent
		for at := 15 * sec; at < 300*sec; at += 15 * sec {
			h.b.At(at)
			h.b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "start", Key: "ns/p"})
			h.b.Request(ctrl, "get", "bellerophons", "ns", "p", 200)
			h.b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "end", Key: "ns/p", Result: "ok"})
			if at <= writeAt && writeAt < at+15*sec {
				h.b.At(writeAt)
				p.Status = map[string]any{"progressing": "False"}
				h.b.Update(ctrl, "update/status", p)
			}
		}
		h.b.At(300 * sec)
		h.b.CacheOfServer(ctrl, "bellerophons", "bellerophons")
		h.b.CacheOfServer(ctrl, "pods", "pods")
		h.b.Final()
		tr := h.b.Trace("deadline")
		tr.Plan.Quiet = sim.Duration(45 * sec)
		v := invariants.StableReconciliation(tr)
		want := invariants.Pass
		if writeAt > 300*sec-45*sec {
			want = invariants.Fail
		}
		if v.Status != want {
			t.Errorf("write at %s, deadline at 5m, quiet 45s: %s, want %s: %s", writeAt, v.Status, want, v.Reason)
		}
	}
}
