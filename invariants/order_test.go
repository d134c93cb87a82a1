package invariants_test

import (
	"strings"
	"testing"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/invariants/tracebuild"
)

func TestIncreasingRVsPassPerObjectOrder(t *testing.T) {
	wantStatus(t, invariants.PerObjectOrder(newHealthyRun().end().Trace("quiet")), invariants.Pass)
}

func TestRelistRedeliveringTheSameRVPassesPerObjectOrder(t *testing.T) {
	// EDGE 10: a relist hands an unchanged object to the handler again as
	// an update with the same RV.
	h := newHealthyRun()
	h.b.HandleUpdate(ctrl, "pods", h.pod0, h.pod0)
	wantStatus(t, invariants.PerObjectOrder(h.end().Trace("quiet")), invariants.Pass)
}

func TestReopenedWatchMayRedeliverAnObjectPerObjectOrder(t *testing.T) {
	h := newHealthyRun()
	h.b.WatchOpen(ctrl, "ctrl/pods#1", "pods", true) // same watcher name, new stream
	h.b.Deliver(ctrl, "ctrl/pods#1", "ADDED", h.pod0)
	wantStatus(t, invariants.PerObjectOrder(h.end().Trace("quiet")), invariants.Pass)
}

func TestWatchStreamDeliveringAnOlderRVFailsPerObjectOrder(t *testing.T) {
	h := newHealthyRun()
	b := h.b
	first := b.Deliver(ctrl, "ctrl/pods#2", "ADDED", h.pod1)
	old := h.pod1
	h.pod1.Status = map[string]any{"phase": "Running"}
	newer := b.Update("kubelet", "update", h.pod1)
	second := b.Deliver(ctrl, "ctrl/pods#2", "MODIFIED", newer)
	third := b.Deliver(ctrl, "ctrl/pods#2", "MODIFIED", old) // reordered in the stream
	_ = first
	v := invariants.PerObjectOrder(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, third.Pos, second.Pos)
}

func TestDuplicatedEventInAStreamFailsPerObjectOrderAndNamesTheFault(t *testing.T) {
	h := newHealthyRun()
	h.b.Fault("duplicate-event", true)
	h.b.Deliver(ctrl, "ctrl/pods#1", "ADDED", h.pod1) // delivered twice
	v := invariants.PerObjectOrder(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	if !strings.Contains(v.Reason, "contract-breaking") {
		t.Fatalf("reason should mention the contract-breaking fault: %q", v.Reason)
	}
}

// EDGE 12: a new process lists from a stale replica at RV "0" and its
// handler is shown an older state than the previous process had seen. Each
// informer incarnation's states are still a subsequence of the server's:
// the new cache starts older, as a restart onto a lagging replica makes it.
// That is not an order violation (what the controller does with the past
// is no-stale-harm's); the pass says it saw the time travel.
func TestHandlerSeeingAnOlderStateAfterRestartPassesPerObjectOrder(t *testing.T) {
	h := newHealthyRun()
	b := h.b
	old := h.pod0
	h.pod0.Status = map[string]any{"phase": "Running"}
	newer := b.Update("kubelet", "update", h.pod0)
	b.Handle(ctrl, "pods", "MODIFIED", newer)
	b.Crash(ctrl)
	b.Restart(ctrl)
	b.List(ctrl, "pods", 1)
	b.HandleInitial(ctrl, "pods", old)
	b.HandleUpdate(ctrl, "pods", old, newer) // the replica catches up
	v := invariants.PerObjectOrder(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Pass)
	if !strings.Contains(v.Reason, "1 object(s) went back in time across a restart") {
		t.Fatalf("reason should count the time travel across the restart: %q", v.Reason)
	}
}

// The same stale view within one process (no restart in between: a relist
// of the running informer from a lagging replica) is time travel of one
// informer: fails, naming both handler calls.
func TestHandlerSeeingAnOlderStateWithinOneProcessFailsPerObjectOrder(t *testing.T) {
	h := newHealthyRun()
	b := h.b
	old := h.pod0
	h.pod0.Status = map[string]any{"phase": "Running"}
	newer := b.Update("kubelet", "update", h.pod0)
	seenNew := b.Handle(ctrl, "pods", "MODIFIED", newer)
	b.List(ctrl, "pods", 1)
	stale := b.HandleInitial(ctrl, "pods", old)
	v := invariants.PerObjectOrder(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, stale.Pos, seenNew.Pos)
	if strings.Contains(v.Reason, "restart") {
		t.Fatalf("reason should not blame a restart: %q", v.Reason)
	}
}

// The new process's first view equals the old process's last; a later
// older one in the new process is its own time travel, not the restart's.
func TestHandlerGoingBackAfterARestartThatSawTheSameStateFailsPerObjectOrder(t *testing.T) {
	h := newHealthyRun()
	b := h.b
	old := h.pod0
	h.pod0.Status = map[string]any{"phase": "Running"}
	newer := b.Update("kubelet", "update", h.pod0)
	b.Handle(ctrl, "pods", "MODIFIED", newer)
	b.Crash(ctrl)
	b.Restart(ctrl)
	seenNew := b.HandleInitial(ctrl, "pods", newer)
	b.List(ctrl, "pods", 1)
	stale := b.HandleInitial(ctrl, "pods", old)
	v := invariants.PerObjectOrder(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, stale.Pos, seenNew.Pos)
}

// A crash does not start a process: between the crash and the restart the
// handler calls are the dying process's, and one that goes back in time
// there still fails.
func TestHandlerGoingBackBetweenCrashAndRestartFailsPerObjectOrder(t *testing.T) {
	h := newHealthyRun()
	b := h.b
	old := h.pod0
	h.pod0.Status = map[string]any{"phase": "Running"}
	newer := b.Update("kubelet", "update", h.pod0)
	seenNew := b.Handle(ctrl, "pods", "MODIFIED", newer)
	b.Crash(ctrl)
	stale := b.HandleInitial(ctrl, "pods", old)
	b.Restart(ctrl)
	v := invariants.PerObjectOrder(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, stale.Pos, seenNew.Pos)
}

func TestTombstoneCarryingAStaleRVPassesPerObjectOrder(t *testing.T) {
	h := newHealthyRun()
	b := h.b
	b.Delete("user", "pods", "ns", "p-0")
	b.Tombstone(ctrl, "pods", "pods", "ns", "p-0", &h.pod0)
	wantStatus(t, invariants.PerObjectOrder(b.Trace("quiet")), invariants.Pass)
}

func TestUpdateWhoseNewObjectIsOlderFailsPerObjectOrder(t *testing.T) {
	h := newHealthyRun()
	newer := h.pod0
	newer.Status = map[string]any{"phase": "Running"}
	newer = h.b.Update("kubelet", "update", newer)
	bad := h.b.HandleUpdate(ctrl, "pods-2", newer, h.pod0)
	v := invariants.PerObjectOrder(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, bad.Pos)
}

func TestTraceWithoutEventsIsUnknownForPerObjectOrder(t *testing.T) {
	b := tracebuild.New(ctrl)
	b.Create("user", tracebuild.Obj{Resource: "pods", Name: "a"})
	b.Final()
	wantStatus(t, invariants.PerObjectOrder(b.Trace("quiet")), invariants.Unknown)
}
