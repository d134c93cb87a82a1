package invariants_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/invariants/tracebuild"
)

const ctrl = "ctrl" // the subject's actor name in hand-built traces

var sec = time.Second

// healthyRun is a small converged run: the user creates parent p with
// replicas=2; ctrl hears of it, creates two pods it owns, hears of them, and
// desired == actual holds. Every cache equals the server at the end.
type healthyRun struct {
	b          *tracebuild.Builder
	parent     tracebuild.Obj
	pod0, pod1 tracebuild.Obj
}

func newHealthyRun() *healthyRun {
	b := tracebuild.New(ctrl)
	h := &healthyRun{b: b}
	b.At(0)
	b.WatchOpen(ctrl, "ctrl/bellerophons#1", "bellerophons", true)
	b.WatchOpen(ctrl, "ctrl/pods#1", "pods", true)
	b.Signal(ctrl, invariants.SignalInformer, true, "bellerophons", "")
	b.Signal(ctrl, invariants.SignalHandler, true, "bellerophons", "bellerophons")
	b.At(1 * sec)
	h.parent = b.Create("user", tracebuild.Obj{Resource: "bellerophons", Namespace: "ns", Name: "p", Replicas: tracebuild.Int(2)})
	b.Desired(ctrl, false, "0 of 2 pods")
	b.At(2 * sec)
	b.Deliver(ctrl, "ctrl/bellerophons#1", "ADDED", h.parent)
	b.Handle(ctrl, "bellerophons", "ADDED", h.parent)
	b.At(3 * sec)
	h.pod0 = b.Create(ctrl, tracebuild.Obj{Resource: "pods", Namespace: "ns", Name: "p-0", Owner: h.parent.UID})
	h.pod1 = b.Create(ctrl, tracebuild.Obj{Resource: "pods", Namespace: "ns", Name: "p-1", Owner: h.parent.UID})
	b.Desired(ctrl, true, "")
	b.At(4 * sec)
	b.Deliver(ctrl, "ctrl/pods#1", "ADDED", h.pod0)
	b.Handle(ctrl, "pods", "ADDED", h.pod0)
	b.Deliver(ctrl, "ctrl/pods#1", "ADDED", h.pod1)
	b.Handle(ctrl, "pods", "ADDED", h.pod1)
	return h
}

// end takes the caches (equal to the server), the final state, and ends the
// trace quiet at 10s.
func (h *healthyRun) end() *tracebuild.Builder {
	h.b.At(10 * sec)
	h.b.CacheOfServer(ctrl, "bellerophons", "bellerophons")
	h.b.CacheOfServer(ctrl, "pods", "pods")
	h.b.Final()
	return h.b
}

func wantStatus(t *testing.T, v invariants.Verdict, want invariants.Status) {
	t.Helper()
	t.Logf("%s %s: %s %v", v.Invariant, v.Status, v.Reason, v.Positions)
	if v.Status != want {
		t.Fatalf("%s: status %s, want %s; reason: %s; positions %v; detail: %s", v.Invariant, v.Status, want, v.Reason, v.Positions, v.Detail)
	}
	if v.Reason == "" {
		t.Fatalf("%s: verdict has no reason", v.Invariant)
	}
	if want == invariants.Fail && len(v.Positions) == 0 {
		t.Fatalf("%s: a failing verdict must cite positions; reason: %s", v.Invariant, v.Reason)
	}
}

// wantPositions checks that the verdict cites every position in want.
func wantPositions(t *testing.T, v invariants.Verdict, want ...int) {
	t.Helper()
	for _, p := range want {
		if !slices.Contains(v.Positions, p) {
			t.Fatalf("%s: positions %v do not cite %d; reason: %s", v.Invariant, v.Positions, p, v.Reason)
		}
	}
}
