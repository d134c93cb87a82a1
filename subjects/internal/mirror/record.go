package mirror

import (
	"context"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/sim"
)

// Identity is what a trace record says about one object.
type Identity struct {
	Namespace string
	Name      string
	UID       string
	RV        int64
}

// IdentityOf reads obj's identity. A cache.DeletedFinalStateUnknown yields
// the identity of the last known object it carries (name from its key when
// that object is nil) and tombstone true. ok is false when obj has no
// metadata at all.
func IdentityOf(obj any) (id Identity, tombstone bool, ok bool) {
	if d, isTomb := obj.(cache.DeletedFinalStateUnknown); isTomb {
		tombstone = true
		if d.Obj == nil {
			ns, name, _ := cache.SplitMetaNamespaceKey(d.Key)
			return Identity{Namespace: ns, Name: name}, true, true
		}
		obj = d.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return Identity{}, tombstone, false
	}
	return Identity{Namespace: m.GetNamespace(), Name: m.GetName(), UID: string(m.GetUID()), RV: ParseRV(m.GetResourceVersion())}, tombstone, true
}

// ParseRV reads a resourceVersion as the integer the fake server issues; an
// empty or foreign resourceVersion reads as 0.
func ParseRV(rv string) int64 {
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// Snapshot turns cached objects into a trace snapshot (sim.ObjectStateOf),
// sorted by namespace and name. Objects without metadata are skipped.
func Snapshot(resource string, objs []any) []sim.ObjectState {
	out := make([]sim.ObjectState, 0, len(objs))
	for _, obj := range objs {
		if st, ok := sim.ObjectStateOf(resource, obj); ok {
			out = append(out, st)
		}
	}
	sim.SortObjectStates(out)
	return out
}

// Workers runs the Reconciler on keys from a client-go rate-limited
// workqueue, as sample-controller does, recording every queue operation and
// every reconcile into the trace.
type Workers struct {
	// Queue holds the keys to reconcile.
	Queue workqueue.TypedRateLimitingInterface[string]
	// Reconciler does the work.
	Reconciler *Reconciler
	// Rec records queue and reconcile records.
	Rec sim.Recorder
	// Actor is the subject's name in the trace.
	Actor string
	// Idle, optional, is called after a reconcile that left the queue empty
	// (the subject records a cache snapshot there).
	Idle func()
	// Turn, optional, waits for the run's turn to do what to object
	// (sim.Env.Turn): a worker's Get then records in the order the plan
	// decides, not in goroutine order, beside a handler woken by the same
	// release.
	Turn func(what, object string)
}

// Add enqueues key and records it.
func (w *Workers) Add(key string) {
	w.Rec.Record(sim.Record{Kind: sim.RecQueue, Actor: w.Actor, Op: "add", Key: key})
	w.Queue.Add(key)
}

// Run starts n workers and blocks until ctx is cancelled and every worker
// has returned. It shuts the queue down when ctx is cancelled.
func (w *Workers) Run(ctx context.Context, n int) {
	if n < 1 {
		n = 1
	}
	stop := context.AfterFunc(ctx, w.Queue.ShutDown)
	defer stop()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for w.processNextWorkItem(ctx) {
			}
		})
	}
	wg.Wait()
}

// processNextWorkItem is sample-controller's: Get, defer Done, Forget on
// success, AddRateLimited on error.
func (w *Workers) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := w.Queue.Get()
	if shutdown {
		return false
	}
	if w.Turn != nil {
		w.Turn("get", key)
	}
	w.Rec.Record(sim.Record{Kind: sim.RecQueue, Actor: w.Actor, Op: "get", Key: key})
	defer func() {
		w.Queue.Done(key)
		w.Rec.Record(sim.Record{Kind: sim.RecQueue, Actor: w.Actor, Op: "done", Key: key})
	}()
	err := Reconcile(ctx, w.Rec, w.Actor, w.Reconciler, key)
	if err != nil {
		if ctx.Err() != nil {
			return true
		}
		w.Rec.Record(sim.Record{Kind: sim.RecQueue, Actor: w.Actor, Op: "requeue", Key: key, Detail: err.Error()})
		w.Queue.AddRateLimited(key)
		return true
	}
	w.Queue.Forget(key)
	w.Rec.Record(sim.Record{Kind: sim.RecQueue, Actor: w.Actor, Op: "forget", Key: key})
	if w.Idle != nil && w.Queue.Len() == 0 {
		w.Idle()
	}
	return true
}

// Reconcile runs r on key between a "start" and an "end" reconcile record;
// the end record's Result is "ok" or the error, its Detail what was done.
func Reconcile(ctx context.Context, rec sim.Recorder, actor string, r *Reconciler, key string) error {
	rec.Record(sim.Record{Kind: sim.RecReconcile, Actor: actor, Op: "start", Key: key})
	did, err := r.Reconcile(ctx, key)
	result := "ok"
	if err != nil {
		result = err.Error()
	}
	rec.Record(sim.Record{Kind: sim.RecReconcile, Actor: actor, Op: "end", Key: key, Result: result, Detail: did})
	return err
}
