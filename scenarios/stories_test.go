package scenarios_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// The tests in this file check the checkable claims of the stories in
// data/ against their own runs: what the narrative says happens (a signal
// that never flips, a handler call that comes late, a relist that never
// comes), beyond the verdicts under "----" that
// TestEveryScenarioFailsTheWayItsNarrativeSays compares. Each names the
// scenario and the sentences it checks.

// storyRun runs scenario name against subject and returns the trace.
func storyRun(t *testing.T, name, subject string) *sim.Trace {
	t.Helper()
	s, err := scenarios.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	p := s.PlanFor(subject)
	tr, err := sim.Run(t, &p)
	if err != nil {
		t.Fatalf("%s, %s: the run failed: %v", name, subject, err)
	}
	return tr
}

// where returns the records of tr matching pred.
func where(tr *sim.Trace, pred func(sim.Record) bool) []sim.Record {
	var out []sim.Record
	for _, r := range tr.Records {
		if pred(r) {
			out = append(out, r)
		}
	}
	return out
}

// signalFlips returns the signal records of name with value v.
func signalFlips(tr *sim.Trace, name string, v bool) []sim.Record {
	return where(tr, func(r sim.Record) bool { return r.Kind == sim.RecSignal && r.Signal == name && r.Value == v })
}

// handlerCalls returns the handler calls on object name (any event type
// when evType is "").
func handlerCalls(tr *sim.Trace, evType, name string) []sim.Record {
	return where(tr, func(r sim.Record) bool {
		return r.Kind == sim.RecHandler && r.Name == name && (evType == "" || r.EventType == evType)
	})
}

// notes returns the note records whose detail contains s.
func notes(tr *sim.Trace, s string) []sim.Record {
	return where(tr, func(r sim.Record) bool { return r.Kind == sim.RecNote && strings.Contains(r.Detail, s) })
}

// describe formats records for a failure message.
func describe(rs []sim.Record) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "\n  #%d %s %s %s %s/%s %s%s %s", r.Pos, time.Duration(r.At), r.Kind, r.Actor, r.Namespace, r.Name, r.EventType, r.Signal, r.Detail)
	}
	return b.String()
}

// TestPanickingHandlerNeverSyncsStory checks panicking-handler-never-syncs:
// "the store holds all three initial ConfigMaps and informer.HasSynced
// turns true, but its registration's HasSynced never does, its workers never
// start"; "a handler that skipped an item still sees new events", the first
// one a second after the panic (processorListener.run sleeps before the
// next item); the real controller's registration syncs.
func TestPanickingHandlerNeverSyncsStory(t *testing.T) {
	const name = "panicking-handler-never-syncs"
	t.Run("informer-realfifo", func(t *testing.T) {
		tr := storyRun(t, name, "informer-realfifo")
		if len(signalFlips(tr, "handler-synced", true)) == 0 {
			t.Errorf("the controller without the panic never claimed handler-synced")
		}
	})
	t.Run("panicking-handler", func(t *testing.T) {
		tr := storyRun(t, name, "informer-realfifo/panicking-handler")
		if len(signalFlips(tr, "informer-synced", true)) == 0 {
			t.Errorf("informer.HasSynced never turned true")
		}
		if got := signalFlips(tr, "handler-synced", true); len(got) != 0 {
			t.Errorf("the registration claimed synced although an initial item panicked:%s", describe(got))
		}
		panics := notes(tr, "OnAdd panics on default/odd")
		if len(panics) != 1 {
			t.Fatalf("want one panic on default/odd, got:%s", describe(panics))
		}
		if got := where(tr, func(r sim.Record) bool { return r.Kind == sim.RecReconcile }); len(got) != 0 {
			t.Errorf("the workers started although the registration never synced:%s", describe(got[:1]))
		}
		var next []sim.Record
		for _, r := range tr.Records[panics[0].Pos:] {
			if r.Kind == sim.RecHandler {
				next = append(next, r)
			}
		}
		if len(handlerCalls(tr, "ADDED", "late")) != 1 || len(next) == 0 {
			t.Fatalf("want OnAdd(late) after the panic, got:%s", describe(next))
		}
		if gap := time.Duration(next[0].At - panics[0].At); gap < time.Second {
			t.Errorf("the first handler call after the panic came %s after it; the listener pauses a second first:%s", gap, describe(next[:1]))
		}
	})
}

// lastCache returns the objects of the last cache snapshot the subject
// recorded (the sim's snapshot at the end of the run), and whether there
// was one.
func lastCache(tr *sim.Trace, actor string) ([]sim.ObjectState, bool) {
	cs := where(tr, func(r sim.Record) bool { return r.Kind == sim.RecCache && r.Actor == actor })
	if len(cs) == 0 {
		return nil, false
	}
	return cs[len(cs)-1].Objects, true
}

// TestWatchListWithoutEndBookmarkStory checks
// watchlist-without-end-bookmark: "the objects have arrived, yet the store
// stays empty"; "when the watch closes, the reflector tries WatchList again
// at once; it never falls back to a plain LIST"; the opted-out controller
// "LISTs, watches, syncs".
func TestWatchListWithoutEndBookmarkStory(t *testing.T) {
	const name = "watchlist-without-end-bookmark"
	t.Run("informer-realfifo", func(t *testing.T) {
		const subj = "informer-realfifo"
		tr := storyRun(t, name, subj)
		opens := where(tr, func(r sim.Record) bool { return r.Kind == sim.RecWatchOpen && r.Actor == subj })
		if len(opens) < 2 {
			t.Errorf("want a WatchList before and after the disconnect, got:%s", describe(opens))
		}
		for _, o := range opens {
			if !o.WatchList {
				t.Errorf("a watch that is not a WatchList:%s", describe([]sim.Record{o}))
			}
		}
		if ls := where(tr, func(r sim.Record) bool { return r.Kind == sim.RecList && r.Actor == subj }); len(ls) != 0 {
			t.Errorf("the reflector fell back to LIST:%s", describe(ls))
		}
		if got := notes(tr, "dropped the k8s.io/initial-events-end bookmark"); len(got) != len(opens) {
			t.Errorf("want one dropped bookmark per WatchList (%d), got %d", len(opens), len(got))
		}
		delivered := where(tr, func(r sim.Record) bool {
			return r.Kind == sim.RecDelivered && r.Actor == subj && r.EventType == "ADDED" && r.Initial
		})
		if len(delivered) < 2 {
			t.Errorf("want the initial ADDED events of a and b delivered, got:%s", describe(delivered))
		}
		if got := where(tr, func(r sim.Record) bool { return r.Kind == sim.RecSignal && r.Value }); len(got) != 0 {
			t.Errorf("a sync signal turned true:%s", describe(got))
		}
		objs, ok := lastCache(tr, subj)
		if !ok || len(objs) != 0 {
			t.Errorf("want a snapshot of an empty store at the end, got %v (snapshot: %v)", objs, ok)
		}
	})
	t.Run("no-watchlist", func(t *testing.T) {
		const subj = "informer-realfifo/no-watchlist"
		tr := storyRun(t, name, subj)
		if ls := where(tr, func(r sim.Record) bool { return r.Kind == sim.RecList && r.Actor == subj }); len(ls) == 0 {
			t.Errorf("the opted-out reflector never LISTed")
		}
		if ws := where(tr, func(r sim.Record) bool { return r.Kind == sim.RecWatchOpen && r.Actor == subj && r.WatchList }); len(ws) != 0 {
			t.Errorf("the opted-out reflector opened a WatchList:%s", describe(ws))
		}
		if len(signalFlips(tr, "handler-synced", true)) == 0 {
			t.Errorf("the opted-out controller never synced")
		}
	})
}

// detailed returns the handler calls whose detail contains s.
func detailed(tr *sim.Trace, s string) []sim.Record {
	return where(tr, func(r sim.Record) bool { return r.Kind == sim.RecHandler && strings.Contains(r.Detail, s) })
}

// TestRelistAndResyncStories checks relist-is-not-resync and
// resync-same-object: a relist hands the handler an unchanged object as
// another copy with the same resourceVersion, which skips-same-rv drops
// "as a resync"; with the informer's resync at 0 there is no resync at
// all; with 30 s, "every 30 s" each handler gets OnUpdate(obj, obj), the
// very same object, and sources-only makes its new mirror then.
func TestRelistAndResyncStories(t *testing.T) {
	t.Run("relist", func(t *testing.T) {
		tr := storyRun(t, "relist-is-not-resync", "informer-realfifo/skips-same-rv")
		if got := detailed(tr, "a relist), skipped as a resync"); len(got) == 0 || got[0].Name != "settings" {
			t.Errorf("want the relist's unchanged settings skipped as a resync, got:%s", describe(got))
		}
		if got := detailed(tr, "same object"); len(got) != 0 {
			t.Errorf("a resync with the informer's resync period at 0:%s", describe(got))
		}
	})
	t.Run("resync", func(t *testing.T) {
		tr := storyRun(t, "resync-same-object", "informer-realfifo/sources-only")
		resyncs := detailed(tr, "same object: a resync")
		if len(resyncs) == 0 {
			t.Fatal("no OnUpdate(obj, obj) in a run with resync=30s")
		}
		for _, r := range resyncs {
			if r.At.D()%(30*time.Second) != 0 {
				t.Errorf("a resync off the 30 s period:%s", describe([]sim.Record{r}))
			}
		}
		creates := where(tr, func(r sim.Record) bool {
			return r.Kind == sim.RecWrite && r.Verb == "create" && r.Name == "settings-mirror" && r.Actor == "informer-realfifo/sources-only"
		})
		if len(creates) != 2 || creates[1].At.D() != 30*time.Second {
			t.Errorf("want the mirror made at the start and again at the 30 s resync, got:%s", describe(creates))
		}
	})
}

// TestQueuedAddThenTombstoneStory checks queued-add-then-tombstone: "the
// handler gets the queued ADD, for an object the store no longer has, and
// then the relist's tombstone": OnAdd(x) comes after the user's delete of x
// and after the relist, and the tombstone right after it.
func TestQueuedAddThenTombstoneStory(t *testing.T) {
	const subj = "informer-realfifo"
	tr := storyRun(t, "queued-add-then-tombstone", subj)
	del := where(tr, func(r sim.Record) bool { return r.Kind == sim.RecWrite && r.Verb == "delete" && r.Name == "x" })
	lists := where(tr, func(r sim.Record) bool { return r.Kind == sim.RecList && r.Actor == subj })
	calls := handlerCalls(tr, "", "x")
	if len(del) != 1 || len(lists) == 0 || len(calls) != 2 {
		t.Fatalf("want one delete of x, a relist and two handler calls on x; got delete:%s\nlists:%s\ncalls:%s", describe(del), describe(lists), describe(calls))
	}
	add, tomb := calls[0], calls[1]
	if add.EventType != "ADDED" || add.Pos < del[0].Pos || add.Pos < lists[0].Pos {
		t.Errorf("want OnAdd(x) after the delete (#%d) and the relist (#%d), got:%s", del[0].Pos, lists[0].Pos, describe(calls[:1]))
	}
	if tomb.EventType != "DELETED" || !tomb.Tombstone {
		t.Errorf("want the tombstone after OnAdd(x), got:%s", describe(calls[1:]))
	}
}

// TestDeltaFIFOGroupsByKeyStory checks deltafifo-groups-by-key: when the
// held events arrive at once, "RealFIFO hands them to the handler a, b, a,
// a, as they were written"; the DeltaFIFO hands over the same four, a's in
// order, grouped or not (that depends on goroutine scheduling, as the
// story says).
func TestDeltaFIFOGroupsByKeyStory(t *testing.T) {
	for subj, want := range map[string][]string{
		"legacy-deltafifo":  {"a a a b", "a b a a", "a a b a"},
		"informer-realfifo": {"a b a a"},
	} {
		t.Run(subj, func(t *testing.T) {
			tr := storyRun(t, "deltafifo-groups-by-key", subj)
			calls := where(tr, func(r sim.Record) bool {
				return r.Kind == sim.RecHandler && r.At.D() == 6*time.Second && (r.Name == "a" || r.Name == "b")
			})
			var got []string
			for _, r := range calls {
				got = append(got, r.Name)
			}
			if !slices.Contains(want, strings.Join(got, " ")) {
				t.Errorf("handler order at the release: %q, want one of %q:%s", strings.Join(got, " "), want, describe(calls))
			}
		})
	}
}

// TestSyntheticAddsOutOfOrderStory checks synthetic-adds-out-of-order:
// the watch from "" begins with synthetic ADDED events "in key order, not
// in resourceVersion order"; with only those seen "a re-watch starts from
// "" again"; after the MODIFIED event "it resumes from m's new
// resourceVersion".
func TestSyntheticAddsOutOfOrderStory(t *testing.T) {
	const subj = "informer-realfifo/list-without-rv"
	tr := storyRun(t, "synthetic-adds-out-of-order", subj)
	opens := where(tr, func(r sim.Record) bool { return r.Kind == sim.RecWatchOpen && r.Actor == subj })
	if len(opens) != 3 {
		t.Fatalf("want three watches, got:%s", describe(opens))
	}
	for i, want := range []string{`from resourceVersion ""`, `from resourceVersion ""`} {
		if opens[i].Detail != want {
			t.Errorf("watch %d: %q, want %q", i+1, opens[i].Detail, want)
		}
	}
	var mRV int64
	for _, r := range tr.Records {
		if r.Kind == sim.RecWrite && r.Actor == "user" && r.Name == "m" {
			mRV = r.RV
		}
	}
	from, err := strconv.ParseInt(strings.Trim(strings.TrimPrefix(opens[2].Detail, "from resourceVersion "), `"`), 10, 64)
	if err != nil || mRV == 0 || from < mRV {
		t.Errorf("watch 3: %q, want one from m's update (rv %d) or later", opens[2].Detail, mRV)
	}
	first := where(tr, func(r sim.Record) bool {
		return r.Kind == sim.RecDelivered && r.Actor == subj && r.EventType == "ADDED" && r.Initial && r.Watcher == opens[0].Watcher
	})
	// The story's claim: key order, not resourceVersion order (some RV
	// goes down from one event to the next).
	var names []string
	keyOrder, rvDown := len(first) > 1, false
	for i, r := range first {
		names = append(names, fmt.Sprintf("%s@%d", r.Name, r.RV))
		if i > 0 && r.Name < first[i-1].Name {
			keyOrder = false
		}
		if i > 0 && r.RV < first[i-1].RV {
			rvDown = true
		}
	}
	if !keyOrder || !rvDown {
		t.Errorf("want the first watch's synthetic ADDED events in key order with some RV going down, got %v", names)
	}
}
