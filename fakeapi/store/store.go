// Package store is cachelab's pure MVCC store, shaped like etcd under
// kube-apiserver.
//
// The store has no goroutines, no locks and reads no clock: time enters
// through the injected clock.PassiveClock, input through method calls, and
// every mutation returns what happened (the object and the watch events it
// caused) the way etcd raft's pure core hands out a Ready. The wrapper in
// package fakeapi serialises calls with a mutex and fans the returned events
// out to watchers.
//
// What it models:
//
//   - one global resourceVersion (a revision counter) across every kind;
//     every write bumps it by exactly one and produces exactly one Event;
//   - deterministic UIDs (derived from a counter), creationTimestamp from the
//     clock, generateName, metadata.generation as kube-apiserver sets it;
//   - finalizers and deletionTimestamp; ownerReference garbage collection
//     (background, foreground, orphan) performed inside the deleting call,
//     its writes marked Event.ByGC;
//   - a history window with compaction: WatchStart replays every event after
//     any revision inside the window and answers 410 Expired below it;
//   - list semantics by resourceVersion / resourceVersionMatch, label and
//     field selectors, limit/continue pagination over a snapshot;
//   - errors through k8s.io/apimachinery/pkg/api/errors, as kube-apiserver
//     gives them.
//
// Objects handed to the store are never retained (the store copies them);
// objects the store returns from Get, List and mutations are fresh copies the
// caller owns. Objects inside Events are shared and immutable: callers must
// DeepCopy them before handing them to code that may modify them.
//
// A Store is not safe for concurrent use.
package store

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// DefaultHistoryWindow is the number of revisions of history kept when
// Options.HistoryWindow is zero.
const DefaultHistoryWindow = 10000

// InitialEventsEndAnnotation is the annotation the WatchList bookmark carries
// to say the initial events are over (metav1.InitialEventsAnnotationKey).
const InitialEventsEndAnnotation = "k8s.io/initial-events-end"

// Options configures a Store. The zero value is usable.
type Options struct {
	// Clock supplies creationTimestamp and deletionTimestamp. Optional;
	// default clock.RealClock{} (which is virtual inside a synctest bubble).
	// The store only calls Now.
	Clock clock.PassiveClock
	// HistoryWindow is how many revisions of history are kept for watches
	// to resume from; when the history grows past it, the oldest revisions
	// are compacted automatically. Optional; default DefaultHistoryWindow.
	HistoryWindow int64
	// Scheme knows the Go types of the built-in kinds. Optional; default
	// client-go's scheme.Scheme. It must know core/v1 and events.k8s.io/v1.
	Scheme *runtime.Scheme
}

// Resource describes one served resource.
type Resource struct {
	// GVR is the resource's group, version and (plural, lower-case) resource
	// name, e.g. {"", "v1", "pods"}.
	GVR schema.GroupVersionResource
	// Kind and ListKind are the object and list kinds ("Pod", "PodList").
	Kind, ListKind string
	// Namespaced is false for cluster-scoped resources (namespaces).
	Namespaced bool
	// HasStatus is true when the resource has a status subresource: an
	// update ignores status, an update of "status" ignores everything else,
	// and spec changes bump metadata.generation.
	HasStatus bool
	// Validate, optional, checks an object before create and update (a
	// CRD's OpenAPI schema in spirit); a non-empty list is answered 422
	// Invalid with these causes. Only used for resources served as
	// unstructured (registered CRDs).
	Validate func(obj *unstructured.Unstructured) field.ErrorList
}

// Event is one revision of the store as a watch sees it: the object after the
// write (for DELETED: the last state, with the deletion's resourceVersion).
type Event struct {
	// Type is ADDED, MODIFIED, DELETED or BOOKMARK.
	Type watch.EventType
	// GVR is the resource the object belongs to.
	GVR schema.GroupVersionResource
	// Object is the object, typed for built-in kinds, unstructured for CRDs.
	// It is shared and immutable: DeepCopy it before handing it out.
	Object runtime.Object
	// RV is the event's resourceVersion (the revision of the write, or the
	// bookmark's revision).
	RV int64
	// ByGC is true for writes made by the store's garbage collector or by
	// finalizer bookkeeping of a delete (not by the request itself).
	ByGC bool
	// Verb is the write as applied: "create", "update", "patch", "delete"
	// (with Subresource "status" for status writes). Empty for replayed
	// initial events and bookmarks.
	Verb string
	// Subresource is "status" for status writes, else empty.
	Subresource string
	// Initial is true for WatchList's (or a watch from RV ""/"0"'s)
	// synthetic ADDED events and for the initial-events-end bookmark.
	Initial bool
	// Prev is the object's state before this write (nil for ADDED, initial
	// events and bookmarks); immutable like Object. Filter uses it to turn
	// selector transitions into ADDED/DELETED.
	Prev runtime.Object
}

// ListInfo describes how a list was served.
type ListInfo struct {
	// RV is the revision the list reflects (the list's
	// metadata.resourceVersion).
	RV int64
	// Lag is how many revisions behind the latest the list was served (0
	// for consistent reads).
	Lag int64
	// Count is the number of items returned.
	Count int
}

// errNotImplemented marks methods whose bodies have not landed yet.
var errNotImplemented = errors.New("store: not implemented yet")

// Store is the MVCC store. Build it with New.
type Store struct {
	opts Options
}

// New returns a Store serving the built-in resources: namespaces
// (cluster-scoped), configmaps, secrets, pods and events in core/v1, and
// events in events.k8s.io/v1. Their Go types come from Options.Scheme.
func New(opts Options) *Store { return &Store{opts: opts} }

// Register serves a custom resource; its objects are
// *unstructured.Unstructured. It fails if the GVR is already served or the
// Resource is incomplete (empty resource name, Kind or version).
func (s *Store) Register(r Resource) error { return errNotImplemented }

// Resource returns the served resource with this GVR.
func (s *Store) Resource(gvr schema.GroupVersionResource) (Resource, bool) {
	return Resource{}, false
}

// Resources returns every served resource, sorted by group, version and
// resource name.
func (s *Store) Resources() []Resource { return nil }

// Create stores a new object in namespace ns (ignored for cluster-scoped
// resources; an object's own namespace, if set, must match). It assigns
// name (from generateName), UID, resourceVersion, creationTimestamp and
// generation. It returns the created object and one ADDED event.
// Errors: 404 unknown resource or namespace-less request for a namespaced
// resource, 409 AlreadyExists, 422 Invalid (bad name, missing fields,
// Validate), 400 BadRequest (wrong kind, resourceVersion set).
func (s *Store) Create(gvr schema.GroupVersionResource, ns string, obj runtime.Object, opts metav1.CreateOptions) (runtime.Object, []Event, error) {
	return nil, nil, errNotImplemented
}

// Get returns the current object ns/name. opts.ResourceVersion is honoured
// as kube-apiserver does: "" and "0" read the latest; a revision newer than
// the latest gets the Too-large answer.
func (s *Store) Get(gvr schema.GroupVersionResource, ns, name string, opts metav1.GetOptions) (runtime.Object, error) {
	return nil, errNotImplemented
}

// List lists objects of gvr in ns ("" for all namespaces), honouring
// resourceVersion, resourceVersionMatch, label and field selectors, limit
// and continue. replicaLag serves resourceVersion="0" (any) reads from a
// replica that many revisions behind the latest (never below the compacted
// revision); consistent reads ignore it. The result is a typed list
// (*corev1.PodList, ...) or an *unstructured.UnstructuredList, with
// metadata.resourceVersion (and continue/remainingItemCount when paginated).
func (s *Store) List(gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions, replicaLag int64) (runtime.Object, ListInfo, error) {
	return nil, ListInfo{}, errNotImplemented
}

// Update replaces an object. With subresource "" (or "status") it follows
// the status-subresource rules of Resource.HasStatus. A set, stale
// resourceVersion gets 409 Conflict; an empty one is an unconditional
// update. An update that removes the last finalizer of a terminating object
// deletes it (the MODIFIED event, then DELETED, and any GC events).
func (s *Store) Update(gvr schema.GroupVersionResource, ns string, obj runtime.Object, opts metav1.UpdateOptions, subresource string) (runtime.Object, []Event, error) {
	return nil, nil, errNotImplemented
}

// Patch applies a JSON patch, JSON merge patch or (built-ins only)
// strategic merge patch to ns/name, then updates as Update does.
// Malformed patches get 400 BadRequest (422 when the result is invalid);
// strategic merge on a custom resource gets 415 UnsupportedMediaType.
func (s *Store) Patch(gvr schema.GroupVersionResource, ns, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresource string) (runtime.Object, []Event, error) {
	return nil, nil, errNotImplemented
}

// Delete deletes ns/name, honouring preconditions (409 Conflict when the UID
// or resourceVersion differ) and the propagation policy (default
// Background; Foreground; Orphan). An object with finalizers is only marked
// (deletionTimestamp, deletionGracePeriodSeconds 0) and returned as it is
// now; otherwise the last state is returned. Dependents are garbage
// collected in the same call (events with ByGC).
func (s *Store) Delete(gvr schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) (runtime.Object, []Event, error) {
	return nil, nil, errNotImplemented
}

// DeleteCollection deletes every object of gvr in ns matching lo's
// selectors, as Delete does for each.
func (s *Store) DeleteCollection(gvr schema.GroupVersionResource, ns string, opts metav1.DeleteOptions, lo metav1.ListOptions) ([]Event, error) {
	return nil, errNotImplemented
}

// WatchStart opens a watch of gvr in ns with opts, as kube-apiserver would,
// and returns the events the watch starts with and the revision after which
// live events follow (the wrapper appends, filtered by Matcher, every later
// event with RV > startRV).
//
//   - resourceVersion=N (N > 0): every matching event after N, replayed
//     from history; 410 Expired if N is compacted; Too-large if N > RV().
//   - resourceVersion "" or "0" without sendInitialEvents: synthetic ADDED
//     events (Initial) for the state at the latest revision ("0": at
//     latest-replicaLag, a stale replica).
//   - sendInitialEvents=true (WatchList; requires
//     resourceVersionMatch=NotOlderThan and allowWatchBookmarks): synthetic
//     ADDED events for the state at max(N, latest) (N "" means latest,
//     consistent; "0" may be stale by replicaLag), then the BOOKMARK
//     annotated k8s.io/initial-events-end at that revision.
func (s *Store) WatchStart(gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions, replicaLag int64) (initial []Event, startRV int64, err error) {
	return nil, 0, errNotImplemented
}

// Filter returns what a watch of gvr in namespace ns ("" for all) with
// opts' label and field selectors sees of one live store event, as
// kube-apiserver's watch cache does: an object that starts matching is seen
// as ADDED, one that stops matching as DELETED (its previous state, with the
// event's resourceVersion), one that matches before and after as the event
// itself; ok is false when the watcher sees nothing. Events of other
// resources are never seen; bookmarks of gvr always are. Bad selectors get
// 400 BadRequest. The wrapper applies it to every event with RV > startRV.
func (s *Store) Filter(gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (func(Event) (Event, bool), error) {
	return nil, errNotImplemented
}

// Matcher is Filter across all namespaces, reduced to "does the watcher see
// anything of this event". Prefer Filter: it also turns selector
// transitions into ADDED/DELETED.
func (s *Store) Matcher(gvr schema.GroupVersionResource, opts metav1.ListOptions) (func(Event) bool, error) {
	return nil, errNotImplemented
}

// MatcherNS is Matcher restricted to namespace ns ("" for all). Prefer
// Filter.
func (s *Store) MatcherNS(gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (func(Event) bool, error) {
	return nil, errNotImplemented
}

// Bookmark returns a BOOKMARK event for gvr at revision rv: an empty object
// of the resource's kind carrying only metadata.resourceVersion (and, with
// initialEventsEnd, the k8s.io/initial-events-end annotation).
func (s *Store) Bookmark(gvr schema.GroupVersionResource, rv int64, initialEventsEnd bool) (Event, error) {
	return Event{}, errNotImplemented
}

// Compact discards the events of revisions up to and including rv, as etcd
// does: the state at rv stays readable, so a watch from rv still works, but
// a watch from an older revision, an Exact list below rv and a continue
// token of an older snapshot get 410 Expired. rv above RV() is a 400
// BadRequest; rv at or below CompactedRV() does nothing.
func (s *Store) Compact(rv int64) error { return errNotImplemented }

// CompactedRV returns the oldest revision whose state is still known: a
// watch from any revision >= CompactedRV() replays every later event. A new
// store starts at revision 1, compacted to 1.
func (s *Store) CompactedRV() int64 { return 0 }

// RV returns the latest revision (1 for a new store).
func (s *Store) RV() int64 { return 0 }

// Objects returns the current state of every object of every resource as
// ADDED events at their objects' revisions, sorted by resource, namespace
// and name (for final snapshots).
func (s *Store) Objects() []Event { return nil }

// History returns the events kept in the history window, in RV order
// (revisions after CompactedRV()).
func (s *Store) History() []Event { return nil }
