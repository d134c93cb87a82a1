package store

import (
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// Server-side apply, through the field manager kube-apiserver uses
// (k8s.io/apimachinery/pkg/util/managedfields over
// sigs.k8s.io/structured-merge-diff): an apply patch (YAML or JSON) is
// merged into the live object (or creates it) as its manager's intent,
// ownership is recorded in metadata.managedFields, and a change to a field
// another manager owns is a 409 Conflict naming each field and manager,
// unless force=true takes them over.
//
// With Options.TrackManagedFields every write is recorded (an Update by
// its fieldManager), as on kube-apiserver. Without it ownership is tracked
// from an object's first apply on: the fields set before it belong to the
// manager "before-first-apply" (the field manager's own name for them), and
// every write after it (update, patch, /status, /scale) is recorded.
// Built-ins use client-go's schema of the built-in types; custom resources
// their CRD's structural schema (a deduced one, every map granular and
// lists atomic, without a schema).

// builtinTypeConverter is client-go's type converter for the built-in
// kinds, built once (it parses the types' schema).
var builtinTypeConverter = sync.OnceValue(func() managedfields.TypeConverter {
	return applyconfigurations.NewTypeConverter(clientgoscheme.Scheme)
})

// typeConverters holds the registered source of the built-in kinds' type
// converter (RegisterTypeConverter), nil for client-go's.
var typeConverters = struct {
	sync.RWMutex
	f func() managedfields.TypeConverter
}{}

// RegisterTypeConverter makes every store created afterwards use the type
// converter f returns (called on a store's first server-side apply or
// tracked write of a built-in kind; f should build it once) for the
// built-in kinds' managed fields, instead of client-go's embedded models
// (applyconfigurations.NewTypeConverter). kubestrategies registers
// kube-apiserver's own OpenAPI models. nil restores client-go's. Safe for
// concurrent use.
func RegisterTypeConverter(f func() managedfields.TypeConverter) {
	typeConverters.Lock()
	defer typeConverters.Unlock()
	typeConverters.f = f
}

// registeredTypeConverter is the registered type converter source, else
// client-go's.
func registeredTypeConverter() func() managedfields.TypeConverter {
	typeConverters.RLock()
	defer typeConverters.RUnlock()
	if typeConverters.f != nil {
		return typeConverters.f
	}
	return builtinTypeConverter
}

// unstructuredConvertor is the object convertor of a single-version
// custom resource: nothing to convert.
type unstructuredConvertor struct{}

func (unstructuredConvertor) Convert(in, out, context any) error {
	return fmt.Errorf("store: no conversion between custom resource versions")
}

func (unstructuredConvertor) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	return in, nil
}

func (unstructuredConvertor) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// unstructuredCreater makes empty custom resources.
type unstructuredCreater struct{}

func (unstructuredCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// noDefaults: the store defaults objects itself when it writes them.
type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

// fieldManager returns r's field manager for subresource sub ("" or
// "status"), built on first use.
func (s *Store) fieldManager(r *resState, sub string) (*managedfields.FieldManager, error) {
	if r.fieldManagers == nil {
		r.fieldManagers = map[string]*managedfields.FieldManager{}
	}
	if fm, ok := r.fieldManagers[sub]; ok {
		return fm, nil
	}
	var (
		fm  *managedfields.FieldManager
		err error
	)
	if r.typed {
		fm, err = managedfields.NewDefaultFieldManager(s.typeConverter(), s.scheme, noDefaults{}, s.scheme, r.gvk, r.gvk.GroupVersion(), sub, nil)
	} else {
		tc := managedfields.NewDeducedTypeConverter()
		if r.Schema != nil {
			if tc, err = r.Schema.typeConverter(r.gvk); err != nil {
				return nil, apierrors.NewInternalError(fmt.Errorf("field manager of %s: %w", r.gvk, err))
			}
		}
		fm, err = managedfields.NewDefaultCRDFieldManager(tc, unstructuredConvertor{}, noDefaults{}, unstructuredCreater{}, r.gvk, r.gvk.GroupVersion(), sub, nil)
	}
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("field manager of %s: %w", r.gvk, err))
	}
	r.fieldManagers[sub] = fm
	return fm, nil
}

// trackUpdate records an update of old (which the store holds) into o as
// manager's, if old's fields are tracked (it was applied once).
func (s *Store) trackUpdate(r *resState, old, o runtime.Object, sub, manager string) {
	if !s.trackAll && len(mustAccessor(old).GetManagedFields()) == 0 {
		mustAccessor(o).SetManagedFields(nil)
		return
	}
	fm, err := s.fieldManager(r, sub)
	if err != nil {
		return
	}
	if manager == "" {
		manager = defaultFieldManager
	}
	mustAccessor(o).SetManagedFields(mustAccessor(old).GetManagedFields())
	if out, err := fm.Update(old, o, manager); err == nil {
		mustAccessor(o).SetManagedFields(mustAccessor(out).GetManagedFields())
	}
}

// trackCreate records a create as manager's Update (with
// Options.TrackManagedFields).
func (s *Store) trackCreate(r *resState, o runtime.Object, manager string) {
	if !s.trackAll {
		return
	}
	fm, err := s.fieldManager(r, "")
	if err != nil {
		return
	}
	if manager == "" {
		manager = defaultFieldManager
	}
	empty := r.newObject(s)
	if out, err := fm.Update(empty, o, manager); err == nil {
		mustAccessor(o).SetManagedFields(mustAccessor(out).GetManagedFields())
	}
}

// defaultFieldManager names the manager of writes that name none
// (kube-apiserver takes the client's user agent, which the store does not
// see).
const defaultFieldManager = "cachelab"

// apply is Patch for the apply patch types.
func (s *Store) apply(r *resState, ns, name string, data []byte, opts metav1.PatchOptions, sub string) (runtime.Object, []Event, error) {
	var content map[string]any
	js, err := yaml.YAMLToJSONStrict(data) // a duplicate key is a 400, as kube-apiserver answers
	if err == nil {
		err = utiljson.Unmarshal(js, &content) // integers as int64, as kube-apiserver decodes
	}
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	if content == nil {
		return nil, nil, apierrors.NewBadRequest("the apply patch is empty")
	}
	patch := &unstructured.Unstructured{Object: content}
	if gvk := patch.GroupVersionKind(); gvk.Kind == "" || gvk.Version == "" {
		return nil, nil, apierrors.NewBadRequest("apiVersion and kind must be set in an apply patch")
	} else if gvk != r.gvk {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("the apply patch's kind %s does not match the resource's %s", gvk, r.gvk))
	}
	if err := validUnstructuredMeta(patch); err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	if patch.GetName() != "" && patch.GetName() != name {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", patch.GetName(), name))
	}
	if len(patch.GetManagedFields()) > 0 {
		return nil, nil, apierrors.NewBadRequest("metadata.managedFields must be nil in an apply patch")
	}
	patch.SetName(name)
	if r.Namespaced && patch.GetNamespace() == "" {
		patch.SetNamespace(ns)
	}
	if r.Namespaced && patch.GetNamespace() != ns {
		return nil, nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if unknown := pruneUnknown(r, patch); len(unknown) > 0 && opts.FieldValidation == metav1.FieldValidationStrict {
		return nil, nil, apierrors.NewBadRequest(strictUnknownFields(unknown).Error())
	}
	// The patch must decode as the kind (a type error is refused), but
	// the field manager takes it as sent, unstructured, as kube-apiserver's
	// applyPatcher does: a typed round trip would add the zero values of
	// every non-omitempty field (a null spec.selector, an empty strategy
	// and status) to the manager's intent.
	applied := runtime.Object(patch)
	if _, err := s.convertIn(r, patch.DeepCopy()); err != nil {
		return nil, nil, err
	}
	fm, err := s.fieldManager(r, sub)
	if err != nil {
		return nil, nil, err
	}
	key := objectKey(ns, name)
	live, exists := s.load(r, key)
	if !exists {
		if sub != "" {
			return nil, nil, apierrors.NewNotFound(r.groupResource(), name)
		}
		live = r.newObject(s)
		lm := mustAccessor(live)
		lm.SetName(name)
		lm.SetNamespace(ns)
	}
	force := opts.Force != nil && *opts.Force
	out, err := fm.Apply(live, applied, opts.FieldManager, force)
	if err != nil {
		if _, ok := err.(apierrors.APIStatus); ok {
			return nil, nil, err // a 409 Conflict naming the fields and managers
		}
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	managed := mustAccessor(out).GetManagedFields()
	if !exists {
		m := mustAccessor(out)
		m.SetResourceVersion("")
		return s.create(r, ns, out, metav1.CreateOptions{DryRun: opts.DryRun, FieldValidation: opts.FieldValidation}, managed)
	}
	return s.updateManaged(r, key, out, live, sub, "patch", len(opts.DryRun) > 0, managed)
}
