package cachelabtest

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/cachelab/cachelab/sim"
)

// State is the API server's state as a controller's desired-state
// predicate reads it: typed objects, looked up with Get and listed with
// List (built-in types), or as unstructured objects by resource (custom
// resources). It is the server's state after a write, read-only, and valid
// only during the predicate's call.
type State struct {
	objs   []sim.ServerObject
	scheme *runtime.Scheme
	err    error
}

// Err returns the first error met while decoding the state (an object
// that does not decode as the type asked for); the predicate's caller
// reports it.
func (s *State) Err() error { return s.err }

func (s *State) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// resourceFor returns the resource that serves the Go type of obj.
func (s *State) resourceFor(obj runtime.Object) (schema.GroupVersionResource, bool) {
	for _, sch := range []*runtime.Scheme{s.scheme, scheme.Scheme} {
		if sch == nil {
			continue
		}
		if gvks, _, err := sch.ObjectKinds(obj); err == nil && len(gvks) > 0 {
			gvr, _ := meta.UnsafeGuessKindToResource(gvks[0])
			return gvr, true
		}
	}
	return schema.GroupVersionResource{}, false
}

// Objects returns the objects of resource gvr in namespace ns ("" for
// every namespace), as unstructured objects, sorted by namespace and name.
func (s *State) Objects(gvr schema.GroupVersionResource, ns string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range s.objs {
		if o.Resource != gvr {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(o.Object); err != nil {
			s.fail(fmt.Errorf("cachelabtest: a %s object does not decode: %w", sim.ResourceName(gvr), err))
			continue
		}
		if ns == "" || u.GetNamespace() == ns {
			out = append(out, u)
		}
	}
	return out
}

// ptrObject is *T for a Kubernetes API type T (corev1.ConfigMap, ...).
type ptrObject[T any] interface {
	*T
	runtime.Object
}

// List returns the objects of type T (a built-in type such as
// corev1.ConfigMap, or a type registered in the Controller's Scheme) in
// namespace ns ("" for every namespace), sorted by namespace and name:
//
//	for _, cm := range cachelabtest.List[corev1.ConfigMap](s, "") { ... }
func List[T any, PT ptrObject[T]](s *State, ns string) []PT {
	gvr, ok := s.resourceFor(PT(new(T)))
	if !ok {
		s.fail(fmt.Errorf("cachelabtest: List: type %T is not in client-go's scheme nor the Controller's Scheme", new(T)))
		return nil
	}
	var out []PT
	for _, o := range s.objs {
		if o.Resource != gvr {
			continue
		}
		obj := PT(new(T))
		if err := json.Unmarshal(o.Object, obj); err != nil {
			s.fail(fmt.Errorf("cachelabtest: a %s object does not decode as %T: %w", sim.ResourceName(gvr), obj, err))
			continue
		}
		m, err := meta.Accessor(obj)
		if err != nil || (ns != "" && m.GetNamespace() != ns) {
			continue
		}
		out = append(out, obj)
	}
	return out
}

// Get returns the object of type T named namespace/name, and whether it
// exists:
//
//	sec, ok := cachelabtest.Get[corev1.Secret](s, cm.Namespace, cm.Name)
func Get[T any, PT ptrObject[T]](s *State, namespace, name string) (PT, bool) {
	for _, obj := range List[T, PT](s, namespace) {
		if m, err := meta.Accessor(obj); err == nil && m.GetName() == name {
			return obj, true
		}
	}
	return nil, false
}

// Getter returns Get for type T bound to s, for predicates written against
// a lookup function:
//
//	secret := cachelabtest.Getter[corev1.Secret](s)
//	sec, ok := secret(ns, name)
func Getter[T any, PT ptrObject[T]](s *State) func(namespace, name string) (PT, bool) {
	return func(namespace, name string) (PT, bool) { return Get[T, PT](s, namespace, name) }
}
