package fakeapi_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/fakeapi/fakeapitest"
)

var (
	nsGVR   = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	cmGVR   = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// newServer returns a server recording its observations in the log.
func newServer(t *testing.T, opts fakeapi.Options) (*fakeapi.Server, *fakeapitest.Log) {
	t.Helper()
	log := &fakeapitest.Log{}
	opts.Observer = log
	return fakeapi.NewServer(opts), log
}

func configMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

// mustNamespace creates namespace ns.
func mustNamespace(t *testing.T, c *fakeapi.Client, ns string) {
	t.Helper()
	if _, err := c.Create(context.Background(), nsGVR, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
}

// mustCreateCM creates a ConfigMap and returns it as stored.
func mustCreateCM(t *testing.T, c *fakeapi.Client, ns, name string, data map[string]string) *corev1.ConfigMap {
	t.Helper()
	obj, err := c.Create(context.Background(), cmGVR, ns, configMap(ns, name, data), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap %s/%s: %v", ns, name, err)
	}
	return obj.(*corev1.ConfigMap)
}

// serverState returns key -> resourceVersion of every object of gvr in ns,
// read from the server with a consistent list.
func serverState(t *testing.T, c *fakeapi.Client, gvr schema.GroupVersionResource, ns string) map[string]string {
	t.Helper()
	list, err := c.List(context.Background(), gvr, ns, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list %s: %v", gvr.Resource, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	return keysAndRVs(t, items)
}

// cacheState returns key -> resourceVersion of every object in an informer's store.
func cacheState(t *testing.T, inf cache.SharedIndexInformer) map[string]string {
	t.Helper()
	var objs []runtime.Object
	for _, o := range inf.GetStore().List() {
		objs = append(objs, o.(runtime.Object))
	}
	return keysAndRVs(t, objs)
}

func keysAndRVs(t *testing.T, objs []runtime.Object) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range objs {
		m, err := meta.Accessor(o)
		if err != nil {
			t.Fatal(err)
		}
		key := m.GetName()
		if m.GetNamespace() != "" {
			key = m.GetNamespace() + "/" + key
		}
		out[key] = m.GetResourceVersion()
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}

// handlerLog records what an informer's handler saw.
type handlerLog struct {
	mu    sync.Mutex
	calls []string
	// tombstones counts OnDelete calls with DeletedFinalStateUnknown.
	tombstones int
}

func (h *handlerLog) add(s string) {
	h.mu.Lock()
	h.calls = append(h.calls, s)
	h.mu.Unlock()
}

func (h *handlerLog) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.calls)
}

func (h *handlerLog) handler() cache.ResourceEventHandler {
	name := func(obj any) string {
		m, err := meta.Accessor(obj)
		if err != nil {
			return fmt.Sprintf("%T", obj)
		}
		return m.GetName()
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, initial bool) { h.add("add " + name(obj)) },
		UpdateFunc: func(_, obj any) { h.add("update " + name(obj)) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				h.mu.Lock()
				h.tombstones++
				h.mu.Unlock()
				h.add("delete-tombstone " + d.Key)
				return
			}
			h.add("delete " + name(obj))
		},
	}
}

// runInformer starts an informer on lw with a recording handler and waits
// until it has synced. The informer stops when the test's context ends.
func runInformer(t *testing.T, ctx context.Context, lw cache.ListerWatcher, example runtime.Object) (cache.SharedIndexInformer, *handlerLog) {
	t.Helper()
	inf := cache.NewSharedIndexInformer(lw, example, 0, cache.Indexers{})
	h := &handlerLog{}
	if _, err := inf.AddEventHandler(h.handler()); err != nil {
		t.Fatal(err)
	}
	go inf.RunWithContext(ctx)
	if !cache.WaitFor(ctx, "informer", inf.HasSyncedChecker()) {
		t.Fatal("informer did not sync")
	}
	return inf, h
}

// watchRequests returns the watch requests the server answered, in order.
func watchRequests(log *fakeapitest.Log) []fakeapi.Observation {
	return log.Requests("watch")
}

func everything() labels.Selector { return labels.Everything() }
