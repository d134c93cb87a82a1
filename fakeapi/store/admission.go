package store

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The admission operations (admission.Operation's values).
const (
	AdmissionCreate = "CREATE"
	AdmissionUpdate = "UPDATE"
	AdmissionDelete = "DELETE"
)

// AdmissionAttributes describes one write to admission, as kube-apiserver's
// admission.Attributes does: what the store is about to do, to which object.
type AdmissionAttributes struct {
	// Operation is AdmissionCreate, AdmissionUpdate or AdmissionDelete.
	Operation string
	// Resource and Kind are the served resource and its kind; Subresource
	// is "status" for a status write, "" otherwise.
	Resource    schema.GroupVersionResource
	Kind        schema.GroupVersionKind
	Subresource string
	Namespace   string
	Name        string
	// Object is the object to store (nil for a delete), in the store's
	// representation (typed for built-ins, unstructured for custom
	// resources), with apiVersion and kind set. Mutating admission may
	// change it in place or replace it.
	Object runtime.Object
	// OldObject is the stored object (nil for a create).
	OldObject runtime.Object
	// Options are the request's options (CreateOptions, UpdateOptions or
	// DeleteOptions).
	Options runtime.Object
	// DryRun is true for a dry-run request.
	DryRun bool
}

// Admission is the admission the store calls on every create, update
// (patches and server-side applies included, on the object the patch
// made) and delete of a stored resource, as kube-apiserver's registry
// calls its admission chain: Mutate after the request is decoded and
// defaulted, before the strategy prepares and validates the object;
// Validate after the strategy's validation, before the object is stored.
// On a delete both are called with OldObject only. An error fails the
// request with it. The store calls both with its caller's lock held.
type Admission interface {
	Mutate(a *AdmissionAttributes) error
	Validate(a *AdmissionAttributes) error
}

// SetAdmission makes the store call a on every write (nil: none). Writes
// the store makes itself (garbage collection, namespace cleanup) and
// scale subresource writes are not admitted.
func (s *Store) SetAdmission(a Admission) { s.admission = a }

// admitting reports whether writes of r go through admission now.
func (s *Store) admitting(r *resState) bool {
	return s.admission != nil && s.trackSub == ""
}

// admissionAttributes describes a write of r for admission; obj and old
// are copied with their kind set (the store's objects may lack it).
func (s *Store) admissionAttributes(r *resState, op, sub string, obj, old runtime.Object, opts runtime.Object, dryRun bool) *AdmissionAttributes {
	a := &AdmissionAttributes{Operation: op, Resource: r.GVR, Kind: r.gvk, Subresource: sub, Options: opts, DryRun: dryRun}
	withKind := func(o runtime.Object) runtime.Object {
		if o == nil {
			return nil
		}
		o.GetObjectKind().SetGroupVersionKind(r.gvk)
		return o
	}
	a.Object = withKind(obj)
	if old != nil {
		a.OldObject = withKind(old.DeepCopyObject())
	}
	named := obj
	if named == nil {
		named = old
	}
	m := mustAccessor(named)
	a.Namespace, a.Name = m.GetNamespace(), m.GetName()
	return a
}

// mutate runs mutating admission on obj (the store's own copy) and returns
// the object to continue with: custom resources are pruned and defaulted
// again, as kube-apiserver does with what a webhook patched in.
func (s *Store) mutate(r *resState, op, sub string, obj, old runtime.Object, opts runtime.Object, dryRun bool) (runtime.Object, error) {
	a := s.admissionAttributes(r, op, sub, obj, old, opts, dryRun)
	if err := s.admission.Mutate(a); err != nil {
		return nil, err
	}
	out := a.Object
	pruneUnknown(r, out)
	return out, nil
}

// validateAdmission runs validating admission on obj (nil for a delete).
func (s *Store) validateAdmission(r *resState, op, sub string, obj, old runtime.Object, opts runtime.Object, dryRun bool) error {
	if obj != nil {
		obj = obj.DeepCopyObject()
	}
	return s.admission.Validate(s.admissionAttributes(r, op, sub, obj, old, opts, dryRun))
}

// updateOptions are the options admission sees for an update the store
// was not given options for (a patch, an apply).
func updateOptions(dryRun bool) *metav1.UpdateOptions {
	o := &metav1.UpdateOptions{}
	if dryRun {
		o.DryRun = []string{metav1.DryRunAll}
	}
	return o
}

// admitDelete runs mutating, then validating admission on the delete of
// cur, as rest.AdmissionToValidateObjectDeleteFunc does.
func (s *Store) admitDelete(r *resState, cur runtime.Object, opts *metav1.DeleteOptions) error {
	dryRun := len(opts.DryRun) > 0
	if err := s.admission.Mutate(s.admissionAttributes(r, AdmissionDelete, "", nil, cur, opts, dryRun)); err != nil {
		return err
	}
	return s.admission.Validate(s.admissionAttributes(r, AdmissionDelete, "", nil, cur, opts, dryRun))
}

// defaults runs r's defaulting on o, as decoding a request does.
func (s *Store) defaults(r *resState, o runtime.Object) {
	if r.strategy != nil {
		r.strategy.Default(o)
	} else if r.rules.defaults != nil {
		r.rules.defaults(o)
	}
}
