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
//     gives them;
//   - typed built-ins (core: namespaces, configmaps, secrets, pods, events,
//     nodes, services, serviceaccounts; events.k8s.io; apps/v1 workloads and
//     controllerrevisions; batch/v1 jobs) with the observable parts of their
//     strategies (defaults, generation, status and scale subresources,
//     immutable fields); custom resources pruned, defaulted and validated
//     by their CRD schema (schema.go, apiextensions-apiserver's code, CEL
//     rules included); server-side apply and managedFields (apply.go,
//     apimachinery's field manager; its managedFields times come from
//     metav1.Now, the one clock read outside Options.Clock).
//
// Objects handed to the store are never retained (the store copies them);
// objects the store returns from Get, List and mutations are fresh copies the
// caller owns. Objects inside Events are shared and immutable: callers must
// DeepCopy them before handing them to code that may modify them.
//
// Storage: every object version (current state and history) is kept
// encoded, as etcd keeps it: protobuf for built-in kinds, JSON for custom
// resources. Reads decode a fresh copy. For 100k small ConfigMaps the
// store's heap is about 1x the objects' JSON size (typed objects kept
// decoded took 4.5x) and holds no pointers for the garbage collector to
// scan; BenchmarkStoreSync measures it.
//
// Not modelled: namespace existence unless Options.NamespaceLifecycle
// (objects may be created in any namespace), graceful deletion of pods
// (pods go at once, as unscheduled pods do), shared storage of core/v1 and
// events.k8s.io/v1 Events (two separate resources here), ClusterIP
// allocation for Services. Dry runs
// (dryRun=All) check everything and answer as kube-apiserver does, writing
// nothing (a dry-run create answers no resourceVersion).
//
// A Store is not safe for concurrent use; the functions Filter returns
// read only their event and may be called concurrently.
package store

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	// NamespaceLifecycle refuses a create in a namespace that does not
	// exist (404 NotFound naming the namespace), as kube-apiserver's
	// NamespaceLifecycle admission plugin does. Off by default: the lab's
	// plans use namespaces without creating them. A terminating namespace
	// refuses creates (403) either way.
	NamespaceLifecycle bool
	// DefaultServiceAccounts creates the ServiceAccount "default" in every
	// namespace created, in the same write as kube-controller-manager's
	// serviceaccount controller makes it soon after. Off by default: the
	// lab's plans count their writes.
	DefaultServiceAccounts bool
	// TrackManagedFields records metadata.managedFields on every write
	// (each create, update and patch as an Update by its fieldManager), as
	// kube-apiserver does, so a server-side apply conflicts with the
	// writers before it. Off by default (it costs a conversion per write):
	// fields are then tracked from an object's first apply on, and the
	// fields set before it belong to the manager "before-first-apply".
	TrackManagedFields bool
	// ExternalGC leaves ownerReference garbage collection to a collector
	// running as a client (kube-controller-manager's garbagecollector): a
	// delete still adds the orphan / foregroundDeletion finalizer and sets
	// deletionTimestamp as kube-apiserver does, but the store deletes no
	// dependent, orphans none and removes neither finalizer itself. Off by
	// default: the store does the collector's work inside the call that
	// made it necessary (dependents go in the same write as their owner).
	// Namespace deletion (the namespace controller's work) is the store's
	// either way.
	ExternalGC bool
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
	// Prune, optional (custom resources only), drops from an object the
	// fields its CRD's structural schema does not know, in place, and
	// returns their paths ("spec.unknown"), as kube-apiserver prunes a
	// custom resource it decodes. With fieldValidation=Strict a non-empty
	// answer refuses the request (400 on create and update, 422 on patch).
	Prune func(obj *unstructured.Unstructured) (unknown []string)
	// Schema, optional (custom resources only), is the CRD version's
	// compiled openAPIV3Schema (CompileSchema): objects are pruned (unless
	// Prune is set), defaulted and validated by it, as kube-apiserver does,
	// before Validate runs.
	Schema *Schema
	// Scale, optional (custom resources only), is the CRD version's scale
	// subresource: the resource then serves /scale (an autoscaling/v1
	// Scale read from and written to these paths) and its objects'
	// replicas are validated as apiextensions-apiserver validates them.
	Scale *ScaleSubresource
	// ShortNames and Categories are a CRD's, kept for discovery; the
	// store does not use them.
	ShortNames []string
	Categories []string
}

// ScaleSubresource is a CRD version's subresources.scale: JSON paths
// (".spec.replicas") of the desired and observed replicas and, optional,
// of the label selector (a string) the Scale's status.selector is read
// from.
type ScaleSubresource struct {
	SpecReplicasPath   string
	StatusReplicasPath string
	LabelSelectorPath  string
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
