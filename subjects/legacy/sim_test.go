package legacy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim"
	st "github.com/cachelab/cachelab/subjects/internal/subjecttest"
)

var subjects = []string{DeltaFIFOName, RealFIFOName}

// TestInformerSubjectsUnderSimConvergeAndLeaveAFullTrace: without faults,
// both registered subjects, driven by sim.Run, converge through a user
// update and delete and leave handler, queue, reconcile, signal and cache
// records; their caches at the end equal the server's ConfigMaps.
func TestInformerSubjectsUnderSimConvergeAndLeaveAFullTrace(t *testing.T) {
	for _, name := range subjects {
		t.Run(name, func(t *testing.T) {
			tr := st.Run(t, &sim.Plan{Version: sim.PlanVersion, Seed: 1, Subject: name,
				Objects: []json.RawMessage{st.CM("a", map[string]string{"k": "1"}), st.CM("b", nil)},
				Steps: []sim.Step{
					{At: st.At(2 * time.Second), Actor: "user", Op: "update", Object: st.CM("a", map[string]string{"k": "2"})},
					{At: st.At(4 * time.Second), Actor: "user", Op: "delete", Resource: "configmaps", Namespace: "default", Name: "b"},
				}})
			st.RequireFullSimTrace(t, tr, name)
			if got := st.Names(st.CacheAtEnd(t, tr, name)); !slices.Equal(got, []string{"a", "a-mirror"}) {
				t.Errorf("cache at the end %v, want [a a-mirror]", got)
			}
		})
	}
}

// TestInformerSubjectsUnderSimDeliverTombstonesForADeleteLostInA410Gap runs
// the naive cache's 410-gap plan (events 1s late, delete b, expire the
// watch at once) on both informers: each hands OnDelete a
// DeletedFinalStateUnknown for b and b-mirror, and ends with a cache equal
// to the server's ConfigMaps, where the naive map keeps both.
func TestInformerSubjectsUnderSimDeliverTombstonesForADeleteLostInA410Gap(t *testing.T) {
	for _, name := range subjects {
		t.Run(name, func(t *testing.T) {
			tr := st.Run(t, gapPlan(name))
			tombs := st.Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecHandler && r.EventType == "DELETED" && r.Tombstone })
			var names []string
			for _, r := range tombs {
				names = append(names, r.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, []string{"b", "b-mirror"}) {
				t.Errorf("tombstones for %v, want [b b-mirror]", names)
			}
			if got := st.Names(st.CacheAtEnd(t, tr, name)); !slices.Equal(got, []string{"a", "a-mirror"}) {
				t.Errorf("cache at the end %v, want [a a-mirror]", got)
			}
		})
	}
}

// gapPlan is naivecache.GapPlan (copied: package legacy imports nothing of
// naivecache).
func gapPlan(subject string) *sim.Plan {
	return &sim.Plan{Version: sim.PlanVersion, Seed: 1, Subject: subject,
		Objects: []json.RawMessage{st.CM("a", nil), st.CM("b", nil)},
		Faults:  sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: st.At(time.Second)}},
		Steps: []sim.Step{
			{At: st.At(3 * time.Second), Actor: "user", Op: "delete", Resource: "configmaps", Namespace: "default", Name: "b"},
			{At: st.At(3 * time.Second), Actor: "faults", Op: "expire", Resource: "configmaps", Target: subject},
		}}
}

// TestDeltaFIFOUnderSimIsSyncedBeforeItsLastInitialItemIsHandled is
// EDGE-CASES 3 through the whole stack (WatchList initial events, the
// reflector's Replace, the DeltaFIFO, cache.New's process loop): the
// fifo-synced sample turns true in the process call of the last initial
// item, before its handler call (isInInitialList=true) is made. The
// RealFIFO subject's handler-synced signal, by contrast, comes after its
// last initial handler call.
func TestDeltaFIFOUnderSimIsSyncedBeforeItsLastInitialItemIsHandled(t *testing.T) {
	objs := []json.RawMessage{st.CM("a", nil), st.CM("b", nil), st.CM("c", nil)}
	lastInitial := func(tr *sim.Trace, actor string) sim.Record {
		t.Helper()
		hs := st.Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecHandler && r.Actor == actor && r.Initial })
		if len(hs) != 3 {
			t.Fatalf("%s: %d initial handler calls, want 3", actor, len(hs))
		}
		return hs[2]
	}

	tr := st.Run(t, &sim.Plan{Version: sim.PlanVersion, Seed: 1, Subject: DeltaFIFOName, Objects: objs})
	last := lastInitial(tr, DeltaFIFOName)
	synced := st.Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecSignal && r.Signal == SignalFIFOSynced && r.Value })
	if len(synced) != 1 {
		t.Fatalf("%d fifo-synced=true records, want 1", len(synced))
	}
	wantDetail := fmt.Sprintf("default/%s (isInInitialList=true)", last.Name)
	if synced[0].Pos > last.Pos || !strings.Contains(synced[0].Detail, wantDetail) {
		t.Errorf("fifo-synced=true at %d (%q), want before the last initial handler call at %d, sampled in process of %s",
			synced[0].Pos, synced[0].Detail, last.Pos, wantDetail)
	}

	tr = st.Run(t, &sim.Plan{Version: sim.PlanVersion, Seed: 1, Subject: RealFIFOName, Objects: objs})
	last = lastInitial(tr, RealFIFOName)
	hs := st.Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecSignal && r.Signal == SignalHandlerSynced && r.Value })
	if len(hs) != 1 || hs[0].Pos < last.Pos {
		t.Errorf("handler-synced %+v, want one record after the last initial handler call at %d", hs, last.Pos)
	}
}

// TestRelistRedeliversEveryObjectAsAnUpdateWithItsResourceVersionUnchanged
// is EDGE-CASES 10: the subject's watch expires with nothing changed; the
// relist hands every cached object to the handler again as an update whose
// resourceVersion did not move: a Replaced delta in the DeltaFIFO subject,
// and in the RealFIFO subject an OnUpdate that sharedIndexInformer.OnUpdate
// treats as a resync, delivered because the handler's resync period is 0.
func TestRelistRedeliversEveryObjectAsAnUpdateWithItsResourceVersionUnchanged(t *testing.T) {
	for _, tc := range []struct{ name, detail string }{
		{DeltaFIFOName, "delta Replaced"},
		{RealFIFOName, "OnUpdate (same resourceVersion, another copy: a relist)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := st.Run(t, &sim.Plan{Version: sim.PlanVersion, Seed: 1, Subject: tc.name,
				Objects: []json.RawMessage{st.CM("a", nil)},
				Steps:   []sim.Step{{At: st.At(3 * time.Second), Actor: "faults", Op: "expire", Resource: "configmaps", Target: tc.name}},
			})
			var names []string
			for _, r := range st.Find(tr, func(r sim.Record) bool {
				return r.Kind == sim.RecHandler && r.At.D() >= 3*time.Second
			}) {
				if r.EventType != "MODIFIED" || r.RV != r.OldRV || r.UID != r.OldUID || r.Detail != tc.detail {
					t.Errorf("after the relist: %s %s rv %d (old %d) %q; want MODIFIED with the same rv, %q", r.EventType, r.Name, r.RV, r.OldRV, r.Detail, tc.detail)
				}
				names = append(names, r.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, []string{"a", "a-mirror"}) {
				t.Errorf("handler calls after the relist for %v, want [a a-mirror]", names)
			}
		})
	}
}

// TestSlowHandlerLagsBehindTheStoresSyncSignal is EDGE-CASES 1: with every
// handler call taking 100ms, the RealFIFO subject's store is synced at once
// while its handler-synced signal comes only when the third initial call
// returns (300ms), and the workers wait for the latter.
func TestSlowHandlerLagsBehindTheStoresSyncSignal(t *testing.T) {
	tr := st.Run(t, &sim.Plan{Version: sim.PlanVersion, Seed: 1, Subject: RealFIFOName,
		Objects:       []json.RawMessage{st.CM("a", nil), st.CM("b", nil), st.CM("c", nil)},
		SubjectParams: map[string]string{ParamHandlerDelay: "100ms"}})
	firstTrue := func(signal string) time.Duration {
		t.Helper()
		recs := st.Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecSignal && r.Signal == signal && r.Value })
		if len(recs) == 0 {
			t.Fatalf("no %s=true record", signal)
		}
		return recs[0].At.D()
	}
	if informer, handler := firstTrue(SignalInformerSynced), firstTrue(SignalHandlerSynced); informer > 100*time.Millisecond || handler != 300*time.Millisecond {
		t.Errorf("informer-synced at %s, handler-synced at %s; want <= 100ms and 300ms", informer, handler)
	}
	start := st.Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecNote && strings.HasPrefix(r.Detail, "workers start") })
	if len(start) != 1 || start[0].At.D() != 300*time.Millisecond {
		t.Errorf("workers started %+v, want once at 300ms", start)
	}
}

// TestInformerSubjectsUnderLatencyAndDisconnectsConverge: with random
// latency, broken watches and 410s on re-watch (seeded), both informer
// subjects re-watch or relist, converge, and end with a cache equal to the
// server's ConfigMaps.
func TestInformerSubjectsUnderLatencyAndDisconnectsConverge(t *testing.T) {
	for _, name := range subjects {
		t.Run(name, func(t *testing.T) {
			tr := st.Run(t, st.FaultyPlan(name, 3))
			st.RequireFullSimTrace(t, tr, name)
			if len(st.Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecFault })) == 0 {
				t.Error("no fault was injected: the plan tests nothing")
			}
			server := st.ServerNames(t, tr, "configmaps")
			if got := st.Names(st.CacheAtEnd(t, tr, name)); !slices.Equal(got, server) || !slices.Equal(server, []string{"a", "a-mirror", "b", "b-mirror"}) {
				t.Errorf("cache at the end %v, server %v; want both [a a-mirror b b-mirror]", got, server)
			}
		})
	}
}

// TestRVSyncedWaitsForTheStoreToReachTheControllersOwnWrite is EDGE-CASES
// 24 (KEP-5647): with events delivered 1s late, the RealFIFO subject's
// rv-synced signal turns false when it writes a-mirror and true again only
// when the store's resourceVersion reaches that write, a second later.
func TestRVSyncedWaitsForTheStoreToReachTheControllersOwnWrite(t *testing.T) {
	tr := st.Run(t, &sim.Plan{Version: sim.PlanVersion, Seed: 1, Subject: RealFIFOName,
		Objects: []json.RawMessage{st.CM("a", nil)},
		Faults:  sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: st.At(time.Second)}},
	})
	writes := st.Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWrite && r.Actor == RealFIFOName })
	if len(writes) != 1 || writes[0].Name != "a-mirror" {
		t.Fatalf("writes by the subject %+v, want one create of a-mirror", writes)
	}
	w := writes[0]
	var flips []string
	for _, r := range st.Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecSignal && r.Signal == SignalRVSynced }) {
		flips = append(flips, fmt.Sprintf("%v@%s", r.Value, r.At))
	}
	// Initial events are delivered 1s late too: the first sample, true, is
	// at the first handler call (1s); the workers start and write then.
	want := []string{"true@1s", fmt.Sprintf("false@%s", w.At), fmt.Sprintf("true@%s", w.At.D()+time.Second)}
	if !slices.Equal(flips, want) {
		t.Errorf("rv-synced flips %v, want %v (a-mirror written at %s, rv %d)", flips, want, w.At, w.RV)
	}
}

// TestInformerSubjectsRecoverFromACrashInTheMiddleOfAReconcile: crashed
// inside the reconcile of a's update and restarted 2s later with empty
// caches, both subjects list again and finish the work.
func TestInformerSubjectsRecoverFromACrashInTheMiddleOfAReconcile(t *testing.T) {
	for _, name := range subjects {
		t.Run(name, func(t *testing.T) {
			st.RequireRecoveryFromCrash(t, st.Run(t, st.CrashPlan(name)), name)
		})
	}
}

// TestInformerSubjectsSeeARecreateDuringA410GapAsOneUpdateWithANewUID is
// EDGE-CASES 8 on the naive cache's failing plan: b deleted and recreated
// while the watch is down arrives after the relist as one update from the
// old UID to the new one (b-mirror, removed by the garbage collector, as a
// tombstone); the mirror controller, which compares owner UIDs, creates the
// new b's mirror and the run ends quiet.
func TestInformerSubjectsSeeARecreateDuringA410GapAsOneUpdateWithANewUID(t *testing.T) {
	for _, name := range subjects {
		t.Run(name, func(t *testing.T) {
			tr := st.Run(t, st.RecreateGapPlan(name))
			st.RequireFullSimTrace(t, tr, name)
			var uids []string
			for _, w := range st.Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWrite && r.Name == "b" }) {
				uids = append(uids, w.UID)
			}
			if len(uids) != 3 || uids[0] == uids[2] {
				t.Fatalf("writes of b by UID %v: want create, delete, create with a new UID", uids)
			}
			swap := st.Find(tr, func(r sim.Record) bool {
				return r.Kind == sim.RecHandler && r.Name == "b" && r.EventType == "MODIFIED" && r.OldUID == uids[0] && r.UID == uids[2]
			})
			if len(swap) != 1 {
				t.Errorf("want one update of b from uid %s to %s, got %+v", uids[0], uids[2], swap)
			}
			if len(st.Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecHandler && r.Name == "b" && r.EventType == "DELETED" })) != 0 {
				t.Error("b's deletion reached the handler: the watch was not down")
			}
		})
	}
}

// TestInformerSubjectsCrashedBeforeTheirFirstSyncLeaveNoGoroutineBehind:
// every watch event takes a minute to arrive, so neither subject syncs and
// its workers never start; the controller crashes at 1s and is not
// restarted. The workqueue's delaying loop must stop with the crashed
// process: a goroutine left behind would outlive the run and synctest
// would fail the bubble.
func TestInformerSubjectsCrashedBeforeTheirFirstSyncLeaveNoGoroutineBehind(t *testing.T) {
	for _, name := range subjects {
		t.Run(name, func(t *testing.T) {
			tr := st.Run(t, &sim.Plan{Version: sim.PlanVersion, Seed: 3, Subject: name,
				Objects: []json.RawMessage{st.CM("a", nil)},
				Faults:  sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: st.At(time.Minute)}},
				Steps: []sim.Step{
					{At: st.At(time.Second), Actor: "controller", Op: "crash"},
				}})
			if n := len(st.Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecCrash })); n != 1 {
				t.Fatalf("%d crash records, want 1 (the plan did not run as written)", n)
			}
			if started := st.Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecQueue && r.Op == "get" }); len(started) != 0 {
				t.Fatalf("workers took %d keys before the crash; the plan meant them never to start", len(started))
			}
		})
	}
}

// The RealFIFO subject's handler calls, its workers' Gets and its sync
// checkers take the run's turns (sim.Env.Turn), as Bellerophon's do: a
// worker and a handler woken by one release record in the order the plan
// decides, and a replay enforces it (make determinism: the built-in runs
// with one delivery schedule but several record sets, all of this
// subject's, went from 9 to 0). The DeltaFIFO subject's handlers run
// under the FIFO's lock and take none; its workers' Gets do.
func TestRealFIFOSubjectsHandlersWorkersAndCheckersTakeTurns(t *testing.T) {
	tr := st.Run(t, gapPlan(RealFIFOName))
	want := map[string]bool{"handler configmaps": false, "get": false, "check signals": false}
	for _, k := range tr.Schedule {
		for w := range want {
			if strings.Contains(k, RealFIFOName+" "+w+" ") {
				want[w] = true
			}
		}
	}
	for w, seen := range want {
		if !seen {
			t.Errorf("no %q turn of %s in the delivery schedule (%d keys)", w, RealFIFOName, len(tr.Schedule))
		}
	}
	tr = st.Run(t, gapPlan(DeltaFIFOName))
	gets := 0
	for _, k := range tr.Schedule {
		if strings.Contains(k, DeltaFIFOName+" get ") {
			gets++
		}
	}
	if gets == 0 {
		t.Errorf("no worker get turn of %s in the delivery schedule", DeltaFIFOName)
	}
}
