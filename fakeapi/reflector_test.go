package fakeapi_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/fakeapi/fakeapitest"
)

// runQuietWatchWithCompaction runs an informer on the quiet namespace for 30
// virtual minutes while another namespace gets a write every 10 s and
// history is compacted every 5 minutes to the revision of 5 minutes before,
// as kube-apiserver compacts etcd. It returns the server's log.
func runQuietWatchWithCompaction(t *testing.T, bookmarkInterval time.Duration) *fakeapitest.Log {
	s, log := newServer(t, fakeapi.Options{BookmarkInterval: bookmarkInterval})
	c := s.Client("test")
	mustNamespace(t, c, "quiet")
	mustNamespace(t, c, "busy")
	mustCreateCM(t, c, "quiet", "q", nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	inf, _ := runInformer(t, ctx, c.ListerWatcher(cmGVR, "quiet"), &corev1.ConfigMap{})

	prevRV := s.ResourceVersion()
	for tick := 1; tick <= 30*6; tick++ {
		time.Sleep(10 * time.Second)
		cm := configMap("busy", "", nil)
		cm.GenerateName = "w-"
		if _, err := c.Create(ctx, cmGVR, "busy", cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if tick%30 == 0 { // every 5 minutes
			if err := s.Compact(prevRV); err != nil {
				t.Fatal(err)
			}
			prevRV = s.ResourceVersion()
		}
	}
	synctest.Wait()
	if got, want := cacheState(t, inf), serverState(t, c, cmGVR, "quiet"); !equalStates(got, want) {
		t.Errorf("cache = %v, server = %v", got, want)
	}
	cancel()
	synctest.Wait()
	return log
}

// TestBookmarksKeepQuietWatchResumable: with bookmarks every minute, an
// informer of a quiet namespace re-watches after each watch timeout from a
// recent revision and is never answered 410, despite compaction driven by
// writes elsewhere; so it never relists.
func TestBookmarksKeepQuietWatchResumable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := runQuietWatchWithCompaction(t, time.Minute)
		watches := watchRequests(log)
		if len(watches) < 3 {
			t.Fatalf("watch requests = %d, want the sync and at least 2 re-watches in 30 minutes", len(watches))
		}
		for i, w := range watches {
			if w.Code != 200 {
				t.Errorf("watch %d (from %q) answered %d %s", i, w.Request.ResourceVersion, w.Code, w.Reason)
			}
			if i > 0 && w.Request.SendInitialEvents {
				t.Errorf("watch %d is a relist (sendInitialEvents)", i)
			}
		}
	})
}

// TestWithoutBookmarksQuietWatchExpires is the control for
// TestBookmarksKeepQuietWatchResumable: the same run without bookmarks
// re-watches from the revision of the initial sync, gets 410 once it is
// compacted, and relists.
func TestWithoutBookmarksQuietWatchExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := runQuietWatchWithCompaction(t, -1) // no bookmarks at all
		watches := watchRequests(log)
		expired, relisted := -1, -1
		for i, w := range watches {
			if w.Code == 410 && expired < 0 {
				expired = i
			}
			if i > 0 && w.Request.SendInitialEvents && relisted < 0 {
				relisted = i
			}
		}
		if expired < 0 || relisted < expired {
			t.Errorf("watches = %v; want a 410 and then a relist", summarize(watches))
		}
	})
}

func summarize(obs []fakeapi.Observation) []string {
	var out []string
	for _, o := range obs {
		s := o.Request.Verb + " rv=" + o.Request.ResourceVersion + " " + itoa(int64(o.Code))
		if o.Request.SendInitialEvents {
			s += " sendInitialEvents"
		}
		out = append(out, s)
	}
	return out
}

// TestDeleteBetweenListAndWatchIsNotLost (k/k#141528): an object deleted
// after the reflector's LIST and before its WATCH is deleted from the cache:
// the watch from the list's resourceVersion replays the delete.
func TestDeleteBetweenListAndWatchIsNotLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var once sync.Once
		var s *fakeapi.Server
		hooks := fakeapi.HookFuncs{Before: func(req fakeapi.RequestInfo) fakeapi.RequestFault {
			if req.Verb == "watch" && req.Client == "informer" {
				once.Do(func() { // hooks run without the server lock
					if err := s.Client("user").Delete(context.Background(), cmGVR, "a", "doomed", metav1.DeleteOptions{}); err != nil {
						t.Errorf("delete between list and watch: %v", err)
					}
				})
			}
			return fakeapi.RequestFault{}
		}}
		s, log := newServer(t, fakeapi.Options{Hooks: hooks})
		c := s.Client("informer")
		mustNamespace(t, c, "a")
		mustCreateCM(t, c, "a", "doomed", nil)
		mustCreateCM(t, c, "a", "kept", nil)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		lw := c.ListerWatcherWithOptions(cmGVR, "a", fakeapi.ListerWatcherOptions{DisableWatchList: true})
		inf, h := runInformer(t, ctx, lw, &corev1.ConfigMap{})
		synctest.Wait()

		if got := sortedKeys(cacheState(t, inf)); !slices.Equal(got, []string{"a/kept"}) {
			t.Errorf("cache = %v, want only a/kept", got)
		}
		if calls := h.all(); !slices.Contains(calls, "delete doomed") {
			t.Errorf("handler calls = %v, want delete doomed", calls)
		}
		if lists := log.Kind(fakeapi.ObsList); len(lists) != 1 || lists[0].Count != 2 {
			t.Errorf("lists = %+v, want one list of 2 items (the delete came after it)", lists)
		}
		cancel()
		synctest.Wait()
	})
}

// TestReflectorRewatchesAfterCleanCloseAndRelistsAfterAbruptClose: a clean
// close (after more than a second and some events) is followed by a watch
// from the last resourceVersion; an abrupt one (500 ERROR event) by a relist
// (WatchList) after the reflector's backoff.
func TestReflectorRewatchesAfterCleanCloseAndRelistsAfterAbruptClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, log := newServer(t, fakeapi.Options{})
		c := s.Client("test")
		mustNamespace(t, c, "a")
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		inf, _ := runInformer(t, ctx, c.ListerWatcher(cmGVR, "a"), &corev1.ConfigMap{})

		time.Sleep(5 * time.Second)
		mustCreateCM(t, c, "a", "one", nil)
		synctest.Wait()
		lastRV := itoa(s.ResourceVersion())
		if err := s.CloseWatch(s.Watchers()[0].ID, false); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		watches := watchRequests(log)
		if len(watches) != 2 {
			t.Fatalf("watches after clean close = %v, want 2", summarize(watches))
		}
		if w := watches[1].Request; w.SendInitialEvents || w.ResourceVersion != lastRV {
			t.Errorf("after a clean close: %v; want a plain watch from %s", summarize(watches[1:]), lastRV)
		}

		mustCreateCM(t, c, "a", "two", nil)
		synctest.Wait()
		if err := s.CloseWatch(s.Watchers()[0].ID, true); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second) // the reflector backs off (800 ms, jittered) before relisting
		synctest.Wait()
		watches = watchRequests(log)
		if len(watches) != 3 || !watches[2].Request.SendInitialEvents {
			t.Errorf("after an abrupt close: %v; want a relist (sendInitialEvents)", summarize(watches))
		}
		mustCreateCM(t, c, "a", "three", nil)
		synctest.Wait()
		if got, want := cacheState(t, inf), serverState(t, c, cmGVR, "a"); !equalStates(got, want) || len(got) != 3 {
			t.Errorf("cache = %v, server = %v", got, want)
		}
		cancel()
		synctest.Wait()
	})
}
