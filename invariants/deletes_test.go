package invariants_test

import (
	"testing"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/invariants/tracebuild"
)

// recreated deletes p-0 and recreates it with a new UID; it returns the old
// and new objects. Nothing is delivered.
func recreated(h *healthyRun) (old, new tracebuild.Obj) {
	b := h.b
	b.At(5 * sec)
	del := b.Delete("user", "pods", "ns", "p-0")
	nw := b.Create(ctrl, tracebuild.Obj{Resource: "pods", Namespace: "ns", Name: "p-0", Owner: h.parent.UID})
	return del, nw
}

func TestDeleteThenAddOfARecreatedPodPassesDeleteRecreate(t *testing.T) {
	h := newHealthyRun()
	del, nw := recreated(h)
	h.b.Handle(ctrl, "pods", "DELETED", del)
	h.b.Handle(ctrl, "pods", "ADDED", nw)
	wantStatus(t, invariants.DeleteRecreate(h.end().Trace("quiet")), invariants.Pass)
}

func TestRelistUpdateFromOldUIDToNewUIDPassesDeleteRecreate(t *testing.T) {
	// EDGE 8: while the watch was down, the relist shows the key with a new
	// UID as one update(old uid1, new uid2).
	h := newHealthyRun()
	_, nw := recreated(h)
	h.b.HandleUpdate(ctrl, "pods", h.pod0, nw)
	wantStatus(t, invariants.DeleteRecreate(h.end().Trace("quiet")), invariants.Pass)
}

func TestNewUIDWithoutDeleteOrUIDChangingUpdateFailsDeleteRecreate(t *testing.T) {
	h := newHealthyRun()
	_, nw := recreated(h)
	bad := h.b.Handle(ctrl, "pods", "ADDED", nw) // the handler still knows uid of the old p-0
	v := invariants.DeleteRecreate(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, bad.Pos)
}

func TestDeletionReportedAfterTheRecreationFailsDeleteRecreate(t *testing.T) {
	h := newHealthyRun()
	del, nw := recreated(h)
	h.b.HandleUpdate(ctrl, "pods", h.pod0, nw)
	late := h.b.Handle(ctrl, "pods", "DELETED", del) // the old UID's deletion, too late
	v := invariants.DeleteRecreate(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, late.Pos)
}

func TestTombstoneWithTheRightKeyPassesDeleteRecreate(t *testing.T) {
	h := newHealthyRun()
	h.b.At(5 * sec)
	h.b.Delete("user", "pods", "ns", "p-1")
	h.b.Tombstone(ctrl, "pods", "pods", "ns", "p-1", &h.pod1)
	wantStatus(t, invariants.DeleteRecreate(h.end().Trace("quiet")), invariants.Pass)
}

func TestTombstoneKeyedForAnotherObjectFailsDeleteRecreate(t *testing.T) {
	h := newHealthyRun()
	h.b.At(5 * sec)
	h.b.Delete("user", "pods", "ns", "p-1")
	// The tombstone's Key says p-0 but its object is p-1.
	bad := h.b.Tombstone(ctrl, "pods", "pods", "ns", "p-0", &h.pod1)
	v := invariants.DeleteRecreate(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, bad.Pos)
}

func TestHandlerThatNeverLearnsOfTheRecreationFailsDeleteRecreate(t *testing.T) {
	h := newHealthyRun()
	recreated(h) // nothing delivered to the handler
	v := invariants.DeleteRecreate(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
}

func TestRecreationJustBeforeADeadlineIsNotRequiredByDeleteRecreate(t *testing.T) {
	h := newHealthyRun()
	recreated(h)
	h.b.At(6 * sec)
	h.b.Final()
	wantStatus(t, invariants.DeleteRecreate(h.b.Trace("deadline")), invariants.Pass)
}

func TestTraceWithoutHandlerCallsIsUnknownForDeleteRecreate(t *testing.T) {
	b := tracebuild.New(ctrl)
	b.Create("user", tracebuild.Obj{Resource: "pods", Name: "a"})
	b.Final()
	wantStatus(t, invariants.DeleteRecreate(b.Trace("quiet")), invariants.Unknown)
}

func TestDeletedPodLeavingCacheAndHandlerPassesNoLostDeletes(t *testing.T) {
	h := newHealthyRun()
	h.b.At(5 * sec)
	del := h.b.Delete("user", "pods", "ns", "p-1")
	h.b.Deliver(ctrl, "ctrl/pods#1", "DELETED", del)
	h.b.Handle(ctrl, "pods", "DELETED", del)
	wantStatus(t, invariants.NoLostDeletes(h.end().Trace("quiet")), invariants.Pass)
}

func TestCacheStillHoldingADeletedPodFailsNoLostDeletes(t *testing.T) {
	// EDGE 18: the deletion happened between List and Watch and was lost.
	h := newHealthyRun()
	b := h.b
	b.At(5 * sec)
	b.Delete("user", "pods", "ns", "p-1")
	delPos := b.Last()
	b.At(10 * sec)
	b.CacheOfServer(ctrl, "bellerophons", "bellerophons")
	snap := b.Cache(ctrl, "pods", "pods", h.pod0, h.pod1)
	b.Final()
	v := invariants.NoLostDeletes(b.Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, snap.Pos, delPos)
}

func TestHandlerNeverToldOfADeletionFailsNoLostDeletes(t *testing.T) {
	h := newHealthyRun()
	h.b.At(5 * sec)
	h.b.Delete("user", "pods", "ns", "p-1")
	// No cache snapshots: only the handler's view shows it.
	h.b.Final()
	v := invariants.NoLostDeletes(h.b.Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
}

func TestDeletionYoungerThanTheBoundAtADeadlineIsNotRequiredByNoLostDeletes(t *testing.T) {
	h := newHealthyRun()
	h.b.At(5 * sec)
	h.b.Delete("user", "pods", "ns", "p-1")
	h.b.At(5*sec + 100*time.Millisecond)
	h.b.Final()
	wantStatus(t, invariants.NoLostDeletes(h.b.Trace("deadline")), invariants.Pass)
}

func TestTraceWithoutFinalStateIsUnknownForNoLostDeletes(t *testing.T) {
	wantStatus(t, invariants.NoLostDeletes(newHealthyRun().b.Trace("deadline")), invariants.Unknown)
}
