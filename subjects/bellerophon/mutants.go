package bellerophon

// Bug names one deliberate, documented bug a Controller can carry. The zero
// value is the correct controller. Each Bug changes one decision of the
// controller; the comment on each says which, what goes wrong, and where a
// real controller had it (numbers are kubernetes/kubernetes issues and PRs
// unless named; "EDGE n" is the entry in the lab's EDGE-CASES.md).
type Bug string

// The mutants.
const (
	// NoBug is the correct controller.
	NoBug Bug = ""

	// NoExpectations skips the ReplicaSet-style expectations: every
	// reconcile trusts the Pod lister, so while the informer has not yet
	// delivered the controller's own creates it creates the missing Pods
	// again. Duplicate creates (EDGE 22: controller-runtime #245, #1464;
	// kuberay #715; cluster-api #13649).
	NoExpectations Bug = "no-expectations"

	// NoUIDCheck keys everything by namespace/name: expectations are not
	// reset when the UID changes, Pods and ConfigMaps are attributed to an
	// owner by the ownerReference's name, and the backup store entry is
	// looked up by name. A Bellerophon deleted and recreated under the same
	// name (one OnUpdate after a relist) inherits its predecessor's state:
	// the old incarnation's backup is never cleaned and its children count
	// as the new one's (EDGE 8: k/k#69376 fixed by PR #82572; DaemonSet PR
	// #91915).
	NoUIDCheck Bug = "no-uid-check"

	// TombstoneNotUnwrapped type-asserts the object of OnDelete
	// (obj.(*corev1.Pod)) instead of unwrapping
	// cache.DeletedFinalStateUnknown. A delete learned from a relist panics
	// in the handler. The handler recovers, records a note and drops the
	// event, as client-go's processorListener does with
	// utilruntime.ReallyCrash=false (the default would kill the process):
	// the owner is never enqueued, so a Pod deleted while the watch was down
	// is never replaced (EDGE 7: k/k PR #25913, issue #34692; calico PR
	// #12793).
	TombstoneNotUnwrapped Bug = "tombstone-not-unwrapped"

	// InformerSynced starts the workers when every informer's HasSynced is
	// true instead of every handler registration's. The store is full but
	// the Pod handler, which feeds the controller's child index, may not
	// have seen every initial Pod yet: a reconcile misses existing Pods and
	// creates more (EDGE 1: k/k#113763, PR #113985).
	InformerSynced Bug = "informer-synced"

	// StaleStatus writes status computed from the cached copy as a merge
	// patch of the status subresource, without a resourceVersion
	// precondition (a PUT without one is refused for custom resources), so
	// the server applies it unconditionally: conditions written by someone
	// else after the cache's copy are silently replaced, a lost update
	// (EDGE 25).
	StaleStatus Bug = "stale-status"

	// FinalizerNeverRemoved cleans the backup of a terminating Bellerophon
	// but never removes its finalizer: the object stays terminating forever
	// (EDGE 11).
	FinalizerNeverRemoved Bug = "finalizer-never-removed"

	// ChildrenUnderTerminating keeps reconciling children of a terminating
	// Bellerophon before finalizing it, so it creates Pods and ConfigMaps
	// under an owner that is going away (EDGE 11).
	ChildrenUnderTerminating Bug = "children-under-terminating"

	// QuiescenceSynced starts the workers when no event has arrived for 10x
	// the loop time (the origin notes' definition of "synced") instead of on
	// the handlers' sync: with a slow or delayed initial list, quiet is not
	// caught up, and the workers act on empty caches (EDGE 4).
	QuiescenceSynced Bug = "quiescence-synced"

	// DropsConflicts treats 409 Conflict as done: it does not retry, forgets
	// the key and returns nil, counting on a later event to bring the key
	// back. The write that caused the conflict may bring no event the
	// controller acts on (a label added by someone else: the update filter
	// rightly ignores it), so the status it failed to write stays stale
	// (EDGE 25).
	DropsConflicts Bug = "drops-conflicts"

	// NoReadYourWrites acts on lister reads that predate its own last
	// write: it compares the status it computes with the cached copy even
	// when its own newer status write has not reached the cache, so it
	// takes "unchanged" for a status it already replaced and leaves the
	// server with the older one (a Degraded that never clears); and it
	// writes the ConfigMap without waiting until the informer's store
	// resourceVersion reaches its last ConfigMap write (409 AlreadyExists
	// or Conflict). EDGE 24: KEP-5647.
	NoReadYourWrites Bug = "no-read-your-writes"

	// TimeoutAsFailure treats a Pod create that timed out on the client
	// like one that failed: it lowers its expectations and requeues. The
	// server may have applied the create (a write with unknown outcome), so
	// the retry, made before the informer delivers that Pod, creates one
	// too many (EDGE 28; the DaemonSet controller counts a timeout as
	// "created, not yet observed" and leaves it to the informer).
	TimeoutAsFailure Bug = "timeout-as-failure"

	// ListsStaleReplica opts its informers out of WatchList, as reflectors
	// before client-go v0.35 (or with the WatchListClient gate off) were:
	// their first list is at resourceVersion "0", "any version you have",
	// which an API server may serve from a lagging watch cache. After a
	// restart it can see an object older than the one it saw before it
	// died, and it acts on it: it reconciles a Bellerophon at a version the
	// user has already replaced, and rolls its children back (EDGE 12:
	// k/k#59848; Sieve's time-travel bugs).
	ListsStaleReplica Bug = "lists-stale-replica"
)

// BugInfo documents one mutant for the registry.
type BugInfo struct {
	Bug Bug
	// Summary is one sentence for `cachelab list`.
	Summary string
	// Source is the upstream reference (EDGE-CASES.md).
	Source string
}

// Bugs lists every mutant, in a stable order.
var Bugs = []BugInfo{
	{NoExpectations, "Bellerophon without expectations: a lagging Pod informer causes duplicate creates.",
		"EDGE 22: controller-runtime #245, #1464; kuberay #715; cluster-api #13649"},
	{NoUIDCheck, "Bellerophon keyed by name without UID checks: a delete+recreate inherits the old object's state.",
		"EDGE 8: kubernetes#69376 (fixed by PR #82572); DaemonSet PR #91915"},
	{TombstoneNotUnwrapped, "Bellerophon whose delete handlers type-assert instead of unwrapping DeletedFinalStateUnknown.",
		"EDGE 7: kubernetes PR #25913, issue #34692; calico PR #12793"},
	{InformerSynced, "Bellerophon that starts workers on informer.HasSynced instead of the handlers' HasSynced.",
		"EDGE 1: kubernetes#113763, PR #113985"},
	{StaleStatus, "Bellerophon that writes status from a stale cached copy without resourceVersion (lost update).",
		"EDGE 25: 409 Conflict and retry.RetryOnConflict"},
	{FinalizerNeverRemoved, "Bellerophon that cleans its backup but never removes its finalizer.",
		"EDGE 11: finalizers"},
	{ChildrenUnderTerminating, "Bellerophon that recreates children of a terminating parent.",
		"EDGE 11: finalizers"},
	{QuiescenceSynced, "Bellerophon that starts workers after 10x the loop time without events (quiescence).",
		"EDGE 4: ORIGIN.md's quiescence definition"},
	{DropsConflicts, "Bellerophon that ignores 409 Conflict and forgets the key.",
		"EDGE 25: 409 Conflict and retry.RetryOnConflict"},
	{NoReadYourWrites, "Bellerophon that acts on a lister read right after its own write.",
		"EDGE 24: KEP-5647 stale-controller mitigation"},
	{TimeoutAsFailure, "Bellerophon that treats a timed-out Pod create as failed and creates it again.",
		"EDGE 28: kubernetes pkg/controller/daemon, \"Pod is created but its initialization has timed out\""},
	{ListsStaleReplica, "Bellerophon whose informers list at resourceVersion 0 (no WatchList): after a restart a lagging replica shows it the past, and it acts on it.",
		"EDGE 12: kubernetes#59848; Sieve (OSDI '22) time-travel bugs"},
}

// Valid reports whether b is NoBug or one of Bugs.
func (b Bug) Valid() bool {
	if b == NoBug {
		return true
	}
	for _, info := range Bugs {
		if info.Bug == b {
			return true
		}
	}
	return false
}
