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

func TestHandlerSeeingAnOlderStateAfterRestartFailsPerObjectOrder(t *testing.T) {
	// EDGE 12: the new process lists from a stale replica at RV "0".
	h := newHealthyRun()
	b := h.b
	old := h.pod0
	h.pod0.Status = map[string]any{"phase": "Running"}
	newer := b.Update("kubelet", "update", h.pod0)
	seenNew := b.Handle(ctrl, "pods", "MODIFIED", newer)
	b.Crash(ctrl)
	b.Restart(ctrl)
	b.List(ctrl, "pods", 1)
	stale := b.HandleInitial(ctrl, "pods", old)
	v := invariants.PerObjectOrder(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, stale.Pos, seenNew.Pos)
	if !strings.Contains(v.Reason, "restart") {
		t.Fatalf("reason should say the time travel crossed a restart: %q", v.Reason)
	}
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
