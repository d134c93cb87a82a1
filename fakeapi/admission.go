package fakeapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/validating"
	"k8s.io/apiserver/pkg/authentication/user"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/informers"
	admissionregistrationinformers "k8s.io/client-go/informers/admissionregistration"
	admissionregistrationinformersv1 "k8s.io/client-go/informers/admissionregistration/v1"
	coreinformers "k8s.io/client-go/informers/core"
	coreinformersv1 "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	admissionregistrationlisters "k8s.io/client-go/listers/admissionregistration/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/fakeapi/store"
)

// Webhooks are the admission webhooks a Server calls, configured as a
// cluster configures them: MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration objects (a kubebuilder project's
// config/webhook/manifests.yaml). The server calls them with
// kube-apiserver's own MutatingAdmissionWebhook and
// ValidatingAdmissionWebhook plugins (k8s.io/apiserver): rules,
// namespace and object selectors, matchConditions, failurePolicy,
// reinvocationPolicy, sideEffects on dry runs, timeouts, the
// admission/v1 AdmissionReview sent and the JSONPatch applied, and the
// errors a denial or a failed call gives, are kube-apiserver's.
//
// Mutating webhooks run on every create and update (patches and
// server-side applies included, on the object the patch made) after the
// request is decoded and defaulted, and before the resourceVersion is
// checked; validating webhooks after the kind's own validation, before the
// object is stored. Both run on deletes, with oldObject. Writes the server
// makes itself (its garbage collection, namespace cleanup) and the scale
// subresource are not admitted.
//
// While a webhook is called, reads are served as kube-apiserver serves
// them (admission runs before storage, and other requests go on
// meanwhile): a get, list or watch, by the webhook (controller-runtime's
// mgr.GetAPIReader(), a typed clientset) or by anyone else, is answered
// from the state before the write being admitted, which nothing of that
// write has touched yet; a list's resourceVersion is the latest committed
// one, and a watch from it delivers the admitted write once it lands.
//
// Writes are not: the lab serves one write at a time, so a write made
// while a webhook is called waits until the write being admitted ends.
// A webhook's own write (kube-apiserver would serve it; one to the very
// object being admitted would then make that write conflict) fails at
// once with 500 and ErrAdmissionReentry's message when it carries the
// call's context (the http.Request's, which controller-runtime hands a
// handler); with another context it waits, and the webhook's
// timeoutSeconds (default 10 s) ends the call, which then counts as a
// failed call (failurePolicy). Likewise while a delete collection admits
// its second or later object: its earlier deletes are stored but not yet
// sent to any watch, so reads wait too (a webhook's read with the call's
// context fails at once, ErrAdmissionMidCollection).
type Webhooks struct {
	// Mutating and Validating are the configurations. Fields a cluster
	// defaults are defaulted as kube-apiserver does (failurePolicy Fail,
	// matchPolicy Equivalent, empty selectors, timeoutSeconds 10,
	// reinvocationPolicy Never, a rule's scope "*"); sideEffects and
	// admissionReviewVersions are required, as the API requires them.
	// caBundle is ignored: calls go through Transport.
	Mutating   []admissionregistrationv1.MutatingWebhookConfiguration
	Validating []admissionregistrationv1.ValidatingWebhookConfiguration
	// Transport carries every webhook call: an HTTP POST of an
	// AdmissionReview to the webhook's clientConfig (url, or
	// https://<service>.<namespace>.svc:<port><path>). Required: the lab
	// answers calls in-process (fakeapi/http.NewPipe over the handlers).
	Transport http.RoundTripper
}

// ErrAdmissionReentry is the error a write gets when it is made from
// inside an admission webhook the server is calling (with the call's
// context): the lab serves one write at a time, and the write being
// admitted holds the server's writes until its webhooks have answered.
var ErrAdmissionReentry = errors.New("fakeapi: a webhook's write is not served while the write it admits waits: the lab serves one write at a time (kube-apiserver would serve it); a webhook may read (get, list, watch) the API server, or its informer caches")

// ErrAdmissionMidCollection is the error a read gets when it is made from
// inside an admission webhook called for the second or later object of a
// delete collection (with the call's context): the collection's earlier
// deletes are stored but not yet sent to any watch, so the lab serves no
// read until the collection ends.
var ErrAdmissionMidCollection = errors.New("fakeapi: a webhook's read is not served while a delete collection admits an object after the collection's earlier deletes (stored, not yet sent to watches); the lab serves it once the collection ends")

// admissionKey marks the context of a webhook call (see Client.begin).
type admissionKey struct{}

// inAdmission reports whether ctx is a webhook call's (or derived from it).
func inAdmission(ctx context.Context) bool {
	return ctx != nil && ctx.Value(admissionKey{}) != nil
}

// SetWebhooks makes the server call w's webhooks on every write from now
// on. A configuration that kube-apiserver would refuse, or no Transport,
// is an error and changes nothing.
func (s *Server) SetWebhooks(w Webhooks) error {
	a, err := newAdmission(s, w)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.SetAdmission(a)
	return nil
}

// webhookAdmission calls kube-apiserver's webhook admission plugins for
// the store.
type webhookAdmission struct {
	s          *Server
	mutating   *mutating.Plugin   // nil without mutating webhooks
	validating *validating.Plugin // nil without validating webhooks
	objects    objectInterfaces
}

var _ store.Admission = (*webhookAdmission)(nil)

// newAdmission builds the plugins for w.
func newAdmission(s *Server, w Webhooks) (*webhookAdmission, error) {
	if w.Transport == nil {
		return nil, errors.New("fakeapi: Webhooks.Transport is nil: it must carry the webhook calls (fakeapi/http.NewPipe over the handlers)")
	}
	muts := make([]*admissionregistrationv1.MutatingWebhookConfiguration, 0, len(w.Mutating))
	for i := range w.Mutating {
		c := w.Mutating[i].DeepCopy()
		if err := defaultMutating(c); err != nil {
			return nil, err
		}
		muts = append(muts, c)
	}
	vals := make([]*admissionregistrationv1.ValidatingWebhookConfiguration, 0, len(w.Validating))
	for i := range w.Validating {
		c := w.Validating[i].DeepCopy()
		if err := defaultValidating(c); err != nil {
			return nil, err
		}
		vals = append(vals, c)
	}
	f := &staticInformers{
		namespaces: &namespaceLister{s: s},
		mutating:   admissionregistrationlisters.NewMutatingWebhookConfigurationLister(indexerOf(muts)),
		validating: admissionregistrationlisters.NewValidatingWebhookConfigurationLister(indexerOf(vals)),
	}
	// Calls go to Transport, whatever the host: no TLS, no dialling.
	resolver := &webhookutil.AuthenticationInfoResolverDelegator{
		ClientConfigForFunc: func(string) (*rest.Config, error) { return transportConfig(w.Transport), nil },
		ClientConfigForServiceFunc: func(string, string, int) (*rest.Config, error) {
			return transportConfig(w.Transport), nil
		},
	}
	type plugin interface {
		SetExternalKubeInformerFactory(informers.SharedInformerFactory)
		SetExternalKubeClientSet(kubernetes.Interface)
		SetAuthenticationInfoResolverWrapper(webhookutil.AuthenticationInfoResolverWrapper)
		ValidateInitialization() error
	}
	init := func(p plugin) error {
		p.SetExternalKubeInformerFactory(f)
		// Never called: the namespace lister answers every namespace.
		p.SetExternalKubeClientSet(&kubernetes.Clientset{})
		p.SetAuthenticationInfoResolverWrapper(func(webhookutil.AuthenticationInfoResolver) webhookutil.AuthenticationInfoResolver {
			return resolver
		})
		return p.ValidateInitialization()
	}
	a := &webhookAdmission{s: s, objects: objectInterfaces{scheme: s.scheme}}
	if len(muts) > 0 {
		p, err := mutating.NewMutatingWebhook(nil)
		if err != nil {
			return nil, fmt.Errorf("fakeapi: mutating webhooks: %w", err)
		}
		if err := init(p); err != nil {
			return nil, fmt.Errorf("fakeapi: mutating webhooks: %w", err)
		}
		a.mutating = p
	}
	if len(vals) > 0 {
		p, err := validating.NewValidatingAdmissionWebhook(nil)
		if err != nil {
			return nil, fmt.Errorf("fakeapi: validating webhooks: %w", err)
		}
		if err := init(p); err != nil {
			return nil, fmt.Errorf("fakeapi: validating webhooks: %w", err)
		}
		a.validating = p
	}
	return a, nil
}

// transportConfig is the rest.Config of a webhook call over t.
func transportConfig(t http.RoundTripper) *rest.Config {
	return &rest.Config{WrapTransport: func(http.RoundTripper) http.RoundTripper { return t }}
}

// attributes turns the store's description of a write into admission's.
func (a *webhookAdmission) attributes(at *store.AdmissionAttributes) admission.Attributes {
	var userInfo user.Info = &user.DefaultInfo{}
	if a.s.admitClient != "" {
		userInfo = &user.DefaultInfo{Name: a.s.admitClient}
	}
	return admission.NewAttributesRecord(at.Object, at.OldObject, at.Kind, at.Namespace, at.Name, at.Resource,
		at.Subresource, admission.Operation(at.Operation), at.Options, at.DryRun, userInfo)
}

// ctx is the context of a webhook call: the request's, marked.
func (a *webhookAdmission) ctx() context.Context {
	ctx := a.s.admitCtx
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, admissionKey{}, true)
}

// lockForRequest takes the server's lock for a request. While a webhook
// is called (call), a read goes on at once, unless the write being
// admitted has already committed revisions (a delete collection's earlier
// deletes, not yet published): a read must see only what watches have
// been sent. A write, and such a read, waits until the call has ended:
// on a channel (which a synctest bubble sees as durably blocked: virtual
// time then reaches the webhook's timeout) rather than on the mutex. A
// request made with a webhook call's context that would wait fails
// instead (it would wait for itself until the call's timeout). On error
// the lock is not held.
func (s *Server) lockForRequest(ctx context.Context, read bool) error {
	for {
		s.mu.Lock()
		ch := s.admitting
		if ch == nil || (read && s.st.RV() == s.admitRV) {
			return nil
		}
		if inAdmission(ctx) {
			s.mu.Unlock()
			if read {
				return apierrors.NewInternalError(ErrAdmissionMidCollection)
			}
			return apierrors.NewInternalError(ErrAdmissionReentry)
		}
		s.mu.Unlock()
		<-ch
	}
}

// call runs one plugin call with the server's lock released: reads are
// served meanwhile from the state before the write, which has changed
// nothing yet, and writes wait (lockForRequest). It is called with the
// lock held.
func (a *webhookAdmission) call(f func() error) error {
	ch := make(chan struct{})
	a.s.admitting = ch
	a.s.mu.Unlock()
	defer func() {
		a.s.mu.Lock()
		a.s.admitting = nil
		close(ch)
	}()
	return f()
}

// Mutate runs the mutating webhooks, then once more those whose
// reinvocationPolicy is IfNeeded when a webhook changed the object (what
// kube-apiserver's admission chain does around its mutating plugins).
func (a *webhookAdmission) Mutate(at *store.AdmissionAttributes) error {
	if a.mutating == nil || !a.mutating.Handles(admission.Operation(at.Operation)) {
		return nil
	}
	attrs := a.attributes(at)
	ctx := a.ctx()
	return a.call(func() error {
		if err := a.mutating.Admit(ctx, attrs, a.objects); err != nil {
			return err
		}
		if rc := attrs.GetReinvocationContext(); rc.ShouldReinvoke() {
			rc.SetIsReinvoke()
			return a.mutating.Admit(ctx, attrs, a.objects)
		}
		return nil
	})
}

// Validate runs the validating webhooks.
func (a *webhookAdmission) Validate(at *store.AdmissionAttributes) error {
	if a.validating == nil || !a.validating.Handles(admission.Operation(at.Operation)) {
		return nil
	}
	attrs, ctx := a.attributes(at), a.ctx()
	return a.call(func() error { return a.validating.Validate(ctx, attrs, a.objects) })
}

// objectInterfaces is admission.ObjectInterfaces over the server's scheme
// and its custom resources (unstructured), each served in one version:
// conversion copies an object into another of its own type.
type objectInterfaces struct{ scheme *runtime.Scheme }

var _ admission.ObjectInterfaces = objectInterfaces{}

func (o objectInterfaces) GetObjectCreater() runtime.ObjectCreater     { return o }
func (o objectInterfaces) GetObjectTyper() runtime.ObjectTyper         { return o.scheme }
func (o objectInterfaces) GetObjectDefaulter() runtime.ObjectDefaulter { return o.scheme }
func (o objectInterfaces) GetObjectConvertor() runtime.ObjectConvertor { return o }
func (o objectInterfaces) GetEquivalentResourceMapper() runtime.EquivalentResourceMapper {
	return runtime.NewEquivalentResourceRegistry()
}

// New makes a kind of the scheme, or an unstructured custom resource.
func (o objectInterfaces) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	if obj, err := o.scheme.New(gvk); err == nil {
		return obj, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// Convert copies in into out, both of the same Go type.
func (o objectInterfaces) Convert(in, out, _ any) error {
	if reflect.TypeOf(in) != reflect.TypeOf(out) {
		return fmt.Errorf("fakeapi: admission cannot convert %T to %T: the lab serves one version of each kind", in, out)
	}
	switch in := in.(type) {
	case *unstructured.Unstructured:
		out.(*unstructured.Unstructured).Object = runtime.DeepCopyJSON(in.Object)
		return nil
	case runtime.Object:
		reflect.ValueOf(out).Elem().Set(reflect.ValueOf(in.DeepCopyObject()).Elem())
		return nil
	}
	return fmt.Errorf("fakeapi: admission cannot convert %T", in)
}

// ConvertToVersion returns in: every kind is served in one version.
func (o objectInterfaces) ConvertToVersion(in runtime.Object, _ runtime.GroupVersioner) (runtime.Object, error) {
	return in, nil
}

// ConvertFieldLabel is never called by admission.
func (o objectInterfaces) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// defaultMutating checks and defaults c as kube-apiserver's API does.
func defaultMutating(c *admissionregistrationv1.MutatingWebhookConfiguration) error {
	if c.Name == "" {
		return errors.New("fakeapi: a MutatingWebhookConfiguration has no metadata.name")
	}
	for i := range c.Webhooks {
		h := &c.Webhooks[i]
		if err := checkWebhook("MutatingWebhookConfiguration", c.Name, h.Name, h.ClientConfig, h.SideEffects, h.AdmissionReviewVersions); err != nil {
			return err
		}
		h.ClientConfig.CABundle = nil
		defaultCommon(&h.FailurePolicy, &h.MatchPolicy, &h.NamespaceSelector, &h.ObjectSelector, &h.TimeoutSeconds, h.Rules)
		if h.ReinvocationPolicy == nil {
			never := admissionregistrationv1.NeverReinvocationPolicy
			h.ReinvocationPolicy = &never
		}
	}
	return nil
}

// defaultValidating checks and defaults c as kube-apiserver's API does.
func defaultValidating(c *admissionregistrationv1.ValidatingWebhookConfiguration) error {
	if c.Name == "" {
		return errors.New("fakeapi: a ValidatingWebhookConfiguration has no metadata.name")
	}
	for i := range c.Webhooks {
		h := &c.Webhooks[i]
		if err := checkWebhook("ValidatingWebhookConfiguration", c.Name, h.Name, h.ClientConfig, h.SideEffects, h.AdmissionReviewVersions); err != nil {
			return err
		}
		h.ClientConfig.CABundle = nil
		defaultCommon(&h.FailurePolicy, &h.MatchPolicy, &h.NamespaceSelector, &h.ObjectSelector, &h.TimeoutSeconds, h.Rules)
	}
	return nil
}

// checkWebhook refuses what the admissionregistration API refuses and the
// dispatcher would trip on.
func checkWebhook(kind, cfg, name string, cc admissionregistrationv1.WebhookClientConfig, se *admissionregistrationv1.SideEffectClass, versions []string) error {
	where := fmt.Sprintf("fakeapi: %s %q webhook %q", kind, cfg, name)
	switch {
	case name == "":
		return fmt.Errorf("fakeapi: %s %q: a webhook has no name", kind, cfg)
	case (cc.URL == nil) == (cc.Service == nil):
		return fmt.Errorf("%s: clientConfig needs exactly one of url and service", where)
	case se == nil:
		return fmt.Errorf("%s: sideEffects is required (None or NoneOnDryRun)", where)
	case !slices.Contains(versions, "v1") && !slices.Contains(versions, "v1beta1"):
		return fmt.Errorf("%s: admissionReviewVersions %v has neither v1 nor v1beta1", where, versions)
	}
	return nil
}

// defaultCommon sets the defaults mutating and validating webhooks share
// (k8s.io/kubernetes/pkg/apis/admissionregistration/v1/defaults.go).
func defaultCommon(fp **admissionregistrationv1.FailurePolicyType, mp **admissionregistrationv1.MatchPolicyType,
	ns, obj **metav1.LabelSelector, timeout **int32, rules []admissionregistrationv1.RuleWithOperations) {
	if *fp == nil {
		fail := admissionregistrationv1.Fail
		*fp = &fail
	}
	if *mp == nil {
		eq := admissionregistrationv1.Equivalent
		*mp = &eq
	}
	if *ns == nil {
		*ns = &metav1.LabelSelector{}
	}
	if *obj == nil {
		*obj = &metav1.LabelSelector{}
	}
	if *timeout == nil {
		t := int32(10)
		*timeout = &t
	}
	for i := range rules {
		if rules[i].Scope == nil {
			all := admissionregistrationv1.AllScopes
			rules[i].Scope = &all
		}
	}
}

// indexerOf is an indexer holding objs (the webhook configurations).
func indexerOf[T runtime.Object](objs []T) cache.Indexer {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, o := range objs {
		_ = idx.Add(o)
	}
	return idx
}

// staticInformers is the informer factory the webhook plugins read their
// configurations and namespaces from: fixed configurations, synced from
// the start, and the store's namespaces. Only what the plugins call is
// implemented; anything else panics (a nil embedded interface).
type staticInformers struct {
	informers.SharedInformerFactory
	namespaces *namespaceLister
	mutating   admissionregistrationlisters.MutatingWebhookConfigurationLister
	validating admissionregistrationlisters.ValidatingWebhookConfigurationLister
}

func (f *staticInformers) Core() coreinformers.Interface { return staticCore{f: f} }
func (f *staticInformers) Admissionregistration() admissionregistrationinformers.Interface {
	return staticAdmissionregistration{f: f}
}

type staticCore struct {
	coreinformers.Interface
	f *staticInformers
}

func (c staticCore) V1() coreinformersv1.Interface { return staticCoreV1{f: c.f} }

type staticCoreV1 struct {
	coreinformersv1.Interface
	f *staticInformers
}

func (c staticCoreV1) Namespaces() coreinformersv1.TypedNamespaceInformer {
	return staticNamespaces{f: c.f}
}

type staticNamespaces struct {
	coreinformersv1.TypedNamespaceInformer
	f *staticInformers
}

func (n staticNamespaces) Informer() cache.SharedIndexInformer { return syncedInformer{} }
func (n staticNamespaces) Lister() corelisters.NamespaceLister { return n.f.namespaces }

type staticAdmissionregistration struct {
	admissionregistrationinformers.Interface
	f *staticInformers
}

func (a staticAdmissionregistration) V1() admissionregistrationinformersv1.Interface {
	return staticAdmissionregistrationV1{f: a.f}
}

type staticAdmissionregistrationV1 struct {
	admissionregistrationinformersv1.Interface
	f *staticInformers
}

func (a staticAdmissionregistrationV1) MutatingWebhookConfigurations() admissionregistrationinformersv1.TypedMutatingWebhookConfigurationInformer {
	return staticMutating{f: a.f}
}

func (a staticAdmissionregistrationV1) ValidatingWebhookConfigurations() admissionregistrationinformersv1.TypedValidatingWebhookConfigurationInformer {
	return staticValidating{f: a.f}
}

type staticMutating struct {
	admissionregistrationinformersv1.TypedMutatingWebhookConfigurationInformer
	f *staticInformers
}

func (m staticMutating) Informer() cache.SharedIndexInformer { return syncedInformer{} }
func (m staticMutating) Lister() admissionregistrationlisters.MutatingWebhookConfigurationLister {
	return m.f.mutating
}

type staticValidating struct {
	admissionregistrationinformersv1.TypedValidatingWebhookConfigurationInformer
	f *staticInformers
}

func (v staticValidating) Informer() cache.SharedIndexInformer { return syncedInformer{} }
func (v staticValidating) Lister() admissionregistrationlisters.ValidatingWebhookConfigurationLister {
	return v.f.validating
}

// syncedInformer is an informer that has synced and never sends an event.
type syncedInformer struct{ cache.SharedIndexInformer }

func (syncedInformer) HasSynced() bool { return true }
func (syncedInformer) AddEventHandler(cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return syncedRegistration{}, nil
}

type syncedRegistration struct {
	cache.ResourceEventHandlerRegistration
}

func (syncedRegistration) HasSynced() bool { return true }

// namespaceLister reads namespaces from the store (the plugins call it
// during a webhook call, without the server's lock: it takes it). A namespace the store does not hold (the
// lab's plans use namespaces without creating them) is answered as a
// cluster would hold it: with its kubernetes.io/metadata.name label only.
type namespaceLister struct{ s *Server }

var _ corelisters.NamespaceLister = (*namespaceLister)(nil)

var namespacesGVR = corev1.SchemeGroupVersion.WithResource("namespaces")

// Get returns namespace name.
func (l *namespaceLister) Get(name string) (*corev1.Namespace, error) {
	l.s.mu.Lock()
	obj, err := l.s.st.Get(namespacesGVR, "", name, metav1.GetOptions{})
	l.s.mu.Unlock()
	if apierrors.IsNotFound(err) {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelMetadataName: name}}}, nil
	}
	if err != nil {
		return nil, err
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, fmt.Errorf("fakeapi: namespace %s is a %T", name, obj)
	}
	return ns, nil
}

// List lists the stored namespaces matching sel.
func (l *namespaceLister) List(sel labels.Selector) ([]*corev1.Namespace, error) {
	l.s.mu.Lock()
	obj, _, err := l.s.st.List(namespacesGVR, "", metav1.ListOptions{LabelSelector: sel.String()}, 0)
	l.s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*corev1.NamespaceList)
	if !ok {
		return nil, fmt.Errorf("fakeapi: namespaces listed as %T", obj)
	}
	out := make([]*corev1.Namespace, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}
