package naivecache

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim"
	st "github.com/cachelab/cachelab/subjects/internal/subjecttest"
)

// TestNaiveCacheUnderSimConvergesAndLeavesAFullTrace: without faults, the
// registered subject, driven by sim.Run, converges (a user update and
// delete included) and leaves handler, queue, reconcile, signal and cache
// records.
func TestNaiveCacheUnderSimConvergesAndLeavesAFullTrace(t *testing.T) {
	tr := st.Run(t, &sim.Plan{Version: sim.PlanVersion, Seed: 1, Subject: Name,
		Objects: []json.RawMessage{st.CM("a", map[string]string{"k": "1"}), st.CM("b", nil)},
		Steps: []sim.Step{
			{At: st.At(2 * time.Second), Actor: "user", Op: "update", Object: st.CM("a", map[string]string{"k": "2"})},
			{At: st.At(4 * time.Second), Actor: "user", Op: "delete", Resource: "configmaps", Namespace: "default", Name: "b"},
		}})
	st.RequireFullSimTrace(t, tr, Name)
	if got := st.Names(st.CacheAtEnd(t, tr, Name)); !slices.Equal(got, []string{"a", "a-mirror"}) {
		t.Errorf("cache at the end %v, want [a a-mirror]", got)
	}
}

// TestNaiveCacheUnderSimSaysSyncedBeforeItsOwnWriteIsDelivered is
// EDGE-CASES 4 as a sim plan: every watch event is delivered 1s late; the
// controller writes a-mirror on the first "synced" (100ms), and the signal
// stays true until that write's event is delivered a second later.
func TestNaiveCacheUnderSimSaysSyncedBeforeItsOwnWriteIsDelivered(t *testing.T) {
	tr := st.Run(t, &sim.Plan{Version: sim.PlanVersion, Seed: 1, Subject: Name,
		Objects: []json.RawMessage{st.CM("a", nil)},
		Faults:  sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: st.At(time.Second)}},
	})
	write := st.Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWrite && r.Name == "a-mirror" && r.Verb == "create" })
	delivered := st.Find(tr, func(r sim.Record) bool {
		return r.Kind == sim.RecDelivered && r.Name == "a-mirror" && r.Actor == Name
	})
	synced := st.Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecSignal && r.Signal == SignalQuiescence && r.Value })
	if len(write) != 1 || len(delivered) == 0 || len(synced) < 2 {
		t.Fatalf("want one a-mirror create, its delivery and two 'synced' flips; got %d, %d, %d", len(write), len(delivered), len(synced))
	}
	if synced[0].At.D() != 100*time.Millisecond || write[0].At.D() != 100*time.Millisecond || delivered[0].At.D() != 1100*time.Millisecond {
		t.Errorf("synced at %s, a-mirror written at %s and delivered at %s; want 100ms, 100ms, 1.1s", synced[0].At, write[0].At, delivered[0].At)
	}
	// Between the write and its delivery nothing flipped the signal back.
	// The delivery's own effect (the flip to false) is at the delivery's
	// instant and may be recorded before the delivery record: the server's
	// delivery goroutine and the subject's record the same instant in
	// either order. So compare virtual times, not trace positions.
	for _, r := range st.Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecSignal && r.Signal == SignalQuiescence }) {
		if r.Pos > write[0].Pos && r.At < delivered[0].At {
			t.Errorf("signal flipped to %v at %s while a-mirror was in flight", r.Value, r.At)
		}
	}
}

// TestNaiveCacheUnderSimKeepsADeleteLostInA410Gap: with events delivered 1s
// late, b is deleted and the subject's watch expires before the delete is
// delivered. At the end the naive map still holds b and b-mirror, which the
// server (RecFinal) no longer has.
func TestNaiveCacheUnderSimKeepsADeleteLostInA410Gap(t *testing.T) {
	tr := st.Run(t, GapPlan(Name))
	if got := st.Names(st.CacheAtEnd(t, tr, Name)); !slices.Equal(got, []string{"a", "a-mirror", "b", "b-mirror"}) {
		t.Errorf("naive cache at the end %v, want b and b-mirror still there", got)
	}
	final, _ := st.Last(tr, sim.RecFinal)
	var cms []string
	for _, o := range final.Objects {
		if o.Resource == "configmaps" {
			cms = append(cms, o.Name)
		}
	}
	if !slices.Equal(cms, []string{"a", "a-mirror"}) {
		t.Errorf("server at the end %v, want [a a-mirror]", cms)
	}
}

// GapPlan is the 410-gap plan shared with the informer subjects' tests (a
// copy lives in package legacy): events 1s late, delete b at 3s, expire the
// subject's watch at once.
func GapPlan(subject string) *sim.Plan {
	return &sim.Plan{Version: sim.PlanVersion, Seed: 1, Subject: subject,
		Objects: []json.RawMessage{st.CM("a", nil), st.CM("b", nil)},
		Faults:  sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: st.At(time.Second)}},
		Steps: []sim.Step{
			{At: st.At(3 * time.Second), Actor: "user", Op: "delete", Resource: "configmaps", Namespace: "default", Name: "b"},
			{At: st.At(3 * time.Second), Actor: "faults", Op: "expire", Resource: "configmaps", Target: subject},
		}}
}

// TestNaiveCacheUnderLatencyAndDisconnectsLeavesAFullTrace: with random
// latency, broken watches and 410s on re-watch (seeded), the naive subject
// keeps running: it re-watches, relists, and its trace holds every kind of
// record, with at least one fault injected. (Whether it converges depends
// on whether a delete falls into a 410 gap: see the tests above.)
func TestNaiveCacheUnderLatencyAndDisconnectsLeavesAFullTrace(t *testing.T) {
	tr := st.Run(t, st.FaultyPlan(Name, 3))
	if tr.Outcome != "quiet" && tr.Outcome != "deadline" {
		t.Fatalf("outcome %q, want quiet or deadline", tr.Outcome)
	}
	for _, kind := range []sim.RecordKind{sim.RecHandler, sim.RecQueue, sim.RecReconcile, sim.RecSignal, sim.RecCache, sim.RecNote} {
		if len(st.Find(tr, func(r sim.Record) bool { return r.Kind == kind && r.Actor == Name })) == 0 {
			t.Errorf("no %s record from %s", kind, Name)
		}
	}
	if len(st.Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecFault })) == 0 {
		t.Error("no fault was injected: the plan tests nothing")
	}
	if len(st.Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWatchOpen && r.Actor == Name })) < 2 {
		t.Error("the subject never re-watched")
	}
}

// TestNaiveCacheRecoversFromACrashInTheMiddleOfAReconcile: crashed inside
// the reconcile of a's update and restarted 2s later with an empty map, the
// subject lists again, waits for quiescence and finishes the work.
func TestNaiveCacheRecoversFromACrashInTheMiddleOfAReconcile(t *testing.T) {
	st.RequireRecoveryFromCrash(t, st.Run(t, st.CrashPlan(Name)), Name)
}

// TestNaiveCacheRetriesForeverAMirrorDeletedDuringA410Gap: b is deleted and
// recreated while the watch is down, and the server's garbage collector
// removes b-mirror with the old b. The naive relist swaps the new b in
// ("create for key already cached") but keeps the dead b-mirror, owned by
// the old UID; the controller tries to adopt it, the server answers 404,
// and since nothing ever removes b-mirror from the map, the retry never
// ends: the run reaches its deadline with a reconcile failing every
// second. (Both informer subjects converge on the same plan.)
func TestNaiveCacheRetriesForeverAMirrorDeletedDuringA410Gap(t *testing.T) {
	tr := st.Run(t, st.RecreateGapPlan(Name))
	if tr.Outcome != "deadline" {
		t.Errorf("outcome %q, want deadline: the naive controller should never settle", tr.Outcome)
	}
	failed := st.Find(tr, func(r sim.Record) bool {
		return r.Kind == sim.RecReconcile && r.Op == "end" && r.Key == "default/b" && strings.Contains(r.Result, "not found")
	})
	// One retry a second from 3s to the 30s deadline.
	if len(failed) < 25 {
		t.Errorf("%d failed reconciles of default/b, want one a second until the deadline", len(failed))
	}
	var stale *sim.ObjectState
	for _, o := range st.CacheAtEnd(t, tr, Name) {
		if o.Name == "b-mirror" {
			stale = &o
		}
	}
	if stale == nil || stale.Owner == "" || slices.Contains(st.ServerNames(t, tr, "configmaps"), "b-mirror") {
		t.Errorf("want b-mirror in the naive cache (owned by the old b) and not on the server; cache %v", st.CacheAtEnd(t, tr, Name))
	}
	if d, _ := st.Last(tr, sim.RecDesired); d.Value {
		t.Error("desired == actual at the end: the new b got a mirror after all")
	}
}
