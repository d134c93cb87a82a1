package invariants_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/invariants/tracebuild"
	"github.com/cachelab/cachelab/sim"
)

const ms = time.Millisecond

// twoConfigMaps: the user creates configmaps a and b before ctrl starts;
// at 1s ctrl lists them (lag revisions behind).
func twoConfigMaps(lag int64) (*tracebuild.Builder, tracebuild.Obj, tracebuild.Obj) {
	b := tracebuild.New(ctrl)
	a := b.Create("user", tracebuild.Obj{Resource: "configmaps", Namespace: "ns", Name: "a"})
	c := b.Create("user", tracebuild.Obj{Resource: "configmaps", Namespace: "ns", Name: "b"})
	b.At(1 * sec)
	b.List(ctrl, "configmaps", lag)
	return b, a, c
}

func report(t *testing.T, tr *sim.Trace, signal string) invariants.SignalReport {
	t.Helper()
	for _, r := range invariants.SyncSoundness(tr) {
		if r.Signal == signal {
			return r
		}
	}
	t.Fatalf("SyncSoundness has no report for %q", signal)
	return invariants.SignalReport{}
}

func verdict(t *testing.T, tr *sim.Trace, signal string) invariants.Verdict {
	t.Helper()
	inv, ok := invariants.Lookup(invariants.NameSyncSoundnessPrefix + signal)
	if !ok {
		t.Fatalf("no invariant for signal %q", signal)
	}
	return inv.Check(tr)
}

func TestInformerAndHandlerSyncedAfterTheInitialListAreSoundWithTheirLatency(t *testing.T) {
	b, a, c := twoConfigMaps(0)
	b.At(1500 * ms)
	b.Signal(ctrl, invariants.SignalInformer, true, "configmaps", "")
	b.At(2 * sec)
	b.HandleInitial(ctrl, "cm", a)
	b.At(3 * sec)
	b.HandleInitial(ctrl, "cm", c)
	b.At(3500 * ms)
	b.Signal(ctrl, invariants.SignalHandler, true, "configmaps", "cm")
	tr := b.Trace("quiet")

	inf := report(t, tr, invariants.SignalInformer)
	if inf.Flips != 1 || inf.FalsePositives != 0 || !slices.Equal(inf.Latencies, []time.Duration{500 * ms}) {
		t.Fatalf("informer-synced report = %+v, want 1 sound flip 500ms after the list at 1s", inf)
	}
	h := report(t, tr, invariants.SignalHandler)
	if h.Flips != 1 || h.FalsePositives != 0 || !slices.Equal(h.Latencies, []time.Duration{500 * ms}) {
		t.Fatalf("handler-synced report = %+v, want 1 sound flip 500ms after b reached the handler at 3s", h)
	}
	wantStatus(t, verdict(t, tr, invariants.SignalInformer), invariants.Pass)
	wantStatus(t, verdict(t, tr, invariants.SignalHandler), invariants.Pass)
}

func TestHandlerSyncedBeforeTheHandlerSawEveryInitialObjectIsAFalsePositive(t *testing.T) {
	// EDGE 1: the store is synced, the slow handler has seen only a.
	b, a, _ := twoConfigMaps(0)
	bWrite := 1 // position of b's create
	b.At(2 * sec)
	b.HandleInitial(ctrl, "cm", a)
	flip := b.Signal(ctrl, invariants.SignalHandler, true, "configmaps", "cm")
	tr := b.Trace("quiet")
	rep := report(t, tr, invariants.SignalHandler)
	if rep.Flips != 1 || rep.FalsePositives != 1 || !slices.Equal(rep.Positions, []int{flip.Pos, bWrite}) {
		t.Fatalf("handler-synced report = %+v, want one false positive at %d missing the write at %d", rep, flip.Pos, bWrite)
	}
	v := verdict(t, tr, invariants.SignalHandler)
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, flip.Pos, bWrite)
}

func TestLastSyncRVSetBeforeTheHandlerSawEveryInitialObjectIsAFalsePositive(t *testing.T) {
	// EDGE 6: LastSyncResourceVersion is set once the list is queued; the
	// slow handler has seen only a. Judged by the handler, as
	// handler-synced is; once b reached the handler the same flip is sound.
	b, a, _ := twoConfigMaps(0)
	b.At(2 * sec)
	b.HandleInitial(ctrl, "cm", a)
	flip := b.Signal(ctrl, invariants.SignalLastSyncRV, true, "configmaps", "cm")
	tr := b.Trace("quiet")
	rep := report(t, tr, invariants.SignalLastSyncRV)
	if rep.Flips != 1 || rep.FalsePositives != 1 || rep.Positions[0] != flip.Pos {
		t.Fatalf("lastsync-rv report = %+v, want one false positive at %d", rep, flip.Pos)
	}
	wantStatus(t, verdict(t, tr, invariants.SignalLastSyncRV), invariants.Fail)

	b2, a2, b2Obj := twoConfigMaps(0)
	b2.At(2 * sec)
	b2.HandleInitial(ctrl, "cm", a2)
	b2.HandleInitial(ctrl, "cm", b2Obj)
	b2.At(2500 * ms)
	b2.Signal(ctrl, invariants.SignalLastSyncRV, true, "configmaps", "cm")
	rep = report(t, b2.Trace("quiet"), invariants.SignalLastSyncRV)
	if rep.Flips != 1 || rep.FalsePositives != 0 {
		t.Fatalf("lastsync-rv report = %+v, want one sound flip once both reached the handler", rep)
	}
}

func TestInformerSyncedFromAStaleReplicaListIsAFalsePositive(t *testing.T) {
	// EDGE 12: the list at RV "0" came from a replica one revision behind,
	// so b (written before the list started) is not in the store.
	b, _, _ := twoConfigMaps(1)
	b.At(1500 * ms)
	b.Signal(ctrl, invariants.SignalInformer, true, "configmaps", "")
	rep := report(t, b.Trace("quiet"), invariants.SignalInformer)
	if rep.FalsePositives != 1 {
		t.Fatalf("informer-synced report = %+v, want 1 false positive", rep)
	}
}

func TestInformerSyncedAfterWatchListInitialEventsIsSound(t *testing.T) {
	b := tracebuild.New(ctrl)
	a := b.Create("user", tracebuild.Obj{Resource: "configmaps", Namespace: "ns", Name: "a"})
	b.At(1 * sec)
	b.WatchOpen(ctrl, "ctrl/configmaps#1", "configmaps", true)
	b.At(1200 * ms)
	b.Deliver(ctrl, "ctrl/configmaps#1", "ADDED", a)
	b.At(1300 * ms)
	b.Signal(ctrl, invariants.SignalInformer, true, "configmaps", "")
	rep := report(t, b.Trace("quiet"), invariants.SignalInformer)
	if rep.Flips != 1 || rep.FalsePositives != 0 || !slices.Equal(rep.Latencies, []time.Duration{100 * ms}) {
		t.Fatalf("informer-synced report = %+v, want one sound flip with latency 100ms", rep)
	}
}

func TestInformerSyncedAfterRestartNeedsTheNewProcessToListAgain(t *testing.T) {
	b, _, _ := twoConfigMaps(0)
	b.At(1500 * ms)
	b.Signal(ctrl, invariants.SignalInformer, true, "configmaps", "")
	b.At(2 * sec)
	b.Crash(ctrl)
	b.Restart(ctrl)
	b.At(3 * sec)
	b.Signal(ctrl, invariants.SignalInformer, true, "configmaps", "") // nothing listed since the restart
	rep := report(t, b.Trace("quiet"), invariants.SignalInformer)
	if rep.Flips != 2 || rep.FalsePositives != 1 {
		t.Fatalf("informer-synced report = %+v, want 2 flips, the second a false positive", rep)
	}
}

func TestQuiescenceWhileAnEventIsStillInFlightIsAFalsePositive(t *testing.T) {
	// EDGE 4: the watch is slow; "no event for 10x the loop time" is not
	// "caught up".
	b := tracebuild.New(ctrl)
	b.WatchOpen(ctrl, "ctrl/configmaps#1", "configmaps", false)
	b.At(500 * ms)
	a := b.Create("user", tracebuild.Obj{Resource: "configmaps", Namespace: "ns", Name: "a"})
	b.At(1 * sec)
	flip := b.Signal(ctrl, invariants.SignalQuiescence, true, "configmaps", "")
	b.At(20 * sec)
	b.Deliver(ctrl, "ctrl/configmaps#1", "ADDED", a)
	tr := b.Trace("quiet")
	rep := report(t, tr, invariants.SignalQuiescence)
	if rep.FalsePositives != 1 || rep.Positions[0] != flip.Pos {
		t.Fatalf("quiescence report = %+v, want a false positive at %d", rep, flip.Pos)
	}
	wantStatus(t, verdict(t, tr, invariants.SignalQuiescence), invariants.Fail)
}

func TestRVSyncedAfterOurWriteArrivedIsSound(t *testing.T) {
	b := tracebuild.New(ctrl)
	b.WatchOpen(ctrl, "ctrl/configmaps#1", "configmaps", true)
	b.At(1 * sec)
	b.Signal(ctrl, invariants.SignalRV, false, "configmaps", "")
	a := b.Create(ctrl, tracebuild.Obj{Resource: "configmaps", Namespace: "ns", Name: "a"})
	b.At(1200 * ms)
	b.Deliver(ctrl, "ctrl/configmaps#1", "ADDED", a)
	b.At(1250 * ms)
	b.Signal(ctrl, invariants.SignalRV, true, "configmaps", "")
	tr := b.Trace("quiet")
	rep := report(t, tr, invariants.SignalRV)
	if rep.Flips != 1 || rep.FalsePositives != 0 || !slices.Equal(rep.Latencies, []time.Duration{50 * ms}) {
		t.Fatalf("rv-synced report = %+v, want one sound flip 50ms after our write arrived", rep)
	}
	wantStatus(t, verdict(t, tr, invariants.SignalRV), invariants.Pass)
}

func TestDesiredFlippingBeforeOurOwnWriteReachedTheCacheIsAFalsePositive(t *testing.T) {
	// desired == actual is judged on the server: it flips as soon as the
	// write lands, before the subject's watch brings it back.
	b := tracebuild.New(ctrl)
	b.WatchOpen(ctrl, "ctrl/configmaps#1", "configmaps", true)
	b.At(1 * sec)
	a := b.Create(ctrl, tracebuild.Obj{Resource: "configmaps", Namespace: "ns", Name: "a"})
	b.Desired(ctrl, true, "")
	b.At(1100 * ms)
	b.Deliver(ctrl, "ctrl/configmaps#1", "ADDED", a)
	rep := report(t, b.Trace("quiet"), invariants.SignalDesired)
	if !rep.Present || rep.Flips != 1 || rep.FalsePositives != 1 {
		t.Fatalf("desired report = %+v, want one false positive", rep)
	}
}

func TestAbsentOrNeverTrueSignalIsUnknown(t *testing.T) {
	b, _, _ := twoConfigMaps(0)
	b.Signal(ctrl, invariants.SignalHandler, false, "configmaps", "cm")
	tr := b.Trace("quiet")
	wantStatus(t, verdict(t, tr, invariants.SignalHandler), invariants.Unknown)
	wantStatus(t, verdict(t, tr, invariants.SignalQuiescence), invariants.Unknown)
	if rep := report(t, tr, invariants.SignalQuiescence); rep.Present {
		t.Fatalf("quiescence report says present on a trace without it: %+v", rep)
	}
}

func TestSyncSoundnessReportsEverySignalInTableOrder(t *testing.T) {
	reps := invariants.SyncSoundness(nil)
	var got []string
	for _, r := range reps {
		got = append(got, r.Signal)
	}
	if !slices.Equal(got, invariants.SignalNames()) {
		t.Fatalf("signals %v, want %v", got, invariants.SignalNames())
	}
}
