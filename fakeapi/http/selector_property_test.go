package http_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"pgregory.net/rapid"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cachelab/cachelab/fakeapi"
	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
)

// TestSelectorInformersEndWithExactlyTheMatchingObjectsUnderFaults (issue
// 29 item 4): random plans create, relabel (into and out of app=x) and
// delete ConfigMaps while the watches of a client-go informer and of
// controller-runtime's cache, both selecting app=x, are held (their events
// delayed), expire (410, relist), break (abrupt close) and the storage is
// compacted under them. Once the faults stop, each cache holds exactly
// the server's objects with app=x, at the server's resourceVersions: no
// object that left the selection stays behind, none that entered is
// missing.
func TestSelectorInformersEndWithExactlyTheMatchingObjectsUnderFaults(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		rapid.SyncTest(rt, func(rt *rapid.T) { selectorPlan(rt) })
	})
}

// selectorPlan is one random plan, run inside its bubble.
func selectorPlan(rt *rapid.T) {
	var hold atomic.Int64 // nanoseconds each informer watch event is held
	srv := fakeapi.NewServer(fakeapi.Options{Hooks: fakeapi.HookFuncs{
		Delay: func(w fakeapi.WatcherInfo, _ fakeapi.EventInfo) time.Duration {
			if w.Client == "setup" {
				return 0
			}
			return time.Duration(hold.Load())
		},
	}})
	pipe := fakehttp.NewPipe(fakehttp.NewHandler(srv, fakehttp.Options{}))
	defer srv.Close()
	defer pipe.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	setup, err := kubernetes.NewForConfig(pipe.RESTConfig("setup"))
	if err != nil {
		rt.Fatal(err)
	}
	if _, err := setup.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); err != nil {
		rt.Fatal(err)
	}
	sel := labels.SelectorFromSet(labels.Set{"app": "x"})

	// client-go: a typed informer factory with the selector.
	cs, err := kubernetes.NewForConfig(pipe.RESTConfig("informer"))
	if err != nil {
		rt.Fatal(err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("a"),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sel.String() }))
	inf := factory.Core().V1().ConfigMaps().Informer()
	factory.Start(ctx.Done())
	// controller-runtime: its cache, selecting by object.
	crc, err := ctrlcache.New(pipe.RESTConfig("ctrl-cache"), ctrlcache.Options{
		ByObject: map[client.Object]ctrlcache.ByObject{&corev1.ConfigMap{}: {Label: sel}},
	})
	if err != nil {
		rt.Fatal(err)
	}
	if _, err := crc.GetInformer(ctx, &corev1.ConfigMap{}); err != nil {
		rt.Fatal(err)
	}
	go func() { _ = crc.Start(ctx) }()
	if !cache.WaitFor(ctx, "informer", inf.HasSyncedChecker()) || !crc.WaitForCacheSync(ctx) {
		rt.Fatal("caches did not sync")
	}

	names := []string{"p", "q", "r", "s"}
	steps := rapid.IntRange(1, 30).Draw(rt, "steps")
	for i := range steps {
		name := rapid.SampledFrom(names).Draw(rt, fmt.Sprintf("name %d", i))
		switch action := rapid.SampledFrom([]string{"create", "relabel", "delete", "hold", "release", "expire", "break", "compact", "wait"}).Draw(rt, fmt.Sprintf("action %d", i)); action {
		case "create":
			app := rapid.SampledFrom([]string{"x", "y"}).Draw(rt, fmt.Sprintf("app %d", i))
			_, _ = setup.CoreV1().ConfigMaps("a").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}}}, metav1.CreateOptions{})
		case "relabel":
			if cm, err := setup.CoreV1().ConfigMaps("a").Get(ctx, name, metav1.GetOptions{}); err == nil {
				cm.Labels = map[string]string{"app": map[string]string{"x": "y", "y": "x"}[cm.Labels["app"]]}
				_, _ = setup.CoreV1().ConfigMaps("a").Update(ctx, cm, metav1.UpdateOptions{})
			}
		case "delete":
			_ = setup.CoreV1().ConfigMaps("a").Delete(ctx, name, metav1.DeleteOptions{})
		case "hold":
			hold.Store(int64(rapid.IntRange(1, 20).Draw(rt, fmt.Sprintf("hold seconds %d", i))) * int64(time.Second))
		case "release":
			hold.Store(0)
		case "expire", "break":
			for _, w := range srv.Watchers() {
				if w.Client == "setup" {
					continue
				}
				if action == "expire" {
					_ = srv.ExpireWatch(w.ID)
				} else {
					_ = srv.CloseWatch(w.ID, true)
				}
			}
		case "compact":
			_ = srv.Compact(srv.ResourceVersion())
		case "wait":
			time.Sleep(time.Duration(rapid.IntRange(1, 30).Draw(rt, fmt.Sprintf("wait seconds %d", i))) * time.Second)
		}
		time.Sleep(100 * time.Millisecond)
	}
	hold.Store(0)
	// The reflector's backoff after an abrupt close is at most 30 s.
	time.Sleep(2 * time.Minute)
	synctest.Wait()

	list, err := setup.CoreV1().ConfigMaps("a").List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		rt.Fatal(err)
	}
	want := map[string]string{}
	for _, cm := range list.Items {
		want[cm.Name] = cm.ResourceVersion
	}
	got := map[string]string{}
	for _, o := range inf.GetStore().List() {
		cm := o.(*corev1.ConfigMap)
		got[cm.Name] = cm.ResourceVersion
	}
	if !maps.Equal(got, want) {
		rt.Errorf("client-go informer with %s holds %v, server %v", sel, got, want)
	}
	var crList corev1.ConfigMapList
	if err := crc.List(ctx, &crList, client.InNamespace("a")); err != nil {
		rt.Fatal(err)
	}
	got = map[string]string{}
	for _, cm := range crList.Items {
		got[cm.Name] = cm.ResourceVersion
	}
	if !maps.Equal(got, want) {
		rt.Errorf("controller-runtime cache with %s holds %v (%v), server %v", sel, got, slices.Sorted(maps.Keys(got)), want)
	}
	cancel()
	factory.Shutdown()
}
