package naivecache

import (
	"context"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/sim"
	st "github.com/cachelab/cachelab/subjects/internal/subjecttest"
)

// startScripted starts a naivecache subject on a scripted ListerWatcher and
// a fake clientset (whose writes do not come back through the script).
func startScripted(t *testing.T, ctx context.Context, lw *st.LW, params map[string]string) (*Subject, *st.Recorder, *fake.Clientset) {
	t.Helper()
	rec := st.NewRecorder()
	kube := fake.NewClientset()
	s := New()
	err := s.Start(ctx, sim.Env{
		Name:          Name,
		Kube:          kube,
		ListerWatcher: func(schema.GroupVersionResource, string) cache.ListerWatcherWithContext { return lw },
		Rec:           rec,
		Params:        params,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return s, rec, kube
}

type flip struct {
	At    time.Duration
	Value bool
}

func flips(rec *st.Recorder) []flip {
	var out []flip
	for _, r := range rec.Signals(SignalQuiescence) {
		out = append(out, flip{r.At.D(), r.Value})
	}
	return out
}

// TestQuiescenceSaysSyncedWhileADelayedWatchEventIsInFlight is EDGE-CASES 4:
// the watch delivers an event 1s after it was opened, ten times the quiet
// window (10 x 10ms): the signal says synced at 100ms with an object
// missing, the controller starts on that word, and the signal flips back when
// the late event lands.
func TestQuiescenceSaysSyncedWhileADelayedWatchEventIsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		lw := &st.LW{
			ListScript: []func(metav1.ListOptions) (runtime.Object, error){
				func(metav1.ListOptions) (runtime.Object, error) {
					return st.List(10, st.ConfigMap("ns", "a", "uid-a", 10, nil)), nil
				},
			},
			WatchScript: []func(context.Context, metav1.ListOptions) (watch.Interface, error){
				st.Feed(false, st.Step{After: time.Second, Event: watch.Event{Type: watch.Added, Object: st.ConfigMap("ns", "b", "uid-b", 11, nil)}}),
			},
		}
		s, rec, _ := startScripted(t, ctx, lw, nil)
		time.Sleep(2 * time.Second)
		synctest.Wait()

		want := []flip{{0, false}, {100 * time.Millisecond, true}, {time.Second, false}, {1100 * time.Millisecond, true}}
		if got := flips(rec); !slices.Equal(got, want) {
			t.Fatalf("quiescence flips %v, want %v\n%s", got, want, st.Dump(rec.Records()))
		}
		// The cache claimed synced with b still in flight.
		snaps := rec.Of(sim.RecCache)
		if len(snaps) == 0 || snaps[0].Detail != SignalQuiescence || len(snaps[0].Objects) != 1 || snaps[0].Objects[0].Name != "a" {
			t.Fatalf("first snapshot should be the cache at the first 'synced': only a\n%s", st.Dump(rec.Records()))
		}
		var bAt time.Duration = -1
		for _, r := range rec.Of(sim.RecHandler) {
			if r.Name == "b" {
				bAt = r.At.D()
			}
		}
		if bAt != time.Second {
			t.Errorf("handler for b at %v, want 1s (after the first 'synced' at 100ms)", bAt)
		}
		// The controller started on the first 'synced' and reconciled a then.
		var firstReconcile time.Duration = -1
		for _, r := range rec.Of(sim.RecReconcile) {
			if r.Op == "start" {
				firstReconcile = r.At.D()
				break
			}
		}
		if firstReconcile != 100*time.Millisecond {
			t.Errorf("first reconcile at %v, want 100ms (the first 'synced')", firstReconcile)
		}
		if got := s.Cache().Keys(); !slices.Equal(got, []string{"ns/a", "ns/b"}) {
			t.Errorf("cache keys at 2s %v, want [ns/a ns/b]", got)
		}
		cancel()
		synctest.Wait()
	})
}

// TestRelistAfter410KeepsAnObjectDeletedDuringTheGap: b is deleted while the
// watch is down; the re-watch answers 410; the naive relist replays the list
// as create events and has no rule for keys the list lacks, so b stays
// cached for ever (client-go would deliver a tombstone, EDGE-CASES 7).
func TestRelistAfter410KeepsAnObjectDeletedDuringTheGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		a := st.ConfigMap("ns", "a", "uid-a", 10, nil)
		b := st.ConfigMap("ns", "b", "uid-b", 10, nil)
		lw := &st.LW{
			ListScript: []func(metav1.ListOptions) (runtime.Object, error){
				func(metav1.ListOptions) (runtime.Object, error) { return st.List(10, a, b), nil },
				func(metav1.ListOptions) (runtime.Object, error) { return st.List(20, a), nil }, // b deleted at 15
			},
			WatchScript: []func(context.Context, metav1.ListOptions) (watch.Interface, error){
				st.Feed(true, st.Step{After: time.Second, Event: st.Expired()}),
				st.Feed(false),
			},
		}
		s, rec, _ := startScripted(t, ctx, lw, nil)
		time.Sleep(3 * time.Second)
		synctest.Wait()

		lists, watches := lw.Calls()
		if len(lists) != 2 || len(watches) != 2 || watches[0].ResourceVersion != "10" || watches[1].ResourceVersion != "20" {
			t.Fatalf("got %d lists and watches %v, want 2 lists and watches at 10 then 20", len(lists), watches)
		}
		if got := s.Cache().Keys(); !slices.Equal(got, []string{"ns/a", "ns/b"}) {
			t.Errorf("cache keys after the relist %v, want [ns/a ns/b]: b, deleted on the server, stays", got)
		}
		for _, r := range rec.Of(sim.RecHandler) {
			if r.EventType == string(watch.Deleted) {
				t.Errorf("handler saw a delete (%s): the naive relist should have no way to notice b's deletion", r.Name)
			}
		}
		if !rec.HasNote(NoteCreateKnown + ": ns/a") {
			t.Errorf("no %q note for a, replayed by the relist; notes: %q", NoteCreateKnown, rec.Notes())
		}
		var relisted *sim.Record
		for _, r := range rec.Of(sim.RecCache) {
			if r.Detail == "relist" {
				relisted = &r
			}
		}
		if relisted == nil || len(relisted.Objects) != 2 || relisted.Objects[1].Name != "b" {
			t.Errorf("the snapshot after the relist should hold a and b\n%s", st.Dump(rec.Records()))
		}
		cancel()
		synctest.Wait()
	})
}

// TestWatchCloseRewatchesFromTheLastResourceVersionSeen: a clean close is
// followed by a watch from the last event's resourceVersion, with no list.
func TestWatchCloseRewatchesFromTheLastResourceVersionSeen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		lw := &st.LW{
			ListScript: []func(metav1.ListOptions) (runtime.Object, error){
				func(metav1.ListOptions) (runtime.Object, error) { return st.List(10), nil },
			},
			WatchScript: []func(context.Context, metav1.ListOptions) (watch.Interface, error){
				st.Feed(true,
					st.Step{After: 500 * time.Millisecond, Event: watch.Event{Type: watch.Added, Object: st.ConfigMap("ns", "a", "uid-a", 11, nil)}},
					st.Step{After: 0, Event: watch.Event{Type: watch.Deleted, Object: st.ConfigMap("ns", "z", "uid-z", 12, nil)}},
				),
				st.Feed(false),
			},
		}
		s, rec, _ := startScripted(t, ctx, lw, nil)
		time.Sleep(time.Second)
		synctest.Wait()
		lists, watches := lw.Calls()
		if len(lists) != 1 || len(watches) != 2 || watches[1].ResourceVersion != "12" {
			t.Fatalf("lists %d, watches %v: want 1 list and a re-watch at 12", len(lists), watches)
		}
		if !rec.HasNote(NoteDeleteUnknown + ": ns/z") {
			t.Errorf("no %q note for z; notes %q", NoteDeleteUnknown, rec.Notes())
		}
		if got := s.Cache().Keys(); !slices.Equal(got, []string{"ns/a"}) {
			t.Errorf("cache keys %v, want [ns/a]", got)
		}
		cancel()
		synctest.Wait()
	})
}

// TestMirrorControllerWritesAfterSyncAndLeavesAFullTrace: with the fake
// clientset's own ListerWatcher the controller's writes come back through the
// watch; the mirror converges and the trace holds every kind of record.
func TestMirrorControllerWritesAfterSyncAndLeavesAFullTrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		kube := fake.NewClientset(st.ConfigMap("ns", "a", "uid-a", 0, map[string]string{"k": "v"}))
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return kube.CoreV1().ConfigMaps("").List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return kube.CoreV1().ConfigMaps("").Watch(ctx, o)
			},
		}
		rec := st.NewRecorder()
		s := New()
		if err := s.Start(ctx, sim.Env{Name: Name, Kube: kube, Rec: rec,
			ListerWatcher: func(schema.GroupVersionResource, string) cache.ListerWatcherWithContext { return lw }}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		m, err := kube.CoreV1().ConfigMaps("ns").Get(ctx, "a-mirror", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("mirror not created: %v\n%s", err, st.Dump(rec.Records()))
		}
		if m.Data["k"] != "v" || len(m.OwnerReferences) != 1 || m.OwnerReferences[0].UID != "uid-a" {
			t.Errorf("mirror %+v does not match its source", m)
		}
		if _, ok := s.Cache().Get("ns/a-mirror"); !ok {
			t.Errorf("the mirror did not come back through the watch into the cache: %v", s.Cache().Keys())
		}
		for _, kind := range []sim.RecordKind{sim.RecHandler, sim.RecQueue, sim.RecReconcile, sim.RecSignal, sim.RecCache} {
			if len(rec.Of(kind)) == 0 {
				t.Errorf("no %s record\n%s", kind, st.Dump(rec.Records()))
			}
		}
		cancel()
		synctest.Wait()
	})
}

func TestStartRejectsBadParametersByName(t *testing.T) {
	for params, want := range map[string]map[string]string{
		`unknown subject parameter "loop"`:  {"loop": "1s"},
		`loopTime="fast"`:                   {ParamLoopTime: "fast"},
		`workers="0": must be at least 1`:   {ParamWorkers: "0"},
		`quietFactor="-1"`:                  {ParamQuietFactor: "-1"},
		`retryDelay="0s": must be positive`: {ParamRetryDelay: "0s"},
	} {
		err := New().Start(t.Context(), sim.Env{Kube: fake.NewClientset(), Rec: st.NewRecorder(), Params: want,
			ListerWatcher: func(schema.GroupVersionResource, string) cache.ListerWatcherWithContext { return &st.LW{} }})
		if err == nil || !strings.Contains(err.Error(), params) {
			t.Errorf("params %v: err %v, want one containing %q", want, err, params)
		}
	}
	if err := New().Start(t.Context(), sim.Env{}); err == nil {
		t.Error("Start with an empty Env succeeded")
	}
}
