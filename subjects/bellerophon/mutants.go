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

	// StaleStatus writes status from the cached copy with its
	// resourceVersion cleared, so the server applies it unconditionally: a
	// status written by someone else after the cache's copy is silently
	// overwritten, a lost update (EDGE 25).
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

	// DropsConflicts treats 409 Conflict as done: it forgets the key and
	// returns nil, counting on a later event to bring the key back. The
	// event it counts on may be its own write's echo, which the controller
	// rightly ignores, so the status it failed to write stays stale
	// (EDGE 25).
	DropsConflicts Bug = "drops-conflicts"

	// NoReadYourWrites acts on a ConfigMap lister read right after its own
	// ConfigMap write instead of waiting until the informer's store
	// resourceVersion reaches that write: it recreates a ConfigMap it just
	// created (409 AlreadyExists) or updates from the stale copy (409
	// Conflict), and requeues on the error (EDGE 24: KEP-5647).
	NoReadYourWrites Bug = "no-read-your-writes"
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
