package store

import (
	"sync"

	"fmt"
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CRDs are served as a resource (apiextensions.k8s.io/v1
// customresourcedefinitions), so that an operator may install its own CRDs
// through the API, as it does on a real cluster. Each goes through
// apiextensions-apiserver's own code: its v1 defaulting
// (SetObjectDefaults_CustomResourceDefinition), conversion to the internal
// version and validation (ValidateCustomResourceDefinition on create,
// ValidateCustomResourceDefinitionUpdate on update), and every served
// version's openAPIV3Schema compiles to the structural schema its custom
// resources are pruned, defaulted and validated with (CompileSchema, as
// for `--crd` ones).
//
// What kube-apiserver's controllers then do is done in the same call, as
// the store's garbage collector does: the naming controller accepts the
// names (status.acceptedNames, condition NamesAccepted) and the
// establishing controller marks the CRD Established, each in a write of
// its own, and its versions are served from then on. A delete adds the
// customresourcecleanup finalizer and a Terminating condition, as the CRD
// registry does; the finalizer controller then deletes every custom
// resource of the CRD, the versions stop being served, and the finalizer
// goes with the CRD.
//
// Not modelled: name conflicts between CRDs (NamesAccepted False), a
// change of served versions or schema by an update (the versions served
// are those of the create), conversion webhooks.

// CRDsResource is the GroupVersionResource CRDs are served under.
var CRDsResource = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// crdCleanupFinalizer is the finalizer the CRD registry adds on delete
// (apiextensionsv1.CustomResourceCleanupFinalizer).
const crdCleanupFinalizer = apiextensionsv1.CustomResourceCleanupFinalizer

func isCRDs(r *resState) bool { return r.GVR == CRDsResource }

// addCRDs serves customresourcedefinitions.
func (s *Store) addCRDs() {
	full := registeredCRDValidation()
	defer func() {
		if full == nil {
			return
		}
		// kube-apiserver's own CRD validation replaces the subset below.
		r := s.res[CRDsResource]
		r.rules.validate, r.rules.validateUpdate = nil, nil
		r.rules.validateWithOld = func(obj, old runtime.Object) field.ErrorList {
			crd, err := typedCRD(obj.(*unstructured.Unstructured))
			if err != nil {
				return field.ErrorList{field.Invalid(field.NewPath("spec"), "", err.Error())}
			}
			var oldCRD *apiextensionsv1.CustomResourceDefinition
			if old != nil {
				if oldCRD, err = typedCRD(old.(*unstructured.Unstructured)); err != nil {
					return field.ErrorList{field.Invalid(field.NewPath("spec"), "", err.Error())}
				}
			}
			return full.ValidateCRD(crd, oldCRD)
		}
	}()
	s.add(&resState{
		Resource: Resource{GVR: CRDsResource, Kind: "CustomResourceDefinition", ListKind: "CustomResourceDefinitionList", HasStatus: true},
		gvk:      apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"),
		rules: kindRules{
			nameFn:     apivalidation.NameIsDNSSubdomain,
			generation: true,
			defaults:   defaultCRD,
			prepareCreate: func(obj runtime.Object) {
				// The CRD strategy's PrepareForCreate: status reset, the
				// storage version recorded.
				u := obj.(*unstructured.Unstructured)
				crd, err := typedCRD(u)
				if err != nil {
					return
				}
				crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
				for _, v := range crd.Spec.Versions {
					if v.Storage {
						crd.Status.StoredVersions = []string{v.Name}
					}
				}
				setTypedCRD(u, crd)
			},
			validate: func(obj runtime.Object) field.ErrorList {
				crd, err := typedCRD(obj.(*unstructured.Unstructured))
				if err != nil {
					return field.ErrorList{field.Invalid(field.NewPath("spec"), "", err.Error())}
				}
				return validateCRD(crd)
			},
			validateUpdate: func(obj, old runtime.Object) field.ErrorList {
				crd, err := typedCRD(obj.(*unstructured.Unstructured))
				if err != nil {
					return field.ErrorList{field.Invalid(field.NewPath("spec"), "", err.Error())}
				}
				oldCRD, err := typedCRD(old.(*unstructured.Unstructured))
				if err != nil {
					return field.ErrorList{field.Invalid(field.NewPath("spec"), "", err.Error())}
				}
				var errs field.ErrorList
				// validateCustomResourceDefinitionSpecUpdate's immutable parts.
				if crd.Spec.Scope != oldCRD.Spec.Scope {
					errs = append(errs, field.Invalid(field.NewPath("spec", "scope"), crd.Spec.Scope, "field is immutable"))
				}
				if crd.Spec.Names.Plural != oldCRD.Spec.Names.Plural || crd.Spec.Group != oldCRD.Spec.Group {
					errs = append(errs, field.Invalid(field.NewPath("spec", "group"), crd.Spec.Group, "field is immutable"))
				}
				return errs
			},
		},
	})
}

// typedCRD decodes a CRD.
func typedCRD(u *unstructured.Unstructured) (*apiextensionsv1.CustomResourceDefinition, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("decoding a CustomResourceDefinition: %v", err))
	}
	return &crd, nil
}

// setTypedCRD encodes crd back into u (fields the type does not know are
// dropped, as kube-apiserver's decoding drops them).
func setTypedCRD(u *unstructured.Unstructured, crd *apiextensionsv1.CustomResourceDefinition) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		return
	}
	m["apiVersion"], m["kind"] = apiextensionsv1.SchemeGroupVersion.String(), "CustomResourceDefinition"
	u.Object = m
}

// defaultCRD is apiextensions v1's scheme defaulting of a CRD.
func defaultCRD(obj runtime.Object) {
	u := obj.(*unstructured.Unstructured)
	crd, err := typedCRD(u)
	if err != nil {
		return // refused by validation
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	setTypedCRD(u, crd)
}

// validateCRD is the part of apiextensions-apiserver's
// ValidateCustomResourceDefinition a client commonly trips (the lab does
// not import that package: its webhook checks pull gRPC and OpenTelemetry
// into every user's build): the name rule (plural.group), group, scope,
// names, versions (unique, DNS-1035, exactly one storage version), a
// schema for every version, structural (compiled by the code
// CompileSchema uses), and stored versions.
func validateCRD(crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if want := crd.Spec.Names.Plural + "." + crd.Spec.Group; crd.Name != want {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), crd.Name, `must be spec.names.plural+"."+spec.group`))
	}
	switch g := crd.Spec.Group; {
	case g == "":
		errs = append(errs, field.Required(spec.Child("group"), ""))
	case len(utilvalidation.IsDNS1123Subdomain(g)) > 0:
		errs = append(errs, field.Invalid(spec.Child("group"), g, strings.Join(utilvalidation.IsDNS1123Subdomain(g), ",")))
	case !strings.Contains(g, "."):
		errs = append(errs, field.Invalid(spec.Child("group"), g, "should be a domain with at least one dot"))
	}
	switch crd.Spec.Scope {
	case apiextensionsv1.ClusterScoped, apiextensionsv1.NamespaceScoped:
	case "":
		errs = append(errs, field.Required(spec.Child("scope"), ""))
	default:
		errs = append(errs, field.NotSupported(spec.Child("scope"), crd.Spec.Scope, []string{string(apiextensionsv1.ClusterScoped), string(apiextensionsv1.NamespaceScoped)}))
	}
	storage, seen, unique := 0, map[string]bool{}, true
	for i, v := range crd.Spec.Versions {
		p := spec.Child("versions").Index(i)
		if v.Storage {
			storage++
		}
		if seen[v.Name] {
			unique = false
		}
		seen[v.Name] = true
		if msgs := utilvalidation.IsDNS1035Label(v.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("name"), v.Name, strings.Join(msgs, ",")))
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			errs = append(errs, field.Required(p.Child("schema", "openAPIV3Schema"), ""))
			continue
		}
		src, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v.Schema.OpenAPIV3Schema)
		if err == nil {
			_, err = CompileSchema(src)
		}
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("schema", "openAPIV3Schema"), "", err.Error()))
		}
	}
	if !unique {
		errs = append(errs, field.Invalid(spec.Child("versions"), "", "must contain unique version names"))
	}
	if storage != 1 {
		errs = append(errs, field.Invalid(spec.Child("versions"), "", "must have exactly one version marked as storage version"))
	}
	names := spec.Child("names")
	n := crd.Spec.Names
	for _, f := range []struct{ name, value string }{{"plural", n.Plural}, {"singular", n.Singular}, {"kind", n.Kind}, {"listKind", n.ListKind}} {
		if f.value == "" {
			errs = append(errs, field.Required(names.Child(f.name), ""))
		} else if msgs := utilvalidation.IsDNS1035Label(strings.ToLower(f.value)); len(msgs) > 0 {
			errs = append(errs, field.Invalid(names.Child(f.name), f.value, strings.Join(msgs, ",")))
		}
	}
	if n.Kind != "" && n.Kind == n.ListKind {
		errs = append(errs, field.Invalid(names.Child("listKind"), n.ListKind, "kind and listKind may not be the same"))
	}
	if len(crd.Status.StoredVersions) == 0 {
		errs = append(errs, field.Invalid(field.NewPath("status", "storedVersions"), crd.Status.StoredVersions, "must have at least one stored version"))
	}
	return errs
}

// crdVersionResources are the resources a CRD's served versions are
// served as.
func crdVersionResources(crd *apiextensionsv1.CustomResourceDefinition) ([]Resource, error) {
	var out []Resource
	n := crd.Spec.Names
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		r := Resource{
			GVR:        schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: n.Plural},
			Kind:       n.Kind,
			ListKind:   n.ListKind,
			Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
			HasStatus:  v.Subresources != nil && v.Subresources.Status != nil,
			Scale:      scaleSubresource(v.Subresources),
			ShortNames: n.ShortNames,
			Categories: n.Categories,
		}
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			src, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v.Schema.OpenAPIV3Schema)
			if err != nil {
				return nil, err
			}
			if r.Schema, err = CompileSchema(src); err != nil {
				return nil, err
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// establishCRD does, after a CRD's create, what the naming and
// establishing controllers do: accept its names, serve its versions,
// mark it Established (two writes, as the two controllers make).
func (s *Store) establishCRD(r *resState, key string, events []Event) []Event {
	cur, ok := s.load(r, key)
	if !ok {
		return events
	}
	u := cur.(*unstructured.Unstructured)
	crd, err := typedCRD(u)
	if err != nil {
		return events
	}
	resources, err := crdVersionResources(crd)
	if err != nil {
		return events // validation compiled the schemas already
	}
	for _, res := range resources {
		if s.res[res.GVR] == nil {
			_ = s.Register(res) // complete: validated above
		}
	}
	now := s.now()
	// The naming controller.
	crd.Status.AcceptedNames = crd.Spec.Names
	crd.Status.Conditions = append(crd.Status.Conditions, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue, Reason: "NoConflicts", Message: "no conflicts found", LastTransitionTime: now})
	named := u.DeepCopy()
	setTypedCRD(named, crd)
	named.SetResourceVersion(u.GetResourceVersion())
	events = append(events, s.commit(r, key, named, cur, "update", "status", true))
	// The establishing controller.
	crd.Status.Conditions = append(crd.Status.Conditions, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue, Reason: "InitialNamesAccepted", Message: "the initial names have been accepted", LastTransitionTime: now})
	est := named.DeepCopy()
	setTypedCRD(est, crd)
	events = append(events, s.commit(r, key, est, named, "update", "status", true))
	return events
}

// markCRDForCleanup is the CRD registry's delete of a CRD not yet
// terminating: in one write, the cleanup finalizer and a Terminating
// condition are added and the deletion is marked. It returns the marked
// CRD (nil if the CRD is already terminating or cannot be read).
func (s *Store) markCRDForCleanup(r *resState, key string, cur runtime.Object, events []Event) (runtime.Object, []Event) {
	u := cur.(*unstructured.Unstructured)
	if u.GetDeletionTimestamp() != nil {
		return nil, events
	}
	crd, err := typedCRD(u)
	if err != nil {
		return nil, events
	}
	if !slices.Contains(crd.Finalizers, crdCleanupFinalizer) {
		crd.Finalizers = append(crd.Finalizers, crdCleanupFinalizer)
	}
	setCRDCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
		Reason: "InstanceDeletionPending", Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon", LastTransitionTime: s.now()})
	// The registry sets deletionTimestamp itself (no grace period, no
	// generation bump: the generic delete it then delegates to finds the
	// CRD already terminating and writes nothing more).
	now := s.now()
	crd.DeletionTimestamp = &now
	marked := u.DeepCopy()
	setTypedCRD(marked, crd)
	marked.SetResourceVersion(u.GetResourceVersion())
	events = append(events, s.commit(r, key, marked, cur, "delete", "", false))
	return marked, events
}

// cleanUpCRDs is the finalizer controller: every terminating CRD holding
// the cleanup finalizer loses its custom resources and its served
// versions, then the finalizer, which deletes it.
func (s *Store) cleanUpCRDs(events []Event) []Event {
	r := s.res[CRDsResource]
	if r == nil {
		return events
	}
	keys := make([]string, 0, len(r.objects))
	for k := range r.objects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		cur, ok := s.load(r, key)
		if !ok {
			continue
		}
		u := cur.(*unstructured.Unstructured)
		if u.GetDeletionTimestamp() == nil || !slices.Contains(u.GetFinalizers(), crdCleanupFinalizer) {
			continue
		}
		crd, err := typedCRD(u)
		if err != nil {
			continue
		}
		for _, v := range crd.Spec.Versions {
			gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Spec.Names.Plural}
			cr := s.res[gvr]
			if cr == nil {
				continue
			}
			for _, it := range cr.sortedItems() {
				events = append(events, s.commit(cr, it.key, nil, nil, "delete", "", true))
			}
			s.unregister(cr)
		}
		var rest []string
		for _, f := range u.GetFinalizers() {
			if f != crdCleanupFinalizer {
				rest = append(rest, f)
			}
		}
		if len(rest) == 0 {
			events = append(events, s.commit(r, key, nil, cur, "delete", "", true))
			continue
		}
		kept := u.DeepCopy()
		kept.SetFinalizers(rest)
		events = append(events, s.commit(r, key, kept, cur, "update", "", true))
	}
	return events
}

// unregister stops serving r (its objects must be gone).
func (s *Store) unregister(r *resState) {
	delete(s.res, r.GVR)
	if s.byGK[r.gvk.GroupKind()] == r {
		delete(s.byGK, r.gvk.GroupKind())
		for _, other := range s.res {
			if other.gvk.GroupKind() == r.gvk.GroupKind() {
				s.byGK[r.gvk.GroupKind()] = other
				break
			}
		}
	}
}

func setCRDCondition(crd *apiextensionsv1.CustomResourceDefinition, c apiextensionsv1.CustomResourceDefinitionCondition) {
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == c.Type {
			crd.Status.Conditions[i] = c
			return
		}
	}
	crd.Status.Conditions = append(crd.Status.Conditions, c)
}

// scaleSubresource is a CRD version's scale subresource (nil for none).
func scaleSubresource(sr *apiextensionsv1.CustomResourceSubresources) *ScaleSubresource {
	if sr == nil || sr.Scale == nil {
		return nil
	}
	sc := &ScaleSubresource{SpecReplicasPath: sr.Scale.SpecReplicasPath, StatusReplicasPath: sr.Scale.StatusReplicasPath}
	if sr.Scale.LabelSelectorPath != nil {
		sc.LabelSelectorPath = *sr.Scale.LabelSelectorPath
	}
	return sc
}

// CRDValidation validates CustomResourceDefinitions as kube-apiserver's
// CRD strategy does (apiextensions-apiserver's
// ValidateCustomResourceDefinition and ValidateCustomResourceDefinitionUpdate).
// The main module does not import that package (it pulls gRPC and
// OpenTelemetry into every user's build: docs/kube-strategies.md);
// kubestrategies registers it. Implementations must not modify their
// arguments and must be safe for concurrent use.
type CRDValidation interface {
	// ValidateCRD validates crd, created (old nil) or updated from old.
	ValidateCRD(crd, old *apiextensionsv1.CustomResourceDefinition) field.ErrorList
}

var crdValidations = struct {
	sync.RWMutex
	v CRDValidation
}{}

// RegisterCRDValidation makes every store created afterwards validate CRDs
// created or updated through the API with v instead of the lab's
// hand-written subset (validateCRD); nil restores the subset. Safe for
// concurrent use.
func RegisterCRDValidation(v CRDValidation) {
	crdValidations.Lock()
	defer crdValidations.Unlock()
	crdValidations.v = v
}

func registeredCRDValidation() CRDValidation {
	crdValidations.RLock()
	defer crdValidations.RUnlock()
	return crdValidations.v
}
