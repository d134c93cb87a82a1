package legacy

import (
	"slices"
	"testing"

	"k8s.io/client-go/tools/cache"

	st "github.com/cachelab/cachelab/subjects/internal/subjecttest"
)

// popSample pops one item and returns what IsDone(HasSyncedChecker()) said
// inside process, the key popped, and isInInitialList.
type popSample struct {
	Key     string
	Initial bool
	Synced  bool
}

func popAll(t *testing.T, q cache.Queue, n int) []popSample {
	t.Helper()
	var out []popSample
	for range n {
		_, err := q.Pop(func(obj any, isInInitialList bool) error {
			d := obj.(cache.Deltas)
			key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(d.Newest().Object)
			if _, ok := d.Newest().Object.(cache.ReplacedAllInfo); ok {
				key = "ReplacedAll"
			}
			out = append(out, popSample{Key: key, Initial: isInInitialList, Synced: cache.IsDone(q.HasSyncedChecker())})
			return nil
		})
		if err != nil {
			t.Fatalf("Pop: %v", err)
		}
	}
	return out
}

// TestDeltaFIFOSyncedChannelClosesBeforeTheLastInitialItemIsProcessed is
// EDGE-CASES 3 (v0.37.2 delta_fifo.go Pop decrements initialPopulationCount
// before calling process): after Replace([a, b]), the synced channel is
// already closed while b, an initial item, is being processed.
func TestDeltaFIFOSyncedChannelClosesBeforeTheLastInitialItemIsProcessed(t *testing.T) {
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	f := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KnownObjects: store, EmitDeltaTypeReplaced: true})
	if err := f.Replace([]any{st.ConfigMap("ns", "a", "ua", 1, nil), st.ConfigMap("ns", "b", "ub", 2, nil)}, "2"); err != nil {
		t.Fatal(err)
	}
	got := popAll(t, f, 2)
	want := []popSample{{"ns/a", true, false}, {"ns/b", true, true}}
	if !slices.Equal(got, want) {
		t.Errorf("DeltaFIFO samples inside process %+v, want %+v", got, want)
	}
}

// TestRealFIFOSyncedChannelClosesOnlyAfterTheLastInitialItemIsProcessed is
// the other side of EDGE-CASES 3 (v0.37.2 the_real_fifo.go Pop decrements in
// a defer, after process), for RealFIFO with and without atomic events.
func TestRealFIFOSyncedChannelClosesOnlyAfterTheLastInitialItemIsProcessed(t *testing.T) {
	objs := []any{st.ConfigMap("ns", "a", "ua", 1, nil), st.ConfigMap("ns", "b", "ub", 2, nil)}

	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	f := cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc, KnownObjects: store})
	if err := f.Replace(objs, "2"); err != nil {
		t.Fatal(err)
	}
	got := popAll(t, f, 2)
	if want := []popSample{{"ns/a", true, false}, {"ns/b", true, false}}; !slices.Equal(got, want) {
		t.Errorf("RealFIFO samples inside process %+v, want %+v", got, want)
	}
	if !cache.IsDone(f.HasSyncedChecker()) {
		t.Error("RealFIFO synced channel still open after the last initial item was processed")
	}

	atomic := cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc, AtomicEvents: true})
	if err := atomic.Replace(objs, "2"); err != nil {
		t.Fatal(err)
	}
	got = popAll(t, atomic, 1)
	if want := []popSample{{"ReplacedAll", true, false}}; !slices.Equal(got, want) {
		t.Errorf("atomic RealFIFO samples inside process %+v, want %+v", got, want)
	}
	if !cache.IsDone(atomic.HasSyncedChecker()) {
		t.Error("atomic RealFIFO synced channel still open after the ReplacedAll item was processed")
	}
}

// TestDeltaFIFOCoalescesAKeyWhileRealFIFOKeepsEveryEvent is EDGE-CASES 20: a
// key queued twice is popped once by DeltaFIFO, at its first position, with
// both deltas; RealFIFO pops every event in arrival order.
func TestDeltaFIFOCoalescesAKeyWhileRealFIFOKeepsEveryEvent(t *testing.T) {
	a1, b, a2 := st.ConfigMap("ns", "a", "ua", 1, nil), st.ConfigMap("ns", "b", "ub", 2, nil), st.ConfigMap("ns", "a", "ua", 3, nil)
	feed := func(q cache.Queue) {
		for _, step := range []func() error{
			func() error { return q.Add(a1) }, func() error { return q.Add(b) }, func() error { return q.Update(a2) },
		} {
			if err := step(); err != nil {
				t.Fatal(err)
			}
		}
	}
	pops := func(q cache.Queue, n int) (keys []string, deltas []int) {
		for range n {
			_, err := q.Pop(func(obj any, _ bool) error {
				d := obj.(cache.Deltas)
				key, _ := cache.MetaNamespaceKeyFunc(d.Newest().Object)
				keys, deltas = append(keys, key), append(deltas, len(d))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		return keys, deltas
	}
	df := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KnownObjects: cache.NewStore(cache.MetaNamespaceKeyFunc)})
	feed(df)
	keys, deltas := pops(df, 2)
	if !slices.Equal(keys, []string{"ns/a", "ns/b"}) || !slices.Equal(deltas, []int{2, 1}) {
		t.Errorf("DeltaFIFO popped %v with %v deltas, want [ns/a ns/b] with [2 1]", keys, deltas)
	}
	rf := cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc, KnownObjects: cache.NewStore(cache.MetaNamespaceKeyFunc)})
	feed(rf)
	keys, deltas = pops(rf, 3)
	if !slices.Equal(keys, []string{"ns/a", "ns/b", "ns/a"}) || !slices.Equal(deltas, []int{1, 1, 1}) {
		t.Errorf("RealFIFO popped %v with %v deltas, want [ns/a ns/b ns/a] with [1 1 1]", keys, deltas)
	}
}

// handlerLog applies popped Deltas to a store as controller.go's
// processDeltas does and logs the handler calls it would make.
type handlerLog struct {
	store cache.Store
	calls []string
}

func (h *handlerLog) process(obj any, _ bool) error {
	for _, d := range obj.(cache.Deltas) {
		switch d.Type {
		case cache.Deleted:
			if err := h.store.Delete(d.Object); err != nil {
				return err
			}
			call := "DELETE "
			if tomb, ok := d.Object.(cache.DeletedFinalStateUnknown); ok {
				call += "tombstone " + tomb.Key
			} else {
				key, _ := cache.MetaNamespaceKeyFunc(d.Object)
				call += key
			}
			h.calls = append(h.calls, call)
		default:
			key, _ := cache.MetaNamespaceKeyFunc(d.Object)
			if _, exists, _ := h.store.Get(d.Object); exists {
				h.calls = append(h.calls, "UPDATE "+key)
				if err := h.store.Update(d.Object); err != nil {
					return err
				}
				continue
			}
			h.calls = append(h.calls, "ADD "+key)
			if err := h.store.Add(d.Object); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestQueuedAddMissingFromARelistIsDeliveredThenTombstoned is EDGE-CASES 9
// on v0.37.2: an ADD still queued when a relist no longer lists the object
// used to leak in DeltaFIFO (k/k#115658, fixed by PR #115620). Both FIFOs now
// deliver the ADD, then a tombstone, and the store ends empty.
func TestQueuedAddMissingFromARelistIsDeliveredThenTombstoned(t *testing.T) {
	for _, tc := range []struct {
		name string
		fifo func(known cache.KeyListerGetter) cache.Queue
		pops int // DeltaFIFO holds both deltas under one key
	}{
		{"DeltaFIFO", func(known cache.KeyListerGetter) cache.Queue {
			return cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KnownObjects: known, EmitDeltaTypeReplaced: true})
		}, 1},
		{"RealFIFO", func(known cache.KeyListerGetter) cache.Queue {
			return cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc, KnownObjects: known})
		}, 2},
	} {
		h := &handlerLog{store: cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc)}
		q := tc.fifo(h.store)
		if err := q.Add(st.ConfigMap("ns", "a", "ua", 5, nil)); err != nil {
			t.Fatal(err)
		}
		if err := q.Replace(nil, "9"); err != nil { // a deleted meanwhile
			t.Fatal(err)
		}
		for range tc.pops {
			if _, err := q.Pop(h.process); err != nil {
				t.Fatalf("%s: Pop: %v", tc.name, err)
			}
		}
		if want := []string{"ADD ns/a", "DELETE tombstone ns/a"}; !slices.Equal(h.calls, want) {
			t.Errorf("%s: handler calls %q, want %q", tc.name, h.calls, want)
		}
		if keys := h.store.ListKeys(); len(keys) != 0 {
			t.Errorf("%s: store holds %v after the relist, want nothing", tc.name, keys)
		}
	}
}
