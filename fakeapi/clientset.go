package fakeapi

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	fakedynamic "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
)

// Clientset is client-go's fake Clientset whose every action (get, list,
// watch, create, update, patch, delete, deletecollection, with the status
// subresource and all options) is served by a cachelab Client, so its users
// get real resourceVersions, UIDs, conflicts, 410s, selectors and
// WatchList. Actions are still recorded (Actions()) and user reactors
// prepended after construction still run first.
//
// Unlike fake.Clientset it reports WatchList support, so informers built from
// it (informers.NewSharedInformerFactory) use WatchList when client-go's
// WatchListClient gate is on.
type Clientset struct {
	*fake.Clientset
	client  *Client
	tracker *ObjectTracker
}

var _ kubernetes.Interface = (*Clientset)(nil)

// IsWatchListSemanticsUnSupported reports false: the server implements
// WatchList (see k8s.io/client-go/util/watchlist).
func (cs *Clientset) IsWatchListSemanticsUnSupported() bool { return false }

// Tracker returns the ObjectTracker backed by the same Client.
func (cs *Clientset) Tracker() clienttesting.ObjectTracker { return cs.tracker }

// Client returns the cachelab Client serving the clientset.
func (cs *Clientset) Client() *Client { return cs.client }

// Server returns the server behind the clientset.
func (cs *Clientset) Server() *Server { return cs.client.s }

// NewClientset is the one-line replacement for fake.NewClientset: a
// Clientset on a new Server (default options) holding objects, added as the
// fake's tracker adds them (namespaces are created as needed). It panics, as
// fake.NewClientset does, if an object cannot be added.
func NewClientset(objects ...runtime.Object) *Clientset {
	cs := NewServer(Options{}).Client("clientset").FakeClientset()
	for _, obj := range objects {
		if err := cs.tracker.Add(obj); err != nil {
			panic(fmt.Sprintf("fakeapi.NewClientset: %v", err))
		}
	}
	return cs
}

// Clientset returns a typed clientset (client-go's fake.Clientset) whose
// reactors send every action to this client, so its users get real
// resourceVersions, conflicts, 410s and WatchList.
func (c *Client) Clientset() kubernetes.Interface { return c.FakeClientset() }

// FakeClientset is Clientset with its concrete type, for users who need
// the fake's methods (Actions, PrependReactor, Tracker).
func (c *Client) FakeClientset() *Clientset {
	f := fake.NewSimpleClientset()
	f.PrependReactor("*", "*", c.react(false, &f.Fake))
	f.PrependWatchReactor("*", c.reactWatch(false, &f.Fake))
	return &Clientset{Clientset: f, client: c, tracker: c.ObjectTracker()}
}

// Dynamic returns a dynamic client (client-go's dynamic fake) sending every
// action to this client. Objects are *unstructured.Unstructured, watches
// included. Lists of resources the server did not serve when Dynamic was
// called (CRDs registered later, unknown resources) bypass the fake, whose
// List panics on resources it was not told about, and go to the server
// directly (they are then missing from Actions()).
func (c *Client) Dynamic() dynamic.Interface {
	kinds := map[schema.GroupVersionResource]string{}
	for _, r := range c.s.Resources() {
		kinds[r.GVR] = r.ListKind
	}
	d := fakedynamic.NewSimpleDynamicClientWithCustomListKinds(dynamicScheme(kinds), kinds)
	d.PrependReactor("*", "*", c.react(true, &d.Fake))
	d.PrependWatchReactor("*", c.reactWatch(true, &d.Fake))
	return &DynamicClient{FakeDynamicClient: d, client: c, listKinds: kinds}
}

// builtinScheme is client-go's scheme copied once: the dynamic fake's
// scheme when every served list kind is already in it, since
// NewSimpleDynamicClientWithCustomListKinds then only reads it (building a
// scheme costs more than the rest of a dynamic client).
var builtinScheme = sync.OnceValue(func() *runtime.Scheme {
	sch := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(sch)
	return sch
})

// dynamicScheme returns a scheme for a dynamic fake serving kinds: the
// shared builtinScheme if it knows every list kind, else client-go's
// scheme with the missing (custom) list kinds registered as
// UnstructuredList, as NewSimpleDynamicClientWithCustomListKinds would
// register them, built once per set of missing kinds (up to
// maxDynamicSchemes sets; then a fresh one each time): the fake then only
// reads it. A fresh scheme per client cost 9% of the standard scenario's
// CPU once the server served CustomResourceDefinitions.
func dynamicScheme(kinds map[schema.GroupVersionResource]string) *runtime.Scheme {
	shared := builtinScheme()
	var missing []string
	for gvr, listKind := range kinds {
		if gvk := gvr.GroupVersion().WithKind(listKind); !shared.Recognizes(gvk) {
			missing = append(missing, gvk.String())
		}
	}
	if len(missing) == 0 {
		return shared
	}
	sort.Strings(missing)
	key := strings.Join(missing, ";")
	dynamicSchemes.Lock()
	defer dynamicSchemes.Unlock()
	if sch, ok := dynamicSchemes.m[key]; ok {
		return sch
	}
	sch := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(sch)
	for gvr, listKind := range kinds {
		if gvk := gvr.GroupVersion().WithKind(listKind); !sch.Recognizes(gvk) {
			sch.AddKnownTypeWithName(gvk, &unstructured.UnstructuredList{})
		}
	}
	if len(dynamicSchemes.m) < maxDynamicSchemes {
		if dynamicSchemes.m == nil {
			dynamicSchemes.m = map[string]*runtime.Scheme{}
		}
		dynamicSchemes.m[key] = sch
	}
	return sch
}

// maxDynamicSchemes bounds dynamicSchemes.
const maxDynamicSchemes = 64

// dynamicSchemes are dynamicScheme's schemes by their missing list kinds.
var dynamicSchemes struct {
	sync.Mutex
	m map[string]*runtime.Scheme
}

// DynamicClient is client-go's fake dynamic client served by a cachelab
// Client (see Client.Dynamic). Unlike the fake it reports WatchList support,
// so dynamic informers use WatchList when the client-go gate is on.
type DynamicClient struct {
	*fakedynamic.FakeDynamicClient
	client    *Client
	listKinds map[schema.GroupVersionResource]string
}

var _ dynamic.Interface = (*DynamicClient)(nil)

// Resource returns the client of one resource.
func (d *DynamicClient) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	inner := d.FakeDynamicClient.Resource(gvr)
	if _, ok := d.listKinds[gvr]; ok {
		return inner
	}
	return &unlistedResource{NamespaceableResourceInterface: inner, c: d.client, gvr: gvr}
}

// unlistedResource serves List for a resource the dynamic fake was not
// built with (its List would panic) straight from the server.
type unlistedResource struct {
	dynamic.NamespaceableResourceInterface
	c   *Client
	gvr schema.GroupVersionResource
}

func (r *unlistedResource) Namespace(ns string) dynamic.ResourceInterface {
	return &unlistedNamespacedResource{ResourceInterface: r.NamespaceableResourceInterface.Namespace(ns), c: r.c, gvr: r.gvr, ns: ns}
}

func (r *unlistedResource) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return listUnstructured(ctx, r.c, r.gvr, "", opts)
}

type unlistedNamespacedResource struct {
	dynamic.ResourceInterface
	c   *Client
	gvr schema.GroupVersionResource
	ns  string
}

func (r *unlistedNamespacedResource) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return listUnstructured(ctx, r.c, r.gvr, r.ns, opts)
}

func listUnstructured(ctx context.Context, c *Client, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	obj, err := c.List(ctx, gvr, ns, opts)
	if err != nil {
		return nil, err
	}
	if l, ok := obj.(*unstructured.UnstructuredList); ok {
		return l, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return (&unstructured.Unstructured{Object: m}).ToList()
}

// IsWatchListSemanticsUnSupported reports false: the server implements
// WatchList.
func (d *DynamicClient) IsWatchListSemanticsUnSupported() bool { return false }

// react returns a reaction that serves a fake client's actions.
func (c *Client) react(unstructuredWatch bool, fake *clienttesting.Fake) clienttesting.ReactionFunc {
	react := c.reactUntyped(unstructuredWatch, fake)
	return func(action clienttesting.Action) (bool, runtime.Object, error) {
		handled, obj, err := react(action)
		if err == nil && obj != nil {
			// A typed client of a kind served unstructured (RegisterCRD of
			// a kind client-go knows) gets its Go type, not a panic.
			obj, err = c.s.asTypedForScheme(obj)
		}
		return handled, obj, err
	}
}

// reactUntyped is react's reaction before asTypedForScheme. fake is the
// client-go fake it is a reactor of, whose lock is held while it runs.
func (c *Client) reactUntyped(unstructuredWatch bool, fake *clienttesting.Fake) clienttesting.ReactionFunc {
	return func(action clienttesting.Action) (bool, runtime.Object, error) {
		ctx := context.Background()
		if c.s.sched != nil {
			ctx = withHeldLock(ctx, fake) // only a scheduled request waits with it
		}
		gvr, ns := action.GetResource(), action.GetNamespace()
		sub := action.GetSubresource()
		if _, plain := action.(clienttesting.ActionImpl); plain && isDiscoveryAction(gvr, action.GetVerb()) {
			// The fake discovery client's own actions: not handled here,
			// so the fake answers them (see Clientset.Discovery).
			return false, nil, nil
		}
		switch a := action.(type) {
		case clienttesting.GetActionImpl:
			if sub != "" && sub != "status" {
				return true, nil, unsupportedSubresource(a.Verb, gvr, sub)
			}
			obj, err := c.Get(ctx, gvr, ns, a.Name, a.GetOptions)
			return true, obj, err
		case clienttesting.ListActionImpl:
			obj, err := c.List(ctx, gvr, ns, a.ListOptions)
			return true, obj, err
		case clienttesting.CreateActionImpl:
			if sub != "" {
				return true, nil, unsupportedSubresource(a.Verb, gvr, sub)
			}
			obj, err := c.Create(ctx, gvr, ns, a.Object, a.CreateOptions)
			return true, obj, err
		case clienttesting.UpdateActionImpl:
			switch sub {
			case "":
				obj, err := c.Update(ctx, gvr, ns, a.Object, a.UpdateOptions)
				return true, obj, err
			case "status":
				obj, err := c.UpdateStatus(ctx, gvr, ns, a.Object, a.UpdateOptions)
				return true, obj, err
			}
			return true, nil, unsupportedSubresource(a.Verb, gvr, sub)
		case clienttesting.PatchActionImpl:
			if sub != "" && sub != "status" {
				return true, nil, unsupportedSubresource(a.Verb, gvr, sub)
			}
			var subs []string
			if sub != "" {
				subs = []string{sub}
			}
			obj, err := c.Patch(ctx, gvr, ns, a.Name, a.PatchType, a.Patch, a.PatchOptions, subs...)
			return true, obj, err
		case clienttesting.DeleteActionImpl:
			if sub != "" {
				return true, nil, unsupportedSubresource(a.Verb, gvr, sub)
			}
			obj, err := c.DeleteWithResult(ctx, gvr, ns, a.Name, a.DeleteOptions)
			return true, obj, err
		case clienttesting.DeleteCollectionActionImpl:
			return true, nil, c.DeleteCollection(ctx, gvr, ns, a.DeleteOptions, a.ListOptions)
		}
		return true, nil, apierrors.NewMethodNotSupported(gvr.GroupResource(), action.GetVerb())
	}
}

func unsupportedSubresource(verb string, gvr schema.GroupVersionResource, sub string) error {
	return apierrors.NewNotFound(gvr.GroupResource(), fmt.Sprintf("%s (subresource %q is not served for %s; served: status)", verb, sub, gvr.Resource))
}

// reactWatch returns a watch reaction that opens watches on this client.
func (c *Client) reactWatch(asUnstructured bool, fake *clienttesting.Fake) clienttesting.WatchReactionFunc {
	return func(action clienttesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if a, ok := action.(clienttesting.WatchActionImpl); ok {
			opts = a.ListOptions
		}
		w, err := c.watch(withHeldLock(context.Background(), fake), action.GetResource(), action.GetNamespace(), opts, asUnstructured)
		if err != nil {
			return true, nil, err
		}
		return true, w, nil
	}
}

// ObjectTracker is a k8s.io/client-go/testing ObjectTracker served by a
// cachelab Client: hand it to testing.ObjectReaction, or use
// Clientset.Tracker(), to give a fake client real resourceVersions, 410s and
// WatchList.
type ObjectTracker struct {
	c *Client
}

var _ clienttesting.ObjectTracker = (*ObjectTracker)(nil)

// ObjectTracker returns an ObjectTracker served by this client.
func (c *Client) ObjectTracker() *ObjectTracker { return &ObjectTracker{c: c} }

// Add adds obj (or each item of a list), creating its namespace if needed,
// and replaces an existing object of the same name, as the fake's tracker
// does.
func (t *ObjectTracker) Add(obj runtime.Object) error {
	if meta.IsListType(obj) {
		items, err := meta.ExtractList(obj)
		if err != nil {
			return err
		}
		for _, item := range items {
			if err := t.Add(item); err != nil {
				return err
			}
		}
		return nil
	}
	gvr, namespaced, err := t.c.s.resourceFor(obj)
	if err != nil {
		return err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("cannot add %T: %v", obj, err))
	}
	ctx := context.Background()
	ns := m.GetNamespace()
	if namespaced {
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		nsGVR := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
		if _, err := t.c.Get(ctx, nsGVR, "", ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			if _, err := t.c.Create(ctx, nsGVR, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
		}
	}
	obj = obj.DeepCopyObject()
	if m, err := meta.Accessor(obj); err == nil {
		m.SetResourceVersion("")
	}
	_, err = t.c.Create(ctx, gvr, ns, obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = t.c.Update(ctx, gvr, ns, obj, metav1.UpdateOptions{})
	}
	return err
}

// Get retrieves an object.
func (t *ObjectTracker) Get(gvr schema.GroupVersionResource, ns, name string, opts ...metav1.GetOptions) (runtime.Object, error) {
	var o metav1.GetOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	return t.c.Get(context.Background(), gvr, ns, name, o)
}

// Create creates obj in namespace ns.
func (t *ObjectTracker) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	var o metav1.CreateOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	_, err := t.c.Create(context.Background(), gvr, ns, obj, o)
	return err
}

// Update replaces obj in namespace ns.
func (t *ObjectTracker) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.UpdateOptions) error {
	var o metav1.UpdateOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	_, err := t.c.Update(context.Background(), gvr, ns, obj, o)
	return err
}

// Patch stores obj, the result of a patch applied by the caller (that is
// how testing.ObjectReaction uses a tracker), as an update, and then sets
// obj to the stored state (new resourceVersion included), because
// ObjectReaction returns obj itself to the client.
func (t *ObjectTracker) Patch(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	var o metav1.UpdateOptions
	if len(opts) > 0 {
		o = metav1.UpdateOptions{DryRun: opts[0].DryRun, FieldManager: opts[0].FieldManager}
	}
	stored, err := t.c.Update(context.Background(), gvr, ns, obj, o)
	if err != nil {
		return err
	}
	dst, src := reflect.ValueOf(obj), reflect.ValueOf(stored)
	if dst.Kind() == reflect.Pointer && dst.Type() == src.Type() && !dst.IsNil() {
		dst.Elem().Set(src.Elem())
	}
	return nil
}

// Apply is not served: server-side apply is outside cachelab's server.
func (t *ObjectTracker) Apply(gvr schema.GroupVersionResource, applyConfiguration runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	return apierrors.NewMethodNotSupported(gvr.GroupResource(), "apply (server-side apply is not served by cachelab's fake API server; use create, update or patch)")
}

// List lists objects of gvr in ns.
func (t *ObjectTracker) List(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, ns string, opts ...metav1.ListOptions) (runtime.Object, error) {
	var o metav1.ListOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	return t.c.List(context.Background(), gvr, ns, o)
}

// Delete deletes an object. Unlike the fake's tracker (and like a real
// server) deleting a missing object is 404 NotFound.
func (t *ObjectTracker) Delete(gvr schema.GroupVersionResource, ns, name string, opts ...metav1.DeleteOptions) error {
	var o metav1.DeleteOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	return t.c.Delete(context.Background(), gvr, ns, name, o)
}

// Watch opens a watch with every ListOptions field honoured.
func (t *ObjectTracker) Watch(gvr schema.GroupVersionResource, ns string, opts ...metav1.ListOptions) (watch.Interface, error) {
	var o metav1.ListOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	return t.c.Watch(context.Background(), gvr, ns, o)
}
