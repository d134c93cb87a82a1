package fakeapi

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// errNotImplemented marks the contract stubs until the implementation lands.
var errNotImplemented = errors.New("fakeapi: not implemented yet")

// Observer receives every observation the server makes, in order. Observe is
// called with the server's lock held, so observations of writes arrive in
// resourceVersion order; it must not call back into the Server.
type Observer interface {
	Observe(o Observation)
}

// ObservationKind names what an Observation reports.
type ObservationKind string

// The kinds of observation.
const (
	ObsRequest    ObservationKind = "request"     // a request was answered (Code, Reason)
	ObsWrite      ObservationKind = "write"       // the store applied a write (one RV)
	ObsList       ObservationKind = "list"        // a list was served (RV, Lag, Count)
	ObsWatchOpen  ObservationKind = "watch-open"  // a watch opened (Watcher)
	ObsWatchClose ObservationKind = "watch-close" // a watch closed (Watcher, Reason)
	ObsSent       ObservationKind = "sent"        // an event was queued for a watcher
	ObsDelivered  ObservationKind = "delivered"   // an event left the watcher's ResultChan
	ObsFault      ObservationKind = "fault"       // a hook or control injected a fault
	ObsCompact    ObservationKind = "compact"     // history compacted up to RV
)

// Observation is one thing the server did. Fields not meaningful for Kind are
// zero.
type Observation struct {
	Kind ObservationKind
	At   time.Time

	// Request is set for request, list and write observations made on behalf
	// of a client request (nil for writes by the garbage collector).
	Request *RequestInfo
	// Code and Reason are the HTTP status code and metav1.StatusReason of the
	// answer (request observations).
	Code   int
	Reason metav1.StatusReason

	// Write fields: the verb as applied ("create", "update", "delete", ...),
	// the object after the write (before, for a delete), its RV and UID.
	Verb      string
	Resource  schema.GroupVersionResource
	Namespace string
	Name      string
	UID       types.UID
	RV        int64
	// Object is the object's JSON as stored by this write (for delete: the
	// last state). Observers must not modify it.
	Object []byte
	// ByGC is true for writes made by the store's garbage collector.
	ByGC bool

	// List fields: Lag is how many revisions behind the latest the list was
	// served (0 for consistent reads); Count is the number of items.
	Lag   int64
	Count int

	// Watch fields.
	Watcher *WatcherInfo
	Event   *EventInfo

	// Fault names an injected fault; ContractBreaking labels faults that
	// break the API's promises.
	Fault            string
	ContractBreaking bool
}

// Options configures a Server. The zero value is usable.
type Options struct {
	// Clock is the server's clock. Optional; default clock.RealClock{}
	// (virtual inside a synctest bubble).
	Clock clock.WithTicker
	// Hooks decides faults. Optional; default NoHooks.
	Hooks Hooks
	// Observer receives observations. Optional; default none.
	Observer Observer
	// HistoryWindow is how many revisions of history watches can resume
	// from; older revisions are compacted. Optional; default 10000.
	HistoryWindow int64
	// BookmarkInterval is how often watches that asked for bookmarks get
	// one. Optional; default 1m (kube-apiserver sends them about every minute).
	BookmarkInterval time.Duration
}

// Server is the in-memory API server: a store, watch fan-out, hooks and
// observers. It is safe for concurrent use.
type Server struct{}

// NewServer returns a Server serving the built-in resources (namespaces,
// configmaps, secrets, pods, events in core/v1 and events.k8s.io/v1).
func NewServer(opts Options) *Server { return &Server{} }

// ResourceInfo describes a served resource.
type ResourceInfo struct {
	GVR        schema.GroupVersionResource
	Kind       string
	ListKind   string
	Namespaced bool
	// HasStatus is true when the resource has a status subresource: updates
	// then ignore status, UpdateStatus ignores everything else, and spec
	// changes bump metadata.generation.
	HasStatus bool
	// Validate, optional, checks an object before create and update (a CRD's
	// OpenAPI schema in spirit) and returns 422 Invalid causes.
	Validate func(obj *unstructured.Unstructured) field.ErrorList
}

// RegisterCRD serves a custom resource as unstructured objects.
func (s *Server) RegisterCRD(info ResourceInfo) error { return errNotImplemented }

// Client returns a named client of the server: every request it makes is
// labelled with name for the hooks and observers.
func (s *Server) Client(name string) *Client { return &Client{} }

// Compact discards history up to and including rv: watches and lists below it
// get 410 Expired.
func (s *Server) Compact(rv int64) error { return errNotImplemented }

// ResourceVersion returns the latest revision.
func (s *Server) ResourceVersion() int64 { return 0 }

// Watchers lists the open watches.
func (s *Server) Watchers() []WatcherInfo { return nil }

// CloseWatch ends one watch: cleanly (the result channel closes) or, with
// abrupt, as a broken connection (an error event, then close).
func (s *Server) CloseWatch(id WatcherID, abrupt bool) error { return errNotImplemented }

// ExpireWatch sends a 410 Expired ERROR event on one watch, then closes it.
func (s *Server) ExpireWatch(id WatcherID) error { return errNotImplemented }

// Client makes requests to a Server under a name.
type Client struct{}

// Create creates obj (typed or *unstructured.Unstructured) in namespace ns.
func (c *Client) Create(ctx context.Context, gvr schema.GroupVersionResource, ns string, obj runtime.Object, opts metav1.CreateOptions) (runtime.Object, error) {
	return nil, errNotImplemented
}

// Get reads one object.
func (c *Client) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, opts metav1.GetOptions) (runtime.Object, error) {
	return nil, errNotImplemented
}

// List lists objects, honouring every ListOptions field.
func (c *Client) List(ctx context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (runtime.Object, error) {
	return nil, errNotImplemented
}

// Update replaces an object; a stale resourceVersion gets 409 Conflict.
func (c *Client) Update(ctx context.Context, gvr schema.GroupVersionResource, ns string, obj runtime.Object, opts metav1.UpdateOptions) (runtime.Object, error) {
	return nil, errNotImplemented
}

// UpdateStatus replaces an object's status.
func (c *Client) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, ns string, obj runtime.Object, opts metav1.UpdateOptions) (runtime.Object, error) {
	return nil, errNotImplemented
}

// Patch patches an object (JSON merge, JSON patch, strategic merge for
// built-ins).
func (c *Client) Patch(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (runtime.Object, error) {
	return nil, errNotImplemented
}

// Delete deletes an object, honouring preconditions and propagation policy.
func (c *Client) Delete(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) error {
	return errNotImplemented
}

// DeleteCollection deletes every object matching opts.
func (c *Client) DeleteCollection(ctx context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	return errNotImplemented
}

// Watch opens a watch, honouring every ListOptions field, WatchList included.
func (c *Client) Watch(ctx context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (watch.Interface, error) {
	return nil, errNotImplemented
}

// ListerWatcher returns a cache.ListerWatcher for one resource that supports
// WatchList semantics (informers built on it use WatchList when the client-go
// feature gate is on). Objects are typed for built-in kinds and
// *unstructured.Unstructured for CRDs.
func (c *Client) ListerWatcher(gvr schema.GroupVersionResource, ns string) cache.ListerWatcherWithContext {
	return nil
}

// Clientset returns a typed clientset (client-go's fake.Clientset) whose
// reactors send every action to this client, so its users get real
// resourceVersions, conflicts, 410s and WatchList.
func (c *Client) Clientset() kubernetes.Interface { return nil }

// Dynamic returns a dynamic client sending every action to this client.
func (c *Client) Dynamic() dynamic.Interface { return nil }
