// Package fakeapi is an in-memory Kubernetes API server that real client-go
// informers trust.
//
// It has two layers, as etcd's raft has a pure core and a thin goroutine wrapper:
//
//   - fakeapi/store is a pure MVCC store shaped like etcd under kube-apiserver:
//     one global resourceVersion, UIDs, generation, finalizers and
//     deletionTimestamp, ownerReference garbage collection, a history window
//     with compaction, list semantics by resourceVersion, selectors and
//     pagination. It has no goroutines and reads no clock: time is passed in.
//   - Server (this package) wraps the store with a mutex, fans watch events out
//     to watchers (one delivery goroutine per watch, so a per-watcher delay never
//     reorders one stream), sends bookmarks and WatchList's initial events, and
//     exposes the adapters: cache.ListerWatcher, a client-go testing
//     ObjectTracker / fake clientset, and (fakeapi/http) the REST handler.
//
// The server exposes fault hooks (Hooks) and imperative controls (CloseWatch,
// ExpireWatch, Compact, ...). It holds no fault policy: package sim owns that.
// It reports everything it does to an Observer, which is how the sim's trace
// learns of server writes, lists served and watch events sent and delivered.
package fakeapi

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Hooks lets a fault policy decide the fate of requests and watch events.
// Every method is optional in spirit: NoHooks returns the no-fault answer.
// Methods are called with no server lock held and may be called concurrently.
type Hooks interface {
	// BeforeRequest is called before a request is served. The zero
	// RequestFault serves it normally.
	BeforeRequest(req RequestInfo) RequestFault
	// EventDelay returns how long one watch event is held before it is
	// delivered to one watcher. Delivery stays in order within one watch: an
	// event is never delivered before the one sent ahead of it on that watch.
	EventDelay(w WatcherInfo, ev EventInfo) time.Duration
}

// Scheduler, when the Hooks given to a Server also implement it, decides
// when each request is served and each watch event is delivered: the moments
// where the server's answers cross into a client. A deterministic scheduler
// (package sim's) releases them one at a time, in an order that does not
// depend on how goroutines interleave, so the same plan gives the same
// schedule at the API boundary. Without one, requests are served at once and
// events delivered as soon as their delay has passed.
type Scheduler interface {
	// AwaitRequest blocks until req may be served, before
	// Hooks.BeforeRequest decides its fate. A non-nil error (ctx's, or the
	// scheduler's once it has shut down) fails the request unserved.
	AwaitRequest(ctx context.Context, req RequestInfo) error
	// AwaitDelivery asks for the turn of the seq-th event (from 1) of watch
	// w, once its delay has passed. The returned channel is closed when the
	// event may be delivered; cancel withdraws the request (the watch
	// ended first) and may be called after the turn was given.
	AwaitDelivery(w WatcherInfo, ev EventInfo, seq int) (turn <-chan struct{}, cancel func())
	// WatchTimeout returns the timeout the server applies to watch w, whose
	// client asked for requested (> 0) with timeoutSeconds. client-go draws
	// that from math/rand's global source; a scheduler may replace it with
	// a value of its own choosing.
	WatchTimeout(w WatcherInfo, requested time.Duration) time.Duration
}

// TimerScheduler, when a Scheduler also implements it, gives the timers of
// a watch their turns too: its periodic bookmarks, the bookmark sent before
// its timeout and the timeout itself fire in the order the scheduler
// decides, not as Go's scheduler runs the watch's goroutine against the
// others woken at the same instant.
type TimerScheduler interface {
	// AwaitTimer asks for the turn of watch w's timer name ("bookmark",
	// "pre-timeout bookmark", "timeout"), due d from now. The channel is
	// closed when it fires (nil: never); cancel withdraws it (the watch
	// ended first) and may be called after it fired. ok false means the
	// scheduler does not schedule w's timers: the watch uses its clock.
	AwaitTimer(w WatcherInfo, name string, d time.Duration) (fire <-chan struct{}, cancel func(), ok bool)
}

// InitialOrderer, when the Hooks given to a Server also implement it,
// decides the order in which a WatchList sends its initial objects (the
// server sends them by key otherwise, as kube-apiserver's watch cache
// does). client-go's reflector puts them into a map before its handlers see
// them, so the order reaches a handler only as the start of Go's map
// iteration, a rotation of it (see package sim's replays).
type InitialOrderer interface {
	// OrderInitial returns the order in which to send watch w's initial
	// ADDED events (a permutation of the indices of events); nil, or
	// anything else, keeps the server's order.
	OrderInitial(w WatcherInfo, events []EventInfo) []int
}

// NoHooks is a Hooks that injects no fault.
type NoHooks struct{}

// BeforeRequest serves every request normally.
func (NoHooks) BeforeRequest(RequestInfo) RequestFault { return RequestFault{} }

// EventDelay delivers every event at once.
func (NoHooks) EventDelay(WatcherInfo, EventInfo) time.Duration { return 0 }

// RequestInfo describes one request, for Hooks and Observer.
type RequestInfo struct {
	// Client is the name given to Server.Client ("bellerophon", "user", ...).
	Client string
	// Verb is the Kubernetes verb: get, list, watch, create, update, patch,
	// delete, deletecollection; "update" with Subresource "status" for status.
	Verb        string
	Resource    schema.GroupVersionResource
	Subresource string
	Namespace   string
	Name        string
	// ResourceVersion and ResourceVersionMatch are the request's list/watch
	// options, as sent.
	ResourceVersion      string
	ResourceVersionMatch string
	// SendInitialEvents is true for a WatchList request.
	SendInitialEvents bool
	// Precondition is, for an update, the metadata.resourceVersion of the
	// object sent (its optimistic-concurrency precondition; "" for an
	// unconditional update).
	Precondition string
	// Body, for a create, update or patch, returns what the request sends
	// (the object as JSON, or the patch), encoded when called. Requests
	// that are otherwise alike (creates with generateName by several
	// goroutines at once) differ only in it: a scheduler orders them by it
	// rather than by which goroutine came first. nil for other requests.
	Body func() []byte
}

// RequestFault is a hook's decision about one request. The zero value serves
// the request normally.
type RequestFault struct {
	// Err, when non-nil, fails the request with this error (an apierrors
	// StatusError: 429 with Retry-After, 500, 503, 504 ...) without touching
	// the store.
	Err error
	// ApplyThenTimeout serves a write, then reports a timeout to the client
	// (a write with unknown outcome).
	ApplyThenTimeout bool
	// ReplicaLag serves a list with resourceVersion="0" (or a watch starting
	// at "0") from a replica this many revisions behind the latest ("stale
	// replica", time travel). Ignored for consistent reads.
	ReplicaLag int64
	// ReplicaAt, when non-zero, serves the same reads as ReplicaLag from a
	// replica held at this revision: it has seen nothing written after it,
	// however much was written since (a lagging watch cache is behind in
	// time, not by a count of writes). The further behind of ReplicaLag
	// and ReplicaAt wins.
	ReplicaAt int64
	// Name labels the fault in the observations ("429", "stale-replica").
	Name string
}

// WatcherID identifies one watch stream for the lifetime of a Server.
type WatcherID int64

// WatcherInfo describes one open watch.
type WatcherInfo struct {
	ID       WatcherID
	Client   string
	Resource schema.GroupVersionResource
	// Namespace is "" for a watch across all namespaces.
	Namespace string
	// StartRV is the resourceVersion the watch started from.
	StartRV string
	// WatchList is true when the watch was opened with sendInitialEvents.
	WatchList bool
	// ReplicaRV, when non-zero, is the revision of the replica, behind the
	// latest, that served the watch's start: the events after it that the
	// replica had not seen when the watch opened are queued after the
	// initial ones, in order (a hook's EventDelay decides when the replica
	// catches up and delivers them).
	ReplicaRV int64
}

// EventInfo describes one watch event as sent to one watcher.
type EventInfo struct {
	Type      watch.EventType
	Resource  schema.GroupVersionResource
	Namespace string
	Name      string
	UID       string
	// RV is the event's resourceVersion (the object's, or the bookmark's).
	RV int64
	// InitialEvent is true for WatchList's synthetic ADDED events and the
	// initial-events-end bookmark.
	InitialEvent bool
}

// HookFuncs is a Hooks made of optional functions; a nil function injects no
// fault.
type HookFuncs struct {
	// Before decides the fate of a request (Hooks.BeforeRequest).
	Before func(RequestInfo) RequestFault
	// Delay holds a watch event (Hooks.EventDelay).
	Delay func(WatcherInfo, EventInfo) time.Duration
}

// BeforeRequest calls Before, if set.
func (h HookFuncs) BeforeRequest(req RequestInfo) RequestFault {
	if h.Before == nil {
		return RequestFault{}
	}
	return h.Before(req)
}

// EventDelay calls Delay, if set.
func (h HookFuncs) EventDelay(w WatcherInfo, ev EventInfo) time.Duration {
	if h.Delay == nil {
		return 0
	}
	return h.Delay(w, ev)
}
