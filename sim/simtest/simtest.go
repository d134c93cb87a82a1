// Package simtest registers a plain informer-plus-handler subject for the
// sim's own tests and benchmarks: "simtest/informer".
//
// The subject runs one real SharedIndexInformer on one resource (parameter
// "resource", default "configmaps"), built on Env.ListerWatcher, with one
// handler that records every call (RecHandler) and enqueues the object's key
// in a typed workqueue. One worker reconciles keys, recording
// RecReconcile "start" and "end" (and RecQueue get/done). With parameter
// "label" set to a label key, the reconcile labels each object key=seen
// through a merge patch, and the subject, as a Converger, desires every
// object of the resource to carry that label. It records the informer's and
// the handler's HasSynced flipping to true (RecSignal) and exposes its
// informer store as a cache snapshot. Parameter "resync" (a duration) is the
// informer's resync period.
package simtest

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/sim"
)

// Name is the registry name of the subject.
const Name = "simtest/informer"

func init() {
	sim.RegisterSubject(sim.SubjectInfo{
		Name:    Name,
		Summary: "a plain informer with a recording handler and a no-op (or labelling) reconciler: the sim's own test subject",
		New:     func() sim.Subject { return &Subject{} },
	})
}

// Subject is the test subject. Build it with the registry's factory.
type Subject struct {
	env      sim.Env
	gvr      schema.GroupVersionResource
	label    string
	informer cache.SharedIndexInformer
	queue    workqueue.TypedRateLimitingInterface[cache.ObjectName]
	dyn      dynamic.Interface
	// ctx is the process's context, for its turns (Env.Turn).
	ctx context.Context
}

// turn takes the run's turn before a handler call or a worker's Get is
// recorded, as the lab's recording wrappers do (sim.Env.Turn).
func (s *Subject) turn(what, object string) {
	if s.env.Turn != nil {
		s.env.Turn(s.ctx, what, object)
	}
}

var (
	_ sim.Subject          = (*Subject)(nil)
	_ sim.Converger        = (*Subject)(nil)
	_ sim.CacheSnapshotter = (*Subject)(nil)
)

// resources the subject may watch, by parameter value, with the Go type
// the server delivers for them.
var resources = map[string]struct {
	gvr     schema.GroupVersionResource
	example runtime.Object
}{
	"configmaps": {schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, &corev1.ConfigMap{}},
	"pods":       {schema.GroupVersionResource{Version: "v1", Resource: "pods"}, &corev1.Pod{}},
	"secrets":    {schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, &corev1.Secret{}},
}

// Start builds and starts the informer, handler and worker.
func (s *Subject) Start(ctx context.Context, env sim.Env) error {
	res := env.Params["resource"]
	if res == "" {
		res = "configmaps"
	}
	r, ok := resources[res]
	gvr := r.gvr
	if !ok {
		return fmt.Errorf("simtest: parameter resource=%q: want configmaps, pods or secrets", res)
	}
	s.env, s.gvr, s.label, s.dyn, s.ctx = env, gvr, env.Params["label"], env.Dynamic, ctx
	lw, ok := env.ListerWatcher(gvr, "").(cache.ListerWatcher)
	if !ok {
		return fmt.Errorf("simtest: Env.ListerWatcher does not implement cache.ListerWatcher")
	}
	var resync time.Duration
	if v := env.Params["resync"]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("simtest: parameter resync=%q: %v", v, err)
		}
		resync = d
	}
	s.informer = cache.NewSharedIndexInformerWithOptions(lw, r.example.DeepCopyObject(), cache.SharedIndexInformerOptions{ResyncPeriod: resync})
	s.queue = workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
		workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: Name})
	reg, err := s.informer.AddEventHandlerWithOptions(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			s.handled(watch.Added, obj, nil, initial)
		},
		UpdateFunc: func(old, obj any) {
			s.handled(watch.Modified, obj, old, false)
		},
		DeleteFunc: func(obj any) {
			s.handled(watch.Deleted, obj, nil, false)
		},
	}, cache.HandlerOptions{})
	if err != nil {
		return err
	}
	go s.informer.RunWithContext(ctx)
	go s.signal(ctx, "informer.HasSynced", s.informer.HasSyncedChecker())
	go s.signal(ctx, "handler.HasSynced", reg.HasSyncedChecker())
	go func() {
		<-ctx.Done()
		s.queue.ShutDown()
	}()
	go func() {
		if !cache.WaitFor(ctx, "", s.informer.HasSyncedChecker()) {
			return
		}
		for s.processNext(ctx) {
		}
	}()
	return nil
}

// signal records a sync signal turning true.
func (s *Subject) signal(ctx context.Context, name string, c cache.DoneChecker) {
	select {
	case <-c.Done():
		s.env.Rec.Record(sim.Record{Kind: sim.RecSignal, Signal: name, Value: true})
	case <-ctx.Done():
	}
}

// handled records one handler call and enqueues the object's key.
func (s *Subject) handled(typ watch.EventType, obj, old any, initial bool) {
	rec := sim.Record{Kind: sim.RecHandler, Handler: "handler", EventType: string(typ), Resource: sim.ResourceName(s.gvr), Initial: initial}
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		rec.Tombstone = true
		obj = tomb.Obj
		if ns, name, err := cache.SplitMetaNamespaceKey(tomb.Key); err == nil {
			rec.Namespace, rec.Name = ns, name
		}
	}
	if m, err := meta.Accessor(obj); err == nil {
		rec.Namespace, rec.Name, rec.UID = m.GetNamespace(), m.GetName(), string(m.GetUID())
		rec.RV, _ = strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	}
	if old != nil {
		if m, err := meta.Accessor(old); err == nil {
			rec.OldUID = string(m.GetUID())
			rec.OldRV, _ = strconv.ParseInt(m.GetResourceVersion(), 10, 64)
		}
	}
	key := cache.ObjectName{Namespace: rec.Namespace, Name: rec.Name}
	s.turn("handler", string(typ)+" "+key.String())
	s.env.Rec.Record(rec)
	// Recorded before the Add: the worker the Add wakes records its get
	// after it, also in a run without the scheduler's turns (where an add
	// recorded after its get would leave the key pending, and the run
	// never quiet).
	s.env.Rec.Record(sim.Record{Kind: sim.RecQueue, Op: "add", Key: key.String()})
	s.queue.Add(key)
}

// processNext reconciles one key; false once the queue is shut down.
func (s *Subject) processNext(ctx context.Context) bool {
	key, shutdown := s.queue.Get()
	if shutdown {
		return false
	}
	k := key.String()
	s.turn("get", k)
	defer func() {
		s.queue.Done(key)
		s.env.Rec.Record(sim.Record{Kind: sim.RecQueue, Op: "done", Key: k})
	}()
	s.env.Rec.Record(sim.Record{Kind: sim.RecQueue, Op: "get", Key: k})
	s.env.Rec.Record(sim.Record{Kind: sim.RecReconcile, Op: "start", Key: k})
	err := s.reconcile(ctx, key)
	result := "ok"
	if err != nil {
		result = err.Error()
		s.queue.AddRateLimited(key)
	} else {
		s.queue.Forget(key)
	}
	s.env.Rec.Record(sim.Record{Kind: sim.RecReconcile, Op: "end", Key: k, Result: result})
	return true
}

// reconcile labels the object when the "label" parameter is set.
func (s *Subject) reconcile(ctx context.Context, key cache.ObjectName) error {
	if s.label == "" {
		return nil
	}
	obj, exists, err := s.informer.GetIndexer().GetByKey(key.String())
	if err != nil || !exists {
		return err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	if m.GetLabels()[s.label] == "seen" || m.GetDeletionTimestamp() != nil {
		return nil
	}
	patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:"seen"}}}`, s.label))
	_, err = s.dyn.Resource(s.gvr).Namespace(key.Namespace).Patch(ctx, key.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Desired reports whether every object of the subject's resource carries
// the label (always true without the "label" parameter).
func (s *Subject) Desired(objs []sim.ServerObject) (bool, string) {
	if s.label == "" {
		return true, ""
	}
	for _, o := range objs {
		if o.Resource != s.gvr {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(o.Object); err != nil {
			return false, err.Error()
		}
		if u.GetLabels()[s.label] != "seen" {
			return false, fmt.Sprintf("%s/%s lacks label %s=seen", u.GetNamespace(), u.GetName(), s.label)
		}
	}
	return true, ""
}

// SnapshotCaches returns the informer's store.
func (s *Subject) SnapshotCaches() []sim.CacheSnapshot {
	var objs []sim.ObjectState
	for _, obj := range s.informer.GetStore().List() {
		if st, ok := sim.ObjectStateOf(sim.ResourceName(s.gvr), obj.(runtime.Object)); ok {
			objs = append(objs, st)
		}
	}
	return []sim.CacheSnapshot{{Name: "informer", Objects: objs}}
}
