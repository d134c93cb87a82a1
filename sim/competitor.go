package sim

import (
	"cmp"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/fakeapi"
)

// ClientCompetitor is the client name of the competing writer (its steps
// and its informer-fed controller).
const ClientCompetitor = "competitor"

// competitor is the informer-fed competing writer (see Competitor): a real
// informer on one resource, a workqueue, and a worker that applies the
// plan's merge patch to every object it would change.
//
// Its order is the lab's, not client-go's. client-go hands a batch (a
// WatchList's objects, a relist's) to the handler in Go's map order, so a
// FIFO worker would patch them in an order no plan decides, and a replay
// met it as a patch its schedule did not name. Instead the worker, woken
// by the queue, waits for its turn (turn, a no-op in a run without the
// scheduler): by then every handler call of that release has queued its
// object. It takes every queued object and handles them in key order
// (round): the same patches, in the same order, whatever order client-go
// handed them out.
type competitor struct {
	cancel context.CancelFunc
	queue  workqueue.TypedRateLimitingInterface[cache.ObjectName]
	once   sync.Once
	// turn waits for the competitor's turn to do what.
	turn func(what string)
}

func startCompetitor(ctx context.Context, c *fakeapi.Client, gvr schema.GroupVersionResource, kind string, spec Competitor, rec Recorder,
	turn func(ctx context.Context, what, object string)) *competitor {
	ctx, cancel := context.WithCancel(ctx)
	if turn == nil {
		turn = func(context.Context, string, string) {}
	}
	k := &competitor{
		cancel: cancel,
		turn:   func(what string) { turn(ctx, what, "") },
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: ClientCompetitor}),
	}
	var example runtime.Object = &unstructured.Unstructured{}
	if typed, err := scheme.Scheme.New(gvr.GroupVersion().WithKind(kind)); err == nil {
		example = typed
	}
	var patch map[string]any
	_ = json.Unmarshal(spec.Patch, &patch) // validated by the plan
	inf := cache.NewSharedIndexInformerWithOptions(c.ListerWatcher(gvr, ""), example, cache.SharedIndexInformerOptions{})
	enqueue := func(obj any) {
		if name, err := cache.ObjectToName(obj); err == nil {
			k.queue.AddAfter(name, spec.Delay.D())
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	})
	go inf.RunWithContext(ctx)
	go func() {
		defer k.queue.ShutDown()
		<-ctx.Done()
	}()
	go func() {
		if !cache.WaitFor(ctx, "", inf.HasSyncedChecker()) {
			return
		}
		for k.round(ctx, inf.GetIndexer(), c, gvr, patch, spec.Patch, rec) {
		}
	}()
	return k
}

// round waits until an object is queued, then for the competitor's turn,
// takes every object queued by then and handles them in key order; false
// once the queue is shut down.
func (k *competitor) round(ctx context.Context, idx cache.Indexer, c *fakeapi.Client, gvr schema.GroupVersionResource,
	patch map[string]any, raw []byte, rec Recorder) bool {
	name, shutdown := k.queue.Get()
	if shutdown {
		return false
	}
	k.turn("get")
	held := []cache.ObjectName{name}
	for k.queue.Len() > 0 {
		name, shutdown := k.queue.Get()
		if shutdown {
			break
		}
		held = append(held, name)
	}
	slices.SortFunc(held, func(a, b cache.ObjectName) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	for _, name := range held {
		k.process(ctx, idx, c, gvr, name, patch, raw, rec)
	}
	return true
}

// process handles one object taken from the queue and marks it done.
func (k *competitor) process(ctx context.Context, idx cache.Indexer, c *fakeapi.Client, gvr schema.GroupVersionResource,
	name cache.ObjectName, patch map[string]any, raw []byte, rec Recorder) {
	defer k.queue.Done(name)
	obj, exists, err := idx.GetByKey(name.String())
	if err != nil || !exists {
		k.queue.Forget(name)
		return
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil || u["metadata"].(map[string]any)["deletionTimestamp"] != nil || !mergePatchChanges(u, patch) {
		k.queue.Forget(name)
		return
	}
	_, err = c.Patch(ctx, gvr, name.Namespace, name.Name, types.MergePatchType, raw, metav1.PatchOptions{})
	switch {
	case err == nil, apierrors.IsNotFound(err):
		k.queue.Forget(name)
	case ctx.Err() != nil:
	default:
		rec.Record(Record{Kind: RecNote, Key: name.String(), Detail: "competitor: patch: " + err.Error()})
		k.queue.AddRateLimited(name)
	}
}

// mergePatchChanges reports whether applying the JSON merge patch to obj
// (RFC 7386) would change it.
func mergePatchChanges(obj, patch map[string]any) bool {
	for key, pv := range patch {
		ov, present := obj[key]
		switch p := pv.(type) {
		case nil:
			if present {
				return true
			}
		case map[string]any:
			o, ok := ov.(map[string]any)
			if !ok {
				return true
			}
			if mergePatchChanges(o, p) {
				return true
			}
		default:
			if !present || !reflect.DeepEqual(normalizeJSON(ov), normalizeJSON(pv)) {
				return true
			}
		}
	}
	return false
}

// normalizeJSON makes converter output and decoded JSON comparable
// (numbers as float64).
func normalizeJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// stop ends the competitor's goroutines.
func (k *competitor) stop() {
	k.once.Do(func() {
		k.cancel()
		k.queue.ShutDown()
	})
}
