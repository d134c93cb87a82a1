package cachelabtest

import (
	"context"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/sim"
)

// This file holds the recording wrappers: what writes, for a user's
// controller, every record the invariants read (handler calls with UIDs,
// resourceVersions, old objects and tombstones; sync-signal flips; queue
// operations and reconciles; cache snapshots), so that its author writes
// no trace code.

// recording is one process (one Start) of an instrumented subject: where
// its records go and what it instrumented.
type recording struct {
	rec   sim.Recorder
	actor string
	// turns is the run's Env.Turn bound to the process's context (nil
	// outside the sim or without the scheduler).
	turns func(what, object string)

	mu        sync.Mutex
	informers []*recordedInformer
	wrapped   map[cache.SharedIndexInformer]*recordedInformer
	handlers  map[string]int // handler names used, per resource
}

func newRecording(rec sim.Recorder, actor string) *recording {
	return &recording{rec: rec, actor: actor, handlers: map[string]int{}, wrapped: map[cache.SharedIndexInformer]*recordedInformer{}}
}

func (r *recording) record(rec sim.Record) {
	if r == nil || r.rec == nil {
		return
	}
	if rec.Actor == "" {
		rec.Actor = r.actor
	}
	r.rec.Record(rec)
}

// turn waits for the run's turn before a recorded handler call, a
// recorded queue's Get or a sync signal's record (sim.Env.Turn), so that
// goroutines woken by one release record, and act, one at a time in the
// order the plan decides.
func (r *recording) turn(what, object string) {
	if r != nil && r.turns != nil {
		r.turns(what, object)
	}
}

// panicked records a panic of the user's code, with the stack.
func (r *recording) panicked(where string, x any) {
	r.record(sim.Record{Kind: sim.RecNote, Op: lab.OpPanic,
		Detail: fmt.Sprintf("panic in %s: %v\n\n%s", where, x, debug.Stack())})
}

// handlerName returns a new handler name for resource: the resource's
// name for its first handler, "resource#n" for the n-th.
func (r *recording) handlerName(resource string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handlers[resource]++
	if n := r.handlers[resource]; n > 1 {
		return resource + "#" + strconv.Itoa(n)
	}
	return resource
}

// snapshots returns one cache snapshot per instrumented informer, named
// as its first handler (so the invariants match the cache with its
// handler's calls).
func (r *recording) snapshots() []sim.CacheSnapshot {
	r.mu.Lock()
	infs := append([]*recordedInformer(nil), r.informers...)
	names := make([]string, len(infs))
	for i, inf := range infs {
		names[i] = inf.resource
	}
	r.mu.Unlock()
	var out []sim.CacheSnapshot
	for i, inf := range infs {
		if names[i] == unnamedResource {
			// An informer Env.Record listens to that saw no object: its
			// resource is unknown, and its cache empty.
			continue
		}
		var objs []sim.ObjectState
		for _, obj := range inf.GetStore().List() {
			if st, ok := sim.ObjectStateOf(names[i], obj); ok {
				objs = append(objs, st)
			}
		}
		out = append(out, sim.CacheSnapshot{Name: names[i], Objects: objs})
	}
	return out
}

// recordedInformer is a SharedIndexInformer whose event handlers are
// recorded (every call, before the user's handler runs) and guarded (a
// panic is recorded, with its stack, instead of crashing the process), and
// whose HasSynced flips are recorded.
type recordedInformer struct {
	cache.SharedIndexInformer
	r        *recording
	resource string

	mu sync.Mutex
	// ctx is the context the informer runs with (nil before it runs);
	// pending are the signals to watch once it runs.
	ctx     context.Context
	pending []syncWatch
}

// syncWatch is one sync signal to record when done closes.
type syncWatch struct {
	done            <-chan struct{}
	signal, handler string
}

var _ cache.SharedIndexInformer = (*recordedInformer)(nil)

// RecordInformer returns inf with its event handlers recorded into env's
// trace: each handler added to the result has every call recorded (ADDED,
// MODIFIED with the old object's UID and resourceVersion, DELETED with
// tombstones marked), a panic in it becomes a recorded failure instead of
// a crash, and the informer's cache is snapshotted at the end of the run.
// resource is the trace name of what inf watches ("configmaps",
// "widgets.example.com"). Call it before adding handlers and starting inf.
// The informers of Env.Informers and Env.DynamicInformers, and a
// controller-runtime manager's, are recorded already.
func RecordInformer(env *Env, resource string, inf cache.SharedIndexInformer) cache.SharedIndexInformer {
	if env.rec == nil {
		return inf // Controller.Beside's Env: helpers are not recorded
	}
	return env.rec.informer(resource, inf)
}

func (r *recording) informer(resource string, inf cache.SharedIndexInformer) cache.SharedIndexInformer {
	if ri, ok := inf.(*recordedInformer); ok {
		return ri
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ri, ok := r.wrapped[inf]; ok {
		return ri
	}
	ri := &recordedInformer{SharedIndexInformer: inf, r: r, resource: resource}
	r.informers = append(r.informers, ri)
	r.wrapped[inf] = ri
	return ri
}

// AddEventHandler adds handler, recorded and guarded.
func (i *recordedInformer) AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandlerWithOptions(handler, cache.HandlerOptions{})
}

// AddEventHandlerWithResyncPeriod adds handler, recorded and guarded.
func (i *recordedInformer) AddEventHandlerWithResyncPeriod(handler cache.ResourceEventHandler, resync time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandlerWithOptions(handler, cache.HandlerOptions{ResyncPeriod: &resync})
}

// AddEventHandlerWithOptions adds handler, recorded and guarded.
func (i *recordedInformer) AddEventHandlerWithOptions(handler cache.ResourceEventHandler, opts cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	h := &recordedHandler{h: handler, r: i.r, resource: i.resource, name: i.r.handlerName(i.resource)}
	reg, err := i.SharedIndexInformer.AddEventHandlerWithOptions(h, opts)
	if err == nil && reg != nil {
		i.r.record(sim.Record{Kind: sim.RecSignal, Signal: lab.SignalHandlerSynced, Resource: i.resource, Handler: h.name, Value: false})
		i.watch(syncWatch{reg.HasSyncedChecker().Done(), lab.SignalHandlerSynced, h.name})
	}
	return reg, err
}

// watch records w's signal when it flips, once the informer runs.
func (i *recordedInformer) watch(w syncWatch) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.ctx == nil {
		i.pending = append(i.pending, w)
		return
	}
	go i.watchSynced(i.ctx, w)
}

// Run runs the informer, recording its sync signals.
func (i *recordedInformer) Run(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	i.RunWithContext(ctx)
}

// RunWithContext runs the informer, recording its sync signals.
func (i *recordedInformer) RunWithContext(ctx context.Context) {
	i.mu.Lock()
	if i.ctx == nil {
		i.ctx = ctx
		i.r.record(sim.Record{Kind: sim.RecSignal, Signal: lab.SignalInformerSynced, Resource: i.resource, Value: false})
		for _, w := range append(i.pending, syncWatch{i.HasSyncedChecker().Done(), lab.SignalInformerSynced, ""}) {
			go i.watchSynced(ctx, w)
		}
		i.pending = nil
	}
	i.mu.Unlock()
	i.SharedIndexInformer.RunWithContext(ctx)
}

// watchSynced records w's signal true when it flips; it returns then, or
// when ctx ends.
func (i *recordedInformer) watchSynced(ctx context.Context, w syncWatch) {
	select {
	case <-w.done:
		i.r.turn("check signals", "")
		i.r.record(sim.Record{Kind: sim.RecSignal, Signal: w.signal, Resource: i.resource, Handler: w.handler, Value: true})
	case <-ctx.Done():
	}
}

// recordedHandler records each call before passing it on, and turns a
// panic of the handler into a recorded failure.
type recordedHandler struct {
	h        cache.ResourceEventHandler
	r        *recording
	resource string
	name     string
}

func (h *recordedHandler) guard(what string, obj any, call func()) {
	defer func() {
		if x := recover(); x != nil {
			id, _, _ := identityOf(obj)
			h.r.panicked(fmt.Sprintf("event handler %s of %s %s", what, h.resource, id.key()), x)
		}
	}()
	call()
}

// OnAdd records an ADDED call and calls the handler.
func (h *recordedHandler) OnAdd(obj any, initial bool) {
	rec := h.event("ADDED", obj)
	h.turn(rec)
	rec.Initial = initial
	h.r.record(rec)
	h.guard("OnAdd", obj, func() { h.h.OnAdd(obj, initial) })
}

// OnUpdate records a MODIFIED call (with the old object's UID and
// resourceVersion) and calls the handler.
func (h *recordedHandler) OnUpdate(old, obj any) {
	rec := h.event("MODIFIED", obj)
	h.turn(rec)
	if id, _, ok := identityOf(old); ok {
		rec.OldUID, rec.OldRV = id.UID, id.RV
	}
	h.r.record(rec)
	h.guard("OnUpdate", obj, func() { h.h.OnUpdate(old, obj) })
}

// OnDelete records a DELETED call (Tombstone for a
// DeletedFinalStateUnknown) and calls the handler.
func (h *recordedHandler) OnDelete(obj any) {
	rec := h.event("DELETED", obj)
	h.turn(rec)
	h.r.record(rec)
	h.guard("OnDelete", obj, func() { h.h.OnDelete(obj) })
}

// turn waits for the turn of the call rec describes.
func (h *recordedHandler) turn(rec sim.Record) {
	h.r.turn("handler "+h.name, rec.EventType+" "+identity{Namespace: rec.Namespace, Name: rec.Name}.key())
}

func (h *recordedHandler) event(eventType string, obj any) sim.Record {
	id, tomb, _ := identityOf(obj)
	return sim.Record{Kind: sim.RecHandler, Handler: h.name, EventType: eventType, Resource: h.resource,
		Namespace: id.Namespace, Name: id.Name, UID: id.UID, RV: id.RV, Tombstone: tomb}
}

// identity is what a record says about an object.
type identity struct {
	Namespace, Name, UID string
	RV                   int64
}

func (id identity) key() string {
	if id.Namespace == "" {
		return id.Name
	}
	return id.Namespace + "/" + id.Name
}

// identityOf reads obj's identity; a DeletedFinalStateUnknown yields its
// last known object's (its key's when that is nil) and tombstone true.
func identityOf(obj any) (id identity, tombstone, ok bool) {
	if d, isTomb := obj.(cache.DeletedFinalStateUnknown); isTomb {
		tombstone = true
		if d.Obj == nil {
			ns, name, _ := cache.SplitMetaNamespaceKey(d.Key)
			return identity{Namespace: ns, Name: name}, true, true
		}
		obj = d.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return identity{}, tombstone, false
	}
	rv, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	return identity{Namespace: m.GetNamespace(), Name: m.GetName(), UID: string(m.GetUID()), RV: rv}, tombstone, true
}

// resourceOf returns the trace name of obj's resource: from its kind
// (set, or known to client-go's scheme or s), pluralised as the API does
// for the built-in kinds ("ConfigMap" -> "configmaps").
func resourceOf(obj runtime.Object, s *runtime.Scheme) string {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		for _, sch := range []*runtime.Scheme{s, scheme.Scheme} {
			if sch == nil {
				continue
			}
			if gvks, _, err := sch.ObjectKinds(obj); err == nil && len(gvks) > 0 {
				gvk = gvks[0]
				break
			}
		}
	}
	if gvk.Empty() {
		return fmt.Sprintf("%T", obj)
	}
	gvr, _ := meta.UnsafeGuessKindToResource(gvk)
	return sim.ResourceName(gvr)
}

// RecordQueue returns q with every operation recorded into env's trace,
// and the processing of each key recorded as a reconcile: Get records the
// queue's "get" and a reconcile "start", Done the reconcile's "end" (Result
// "ok", or "requeued" when the key was re-added with AddRateLimited or
// AddAfter while it was processed) and the queue's "done". The invariants
// that judge what a reconcile knew (read-your-writes, children, finalizers)
// and the plans' mid-reconcile crashes need these records. Wrap the queue
// the controller's workers read:
//
//	queue := cachelabtest.RecordQueue(env, workqueue.NewTypedRateLimitingQueue(...))
func RecordQueue[T comparable](env *Env, q workqueue.TypedRateLimitingInterface[T]) workqueue.TypedRateLimitingInterface[T] {
	if env.rec == nil {
		return q // Controller.Beside's Env: helpers are not recorded
	}
	return &recordedQueue[T]{TypedRateLimitingInterface: q, r: env.rec, requeued: map[T]bool{}}
}

type recordedQueue[T comparable] struct {
	workqueue.TypedRateLimitingInterface[T]
	r        *recording
	mu       sync.Mutex
	requeued map[T]bool
}

func (q *recordedQueue[T]) op(op string, key T) {
	q.r.record(sim.Record{Kind: sim.RecQueue, Op: op, Key: fmt.Sprint(key)})
}

// Add records "add" and adds key.
func (q *recordedQueue[T]) Add(key T) {
	q.op("add", key)
	q.TypedRateLimitingInterface.Add(key)
}

// Get gets a key, waits for the run's turn to process it, and records
// "get" and the start of its reconcile. Done takes no turn: the worker
// that calls it runs in a turn already (its Get's, or a request's answer).
func (q *recordedQueue[T]) Get() (T, bool) {
	key, shutdown := q.TypedRateLimitingInterface.Get()
	if !shutdown {
		q.r.turn("get", fmt.Sprint(key))
		q.mu.Lock()
		delete(q.requeued, key)
		q.mu.Unlock()
		q.op("get", key)
		q.r.record(sim.Record{Kind: sim.RecReconcile, Op: "start", Key: fmt.Sprint(key)})
	}
	return key, shutdown
}

// Done records the end of key's reconcile and "done", and marks key done.
func (q *recordedQueue[T]) Done(key T) {
	q.mu.Lock()
	result := "ok"
	if q.requeued[key] {
		result = "requeued"
	}
	delete(q.requeued, key)
	q.mu.Unlock()
	q.r.record(sim.Record{Kind: sim.RecReconcile, Op: "end", Key: fmt.Sprint(key), Result: result})
	q.op("done", key)
	q.TypedRateLimitingInterface.Done(key)
}

// Forget records "forget" and forgets key's failures.
func (q *recordedQueue[T]) Forget(key T) {
	q.op("forget", key)
	q.TypedRateLimitingInterface.Forget(key)
}

// AddRateLimited records "requeue" and re-adds key after its backoff.
func (q *recordedQueue[T]) AddRateLimited(key T) {
	q.requeue(key, "")
	q.TypedRateLimitingInterface.AddRateLimited(key)
}

// AddAfter records "requeue" (its Detail "after <d>") and re-adds key
// after d.
func (q *recordedQueue[T]) AddAfter(key T, d time.Duration) {
	q.requeue(key, sim.RequeueAfterPrefix+d.String())
	q.TypedRateLimitingInterface.AddAfter(key, d)
}

// requeue records "requeue" of key; detail is "" for AddRateLimited (a
// retry after a failure, which keeps the run from being quiet until it
// comes) and "after <d>" for AddAfter.
func (q *recordedQueue[T]) requeue(key T, detail string) {
	q.mu.Lock()
	q.requeued[key] = true
	q.mu.Unlock()
	q.r.record(sim.Record{Kind: sim.RecQueue, Op: "requeue", Key: fmt.Sprint(key), Detail: detail})
}

// runKey is the context key under which a subject's context carries its
// recording, for the panic handler.
type runKey struct{}

var preparePanics sync.Once

// preparePanicHandling makes client-go's utilruntime.HandleCrash record a
// panic into the run whose context it is given (a worker started with
// wait.UntilWithContext(ctx, ...), a Run with defer
// HandleCrashWithContext(ctx)), and not crash the test binary
// (utilruntime.ReallyCrash false, as for the lab's own subjects): the
// panic becomes a failed verdict of the run, and the other plans go on.
func preparePanicHandling() {
	preparePanics.Do(func() {
		utilruntime.ReallyCrash = false
		utilruntime.PanicHandlers = append(utilruntime.PanicHandlers, func(ctx context.Context, x any) {
			if r, ok := ctx.Value(runKey{}).(*recording); ok && r != nil {
				r.panicked("a goroutine recovered by utilruntime.HandleCrash", x)
			}
		})
	})
}
