package store

import (
	"fmt"
	"reflect"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Strategy is kube-apiserver's own handling of a built-in resource's
// writes, registered for a GroupResource with RegisterStrategy: the
// scheme's defaulting of a decoded body, conversion to the internal
// version, the registry strategy's PrepareForCreate / PrepareForUpdate,
// Validate / ValidateUpdate (with the common metadata validation and the
// declarative validation rest.ValidateCreate and rest.ValidateUpdate add),
// Canonicalize, and conversion back.
//
// A store whose resource has a registered Strategy calls it instead of its
// own hand-written rules (kindRules' defaults, prepareCreate,
// prepareUpdate, generation, validate and validateUpdate, and the common
// metadata checks); everything else stays the lab's: resourceVersions,
// UIDs, names, creationTimestamp, status-subresource bookkeeping,
// admission, MVCC, watch, list, garbage collection and faults. The
// nested module kubestrategies registers k8s.io/kubernetes' strategies
// (docs/kube-strategies.md). A strategy's answer is trusted to be the
// resource's Go type; anything else is a 422 with an internal cause.
//
// Objects are the resource's versioned Go type (the one the store's scheme
// knows, e.g. *appsv1.Deployment). A Strategy must not retain them and
// must be safe for concurrent use by several stores.
type Strategy interface {
	// Default applies, in place, the defaults kube-apiserver's decoder
	// applies to every create, update and patch body of the resource.
	Default(obj runtime.Object)
	// Create prepares and validates a new object. obj carries the
	// store's system metadata (name, namespace, UID, creationTimestamp)
	// and is the strategy's to modify. It returns the object to store
	// (the versioned Go type) or the field errors the store answers as
	// 422 Invalid.
	Create(obj runtime.Object) (runtime.Object, field.ErrorList)
	// Update prepares and validates obj, the new state of old (the stored
	// object), written to subresource ("" or "status"). obj has its
	// generation, UID and timestamps taken from old as rest.BeforeUpdate
	// takes them, and is the strategy's to modify; old must not be
	// modified. It returns the object to store or the field errors the
	// store answers as 422 Invalid.
	Update(obj, old runtime.Object, subresource string) (runtime.Object, field.ErrorList)
}

// strategies are the registered strategies by GroupResource.
var strategies = struct {
	sync.RWMutex
	m map[schema.GroupResource]Strategy
}{m: map[schema.GroupResource]Strategy{}}

// RegisterStrategy makes every store created afterwards (New) serve the
// built-in resource gr through st instead of its hand-written rules; a nil
// st removes the registration. Stores already created keep what they
// had. Registering a resource the store does not serve has no effect
// until it is served. Safe for concurrent use; meant for init functions
// (kubestrategies registers on import).
func RegisterStrategy(gr schema.GroupResource, st Strategy) {
	strategies.Lock()
	defer strategies.Unlock()
	if st == nil {
		delete(strategies.m, gr)
		return
	}
	strategies.m[gr] = st
}

// WithoutStrategies runs f with no Strategy, Converter or type converter
// registered,
// then restores the registrations: stores f creates serve every built-in
// kind through the lab's hand-written rules and conversions. `cachelab
// bench` measures a binary with kubestrategies both ways in one run with
// it. Not safe while other goroutines create stores or register.
func WithoutStrategies(f func()) {
	strategies.Lock()
	savedStrategies := strategies.m
	strategies.m = map[schema.GroupResource]Strategy{}
	strategies.Unlock()
	converters.Lock()
	savedConverters := converters.m
	converters.m = map[schema.GroupKind]Converter{}
	converters.Unlock()
	typeConverters.Lock()
	savedTC := typeConverters.f
	typeConverters.f = nil
	typeConverters.Unlock()
	crdValidations.Lock()
	savedCRD := crdValidations.v
	crdValidations.v = nil
	crdValidations.Unlock()
	defer func() {
		crdValidations.Lock()
		crdValidations.v = savedCRD
		crdValidations.Unlock()
		typeConverters.Lock()
		typeConverters.f = savedTC
		typeConverters.Unlock()
		strategies.Lock()
		strategies.m = savedStrategies
		strategies.Unlock()
		converters.Lock()
		converters.m = savedConverters
		converters.Unlock()
	}()
	f()
}

// Strategies returns the GroupResources with a registered Strategy,
// sorted by group, then resource: the built-in kinds new stores serve
// through kube-apiserver's own code rather than the lab's hand-written
// subset.
func Strategies() []schema.GroupResource {
	strategies.RLock()
	defer strategies.RUnlock()
	out := make([]schema.GroupResource, 0, len(strategies.m))
	for gr := range strategies.m {
		out = append(out, gr)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Resource < out[j].Resource
	})
	return out
}

// ServedByStrategy reports whether this store serves gvr's writes through a
// registered Strategy.
func (s *Store) ServedByStrategy(gvr schema.GroupVersionResource) bool {
	gvr = s.StorageResource(gvr)
	r, ok := s.res[gvr]
	return ok && r.strategy != nil
}

// registeredStrategy returns the Strategy registered for r (nil for none,
// and for resources not served typed).
func registeredStrategy(r *resState) Strategy {
	if !r.typed {
		return nil
	}
	strategies.RLock()
	defer strategies.RUnlock()
	return strategies.m[r.GVR.GroupResource()]
}

// strategyCreate runs r's Strategy on a new object o (system metadata
// set, UID not yet assigned). The strategy sees the UID the object will
// get (the job strategy derives its selector from it), without using it
// up: a refused create leaves the UID sequence as it was.
func (s *Store) strategyCreate(r *resState, o runtime.Object) (runtime.Object, field.ErrorList) {
	m := mustAccessor(o)
	m.SetUID(uidOf(s.uidSeq + 1))
	out, errs := r.strategy.Create(o)
	if len(errs) > 0 {
		return nil, errs
	}
	return r.strategyResult(out)
}

// uidOf is the n-th UID the store gives out.
func uidOf(n int64) types.UID {
	return types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", n))
}

// strategyUpdate runs r's Strategy on the new state o of old.
func (s *Store) strategyUpdate(r *resState, o, old runtime.Object, sub string) (runtime.Object, field.ErrorList) {
	out, errs := r.strategy.Update(o, old, sub)
	if len(errs) > 0 {
		return nil, errs
	}
	return r.strategyResult(out)
}

// strategyResult checks that a Strategy answered an object of r's Go
// type (a broken one gets a 422 with an internal cause, not a panic) and
// sets its kind.
func (r *resState) strategyResult(out runtime.Object) (runtime.Object, field.ErrorList) {
	if out == nil || reflect.TypeOf(out) != r.goType {
		return nil, field.ErrorList{field.InternalError(nil, fmt.Errorf("the %s strategy returned a %T, want %v", r.Kind, out, r.goType))}
	}
	out.GetObjectKind().SetGroupVersionKind(r.gvk)
	return out, nil
}
