package store

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// kindRules is what the store knows of a kind beyond its Go type: the
// parts of kube-apiserver's registry strategy it models.
type kindRules struct {
	// nameFn validates metadata.name (the strategy's name rule).
	nameFn apivalidation.ValidateNameFunc
	// generation is true when the kind has metadata.generation (set to 1
	// on create, bumped on spec changes).
	generation bool
	// fields adds the kind's selectable fields to metadata.name and
	// metadata.namespace.
	fields func(obj runtime.Object, set fields.Set)
	// prepareCreate resets what a create may not set (status defaults).
	prepareCreate func(obj runtime.Object)
	// defaults fills in what the scheme's defaulting functions fill in on
	// every create and update (kube-apiserver defaults each decoded body).
	defaults func(obj runtime.Object)
	// validate checks required fields of the kind.
	validate func(obj runtime.Object) field.ErrorList
	// prepareUpdate adjusts an updated object from the stored one (the
	// strategy's PrepareForUpdate), before validation.
	prepareUpdate func(obj, old runtime.Object)
	// withUID completes a new object once its UID is set (the job
	// strategy's generated selector).
	withUID func(obj runtime.Object)
	// validateWithOld, optional, validates an object created (old nil) or
	// updated from old in one call (a registered CRDValidation).
	validateWithOld func(obj, old runtime.Object) field.ErrorList
	// validateUpdate checks what an update may not change (immutable
	// fields and objects), given the stored object.
	validateUpdate func(obj, old runtime.Object) field.ErrorList
	// statusKeepsOwnerRefs is true when a status update may not change
	// ownerReferences (pods: "old kubelets corrupt them").
	statusKeepsOwnerRefs bool
	// createOnUpdate is the strategy's AllowCreateOnUpdate: an update of
	// a missing object creates it (leases, events).
	createOnUpdate bool
	// admit is the create admission of kube-apiserver's default plugins
	// that change the kind (pods), after defaulting; an error refuses the
	// create.
	admit func(s *Store, obj runtime.Object) error
	// allocate is the service REST's allocator (BeginCreate and
	// BeginUpdate: IP families, addresses, node ports), run after
	// admission on creates and on updates of the main resource (old nil on
	// create), before the strategy's preparation and validation; an error
	// refuses the write. It runs whether or not a Strategy is registered:
	// kube-apiserver's allocators are not part of its strategies.
	allocate func(s *Store, obj, old runtime.Object) error
	// gracePeriod, when set, makes the kind's deletes graceful (the
	// strategy's CheckGracefulDelete): it returns the grace period of a
	// delete asking grace (nil: none asked) of obj.
	gracePeriod func(obj runtime.Object, grace *int64) int64
}

// builtin describes one built-in resource served from the scheme.
type builtin struct {
	gvk        schema.GroupVersionKind
	namespaced bool
	hasStatus  bool
	// scale is true for kinds with a scale subresource (autoscaling/v1
	// Scale over spec.replicas).
	scale bool
	// returnDeleted is the registry's ReturnDeletedObject: a delete
	// answers the object, not a Status.
	returnDeleted bool
	rules         kindRules
}

// builtins are the resources New serves. Their Go types, list types and
// resource names come from the scheme; this table holds only what a scheme
// does not know (scope, status subresource, strategy rules).
var builtins = []builtin{
	{gvk: corev1.SchemeGroupVersion.WithKind("Namespace"), namespaced: false, hasStatus: true, rules: kindRules{
		nameFn: apivalidation.ValidateNamespaceName,
		fields: func(obj runtime.Object, set fields.Set) {
			set["status.phase"] = string(obj.(*corev1.Namespace).Status.Phase)
		},
		prepareCreate: func(obj runtime.Object) {
			ns := obj.(*corev1.Namespace)
			ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
			ns.Spec.Finalizers = []corev1.FinalizerName{corev1.FinalizerKubernetes}
		},
		defaults: func(obj runtime.Object) {
			// The namespace strategy labels every namespace with its name.
			ns := obj.(*corev1.Namespace)
			if ns.Labels == nil {
				ns.Labels = map[string]string{}
			}
			ns.Labels[corev1.LabelMetadataName] = ns.Name
		},
	}},
	{gvk: corev1.SchemeGroupVersion.WithKind("ConfigMap"), namespaced: true, rules: kindRules{
		nameFn: apivalidation.NameIsDNSSubdomain,
		validate: func(obj runtime.Object) field.ErrorList {
			cm := obj.(*corev1.ConfigMap)
			return validateDataMaps(cm.Data, cm.BinaryData)
		},
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			cm, o := obj.(*corev1.ConfigMap), old.(*corev1.ConfigMap)
			var errs field.ErrorList
			if isTrue(o.Immutable) {
				// ValidateConfigMapUpdate.
				if !isTrue(cm.Immutable) {
					errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableMsg))
				}
				if !reflect.DeepEqual(cm.Data, o.Data) {
					errs = append(errs, field.Forbidden(field.NewPath("data"), immutableMsg))
				}
				if !reflect.DeepEqual(cm.BinaryData, o.BinaryData) {
					errs = append(errs, field.Forbidden(field.NewPath("binaryData"), immutableMsg))
				}
			}
			return errs
		},
	}},
	{gvk: corev1.SchemeGroupVersion.WithKind("Secret"), namespaced: true, rules: kindRules{
		nameFn: apivalidation.NameIsDNSSubdomain,
		fields: func(obj runtime.Object, set fields.Set) {
			set["type"] = string(obj.(*corev1.Secret).Type)
		},
		defaults: func(obj runtime.Object) {
			s := obj.(*corev1.Secret)
			if s.Type == "" {
				s.Type = corev1.SecretTypeOpaque // SetDefaults_Secret
			}
			// Convert_v1_Secret_To_core_Secret: stringData overwrites data
			// and is never stored.
			if len(s.StringData) > 0 && s.Data == nil {
				s.Data = map[string][]byte{}
			}
			for k, v := range s.StringData {
				s.Data[k] = []byte(v)
			}
			s.StringData = nil
		},
		validate: func(obj runtime.Object) field.ErrorList {
			s := obj.(*corev1.Secret)
			return validateDataMaps(s.Data, s.StringData)
		},
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			s, o := obj.(*corev1.Secret), old.(*corev1.Secret)
			var errs field.ErrorList
			// ValidateSecretUpdate.
			if s.Type != o.Type {
				errs = append(errs, field.Invalid(field.NewPath("type"), s.Type, "field is immutable"))
			}
			if isTrue(o.Immutable) {
				if !isTrue(s.Immutable) {
					errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableMsg))
				}
				if !reflect.DeepEqual(s.Data, o.Data) {
					errs = append(errs, field.Forbidden(field.NewPath("data"), immutableMsg))
				}
			}
			return errs
		},
	}},
	{gvk: corev1.SchemeGroupVersion.WithKind("Pod"), namespaced: true, hasStatus: true, returnDeleted: true, rules: kindRules{
		nameFn:               apivalidation.NameIsDNSSubdomain,
		generation:           true,
		statusKeepsOwnerRefs: true,
		fields: func(obj runtime.Object, set fields.Set) {
			p := obj.(*corev1.Pod)
			set["spec.nodeName"] = p.Spec.NodeName
			set["spec.restartPolicy"] = string(p.Spec.RestartPolicy)
			set["spec.schedulerName"] = p.Spec.SchedulerName
			set["spec.serviceAccountName"] = p.Spec.ServiceAccountName
			set["spec.hostNetwork"] = strconv.FormatBool(p.Spec.HostNetwork)
			set["status.phase"] = string(p.Status.Phase)
			set["status.podIP"] = p.Status.PodIP
			set["status.nominatedNodeName"] = p.Status.NominatedNodeName
		},
		defaults:       defaultPod,
		admit:          (*Store).admitPod,
		prepareCreate:  preparePodCreate,
		validateUpdate: validatePodUpdate,
		gracePeriod:    podGracePeriod,
		validate: func(obj runtime.Object) field.ErrorList {
			p := obj.(*corev1.Pod)
			var errs field.ErrorList
			path := field.NewPath("spec", "containers")
			if len(p.Spec.Containers) == 0 {
				errs = append(errs, field.Required(path, ""))
			}
			names := map[string]bool{}
			for _, c := range p.Spec.InitContainers {
				names[c.Name] = true
			}
			for i, c := range p.Spec.Containers {
				switch {
				case c.Name == "":
					errs = append(errs, field.Required(path.Index(i).Child("name"), ""))
				case names[c.Name]:
					errs = append(errs, field.Duplicate(path.Index(i).Child("name"), c.Name))
				default:
					for _, msg := range validation.IsDNS1123Label(c.Name) {
						errs = append(errs, field.Invalid(path.Index(i).Child("name"), c.Name, msg))
					}
				}
				names[c.Name] = true
				if c.Image == "" {
					errs = append(errs, field.Required(path.Index(i).Child("image"), ""))
				}
				switch c.ImagePullPolicy {
				case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
				default:
					errs = append(errs, field.NotSupported(path.Index(i).Child("imagePullPolicy"), c.ImagePullPolicy,
						[]corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever}))
				}
			}
			switch p.Spec.RestartPolicy {
			case corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
			default:
				errs = append(errs, field.NotSupported(field.NewPath("spec", "restartPolicy"), p.Spec.RestartPolicy,
					[]corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}))
			}
			switch p.Spec.DNSPolicy {
			case corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone:
			default:
				errs = append(errs, field.NotSupported(field.NewPath("spec", "dnsPolicy"), p.Spec.DNSPolicy,
					[]corev1.DNSPolicy{corev1.DNSClusterFirst, corev1.DNSClusterFirstWithHostNet, corev1.DNSDefault, corev1.DNSNone}))
			}
			return errs
		},
	}},
	{gvk: corev1.SchemeGroupVersion.WithKind("Event"), namespaced: true, rules: kindRules{
		nameFn:         apivalidation.NameIsDNSSubdomain,
		createOnUpdate: true,
		fields: func(obj runtime.Object, set fields.Set) {
			e := obj.(*corev1.Event)
			set["involvedObject.kind"] = e.InvolvedObject.Kind
			set["involvedObject.namespace"] = e.InvolvedObject.Namespace
			set["involvedObject.name"] = e.InvolvedObject.Name
			set["involvedObject.uid"] = string(e.InvolvedObject.UID)
			set["involvedObject.apiVersion"] = e.InvolvedObject.APIVersion
			set["involvedObject.resourceVersion"] = e.InvolvedObject.ResourceVersion
			set["involvedObject.fieldPath"] = e.InvolvedObject.FieldPath
			set["reason"] = e.Reason
			set["reportingComponent"] = e.ReportingController
			set["source"] = e.Source.Component
			set["type"] = e.Type
		},
		validate:       func(obj runtime.Object) field.ErrorList { return validateCoreEvent(obj.(*corev1.Event)) },
		validateUpdate: func(obj, _ runtime.Object) field.ErrorList { return validateCoreEvent(obj.(*corev1.Event)) },
	}},
	{gvk: eventsv1.SchemeGroupVersion.WithKind("Event"), namespaced: true, rules: kindRules{
		nameFn: apivalidation.NameIsDNSSubdomain,
		fields: func(obj runtime.Object, set fields.Set) {
			e := obj.(*eventsv1.Event)
			set["regarding.kind"] = e.Regarding.Kind
			set["regarding.namespace"] = e.Regarding.Namespace
			set["regarding.name"] = e.Regarding.Name
			set["regarding.uid"] = string(e.Regarding.UID)
			set["regarding.apiVersion"] = e.Regarding.APIVersion
			set["regarding.resourceVersion"] = e.Regarding.ResourceVersion
			set["regarding.fieldPath"] = e.Regarding.FieldPath
			set["reason"] = e.Reason
			set["reportingController"] = e.ReportingController
			set["type"] = e.Type
		},
		validate: func(obj runtime.Object) field.ErrorList {
			e := obj.(*eventsv1.Event)
			if e.EventTime.IsZero() {
				return field.ErrorList{field.Required(field.NewPath("eventTime"), "")}
			}
			return nil
		},
	}},
}

// immutableMsg is kube-apiserver's message for a change to an immutable
// ConfigMap or Secret.
const immutableMsg = "field is immutable when `immutable` is set"

func isTrue(b *bool) bool { return b != nil && *b }

// validateDataMaps is validateDataKeys of the sorted keys of two maps
// (data and binaryData, or data and stringData); it sorts them only to
// report errors in order.
func validateDataMaps[A, B any](data map[string]A, binary map[string]B) field.ErrorList {
	valid := true
	for k := range data {
		valid = valid && len(validation.IsConfigMapKey(k)) == 0
	}
	for k := range binary {
		valid = valid && len(validation.IsConfigMapKey(k)) == 0
	}
	if valid {
		return nil
	}
	return validateDataKeys(slices.Sorted(maps.Keys(data)), slices.Sorted(maps.Keys(binary)))
}

// validateDataKeys checks ConfigMap and Secret data keys.
func validateDataKeys(data, binary []string) field.ErrorList {
	var errs field.ErrorList
	for _, k := range data {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(k), k, msg))
		}
	}
	for _, k := range binary {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(k), k, msg))
		}
	}
	return errs
}

// resState is one served resource and its current objects.
type resState struct {
	Resource
	gvk   schema.GroupVersionKind
	rules kindRules
	// typed is true for built-ins served as their Go types.
	typed bool
	// scale is true when the resource has a scale subresource.
	scale bool
	// returnDeleted: a delete answers the deleted object.
	returnDeleted bool
	// fieldManagers are the server-side apply field managers by
	// subresource, built on first use.
	fieldManagers map[string]*managedfields.FieldManager
	// goType is the Go type of a typed resource's objects (a pointer).
	goType reflect.Type
	// registryPrefix is the etcd key prefix kube-apiserver would use, for
	// error messages ("/registry/pods/").
	registryPrefix string
	// objects holds the current state of every object by key (objectKey),
	// encoded (see encode).
	objects map[string][]byte
	// sorted caches objects sorted by key (kept up to date in place by
	// updates and appending creates; sortedDirty says it must be rebuilt).
	sorted      []item
	sortedDirty bool
	// fieldLabels are the field labels field selectors may use.
	fieldLabels map[string]bool
	// strategy, if registered (RegisterStrategy), replaces rules' defaults,
	// preparation and validation of writes (strategy.go).
	strategy Strategy
}

// groupResource returns the resource's GroupResource, for errors.
func (r *resState) groupResource() schema.GroupResource { return r.GVR.GroupResource() }

// objectKey is the key of an object in resState.objects: "ns/name", with
// ns empty for cluster-scoped resources. Keys sort by namespace, then name.
func objectKey(ns, name string) string { return ns + "/" + name }

// sortedItems returns the resource's current objects sorted by key. The
// slice is the cache itself: valid until the next write.
func (r *resState) sortedItems() []item {
	if r.sortedDirty {
		r.sorted = r.sorted[:0]
		for k, data := range r.objects {
			r.sorted = append(r.sorted, item{k, data})
		}
		sort.Slice(r.sorted, func(i, j int) bool { return r.sorted[i].key < r.sorted[j].key })
		r.sortedDirty = false
	}
	return r.sorted
}

// setSorted keeps the sorted cache up to date for a write of key (data nil
// for a delete).
func (r *resState) setSorted(key string, data []byte, created bool) {
	if r.sortedDirty {
		return
	}
	n := len(r.sorted)
	switch {
	case data == nil:
		r.sortedDirty = true
	case created && (n == 0 || r.sorted[n-1].key < key):
		r.sorted = append(r.sorted, item{key, data}) // names in increasing order stay cheap
	case created:
		r.sortedDirty = true
	default:
		i := sort.Search(n, func(i int) bool { return r.sorted[i].key >= key })
		r.sorted[i].data = data
	}
}

// newObject returns an empty object of the resource's kind, with its
// TypeMeta set.
func (r *resState) newObject(s *Store) runtime.Object {
	if !r.typed {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetGroupVersionKind(r.gvk)
		return u
	}
	obj, err := s.scheme.New(r.gvk)
	if err != nil {
		panic(fmt.Sprintf("store: scheme lost kind %v: %v", r.gvk, err)) // registered at New
	}
	obj.GetObjectKind().SetGroupVersionKind(r.gvk)
	return obj
}

// newList returns an empty list of the resource's kind.
func (r *resState) newList(s *Store) runtime.Object {
	listGVK := r.gvk.GroupVersion().WithKind(r.ListKind)
	if !r.typed {
		l := &unstructured.UnstructuredList{Object: map[string]any{}}
		l.SetGroupVersionKind(listGVK)
		return l
	}
	obj, err := s.scheme.New(listGVK)
	if err != nil {
		panic(fmt.Sprintf("store: scheme lost kind %v: %v", listGVK, err)) // registered at New
	}
	obj.GetObjectKind().SetGroupVersionKind(listGVK)
	return obj
}

// fieldSet returns the selectable fields of obj.
func (r *resState) fieldSet(obj runtime.Object) fields.Set {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fields.Set{}
	}
	set := fields.Set{"metadata.name": m.GetName()}
	if r.Namespaced {
		set["metadata.namespace"] = m.GetNamespace()
	}
	if r.rules.fields != nil {
		r.rules.fields(obj, set)
	}
	return set
}

// supportedFields returns the field labels a field selector may use.
func (r *resState) supportedFields(s *Store) map[string]bool {
	set := r.fieldSet(r.newObject(s))
	out := make(map[string]bool, len(set))
	for k := range set {
		out[k] = true
	}
	return out
}

// convertIn turns a caller's object into a fresh copy of the resource's
// representation (its Go type, or unstructured), checking its kind.
func (s *Store) convertIn(r *resState, obj runtime.Object) (runtime.Object, error) {
	if v := reflect.ValueOf(obj); obj == nil || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("no %s object given", r.Kind))
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if !gvk.Empty() && gvk != r.gvk {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: the object's apiVersion/kind %s does not match the resource %s (want %s)",
			gvk.Kind, gvk.Version, r.Kind, gvk.GroupVersion().String()+"/"+gvk.Kind, r.GVR.String(), r.gvk.GroupVersion().String()+"/"+r.Kind))
	}
	if r.typed {
		if reflect.TypeOf(obj) == r.goType {
			out := obj.DeepCopyObject()
			out.GetObjectKind().SetGroupVersionKind(r.gvk)
			return out, nil
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("%T cannot be handled as a %s (want %v or *unstructured.Unstructured)", obj, r.Kind, r.goType))
		}
		out := r.newObject(s)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), out); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", r.Kind, r.gvk.Version, r.Kind, err))
		}
		out.GetObjectKind().SetGroupVersionKind(r.gvk)
		return out, nil
	}
	var content map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		c, err := deepCopyJSON(u.UnstructuredContent())
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("%s content is not JSON-compatible (use int64, float64, string, bool, []any, map[string]any): %v", r.Kind, err))
		}
		content = c
	} else {
		c, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("%T cannot be handled as a %s: %v", obj, r.Kind, err))
		}
		content = c
	}
	out := &unstructured.Unstructured{Object: content}
	out.SetGroupVersionKind(r.gvk)
	if md, ok := content["metadata"]; ok {
		if _, isMap := md.(map[string]any); !isMap {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("%s: metadata must be an object, got %T", r.Kind, md))
		}
	}
	return out, nil
}

// protoMessage is what the generated protobuf code of built-in types
// offers.
type protoMessage interface {
	Marshal() ([]byte, error)
	Unmarshal(data []byte) error
}

// encode returns the stored form of an object: protobuf for built-ins (as
// etcd holds them, minus the envelope), JSON for custom resources. Stored
// bytes hold no pointers, so 100k objects cost the garbage collector
// nothing to scan and take less than their JSON.
func (r *resState) encode(obj runtime.Object) []byte {
	var (
		data []byte
		err  error
	)
	if u, ok := obj.(*unstructured.Unstructured); ok {
		data, err = json.Marshal(u.Object)
	} else {
		data, err = obj.(protoMessage).Marshal()
	}
	if err != nil {
		panic(fmt.Sprintf("store: cannot encode a %s: %v", r.Kind, err)) // validated objects always encode
	}
	return data
}

// decode returns a fresh object from its stored form, with TypeMeta set.
func (r *resState) decode(data []byte) runtime.Object {
	if !r.typed {
		var content map[string]any
		if err := utiljson.Unmarshal(data, &content); err != nil {
			panic(fmt.Sprintf("store: cannot decode a stored %s: %v", r.Kind, err)) // we encoded it
		}
		u := &unstructured.Unstructured{Object: content}
		u.SetGroupVersionKind(r.gvk)
		return u
	}
	obj := reflect.New(r.goType.Elem()).Interface().(runtime.Object)
	if err := obj.(protoMessage).Unmarshal(data); err != nil {
		panic(fmt.Sprintf("store: cannot decode a stored %s: %v", r.Kind, err)) // we encoded it
	}
	obj.GetObjectKind().SetGroupVersionKind(r.gvk)
	return obj
}

// load returns a fresh copy of the current object key, which the caller
// owns.
func (s *Store) load(r *resState, key string) (runtime.Object, bool) {
	data, ok := r.objects[key]
	if !ok {
		return nil, false
	}
	return r.decode(data), true
}

// deepCopyJSON is runtime.DeepCopyJSON, which panics on values JSON does
// not have (an int, a struct), turned into an error.
func deepCopyJSON(in map[string]any) (out map[string]any, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("%v", p)
		}
	}()
	return runtime.DeepCopyJSON(in), nil
}

// registryPrefix returns kube-apiserver's etcd key prefix for a resource.
func registryPrefix(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" || gvr.Group == "events.k8s.io" {
		return "/registry/" + gvr.Resource + "/"
	}
	return "/registry/" + gvr.Group + "/" + gvr.Resource + "/"
}

// Limits of legacyValidateEvent (k8s.io/kubernetes pkg/apis/core/validation).
const (
	eventReportingInstanceLimit = 128
	eventActionLimit            = 128
	eventReasonLimit            = 128
	eventNoteLimit              = 1024
)

// validateCoreEvent is legacyValidateEvent for a core/v1 request, what
// ValidateEventCreate and ValidateEventUpdate check of core/v1 Events: an
// old-style Event (no eventTime) names an involved object in its own
// namespace (none only in "default"); a new-style one needs its reporting
// component and instance, action and reason, within their lengths.
func validateCoreEvent(e *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	ns := field.NewPath("involvedObject", "namespace")
	mismatch := func() {
		errs = append(errs, field.Invalid(ns, e.InvolvedObject.Namespace, "does not match event.namespace"))
	}
	if e.EventTime.IsZero() {
		switch {
		case e.InvolvedObject.Namespace == "":
			if e.Namespace != metav1.NamespaceNone && e.Namespace != metav1.NamespaceDefault {
				mismatch()
			}
		case e.Namespace != e.InvolvedObject.Namespace:
			mismatch()
		}
		return errs
	}
	if e.InvolvedObject.Namespace == "" && e.Namespace != metav1.NamespaceDefault && e.Namespace != metav1.NamespaceSystem {
		mismatch()
	}
	component := field.NewPath("reportingComponent")
	if e.ReportingController == "" {
		errs = append(errs, field.Required(component, ""))
	}
	for _, msg := range validation.IsQualifiedName(e.ReportingController) { // ValidateQualifiedName
		errs = append(errs, field.Invalid(component, e.ReportingController, msg))
	}
	required := func(path, v string, limit int) {
		switch {
		case v == "":
			errs = append(errs, field.Required(field.NewPath(path), ""))
		case len(v) > limit:
			errs = append(errs, field.Invalid(field.NewPath(path), "", fmt.Sprintf("can have at most %v characters", limit)))
		}
	}
	required("reportingInstance", e.ReportingInstance, eventReportingInstanceLimit)
	required("action", e.Action, eventActionLimit)
	required("reason", e.Reason, eventReasonLimit)
	if len(e.Message) > eventNoteLimit {
		errs = append(errs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", eventNoteLimit)))
	}
	return errs
}
