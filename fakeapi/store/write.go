package store

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// optimisticLockErrorMsg is kube-apiserver's message for a stale
// resourceVersion (registry.OptimisticLockErrorMsg).
const optimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"

// errRVSetOnCreate is etcd3's storage.ErrResourceVersionSetOnCreate, which
// kube-apiserver answers as a 500.
var errRVSetOnCreate = &apierrors.StatusError{ErrStatus: metav1.Status{
	Status:  metav1.StatusFailure,
	Code:    500,
	Reason:  metav1.StatusReasonUnknown,
	Message: "resourceVersion should not be set on objects to be created",
}}

// nameAlphabet is the alphabet of generated name suffixes
// (k8s.io/apiserver/pkg/storage/names).
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// generateName returns base plus a deterministic 5-character suffix.
func (s *Store) generateName(base string) string {
	const maxGeneratedNameLength = 63 - 5
	if len(base) > maxGeneratedNameLength {
		base = base[:maxGeneratedNameLength]
	}
	s.nameSeq++
	n := s.nameSeq
	suffix := make([]byte, 5)
	for i := 4; i >= 0; i-- {
		suffix[i] = nameAlphabet[n%int64(len(nameAlphabet))]
		n /= int64(len(nameAlphabet))
	}
	return base + string(suffix)
}

// newUID returns the next deterministic UID.
func (s *Store) newUID() types.UID {
	s.uidSeq++
	return uidOf(s.uidSeq)
}

// ensureNamespace is rest.EnsureObjectNamespaceMatchesRequestNamespace.
func ensureNamespace(r *resState, ns string, m metav1.Object) error {
	objNS := m.GetNamespace()
	switch {
	case objNS == ns:
		return nil
	case objNS == "":
		m.SetNamespace(ns)
		return nil
	case ns == "" && !r.Namespaced:
		m.SetNamespace("")
		return nil
	case ns == "":
		// A namespaced request without a namespace: take the object's
		// (the REST path always has one; this keeps Go callers simple).
		return nil
	default:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
}

// standardFinalizers are the finalizer names core validation accepts
// without a "/" (validateKubeFinalizerName).
var standardFinalizers = map[string]bool{
	string(corev1.FinalizerKubernetes): true, metav1.FinalizerOrphanDependents: true, metav1.FinalizerDeleteDependents: true,
}

// validateKubeFinalizers is core validation's check of built-ins'
// finalizers: a name without a "/" must be a standard one.
func validateKubeFinalizers(r *resState, m metav1.Object) field.ErrorList {
	if !r.typed {
		return nil
	}
	var errs field.ErrorList
	for i, f := range m.GetFinalizers() {
		if !strings.Contains(f, "/") && !standardFinalizers[f] {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "finalizers").Index(i), f, "name is neither a standard finalizer name nor is it fully qualified"))
		}
	}
	return errs
}

// validate runs the strategy's and the common validation of a new object.
func (s *Store) validateObject(r *resState, obj runtime.Object, m metav1.Object) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaAccessor(m, r.Namespaced, r.rules.nameFn, field.NewPath("metadata"))
	errs = append(errs, validateKubeFinalizers(r, m)...)
	errs = append(errs, s.validateSpec(r, obj, nil)...)
	if len(errs) == 0 {
		// rest.ValidateCreate's common validation with path segment names;
		// the rest of it has just run with the kind's own name rule.
		for _, msg := range path.ValidatePathSegmentName(m.GetName(), false) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), m.GetName(), msg))
		}
	}
	return errs
}

// validateSpec runs the kind's own validation (and a CRD's Schema and
// Validate); old is the stored object on update, nil on create.
func (s *Store) validateSpec(r *resState, obj, old runtime.Object) field.ErrorList {
	var errs field.ErrorList
	if r.rules.validate != nil {
		errs = append(errs, r.rules.validate(obj)...)
	}
	if r.rules.validateWithOld != nil {
		errs = append(errs, r.rules.validateWithOld(obj, old)...)
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if r.Schema != nil {
			var oldContent map[string]any
			if ou, ok := old.(*unstructured.Unstructured); ok {
				oldContent = ou.Object
			}
			errs = append(errs, r.Schema.Validate(u.Object, oldContent)...)
		}
		if r.Validate != nil {
			errs = append(errs, r.Validate(u)...)
		}
		errs = append(errs, validateScalePaths(r.Scale, u)...)
	}
	return errs
}

// Create stores a new object in namespace ns (ignored for cluster-scoped
// resources; an object's own namespace, if set, must match). It assigns
// name (from generateName), UID, resourceVersion, creationTimestamp and
// generation, and resets status as the real strategies do. It returns the
// created object and its ADDED event (followed by GC events if every owner
// in its ownerReferences is already gone).
// Errors: 404 unknown resource, 409 AlreadyExists, 422 Invalid (bad name,
// missing fields, Validate), 400 BadRequest (wrong kind, namespace
// mismatch), 500 when resourceVersion is set.
func (s *Store) Create(gvr schema.GroupVersionResource, ns string, obj runtime.Object, opts metav1.CreateOptions) (runtime.Object, []Event, error) {
	if v := s.views[gvr]; v != nil {
		return v.create(s, ns, obj, opts)
	}
	r, err := s.resource(gvr)
	if err != nil {
		return nil, nil, err
	}
	return s.create(r, ns, obj, opts, nil)
}

// create is Create; managed, if set, are the managedFields a server-side
// apply computed for the new object.
func (s *Store) create(r *resState, ns string, obj runtime.Object, opts metav1.CreateOptions, managed []metav1.ManagedFieldsEntry) (runtime.Object, []Event, error) {
	if err := checkOptions("CreateOptions", metav1validation.ValidateCreateOptions(&opts)); err != nil {
		return nil, nil, err
	}
	o, err := s.convertIn(r, obj)
	if err != nil {
		return nil, nil, err
	}
	if err := prune(r, o, opts.FieldValidation); err != nil {
		return nil, nil, err
	}
	m := mustAccessor(o)
	if err := ensureNamespace(r, requestNamespace(r, ns), m); err != nil {
		return nil, nil, err
	}
	// Admission (NamespaceLifecycle) runs before the registry validates.
	if err := s.errIfNamespaceMissing(r, m.GetNamespace()); err != nil {
		return nil, nil, err
	}
	if s.admitting(r) {
		// Mutating webhooks see the decoded, defaulted object (admission.go).
		s.defaults(r, o)
		if o, err = s.mutate(r, AdmissionCreate, "", o, nil, &opts, len(opts.DryRun) > 0); err != nil {
			return nil, nil, err
		}
		m = mustAccessor(o)
	}
	if m.GetGenerateName() != "" && m.GetName() == "" {
		m.SetName(s.generateName(m.GetGenerateName()))
	}
	// rest.FillObjectMetaSystemFields and the strategies' PrepareForCreate.
	m.SetCreationTimestamp(s.now())
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetManagedFields(managed)
	m.SetSelfLink("")
	if r.rules.generation {
		m.SetGeneration(1)
	} else {
		m.SetGeneration(0)
	}
	if r.HasStatus {
		setStatus(o, nil)
	}
	if r.strategy != nil {
		r.strategy.Default(o) // strategy.go: kube-apiserver's own code
	} else if r.rules.defaults != nil {
		r.rules.defaults(o)
	}
	if r.rules.admit != nil {
		if err := r.rules.admit(s, o); err != nil {
			return nil, nil, err
		}
	}
	// The handler's field manager records the create before the REST
	// allocates (allocated values belong to no manager).
	if managed == nil {
		s.trackCreate(r, o, opts.FieldManager)
	}
	if r.rules.allocate != nil {
		if err := r.rules.allocate(s, o, nil); err != nil {
			return nil, nil, err
		}
	}
	if r.strategy != nil {
		var errs field.ErrorList
		if o, errs = s.strategyCreate(r, o); len(errs) > 0 {
			return nil, nil, apierrors.NewInvalid(r.gvk.GroupKind(), m.GetName(), errs)
		}
		m = mustAccessor(o)
	} else {
		if r.rules.prepareCreate != nil {
			r.rules.prepareCreate(o)
		}
		if errs := s.validateObject(r, o, m); len(errs) > 0 {
			return nil, nil, apierrors.NewInvalid(r.gvk.GroupKind(), m.GetName(), errs)
		}
	}
	if s.admitting(r) {
		if err := s.validateAdmission(r, AdmissionCreate, "", o, nil, &opts, len(opts.DryRun) > 0); err != nil {
			return nil, nil, err
		}
	}
	if m.GetResourceVersion() != "" {
		return nil, nil, errRVSetOnCreate
	}
	if err := s.errIfNamespaceTerminating(r, m.GetNamespace(), m.GetName()); err != nil {
		return nil, nil, err
	}
	key := objectKey(m.GetNamespace(), m.GetName())
	if _, exists := r.objects[key]; exists {
		return nil, nil, apierrors.NewAlreadyExists(r.groupResource(), m.GetName())
	}
	m.SetUID(s.newUID())
	if r.rules.withUID != nil && r.strategy == nil {
		r.rules.withUID(o)
	}
	if len(opts.DryRun) > 0 {
		return o, nil, nil // what would be stored, without a resourceVersion
	}
	ev := s.commit(r, key, o, nil, "create", "", false)
	events := []Event{ev}
	if s.defaultSAs && isNamespaces(r) {
		events = s.createDefaultServiceAccount(m.GetName(), events)
	}
	if isCRDs(r) {
		events = s.establishCRD(r, key, events) // crds.go
	}
	// The garbage collector deletes a new object whose owners are all gone.
	if len(m.GetOwnerReferences()) > 0 {
		events = s.collectIfOrphaned(objRef{r, key}, events)
	}
	return o.DeepCopyObject(), events, nil
}

// checkOptions answers invalid request options (a dryRun other than
// "All", ...) as kube-apiserver's handlers do: 422 Invalid of the options
// kind.
func checkOptions(kind string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
}

// Update replaces an object. With subresource "" it follows the
// status-subresource rules of Resource.HasStatus (status is kept from the
// stored object); with "status" only the status changes. A set, stale
// resourceVersion gets 409 Conflict; an empty one is an unconditional
// update for built-ins and 422 for custom resources, as kube-apiserver
// does. An update that changes nothing writes nothing (no event, same
// resourceVersion). An update that removes the last finalizer of a
// terminating object deletes it (one DELETED event with the last stored
// state, then any GC events).
func (s *Store) Update(gvr schema.GroupVersionResource, ns string, obj runtime.Object, opts metav1.UpdateOptions, subresource string) (runtime.Object, []Event, error) {
	if v := s.views[gvr]; v != nil {
		return v.update(s, ns, obj, opts, subresource)
	}
	r, err := s.resource(gvr)
	if err != nil {
		return nil, nil, err
	}
	if err := checkOptions("UpdateOptions", validateUpdateOptions(&opts)); err != nil {
		return nil, nil, err
	}
	if err := checkSubresource(r, subresource); err != nil {
		return nil, nil, err
	}
	o, err := s.convertIn(r, obj)
	if err != nil {
		return nil, nil, err
	}
	if err := prune(r, o, opts.FieldValidation); err != nil {
		return nil, nil, err
	}
	m := mustAccessor(o)
	if m.GetName() == "" {
		return nil, nil, apierrors.NewBadRequest("name is required for an update (metadata.name is empty)")
	}
	if err := ensureNamespace(r, requestNamespace(r, ns), m); err != nil {
		return nil, nil, err
	}
	key := objectKey(m.GetNamespace(), m.GetName())
	if _, exists := r.objects[key]; !exists && r.rules.createOnUpdate && subresource == "" {
		// AllowCreateOnUpdate: the object's system fields are wiped (a
		// resourceVersion asked for is ignored) and it is created.
		m.SetResourceVersion("")
		m.SetUID("")
		return s.create(r, ns, o, metav1.CreateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation}, nil)
	}
	s.manager = opts.FieldManager
	defer func() { s.manager = "" }()
	return s.update(r, key, o, nil, subresource, "update", len(opts.DryRun) > 0)
}

// checkSubresource answers 404 for subresources the resource lacks.
func checkSubresource(r *resState, sub string) error {
	switch {
	case sub == "":
		return nil
	case sub == "status" && r.HasStatus:
		return nil
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    404,
		Reason:  metav1.StatusReasonNotFound,
		Message: fmt.Sprintf("the server could not find the requested resource (%s has no subresource %q)", r.GVR.Resource, sub),
	}}
}

// update applies the new state o (a copy the store owns) of key. old is
// the current state if the caller has already loaded it (a fresh copy
// nothing else holds, which the store then keeps as the event's Prev), nil
// to load it here. A dry run checks everything and answers the state it
// would store, at the current resourceVersion, writing nothing.
func (s *Store) update(r *resState, key string, o, old runtime.Object, sub, verb string, dryRun bool) (runtime.Object, []Event, error) {
	return s.updateManaged(r, key, o, old, sub, verb, dryRun, nil)
}

// updateManaged is update; managed, if set, are the managedFields a
// server-side apply computed, else the write is tracked as an update
// (trackUpdate) by s.manager.
func (s *Store) updateManaged(r *resState, key string, o, old runtime.Object, sub, verb string, dryRun bool, managed []metav1.ManagedFieldsEntry) (runtime.Object, []Event, error) {
	m := mustAccessor(o)
	if old == nil {
		var ok bool
		if old, ok = s.load(r, key); !ok {
			return nil, nil, apierrors.NewNotFound(r.groupResource(), m.GetName())
		}
	}
	oldM := mustAccessor(old)
	if uid := m.GetUID(); uid != "" && uid != oldM.GetUID() {
		// The registry makes a set UID a storage precondition, checked
		// before the resourceVersion: 409 Conflict naming the resource.
		return nil, nil, apierrors.NewConflict(r.groupResource(), m.GetName(), fmt.Errorf(
			"StorageError: invalid object, Code: 4, Key: %s%s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %v, UID in object meta: %v",
			r.registryPrefix, registryKey(r, key), uid, oldM.GetUID()))
	}
	if s.admitting(r) {
		// kube-apiserver's update transformers run mutating admission
		// before the registry checks the resourceVersion.
		var err error
		if o, err = s.mutate(r, AdmissionUpdate, sub, o, old, updateOptions(dryRun), dryRun); err != nil {
			return nil, nil, err
		}
		m = mustAccessor(o)
	}
	switch rv := m.GetResourceVersion(); {
	case rv == "" && r.typed:
		m.SetResourceVersion(oldM.GetResourceVersion()) // AllowUnconditionalUpdate
	case rv == "":
		return nil, nil, apierrors.NewInvalid(schema.GroupKind{Group: r.GVR.Group, Kind: r.GVR.Resource}, m.GetName(),
			field.ErrorList{field.Invalid(field.NewPath("metadata").Child("resourceVersion"), 0, "must be specified for an update")})
	default:
		if _, err := strconv.ParseUint(rv, 10, 64); err != nil {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q: must be an unsigned integer", rv))
		}
		if rv != oldM.GetResourceVersion() {
			return nil, nil, apierrors.NewConflict(r.groupResource(), m.GetName(), errors.New(optimisticLockErrorMsg))
		}
	}
	if r.strategy != nil {
		r.strategy.Default(o)
	} else if r.rules.defaults != nil {
		r.rules.defaults(o)
	}
	// rest.BeforeUpdate and the strategies' PrepareForUpdate.
	m.SetGeneration(oldM.GetGeneration())
	if sub == "status" && r.typed {
		// The built-in status strategies (pods, namespaces) take spec from
		// the stored object and let metadata through, except what
		// statusKeeps names.
		copySpec(old, o)
		if r.rules.statusKeepsOwnerRefs {
			m.SetOwnerReferences(oldM.GetOwnerReferences())
		}
	} else if sub == "status" {
		// The custom resource status strategy keeps everything but status.
		st := getStatus(o)
		o = old.DeepCopyObject()
		m = mustAccessor(o)
		setStatus(o, st)
	} else if r.HasStatus {
		setStatus(o, getStatus(old))
	}
	if m.GetUID() == "" {
		m.SetUID(oldM.GetUID())
	}
	m.SetCreationTimestamp(oldM.GetCreationTimestamp())
	if oldM.GetDeletionTimestamp() != nil {
		m.SetDeletionTimestamp(oldM.GetDeletionTimestamp())
	}
	if oldM.GetDeletionGracePeriodSeconds() != nil && m.GetDeletionGracePeriodSeconds() == nil {
		m.SetDeletionGracePeriodSeconds(oldM.GetDeletionGracePeriodSeconds())
	}
	m.SetSelfLink("")
	if managed != nil {
		m.SetManagedFields(managed)
	} else {
		trackSub := sub
		if s.trackSub != "" {
			trackSub = s.trackSub
		}
		s.trackUpdate(r, old, o, trackSub, s.manager)
	}
	// The service REST's allocator runs after the handler's field manager
	// has recorded the request: what it allocates belongs to no manager.
	if r.rules.allocate != nil && sub == "" {
		if err := r.rules.allocate(s, o, old); err != nil {
			return nil, nil, err
		}
	}
	var errs field.ErrorList
	if r.strategy != nil {
		if o, errs = s.strategyUpdate(r, o, old, sub); len(errs) == 0 {
			m = mustAccessor(o)
		}
	} else {
		if r.rules.prepareUpdate != nil && sub == "" {
			r.rules.prepareUpdate(o, old)
		}
		if r.rules.generation && sub != "status" && specChanged(r, old, o) {
			m.SetGeneration(oldM.GetGeneration() + 1)
		}
		errs = validateMetaUpdate(m, oldM)
		errs = append(errs, validateKubeFinalizers(r, m)...)
		errs = append(errs, s.validateSpec(r, o, old)...)
		if r.rules.validateUpdate != nil {
			errs = append(errs, r.rules.validateUpdate(o, old)...)
		}
	}
	if len(errs) > 0 {
		return nil, nil, apierrors.NewInvalid(r.gvk.GroupKind(), m.GetName(), errs)
	}
	if s.admitting(r) {
		if err := s.validateAdmission(r, AdmissionUpdate, sub, o, old, updateOptions(dryRun), dryRun); err != nil {
			return nil, nil, err
		}
	}
	if s.unchanged(r, key, old, o) {
		return old, nil, nil // etcd3 GuaranteedUpdate skips no-op writes
	}
	if dryRun {
		return o, nil, nil
	}
	if g := oldM.GetDeletionGracePeriodSeconds(); m.GetDeletionTimestamp() != nil && len(m.GetFinalizers()) == 0 && (g == nil || *g == 0) {
		// Store.Update: ShouldDeleteDuringUpdate (a graceful deletion
		// still running is not ended by an update), errEmptiedFinalizers, then deleteWithoutFinalizers:
		// the object goes with its last stored state (the DELETED event's),
		// and the caller is answered the state it asked for, at the
		// resourceVersion it updated (what kube-apiserver answers).
		ev := s.commit(r, key, nil, old, verb, sub, false)
		events := s.afterRemoval(ev, []Event{ev})
		return o, events, nil
	}
	ev := s.commit(r, key, o, old, verb, sub, false)
	events := []Event{ev}
	events = s.afterUpdate(objRef{r, key}, events)
	return o.DeepCopyObject(), events, nil
}

// getStatus returns a copy of obj's status (nil if it has none).
func getStatus(obj runtime.Object) any {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		st, ok := u.Object["status"]
		if !ok {
			return nil
		}
		return runtime.DeepCopyJSONValue(st)
	}
	f := reflect.ValueOf(obj).Elem().FieldByName("Status")
	if !f.IsValid() {
		return nil
	}
	cp := reflect.New(f.Type()).Elem()
	cp.Set(f)
	return cp.Interface() // shallow: the caller only sets it into a fresh copy
}

// setStatus replaces obj's status with st (nil resets it).
func setStatus(obj runtime.Object, st any) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if st == nil {
			delete(u.Object, "status")
		} else {
			u.Object["status"] = runtime.DeepCopyJSONValue(st)
		}
		return
	}
	f := reflect.ValueOf(obj).Elem().FieldByName("Status")
	if !f.IsValid() || !f.CanSet() {
		return
	}
	if st == nil {
		f.Set(reflect.Zero(f.Type()))
		return
	}
	// Deep copy through the object's own DeepCopy: copy the status into a
	// scratch object and take it from there.
	f.Set(reflect.ValueOf(st))
	cp := obj.DeepCopyObject()
	f.Set(reflect.ValueOf(cp).Elem().FieldByName("Status"))
}

// copySpec sets every field of a typed object but TypeMeta, ObjectMeta and
// Status from old (whose values it then shares: both are the store's).
func copySpec(old, cur runtime.Object) {
	ov, cv := reflect.ValueOf(old).Elem(), reflect.ValueOf(cur).Elem()
	t := ov.Type()
	for i := 0; i < t.NumField(); i++ {
		switch t.Field(i).Name {
		case "TypeMeta", "ObjectMeta", "Status":
			continue
		}
		cv.Field(i).Set(ov.Field(i))
	}
}

// specChanged reports whether anything but metadata (and status, for
// resources with a status subresource) differs between old and cur.
func specChanged(r *resState, old, cur runtime.Object) bool {
	if ou, ok := old.(*unstructured.Unstructured); ok {
		cu := cur.(*unstructured.Unstructured)
		strip := func(m map[string]any) map[string]any {
			out := make(map[string]any, len(m))
			for k, v := range m {
				switch k {
				case "metadata", "apiVersion", "kind":
					continue
				case "status":
					if r.HasStatus {
						continue
					}
				}
				out[k] = v
			}
			return out
		}
		return !apiequality.Semantic.DeepEqual(strip(ou.Object), strip(cu.Object))
	}
	ov, cv := reflect.ValueOf(old).Elem(), reflect.ValueOf(cur).Elem()
	t := ov.Type()
	for i := 0; i < t.NumField(); i++ {
		switch t.Field(i).Name {
		case "TypeMeta", "ObjectMeta", "Status":
			continue
		}
		if !apiequality.Semantic.DeepEqual(ov.Field(i).Interface(), cv.Field(i).Interface()) {
			return true
		}
	}
	return false
}

// Delete deletes ns/name, honouring preconditions (409 Conflict when the UID
// or resourceVersion differ) and the propagation policy (default
// Background; Foreground; Orphan). An object with finalizers (or deleted
// with Foreground or Orphan, whose finalizers the server adds) is only
// marked (deletionTimestamp, deletionGracePeriodSeconds 0) and returned as
// it is now; otherwise the last state is returned. Dependents are garbage
// collected in the same call (events with ByGC). Deleting a terminating
// object writes nothing and returns it.
func (s *Store) Delete(gvr schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) (runtime.Object, []Event, error) {
	if v := s.views[gvr]; v != nil {
		return v.delete(s, ns, name, opts)
	}
	r, err := s.resource(gvr)
	if err != nil {
		return nil, nil, err
	}
	if err := checkOptions("DeleteOptions", metav1validation.ValidateDeleteOptions(&opts)); err != nil {
		return nil, nil, err
	}
	key := objectKey(requestNamespace(r, ns), name)
	cur, ok := s.load(r, key)
	if !ok {
		return nil, nil, apierrors.NewNotFound(r.groupResource(), name)
	}
	if err := s.checkPreconditions(r, key, cur, opts.Preconditions); err != nil {
		return nil, nil, err
	}
	if s.admitting(r) {
		// Delete admission sees the stored object as oldObject, both kinds.
		if err := s.admitDelete(r, cur, &opts); err != nil {
			return nil, nil, err
		}
	}
	policy := metav1.DeletePropagationBackground
	if opts.PropagationPolicy != nil {
		policy = *opts.PropagationPolicy
	} else if opts.OrphanDependents != nil && *opts.OrphanDependents {
		policy = metav1.DeletePropagationOrphan
	}
	if len(opts.DryRun) > 0 {
		// What the delete would answer, writing nothing.
		if r.rules.gracePeriod != nil {
			if o, marked := s.markedGracefully(r, cur, policy, opts.GracePeriodSeconds); marked {
				return o, nil, nil
			}
			return cur, nil, nil
		}
		if mustAccessor(cur).GetDeletionTimestamp() == nil {
			if o, marked := s.markedForDeletion(cur, policy); marked {
				return o, nil, nil
			}
		}
		return cur, nil, nil
	}
	if isCRDs(r) {
		// crds.go: the CRD registry's delete, then its finalizer controller.
		if marked, events := s.markCRDForCleanup(r, key, cur, nil); marked != nil {
			out := marked.DeepCopyObject()
			return out, s.cleanUpCRDs(events), nil
		}
	}
	out, events := s.deleteObjectGrace(objRef{r, key}, policy, opts.GracePeriodSeconds, false, nil)
	return out.DeepCopyObject(), events, nil
}

// checkPreconditions is rest.BeforeDelete's early check of the
// preconditions, which answers 409 Conflict naming the Kind (not the
// resource) in details.kind.
func (s *Store) checkPreconditions(r *resState, key string, cur runtime.Object, p *metav1.Preconditions) error {
	if p == nil {
		return nil
	}
	m := mustAccessor(cur)
	var err error
	switch {
	case p.UID != nil && *p.UID != m.GetUID():
		err = fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, m.GetUID())
	case p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion():
		err = fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, m.GetResourceVersion())
	default:
		return nil
	}
	return apierrors.NewConflict(schema.GroupResource{Group: r.gvk.Group, Resource: r.gvk.Kind}, m.GetName(), err)
}

// registryKey turns an objectKey into the tail of an etcd key.
func registryKey(r *resState, key string) string {
	if r.Namespaced {
		return key
	}
	return key[1:]
}

// DeleteCollection deletes every object of gvr in ns matching lo's
// selectors, as Delete does for each (in key order). lo's resourceVersion,
// limit and continue are ignored as kube-apiserver ignores them here.
func (s *Store) DeleteCollection(gvr schema.GroupVersionResource, ns string, opts metav1.DeleteOptions, lo metav1.ListOptions) ([]Event, error) {
	gvr = s.StorageResource(gvr)
	r, err := s.resource(gvr)
	if err != nil {
		return nil, err
	}
	if err := checkOptions("DeleteOptions", metav1validation.ValidateDeleteOptions(&opts)); err != nil {
		return nil, err
	}
	match, err := s.selector(r, requestNamespace(r, ns), lo.LabelSelector, lo.FieldSelector)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, it := range s.snapshotAt(r, requestNamespace(r, ns), s.rv) {
		if obj := r.decode(it.data); match(obj) {
			names = append(names, mustAccessor(obj).GetName())
		}
	}
	var events []Event
	for _, name := range names {
		if _, ok := r.objects[objectKey(requestNamespace(r, ns), name)]; !ok {
			continue // collected already, as a dependent of an earlier one
		}
		_, evs, err := s.Delete(gvr, ns, name, metav1.DeleteOptions{PropagationPolicy: opts.PropagationPolicy, OrphanDependents: opts.OrphanDependents, GracePeriodSeconds: opts.GracePeriodSeconds, DryRun: opts.DryRun})
		if err != nil {
			return events, err
		}
		events = append(events, evs...)
	}
	return events, nil
}

// prune drops the unknown fields of a custom resource (Resource.Prune);
// with fieldValidation=Strict unknown fields are the decoder's strict
// error instead, 400 BadRequest as kube-apiserver answers a body.
func prune(r *resState, obj runtime.Object, fieldValidation string) error {
	unknown := pruneUnknown(r, obj)
	if len(unknown) > 0 && fieldValidation == metav1.FieldValidationStrict {
		return apierrors.NewBadRequest(strictUnknownFields(unknown).Error())
	}
	return nil
}

// pruneUnknown runs Resource.Prune (or the Schema's pruning) on an
// unstructured object, then the Schema's defaulting, as kube-apiserver
// decodes a custom resource.
func pruneUnknown(r *resState, obj runtime.Object) []string {
	u, ok := obj.(*unstructured.Unstructured)
	if r.typed || !ok {
		return nil
	}
	var unknown []string
	switch {
	case r.Prune != nil:
		unknown = r.Prune(u)
	case r.Schema != nil:
		unknown = r.Schema.Prune(u.Object)
	}
	if r.Schema != nil {
		r.Schema.Default(u.Object)
	}
	return unknown
}

// strictUnknownFields is the strict decoding error naming unknown fields.
func strictUnknownFields(paths []string) error {
	errs := make([]error, 0, len(paths))
	for _, p := range paths {
		errs = append(errs, fmt.Errorf("unknown field %q", p))
	}
	return runtime.NewStrictDecodingError(errs)
}
