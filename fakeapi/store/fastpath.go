package store

import (
	"bytes"
	"sync"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The fast paths of a write: each answers exactly what the apimachinery
// function it stands for answers, without that function's allocations
// (field paths built for errors that do not happen, interface conversions
// for reflective comparisons), and calls the function itself whenever it
// cannot prove the answer is "no error". fastpath_test.go checks both
// agree.

// Field paths of metadata, built once: validators use them only to name
// an error.
var (
	metadataPath      = field.NewPath("metadata")
	labelsPath        = metadataPath.Child("labels")
	annotationsPath   = metadataPath.Child("annotations")
	ownerRefsPath     = metadataPath.Child("ownerReferences")
	managedFieldsPath = metadataPath.Child("managedFields")
)

// validateMetaUpdate is apivalidation.ValidateObjectMetaAccessorUpdate(m,
// old, metadata). When old is not terminating and every immutable field
// of m is old's (compared as Semantic.DeepEqual would find them equal),
// the checks left are those of labels, annotations, ownerReferences and
// managedFields, run here with prebuilt paths; otherwise the function
// runs.
func validateMetaUpdate(m, old metav1.Object) field.ErrorList {
	if !sameImmutableMeta(m, old) {
		return apivalidation.ValidateObjectMetaAccessorUpdate(m, old, metadataPath)
	}
	if !labelsValid(m.GetLabels()) {
		return apivalidation.ValidateObjectMetaAccessorUpdate(m, old, metadataPath)
	}
	if errs := apivalidation.ValidateAnnotations(m.GetAnnotations(), annotationsPath); len(errs) > 0 {
		return apivalidation.ValidateObjectMetaAccessorUpdate(m, old, metadataPath)
	}
	if refs := m.GetOwnerReferences(); len(refs) > 0 {
		if errs := apivalidation.ValidateOwnerReferences(refs, ownerRefsPath); len(errs) > 0 {
			return apivalidation.ValidateObjectMetaAccessorUpdate(m, old, metadataPath)
		}
	}
	if mf := m.GetManagedFields(); len(mf) > 0 {
		if errs := metav1validation.ValidateManagedFields(mf, managedFieldsPath, metav1validation.CoveredByDeclarative); len(errs) > 0 {
			return apivalidation.ValidateObjectMetaAccessorUpdate(m, old, metadataPath)
		}
	}
	return nil
}

// labelsValid reports whether metav1validation.ValidateLabels finds no
// error in labels. ValidateLabels checks each pair on its own (the key a
// qualified name, the value a label value: pure functions of the pair), so
// a pair it once passed passes again: the pairs of maps it passed are kept
// in validLabels, and a map whose pairs are all there is valid without
// running its regular expressions again (4.8% of the CPU of an update of a
// labelled ConfigMap through the drop-in clientset). Any other map goes to
// ValidateLabels.
func labelsValid(labels map[string]string) bool {
	if len(labels) == 0 {
		return true
	}
	validLabels.Lock()
	defer validLabels.Unlock()
	known := true
	for k, v := range labels {
		if _, ok := validLabels.m[labelPair{k, v}]; !ok {
			known = false
			break
		}
	}
	if known {
		return true
	}
	if len(metav1validation.ValidateLabels(labels, labelsPath)) > 0 {
		return false
	}
	if validLabels.m == nil || len(validLabels.m)+len(labels) > maxValidLabels {
		validLabels.m = make(map[labelPair]struct{}, len(labels))
	}
	for k, v := range labels {
		validLabels.m[labelPair{k, v}] = struct{}{}
	}
	return true
}

// labelPair is one label, key and value.
type labelPair struct{ key, value string }

// maxValidLabels bounds validLabels: past it, the set starts again empty.
const maxValidLabels = 4096

// validLabels are label pairs ValidateLabels passed (see labelsValid).
var validLabels struct {
	sync.Mutex
	m map[labelPair]struct{}
}

// sameImmutableMeta is true when ValidateObjectMetaAccessorUpdate's checks
// other than labels, annotations, ownerReferences and managedFields all
// pass: old has no deletionTimestamp (no finalizer check), m has a
// resourceVersion, a generation neither negative nor below old's, and
// old's name, namespace, uid, creationTimestamp, deletionTimestamp and
// deletionGracePeriodSeconds. Times count as equal only when identical
// (Semantic compares them in UTC: a time identical is equal there too);
// anything else is left to the real check.
func sameImmutableMeta(m, old metav1.Object) bool {
	if old.GetDeletionTimestamp() != nil || m.GetDeletionTimestamp() != nil {
		return false
	}
	if m.GetResourceVersion() == "" || m.GetGeneration() < 0 || m.GetGeneration() < old.GetGeneration() {
		return false
	}
	if m.GetName() != old.GetName() || m.GetNamespace() != old.GetNamespace() || m.GetUID() != old.GetUID() {
		return false
	}
	if m.GetCreationTimestamp().Time != old.GetCreationTimestamp().Time {
		return false
	}
	g, og := m.GetDeletionGracePeriodSeconds(), old.GetDeletionGracePeriodSeconds()
	switch {
	case g == nil && og == nil:
	case g != nil && og != nil && *g == *og:
	default:
		return false
	}
	return true
}

// validateUpdateOptions is metav1validation.ValidateUpdateOptions, which
// finds nothing wrong with options that set nothing.
func validateUpdateOptions(opts *metav1.UpdateOptions) field.ErrorList {
	if opts.FieldManager == "" && len(opts.DryRun) == 0 && opts.FieldValidation == "" {
		return nil
	}
	return metav1validation.ValidateUpdateOptions(opts)
}

// unchanged is true when the update of key from old to o would store
// what is stored: etcd3's GuaranteedUpdate compares the encoded bytes
// (k8s.io/apiserver/pkg/storage/etcd3/store.go) and skips the write when
// they are equal. Built-in kinds are compared as stored (protobuf, whose
// generated code sorts map keys, so equal objects encode equal); o has
// old's resourceVersion here, as the stored bytes do. Custom resources
// are compared with Semantic.DeepEqual (their JSON would make 1 and 1.0
// the same).
func (s *Store) unchanged(r *resState, key string, old, o runtime.Object) bool {
	if !r.typed {
		return apiequality.Semantic.DeepEqual(old, o)
	}
	stored, ok := r.objects[key]
	if !ok {
		return apiequality.Semantic.DeepEqual(old, o)
	}
	return bytes.Equal(r.encode(o), stored)
}
