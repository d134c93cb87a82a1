package cachelabtest

import (
	"fmt"
	"reflect"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/cachelab/cachelab/sim"
)

// Record records what a controller built for itself, without wrapping it:
// pass the controller (a pointer to its struct, as a constructor such as
// sample-controller's NewController returns it) and the informer factories
// it was built from (a generated SharedInformerFactory of its own
// clientset, or client-go's), after building it and before starting it:
//
//	c := controller.NewController(ctx, env.Kube, foos, env.Informers.Apps().V1().Deployments(), fooFactory.Samplecontroller().V1alpha1().Foos())
//	if err := env.Record(c, fooFactory); err != nil {
//		return err
//	}
//
// In the controller's fields, exported or not, Record finds:
//   - its workqueue (a workqueue.TypedRateLimitingInterface of string,
//     cache.ObjectName, types.NamespacedName or reconcile.Request keys),
//     which it replaces with the recorded one (RecordQueue): every queue
//     operation and every reconcile (from Get to Done) is in the trace;
//   - its informers (cache.SharedIndexInformer fields, or fields with an
//     Informer() method such as a generated FooInformer).
//
// In a factory it finds every informer the factory made. An informer is
// recorded by a handler of the lab's own added to it: it is called with
// the same objects, in the same order and at the same virtual time as the
// controller's handlers (informers are shared), but in its own goroutine,
// so a handler record is not ordered with what the controller's handler
// did at that instant; a panic in the controller's handler is not caught
// (wrap the informer with RecordInformer, or use Env.Informers, for both).
// The informers of Env.Informers and Env.DynamicInformers are recorded
// already, and are skipped.
//
// Record returns an error naming what it was given when it found nothing
// to record in it.
func (e *Env) Record(things ...any) error {
	if e.rec == nil {
		return nil // Controller.Beside's Env: helpers are not recorded
	}
	for _, x := range things {
		n, err := e.recordOne(x)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("cachelabtest: Env.Record: nothing to record in a %T (want a controller with a workqueue or informers in its fields, or an informer factory)", x)
		}
	}
	return nil
}

// recordOne records what it finds in x and returns how many things.
func (e *Env) recordOne(x any) (int, error) {
	if inf, ok := informerOf(x); ok {
		e.rec.listen(inf, e.kinds)
		return 1, nil
	}
	v := reflect.ValueOf(x)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return 0, nil
	}
	s := v.Elem()
	n := 0
	for i := range s.NumField() {
		f := s.Field(i)
		// An unexported field is read and written through its address,
		// as the controller's own methods do.
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
		if (f.Kind() == reflect.Interface || f.Kind() == reflect.Pointer || f.Kind() == reflect.Map) && f.IsNil() {
			continue
		}
		if q, ok := e.recordedQueue(f.Interface()); ok {
			f.Set(reflect.ValueOf(q))
			n++
			continue
		}
		if inf, ok := informerOf(f.Interface()); ok {
			e.rec.listen(inf, e.kinds)
			n++
			continue
		}
		if f.Kind() == reflect.Map && f.Type().Key() == reflect.TypeFor[reflect.Type]() {
			// A generated factory's informers, by type.
			for it := f.MapRange(); it.Next(); {
				if inf, ok := informerOf(it.Value().Interface()); ok {
					e.rec.listen(inf, e.kinds)
					n++
				}
			}
		}
	}
	return n, nil
}

// recordedQueue returns the recorded version of q if it is a rate-limiting
// workqueue of a key type the lab knows.
func (e *Env) recordedQueue(q any) (any, bool) {
	switch q := q.(type) {
	case workqueue.TypedRateLimitingInterface[string]:
		return recordQueueOnce(e, q), true
	case workqueue.TypedRateLimitingInterface[cache.ObjectName]:
		return recordQueueOnce(e, q), true
	case workqueue.TypedRateLimitingInterface[types.NamespacedName]:
		return recordQueueOnce(e, q), true
	case workqueue.TypedRateLimitingInterface[reconcile.Request]:
		return recordQueueOnce(e, q), true
	}
	return nil, false
}

// recordQueueOnce is RecordQueue, unless q is recorded already.
func recordQueueOnce[T comparable](e *Env, q workqueue.TypedRateLimitingInterface[T]) workqueue.TypedRateLimitingInterface[T] {
	if _, done := q.(*recordedQueue[T]); done {
		return q
	}
	return RecordQueue(e, q)
}

// informerOf returns x's informer: x itself, or what its Informer()
// method returns.
func informerOf(x any) (cache.SharedIndexInformer, bool) {
	switch x := x.(type) {
	case cache.SharedIndexInformer:
		return x, true
	case interface {
		Informer() cache.SharedIndexInformer
	}:
		inf := x.Informer()
		return inf, inf != nil
	}
	return nil, false
}

// listen records inf's calls by a handler of the lab's own (see
// Env.Record), unless inf is recorded already (a recordedInformer, or
// listened to). kinds maps a Kind to its resource's trace name, for the
// typed objects of custom resources (their kind is not set).
func (r *recording) listen(inf cache.SharedIndexInformer, kinds map[string]string) {
	if _, ok := inf.(*recordedInformer); ok {
		return
	}
	r.mu.Lock()
	if _, ok := r.wrapped[inf]; ok {
		r.mu.Unlock()
		return
	}
	ri := &recordedInformer{SharedIndexInformer: inf, r: r, resource: unnamedResource}
	r.wrapped[inf] = ri
	r.informers = append(r.informers, ri)
	r.mu.Unlock()
	l := &listener{r: r, ri: ri, kinds: kinds}
	reg, err := inf.AddEventHandler(l)
	if err != nil {
		return
	}
	l.reg = reg
}

// unnamedResource is the resource of an informer Env.Record listens to
// until its first object names it.
const unnamedResource = "?"

// listener is the lab's handler on an informer the controller made: it
// records each call, naming the resource from the first object it sees.
type listener struct {
	r     *recording
	ri    *recordedInformer
	kinds map[string]string
	reg   cache.ResourceEventHandlerRegistration
	h     *recordedHandler
}

func (l *listener) handler(obj any) *recordedHandler {
	if l.h == nil {
		res := resourceOfAny(obj, l.kinds)
		l.r.mu.Lock()
		l.ri.resource = res
		l.r.mu.Unlock()
		l.h = &recordedHandler{h: cache.ResourceEventHandlerFuncs{}, r: l.r, resource: res, name: l.r.handlerName(res)}
	}
	return l.h
}

// OnAdd records an ADDED call.
func (l *listener) OnAdd(obj any, initial bool) { l.handler(obj).OnAdd(obj, initial) }

// OnUpdate records a MODIFIED call.
func (l *listener) OnUpdate(old, obj any) { l.handler(obj).OnUpdate(old, obj) }

// OnDelete records a DELETED call.
func (l *listener) OnDelete(obj any) { l.handler(obj).OnDelete(obj) }

// resourceOfAny returns the trace name of obj's resource: by kinds for a
// typed custom resource (its Go type's name is its Kind), else as
// resourceOf does.
func resourceOfAny(obj any, kinds map[string]string) string {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	ro, ok := obj.(runtime.Object)
	if !ok {
		return fmt.Sprintf("%T", obj)
	}
	gvk := ro.GetObjectKind().GroupVersionKind()
	kind := gvk.Kind
	if kind == "" {
		t := reflect.TypeOf(obj)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		kind = t.Name()
	}
	if res, ok := kinds[kind]; ok {
		return res
	}
	if !gvk.Empty() {
		gvr, _ := meta.UnsafeGuessKindToResource(gvk)
		return sim.ResourceName(gvr)
	}
	return resourceOf(ro, nil)
}

// crdKinds maps each CRD's Kind to its resource's trace name.
func crdKinds(s CRDSet) map[string]string {
	out := map[string]string{}
	for _, k := range s.kinds {
		v := k.versions[0]
		out[v.Kind] = sim.ResourceName(v.GVR)
	}
	return out
}
