package http_test

import (
	"context"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/fakeapi"
)

// keys returns the namespace/name keys of an informer's cache, sorted.
func keys(inf cache.SharedIndexInformer) []string {
	return slices.Sorted(slices.Values(inf.GetStore().ListKeys()))
}

// serverKeys returns the namespace/name keys of the server's objects of
// one resource, sorted.
func serverKeys(t *testing.T, srv *fakeapi.Server, gvr schema.GroupVersionResource) []string {
	t.Helper()
	list, err := srv.Client("check").List(context.Background(), gvr, "", metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, it := range items {
		k, err := cache.MetaNamespaceKeyFunc(it)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = true
	}
	return slices.Sorted(maps.Keys(out))
}

func equal(a, b []string) bool { return slices.Equal(a, b) }

// TestSharedInformerFactorySyncsPodsAndConfigMapsOverHTTPWithWatchList: a
// real SharedInformerFactory on the typed clientset over the pipe syncs pods
// and configmaps through WatchList (client-go's default: one watch with
// sendInitialEvents per resource, no LIST), then follows live writes.
func TestSharedInformerFactorySyncsPodsAndConfigMapsOverHTTPWithWatchList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		setup := e.clientset(t, "setup")
		mustNamespace(t, setup, "a")
		mustNamespace(t, setup, "b")
		mustCM(t, setup, "a", "one", nil)
		mustCM(t, setup, "b", "two", nil)
		if _, err := setup.CoreV1().Pods("a").Create(context.Background(), pod("a", "p"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		factory := informers.NewSharedInformerFactory(e.clientset(t, "informer"), 0)
		cms := factory.Core().V1().ConfigMaps().Informer()
		pods := factory.Core().V1().Pods().Informer()
		factory.Start(ctx.Done())
		if !cache.WaitFor(ctx, "informers", cms.HasSyncedChecker(), pods.HasSyncedChecker()) {
			t.Fatal("informers did not sync")
		}
		if got, want := keys(cms), []string{"a/one", "b/two"}; !equal(got, want) {
			t.Errorf("configmap cache = %v, want %v", got, want)
		}
		if got, want := keys(pods), []string{"a/p"}; !equal(got, want) {
			t.Errorf("pod cache = %v, want %v", got, want)
		}
		informerReqs := e.log.Where(func(o fakeapi.Observation) bool {
			return o.Kind == fakeapi.ObsRequest && o.Request.Client == "informer"
		})
		var watchLists int
		for _, o := range informerReqs {
			switch {
			case o.Request.Verb == "list":
				t.Errorf("informer LISTed %s with WatchList on", o.Request.Resource.Resource)
			case o.Request.Verb == "watch" && o.Request.SendInitialEvents && o.Code == 200:
				watchLists++
			}
		}
		if watchLists != 2 {
			t.Errorf("%d WatchList requests answered 200, want 2 (pods, configmaps)", watchLists)
		}

		mustCM(t, setup, "a", "three", nil)
		if err := setup.CoreV1().ConfigMaps("b").Delete(ctx, "two", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got, want := keys(cms), serverKeys(t, e.srv, cmGVR); !equal(got, want) {
			t.Errorf("configmap cache after live writes = %v, server = %v", got, want)
		}
		cancel()
		factory.Shutdown()
		synctest.Wait()
		if n := len(e.srv.Watchers()); n != 0 {
			t.Errorf("%d server watches open after the factory shut down", n)
		}
	})
}

// noWatchList marks a ListerWatcher as not supporting WatchList semantics,
// so the reflector LISTs then watches.
type noWatchList struct{}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// listWatch is the clientset's configmap ListerWatcher with WatchList off.
func listWatch(cs kubernetes.Interface) cache.ListerWatcher {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.CoreV1().ConfigMaps("").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return cs.CoreV1().ConfigMaps("").Watch(ctx, o)
		},
	}
	return cache.ToListWatcherWithWatchListSemantics(lw, noWatchList{})
}

// TestInformerOverHTTPListsThenWatchesWhenWatchListIsOff: without WatchList
// the reflector LISTs (paged, limit 500) then watches from the list's
// resourceVersion, over HTTP.
func TestInformerOverHTTPListsThenWatchesWhenWatchListIsOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		setup := e.clientset(t, "setup")
		mustNamespace(t, setup, "a")
		mustCM(t, setup, "a", "one", nil)
		mustCM(t, setup, "a", "two", nil)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		inf := cache.NewSharedIndexInformer(listWatch(e.clientset(t, "informer")), &corev1.ConfigMap{}, 0, cache.Indexers{})
		go inf.RunWithContext(ctx)
		if !cache.WaitFor(ctx, "informer", inf.HasSyncedChecker()) {
			t.Fatal("informer did not sync")
		}
		if got, want := keys(inf), []string{"a/one", "a/two"}; !equal(got, want) {
			t.Errorf("cache = %v, want %v", got, want)
		}
		synctest.Wait() // the reflector opens its watch after the list is handled
		var verbs []string
		for _, o := range e.log.Requests("") {
			if o.Request.Client == "informer" {
				verbs = append(verbs, o.Request.Verb)
				if o.Request.Verb == "watch" && o.Request.SendInitialEvents {
					t.Errorf("watch with sendInitialEvents while WatchList is off")
				}
			}
		}
		if !equal(verbs, []string{"list", "watch"}) {
			t.Errorf("informer requests = %v, want list then watch", verbs)
		}
		mustCM(t, setup, "a", "three", nil)
		synctest.Wait()
		if got, want := keys(inf), serverKeys(t, e.srv, cmGVR); !equal(got, want) {
			t.Errorf("cache after a live create = %v, server = %v", got, want)
		}
	})
}

// TestInformerOverHTTPSurvivesCompactionAndA410: the informer's watch ends
// while events for it are still in flight (held by a delay hook, then
// dropped by the close); the history is compacted past the informer's
// resourceVersion, so its re-watch is answered with a 410 ERROR event over
// HTTP; the reflector relists and the cache converges to the server,
// including the delete it never saw as an event.
func TestInformerOverHTTPSurvivesCompactionAndA410(t *testing.T) {
	for _, mode := range []string{"watchlist", "list"} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var hold atomic.Bool
				e := newEnv(t, fakeapi.Options{Hooks: fakeapi.HookFuncs{
					Delay: func(fakeapi.WatcherInfo, fakeapi.EventInfo) time.Duration {
						if hold.Load() {
							return time.Hour
						}
						return 0
					},
				}})
				setup := e.clientset(t, "setup")
				mustNamespace(t, setup, "a")
				mustCM(t, setup, "a", "one", nil)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				cs := e.clientset(t, "informer")
				var inf cache.SharedIndexInformer
				if mode == "list" {
					inf = cache.NewSharedIndexInformer(listWatch(cs), &corev1.ConfigMap{}, 0, cache.Indexers{})
				} else {
					inf = informers.NewSharedInformerFactory(cs, 0).Core().V1().ConfigMaps().Informer()
				}
				go inf.RunWithContext(ctx)
				if !cache.WaitFor(ctx, "informer", inf.HasSyncedChecker()) {
					t.Fatal("informer did not sync")
				}
				time.Sleep(5 * time.Second) // a long-lived watch: its clean end is not a "very short watch"

				hold.Store(true)
				mustCM(t, setup, "a", "late", nil)
				if err := setup.CoreV1().ConfigMaps("a").Delete(ctx, "one", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := e.srv.Compact(e.srv.ResourceVersion()); err != nil {
					t.Fatal(err)
				}
				hold.Store(false)
				ws := e.srv.Watchers()
				if len(ws) != 1 {
					t.Fatalf("%d server watches, want the informer's one", len(ws))
				}
				if err := e.srv.CloseWatch(ws[0].ID, false); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				time.Sleep(5 * time.Second) // past any relist backoff
				synctest.Wait()

				expired := e.log.Where(func(o fakeapi.Observation) bool {
					return o.Kind == fakeapi.ObsRequest && o.Request.Client == "informer" && o.Request.Verb == "watch" && o.Code == 410
				})
				if len(expired) == 0 {
					t.Error("no watch answered 410 after the compaction; the test did not exercise the relist")
				}
				if got, want := keys(inf), serverKeys(t, e.srv, cmGVR); !equal(got, want) || !equal(want, []string{"a/late"}) {
					t.Errorf("cache after the 410 relist = %v, server = %v (want [a/late])", got, want)
				}
			})
		})
	}
}
