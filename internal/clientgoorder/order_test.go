package clientgoorder

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"
)

// streamingLW is a ListerWatcher that answers a WatchList request
// (sendInitialEvents=true) as kube-apiserver does: one ADDED event per
// object, in the order given, then a bookmark annotated
// k8s.io/initial-events-end. lists counts List calls (0 when the
// reflector used the WatchList).
type streamingLW struct {
	names []string
	mu    sync.Mutex
	lists int
}

func (lw *streamingLW) ListWithContext(_ context.Context, _ metav1.ListOptions) (runtime.Object, error) {
	lw.mu.Lock()
	lw.lists++
	lw.mu.Unlock()
	list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(len(lw.names))}}
	for i, n := range lw.names {
		list.Items = append(list.Items, *configMap(n, i+1))
	}
	return list, nil
}

func (lw *streamingLW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w := watch.NewFakeWithChanSize(len(lw.names)+1, false)
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		for i, n := range lw.names {
			w.Add(configMap(n, i+1))
		}
		w.Action(watch.Bookmark, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			ResourceVersion: strconv.Itoa(len(lw.names)),
			Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
		}})
	}
	return w, nil
}

// List and Watch make lw a cache.ListerWatcher; the reflector calls the
// context variants.
func (lw *streamingLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

func (lw *streamingLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

func configMap(name string, rv int) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", ResourceVersion: strconv.Itoa(rv)}}
}

// handlerOrder starts a shared informer over lw, waits until its handler
// has been called for every initial object, and returns the names in the
// order the handler got them.
func handlerOrder(t *testing.T, lw *streamingLW) []string {
	var order []string
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
		var mu sync.Mutex
		reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			mu.Lock()
			order = append(order, obj.(*corev1.ConfigMap).Name)
			mu.Unlock()
		}})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			inf.RunWithContext(ctx)
		}()
		if !cache.WaitFor(ctx, "configmaps", reg.HasSyncedChecker()) {
			t.Fatal("the handler never synced")
		}
		cancel()
		<-done
	})
	return order
}

// A WatchList's objects reach the handler in an order that changes from
// run to run, though the server sent them in one order every time: the
// reflector collects them in a temporary store and replaces its store from
// temporaryStore.List(), a Go map's iteration (reflector.go:901 in client-go
// v0.37.2). With five objects, 20 informers see several orders.
func TestAWatchListsObjectsReachTheHandlerInMapOrder(t *testing.T) {
	sent := []string{"a", "b", "c", "d", "e"}
	seen := map[string]int{}
	for range 20 {
		lw := &streamingLW{names: sent}
		order := handlerOrder(t, lw)
		if lw.lists != 0 {
			t.Fatalf("the reflector listed %d times: it did not use the WatchList (is the WatchListClient feature off?)", lw.lists)
		}
		if got := slices.Sorted(slices.Values(order)); !slices.Equal(got, sent) {
			t.Fatalf("the handler got %q, want each of %q once", order, sent)
		}
		seen[strings.Join(order, ",")]++
	}
	var orders []string
	for o, n := range seen {
		orders = append(orders, fmt.Sprintf("%s (%d)", o, n))
	}
	slices.Sort(orders)
	t.Logf("server order a,b,c,d,e; handler orders in 20 informers: %s", strings.Join(orders, "; "))
	if len(seen) < 2 {
		t.Fatalf("one handler order in 20 informers (%s): the order no longer depends on map iteration", strings.Join(orders, "; "))
	}
}

// The same objects through a List (the WatchListClient feature off) reach
// the handler in the order the server listed them, every time: the
// reflector replaces its store from the list's items, in order. Only the
// WatchList path loses the server's order.
func TestAListsObjectsReachTheHandlerInTheServersOrder(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	sent := []string{"a", "b", "c", "d", "e"}
	for i := range 20 {
		lw := &streamingLW{names: sent}
		order := handlerOrder(t, lw)
		if lw.lists != 1 {
			t.Fatalf("the reflector listed %d times, want 1 (the WatchListClient feature is off)", lw.lists)
		}
		if !slices.Equal(order, sent) {
			t.Fatalf("informer %d: the handler got %q, the server listed %q", i+1, order, sent)
		}
	}
}
