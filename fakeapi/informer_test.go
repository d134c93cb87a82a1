package fakeapi_test

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/fakeapi"
)

// TestInformerSyncsThroughWatchList: with client-go's default WatchListClient
// gate, a real SharedIndexInformer on the server's ListerWatcher syncs through
// one watch with sendInitialEvents (no LIST), then follows live writes.
func TestInformerSyncsThroughWatchList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, log := newServer(t, fakeapi.Options{})
		c := s.Client("test")
		mustNamespace(t, c, "a")
		mustNamespace(t, c, "b")
		mustCreateCM(t, c, "a", "one", nil)
		mustCreateCM(t, c, "b", "two", nil)

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		inf, h := runInformer(t, ctx, c.ListerWatcher(cmGVR, ""), &corev1.ConfigMap{})

		want := map[string]bool{"a/one": true, "b/two": true}
		got := cacheState(t, inf)
		if len(got) != len(want) || !want[sortedKeys(got)[0]] || !want[sortedKeys(got)[1]] {
			t.Fatalf("cache after sync = %v, want keys a/one and b/two", got)
		}
		if lists := log.Requests("list"); len(lists) != 0 {
			t.Errorf("informer listed %d times with WatchList on, want 0", len(lists))
		}
		watches := watchRequests(log)
		if len(watches) != 1 || !watches[0].Request.SendInitialEvents || watches[0].Code != 200 {
			t.Fatalf("watch requests = %+v, want one WatchList (sendInitialEvents) answered 200", watches)
		}

		// Live writes reach the cache and the handler in order.
		mustCreateCM(t, c, "a", "three", nil)
		if err := c.Delete(ctx, cmGVR, "b", "two", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got, want := cacheState(t, inf), serverState(t, c, cmGVR, ""); !equalStates(got, want) {
			t.Errorf("cache = %v, server = %v", got, want)
		}
		calls := h.all()
		if i, j := slices.Index(calls, "add three"), slices.Index(calls, "delete two"); i < 0 || j < i {
			t.Errorf("handler calls = %v, want add three then delete two", calls)
		}
		cancel()
		synctest.Wait()
		if n := len(s.Watchers()); n != 0 {
			t.Errorf("%d watches still open after the informer stopped", n)
		}
	})
}

// TestInformerSyncsThroughListWhenWatchListDisabled: the same informer on a
// ListerWatcher that opts out of WatchList LISTs, then watches from the
// list's resourceVersion without initial events.
func TestInformerSyncsThroughListWhenWatchListDisabled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, log := newServer(t, fakeapi.Options{})
		c := s.Client("test")
		mustNamespace(t, c, "a")
		mustCreateCM(t, c, "a", "one", nil)
		mustCreateCM(t, c, "a", "two", nil)

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		lw := c.ListerWatcherWithOptions(cmGVR, "a", fakeapi.ListerWatcherOptions{DisableWatchList: true})
		inf, _ := runInformer(t, ctx, lw, &corev1.ConfigMap{})
		synctest.Wait()

		lists := log.Kind(fakeapi.ObsList)
		watches := watchRequests(log)
		if got, want := cacheState(t, inf), serverState(t, c, cmGVR, "a"); !equalStates(got, want) || len(got) != 2 {
			t.Fatalf("cache = %v, server = %v, want the two configmaps", got, want)
		}
		if len(lists) != 1 {
			t.Fatalf("lists served = %d, want 1", len(lists))
		}
		if len(watches) != 1 {
			t.Fatalf("watch requests = %d, want 1", len(watches))
		}
		w := watches[0].Request
		if w.SendInitialEvents {
			t.Errorf("watch asked for initial events with WatchList disabled")
		}
		if want := lists[0].RV; w.ResourceVersion != itoa(want) {
			t.Errorf("watch from resourceVersion %q, want the list's %d", w.ResourceVersion, want)
		}
		cancel()
		synctest.Wait()
	})
}

// TestExpiredWatchRelistsAndCacheConverges: while a watcher's events are
// held back, an object is deleted, one updated and one created; history is
// compacted and the watch expired (410). The reflector relists and the cache
// converges on the server, the missed delete arriving as a tombstone.
func TestExpiredWatchRelistsAndCacheConverges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var hold atomic.Int64 // nanoseconds every event is held
		hooks := fakeapi.HookFuncs{Delay: func(fakeapi.WatcherInfo, fakeapi.EventInfo) time.Duration { return time.Duration(hold.Load()) }}
		s, log := newServer(t, fakeapi.Options{Hooks: hooks})
		c := s.Client("test")
		mustNamespace(t, c, "a")
		mustCreateCM(t, c, "a", "gone", nil)
		mustCreateCM(t, c, "a", "changed", nil)

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		inf, h := runInformer(t, ctx, c.ListerWatcher(cmGVR, "a"), &corev1.ConfigMap{})
		time.Sleep(5 * time.Second) // a watch older than client-go's "very short" second
		hold.Store(int64(time.Hour))
		synctest.Wait()

		if err := c.Delete(ctx, cmGVR, "a", "gone", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Update(ctx, cmGVR, "a", configMap("a", "changed", map[string]string{"k": "v"}), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		mustCreateCM(t, c, "a", "new", nil)
		synctest.Wait()
		if got := cacheState(t, inf); got["a/gone"] == "" || got["a/new"] != "" {
			t.Fatalf("cache changed while events were held: %v", got)
		}

		if err := s.Compact(s.ResourceVersion()); err != nil {
			t.Fatal(err)
		}
		ws := s.Watchers()
		if len(ws) != 1 {
			t.Fatalf("open watches = %v, want 1", ws)
		}
		hold.Store(0)
		if err := s.ExpireWatch(ws[0].ID); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute) // past the reflector's backoff
		synctest.Wait()

		if got, want := cacheState(t, inf), serverState(t, c, cmGVR, "a"); !equalStates(got, want) {
			t.Errorf("cache after relist = %v, server = %v", got, want)
		}
		if !slices.Contains(h.all(), "delete-tombstone a/gone") {
			t.Errorf("handler calls = %v, want a tombstone for a/gone", h.all())
		}
		relists := 0
		for _, w := range watchRequests(log) {
			if w.Request.SendInitialEvents {
				relists++
			}
		}
		if relists != 2 {
			t.Errorf("WatchList requests = %d, want 2 (sync, relist after 410)", relists)
		}
		cancel()
		synctest.Wait()
	})
}

func equalStates(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestInformerSyncsManyObjectsThroughPagedList: with WatchList disabled the
// reflector's first LIST (resourceVersion "0", pages of 500) brings every one
// of 1,200 objects into the cache.
func TestInformerSyncsManyObjectsThroughPagedList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, log := newServer(t, fakeapi.Options{})
		c := s.Client("test")
		mustNamespace(t, c, "a")
		for i := range 1200 {
			mustCreateCM(t, c, "a", "cm-"+itoa(int64(i)), nil)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		lw := c.ListerWatcherWithOptions(cmGVR, "a", fakeapi.ListerWatcherOptions{DisableWatchList: true})
		inf, _ := runInformer(t, ctx, lw, &corev1.ConfigMap{})
		if got := len(inf.GetStore().ListKeys()); got != 1200 {
			t.Errorf("cache holds %d objects, want 1200 (lists served: %d)", got, len(log.Kind(fakeapi.ObsList)))
		}
		cancel()
		synctest.Wait()
	})
}

// TestInformerWithLabelSelectorSeesObjectsEnterAndLeave: an informer whose
// ListerWatcher selects app=x sees an object relabelled into the selection as
// an add and one relabelled out as a delete, as kube-apiserver's watch cache
// reports selector transitions.
func TestInformerWithLabelSelectorSeesObjectsEnterAndLeave(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newServer(t, fakeapi.Options{})
		c := s.Client("test")
		mustNamespace(t, c, "a")
		labelled := func(name, app string) *corev1.ConfigMap {
			cm := configMap("a", name, nil)
			cm.Labels = map[string]string{"app": app}
			return cm
		}
		for _, cm := range []*corev1.ConfigMap{labelled("in", "x"), labelled("out", "y")} {
			if _, err := c.Create(t.Context(), cmGVR, "a", cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		lw := c.ListerWatcherWithOptions(cmGVR, "a", fakeapi.ListerWatcherOptions{
			TweakListOptions: func(o *metav1.ListOptions) { o.LabelSelector = "app=x" },
		})
		inf, h := runInformer(t, ctx, lw, &corev1.ConfigMap{})
		if got := sortedKeys(cacheState(t, inf)); !slices.Equal(got, []string{"a/in"}) {
			t.Fatalf("cache after sync = %v, want [a/in]", got)
		}
		for _, cm := range []*corev1.ConfigMap{labelled("in", "y"), labelled("out", "x")} {
			if _, err := c.Update(ctx, cmGVR, "a", cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if got := sortedKeys(cacheState(t, inf)); !slices.Equal(got, []string{"a/out"}) {
			t.Errorf("cache after relabelling = %v, want [a/out]", got)
		}
		if calls := h.all(); !slices.Equal(calls, []string{"add in", "delete in", "add out"}) {
			t.Errorf("handler calls = %v, want [add in, delete in, add out]", calls)
		}
		cancel()
		synctest.Wait()
	})
}
