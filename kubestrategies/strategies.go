// Package kubestrategies serves built-in kinds in cachelab's fake API
// server through kube-apiserver's own code: k8s.io/kubernetes' registry
// strategies (pkg/registry/<group>/<kind>/strategy.go: PrepareForCreate,
// PrepareForUpdate, Validate, ValidateUpdate, Canonicalize, the status
// strategies), the legacy scheme's defaulting and conversion
// (pkg/apis/<group>/<version>), pkg/apis validation and the declarative
// validation rest.ValidateCreate and rest.ValidateUpdate run.
//
// Import it for its side effect, and every fake store created afterwards
// serves the kinds of Kinds through these strategies (store.RegisterStrategy):
//
//	import _ "github.com/cachelab/cachelab/kubestrategies"
//
// The module depends on k8s.io/kubernetes, which needs replace lines for
// its staging modules in the importing module's go.mod: copy this
// module's (docs/kube-strategies.md). The store's MVCC, watch, list,
// garbage collection, admission and faults stay the lab's; only a
// write's defaulting, preparation and validation change.
package kubestrategies

import (
	"context"
	"fmt"
	"reflect"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"k8s.io/kubernetes/pkg/api/legacyscheme"

	// The install packages register each group's internal and versioned
	// types, conversions and defaulting functions into legacyscheme.
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/events/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"

	"k8s.io/kubernetes/pkg/registry/apps/controllerrevision"
	"k8s.io/kubernetes/pkg/registry/apps/daemonset"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
	"k8s.io/kubernetes/pkg/registry/apps/replicaset"
	"k8s.io/kubernetes/pkg/registry/apps/statefulset"
	"k8s.io/kubernetes/pkg/registry/autoscaling/horizontalpodautoscaler"
	"k8s.io/kubernetes/pkg/registry/batch/cronjob"
	"k8s.io/kubernetes/pkg/registry/batch/job"
	"k8s.io/kubernetes/pkg/registry/coordination/lease"
	"k8s.io/kubernetes/pkg/registry/core/configmap"
	"k8s.io/kubernetes/pkg/registry/core/endpoint"
	"k8s.io/kubernetes/pkg/registry/core/event"
	"k8s.io/kubernetes/pkg/registry/core/limitrange"
	"k8s.io/kubernetes/pkg/registry/core/namespace"
	"k8s.io/kubernetes/pkg/registry/core/node"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim"
	"k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/pkg/registry/core/replicationcontroller"
	"k8s.io/kubernetes/pkg/registry/core/secret"
	"k8s.io/kubernetes/pkg/registry/core/service"
	"k8s.io/kubernetes/pkg/registry/core/serviceaccount"
	"k8s.io/kubernetes/pkg/registry/discovery/endpointslice"
	"k8s.io/kubernetes/pkg/registry/networking/ingress"
	"k8s.io/kubernetes/pkg/registry/networking/networkpolicy"
	"k8s.io/kubernetes/pkg/registry/node/runtimeclass"
	"k8s.io/kubernetes/pkg/registry/policy/poddisruptionbudget"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrole"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding"
	"k8s.io/kubernetes/pkg/registry/rbac/role"
	"k8s.io/kubernetes/pkg/registry/rbac/rolebinding"

	"github.com/cachelab/cachelab/fakeapi/store"
)

// restStrategy is what a registry strategy offers for creates and updates.
type restStrategy interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
}

// Kind is one built-in resource served through kube-apiserver's strategy.
type Kind struct {
	// GVR is the resource as the fake serves it (its storage version).
	GVR schema.GroupVersionResource
	// Kind is its object kind ("Deployment").
	Kind string
	// Strategy is the registry's strategy for the resource.
	Strategy restStrategy
	// Status is the registry's strategy for the status subresource (nil
	// for resources without one).
	Status rest.RESTUpdateStrategy
	// Source names the k8s.io/kubernetes package the strategies come from.
	Source string
}

// Kinds are the resources this package registers, in the order of the
// fake's table (docs/builtin-kinds.md).
var Kinds = []Kind{
	{core("namespaces"), "Namespace", namespace.Strategy, namespace.StatusStrategy, "pkg/registry/core/namespace"},
	{core("nodes"), "Node", node.Strategy, node.StatusStrategy, "pkg/registry/core/node"},
	{core("events"), "Event", event.Strategy, nil, "pkg/registry/core/event"},
	{gvr("events.k8s.io", "v1", "events"), "Event", event.Strategy, nil, "pkg/registry/core/event"},
	{core("configmaps"), "ConfigMap", configmap.Strategy, nil, "pkg/registry/core/configmap"},
	{core("secrets"), "Secret", secret.Strategy, nil, "pkg/registry/core/secret"},
	{core("serviceaccounts"), "ServiceAccount", serviceaccount.Strategy, nil, "pkg/registry/core/serviceaccount"},
	{core("limitranges"), "LimitRange", limitrange.Strategy, nil, "pkg/registry/core/limitrange"},
	{core("pods"), "Pod", pod.Strategy, pod.StatusStrategy, "pkg/registry/core/pod"},
	{core("services"), "Service", service.Strategy, service.StatusStrategy, "pkg/registry/core/service"},
	{core("endpoints"), "Endpoints", endpoint.Strategy, nil, "pkg/registry/core/endpoint"},
	{core("persistentvolumeclaims"), "PersistentVolumeClaim", persistentvolumeclaim.Strategy, persistentvolumeclaim.StatusStrategy, "pkg/registry/core/persistentvolumeclaim"},
	{core("replicationcontrollers"), "ReplicationController", replicationcontroller.Strategy, replicationcontroller.StatusStrategy, "pkg/registry/core/replicationcontroller"},
	{apps("deployments"), "Deployment", deployment.Strategy, deployment.StatusStrategy, "pkg/registry/apps/deployment"},
	{apps("replicasets"), "ReplicaSet", replicaset.Strategy, replicaset.StatusStrategy, "pkg/registry/apps/replicaset"},
	{apps("statefulsets"), "StatefulSet", statefulset.Strategy, statefulset.StatusStrategy, "pkg/registry/apps/statefulset"},
	{apps("daemonsets"), "DaemonSet", daemonset.Strategy, daemonset.StatusStrategy, "pkg/registry/apps/daemonset"},
	{apps("controllerrevisions"), "ControllerRevision", controllerrevision.Strategy, nil, "pkg/registry/apps/controllerrevision"},
	{gvr("batch", "v1", "jobs"), "Job", job.Strategy, job.StatusStrategy, "pkg/registry/batch/job"},
	{gvr("batch", "v1", "cronjobs"), "CronJob", cronjob.Strategy, cronjob.StatusStrategy, "pkg/registry/batch/cronjob"},
	{gvr("coordination.k8s.io", "v1", "leases"), "Lease", lease.Strategy, nil, "pkg/registry/coordination/lease"},
	{gvr("discovery.k8s.io", "v1", "endpointslices"), "EndpointSlice", endpointslice.Strategy, nil, "pkg/registry/discovery/endpointslice"},
	{gvr("node.k8s.io", "v1", "runtimeclasses"), "RuntimeClass", runtimeclass.Strategy, nil, "pkg/registry/node/runtimeclass"},
	{rbac("roles"), "Role", role.Strategy, nil, "pkg/registry/rbac/role"},
	{rbac("rolebindings"), "RoleBinding", rolebinding.Strategy, nil, "pkg/registry/rbac/rolebinding"},
	{rbac("clusterroles"), "ClusterRole", clusterrole.Strategy, nil, "pkg/registry/rbac/clusterrole"},
	{rbac("clusterrolebindings"), "ClusterRoleBinding", clusterrolebinding.Strategy, nil, "pkg/registry/rbac/clusterrolebinding"},
	{gvr("policy", "v1", "poddisruptionbudgets"), "PodDisruptionBudget", poddisruptionbudget.Strategy, poddisruptionbudget.StatusStrategy, "pkg/registry/policy/poddisruptionbudget"},
	{gvr("networking.k8s.io", "v1", "ingresses"), "Ingress", ingress.Strategy, ingress.StatusStrategy, "pkg/registry/networking/ingress"},
	{gvr("networking.k8s.io", "v1", "networkpolicies"), "NetworkPolicy", networkpolicy.Strategy, nil, "pkg/registry/networking/networkpolicy"},
	{gvr("autoscaling", "v2", "horizontalpodautoscalers"), "HorizontalPodAutoscaler", horizontalpodautoscaler.Strategy, horizontalpodautoscaler.StatusStrategy, "pkg/registry/autoscaling/horizontalpodautoscaler"},
}

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}
func core(resource string) schema.GroupVersionResource { return gvr("", "v1", resource) }
func apps(resource string) schema.GroupVersionResource { return gvr("apps", "v1", resource) }
func rbac(resource string) schema.GroupVersionResource {
	return gvr("rbac.authorization.k8s.io", "v1", resource)
}

func init() { Register() }

// Register registers every Kind with the fake's store (done on import);
// stores created afterwards serve them through kube-apiserver's
// strategies. It panics if legacyscheme does not know a Kind (a
// programming error caught by this package's tests).
func Register() {
	for _, k := range Kinds {
		store.RegisterStrategy(k.GVR.GroupResource(), newAdapter(k))
	}
	for _, gk := range Converted {
		store.RegisterConverter(gk, SchemeConverter{})
	}
	store.RegisterTypeConverter(typeConverter)
	store.RegisterCRDValidation(CRDValidation{})
}

// Unregister removes every Kind's registration: stores created afterwards
// serve them through the lab's hand-written rules again (to measure
// both in one process; see docs/kube-strategies.md).
func Unregister() {
	for _, k := range Kinds {
		store.RegisterStrategy(k.GVR.GroupResource(), nil)
	}
	for _, gk := range Converted {
		store.RegisterConverter(gk, nil)
	}
	store.RegisterTypeConverter(nil)
	store.RegisterCRDValidation(nil)
}

// Converted are the kinds the store serves in a second version from one
// storage (autoscaling/v1 HorizontalPodAutoscalers, stored as v2), which
// Register converts with SchemeConverter.
var Converted = []schema.GroupKind{{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}}

// SchemeConverter converts a built-in object between two versions as
// kube-apiserver does: to the internal version and on to the other one
// through legacyscheme's conversion functions (for HorizontalPodAutoscalers
// pkg/apis/autoscaling/v1's annotation round trip).
type SchemeConverter struct{}

// Convert implements store.Converter.
func (SchemeConverter) Convert(in, out runtime.Object) error {
	gvks, _, err := legacyscheme.Scheme.ObjectKinds(in)
	if err != nil {
		return err
	}
	internal, err := legacyscheme.Scheme.New(gvks[0].GroupKind().WithVersion(runtime.APIVersionInternal))
	if err != nil {
		return err
	}
	if err := legacyscheme.Scheme.Convert(in.DeepCopyObject(), internal, nil); err != nil {
		return err
	}
	return legacyscheme.Scheme.Convert(internal, out, nil)
}

// Names returns the registered resources as "resource.group" (core:
// "resource"), sorted.
func Names() []string {
	out := make([]string, 0, len(Kinds))
	for _, k := range Kinds {
		out = append(out, k.GVR.GroupResource().String())
	}
	sort.Strings(out)
	return out
}

// adapter is a store.Strategy over one Kind.
type adapter struct {
	Kind
	// versioned is the versioned Go type (a pointer type).
	versioned reflect.Type
	// internal is the internal GroupVersionKind.
	internal schema.GroupVersionKind
}

var _ store.Strategy = (*adapter)(nil)

func newAdapter(k Kind) *adapter {
	gvk := k.GVR.GroupVersion().WithKind(k.Kind)
	obj, err := legacyscheme.Scheme.New(gvk)
	if err != nil {
		panic(fmt.Sprintf("kubestrategies: legacyscheme does not know %v: %v", gvk, err))
	}
	internal := schema.GroupVersionKind{Group: gvk.Group, Version: runtime.APIVersionInternal, Kind: k.Kind}
	if _, err := legacyscheme.Scheme.New(internal); err != nil {
		panic(fmt.Sprintf("kubestrategies: legacyscheme has no internal %s: %v", k.Kind, err))
	}
	return &adapter{Kind: k, versioned: reflect.TypeOf(obj), internal: internal}
}

// Default is the defaulting kube-apiserver's decoder applies to a body.
func (a *adapter) Default(obj runtime.Object) { legacyscheme.Scheme.Default(obj) }

// Create is what genericregistry.Store.Create does through
// rest.BeforeCreate once the system metadata is set: PrepareForCreate,
// rest.ValidateCreate (the strategy's Validate, the common metadata
// validation, declarative validation), Canonicalize; in the internal
// version.
func (a *adapter) Create(obj runtime.Object) (out runtime.Object, errs field.ErrorList) {
	defer a.recoverInto(&out, &errs)
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, internalErr(fmt.Errorf("%T has no metadata", obj))
	}
	ctx := a.context(m, "create", "")
	in, err := a.toInternal(obj)
	if err != nil {
		return nil, internalErr(err)
	}
	a.Strategy.PrepareForCreate(ctx, in)
	if errs := rest.ValidateCreate(ctx, in, a.Strategy); len(errs) > 0 {
		return nil, errs
	}
	a.Strategy.Canonicalize(in)
	return a.toVersioned(in)
}

// Update is rest.BeforeUpdate after its generation reset (the store's):
// PrepareForUpdate of the main or the status strategy, the UID and
// timestamps kept from old, rest.ValidateUpdate, Canonicalize.
func (a *adapter) Update(obj, old runtime.Object, subresource string) (out runtime.Object, errs field.ErrorList) {
	defer a.recoverInto(&out, &errs)
	st := rest.RESTUpdateStrategy(a.Strategy)
	if subresource == "status" {
		if a.Status == nil {
			return nil, internalErr(fmt.Errorf("%s has no status strategy", a.GVR.Resource))
		}
		st = a.Status
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, internalErr(fmt.Errorf("%T has no metadata", obj))
	}
	ctx := a.context(m, "update", subresource)
	in, err := a.toInternal(obj)
	if err != nil {
		return nil, internalErr(err)
	}
	// The store's old object is kept as the event's Prev: convert a copy,
	// since conversion may share slices and maps with its input.
	inOld, err := a.toInternal(old.DeepCopyObject())
	if err != nil {
		return nil, internalErr(err)
	}
	st.PrepareForUpdate(ctx, in, inOld)
	nm, om := in.(metav1.Object), inOld.(metav1.Object)
	if nm.GetUID() == "" {
		nm.SetUID(om.GetUID())
	}
	if ct := om.GetCreationTimestamp(); !ct.IsZero() {
		nm.SetCreationTimestamp(ct)
	}
	if !om.GetDeletionTimestamp().IsZero() {
		nm.SetDeletionTimestamp(om.GetDeletionTimestamp())
	}
	if om.GetDeletionGracePeriodSeconds() != nil && nm.GetDeletionGracePeriodSeconds() == nil {
		nm.SetDeletionGracePeriodSeconds(om.GetDeletionGracePeriodSeconds())
	}
	if errs := rest.ValidateUpdate(ctx, in, inOld, st); len(errs) > 0 {
		return nil, errs
	}
	st.Canonicalize(in)
	return a.toVersioned(in)
}

// recoverInto turns a panic of the strategy code into an internal field
// error (kube-apiserver's panic filter answers 500; the store has one
// channel, the 422's causes), so a bad object never brings the fake down.
func (a *adapter) recoverInto(out *runtime.Object, errs *field.ErrorList) {
	if p := recover(); p != nil {
		*out = nil
		*errs = internalErr(fmt.Errorf("the %s strategy panicked: %v", a.Kind.Kind, p))
	}
}

// context is the request context kube-apiserver's handler gives the
// strategies: the namespace and the RequestInfo (the deployment strategy
// reads the API group to refuse selector changes; declarative validation
// reads the version).
func (a *adapter) context(m metav1.Object, verb, subresource string) context.Context {
	prefix := "apis"
	if a.GVR.Group == "" {
		prefix = "api"
	}
	ctx := genericapirequest.WithNamespace(context.Background(), m.GetNamespace())
	return genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true,
		Verb:              verb,
		APIPrefix:         prefix,
		APIGroup:          a.GVR.Group,
		APIVersion:        a.GVR.Version,
		Namespace:         m.GetNamespace(),
		Resource:          a.GVR.Resource,
		Subresource:       subresource,
		Name:              m.GetName(),
	})
}

// toInternal converts a versioned object to a new internal one.
func (a *adapter) toInternal(obj runtime.Object) (runtime.Object, error) {
	if reflect.TypeOf(obj) != a.versioned {
		return nil, fmt.Errorf("got a %T, want %v", obj, a.versioned)
	}
	out, err := legacyscheme.Scheme.New(a.internal)
	if err != nil {
		return nil, err
	}
	if err := legacyscheme.Scheme.Convert(obj, out, nil); err != nil {
		return nil, fmt.Errorf("converting %s to the internal version: %w", a.Kind.Kind, err)
	}
	return out, nil
}

// toVersioned converts an internal object back to the served version and
// defaults it, as kube-apiserver's storage decodes (and defaults) what it
// stored before answering: a PVC's status.phase Pending, which
// PrepareForCreate has just reset, comes back that way.
func (a *adapter) toVersioned(in runtime.Object) (runtime.Object, field.ErrorList) {
	out := reflect.New(a.versioned.Elem()).Interface().(runtime.Object)
	if err := legacyscheme.Scheme.Convert(in, out, nil); err != nil {
		return nil, internalErr(fmt.Errorf("converting %s to %s: %w", a.Kind.Kind, a.GVR.Version, err))
	}
	legacyscheme.Scheme.Default(out)
	out.GetObjectKind().SetGroupVersionKind(a.GVR.GroupVersion().WithKind(a.Kind.Kind))
	return out, nil
}

func internalErr(err error) field.ErrorList {
	return field.ErrorList{field.InternalError(nil, err)}
}
