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
