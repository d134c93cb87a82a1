// Package naivecache is the watch-fed cache sketched in the project's origin
// notes (ORIGIN.md): a map keyed namespace/name fed by a raw watch, "synced"
// when no event came for 10x the loop time, with a controller loop on top.
// It exists to fail in instructive ways, so it is built as the notes describe
// it, not as client-go does it. Registered as the sim subject "naivecache".
//
// # Design choices, each from the notes
//
// The source. "The Reflector watches the API server and lists what changed":
// there is no Reflector here, only the raw ListerWatcher. The loop lists once
// (resourceVersion "", a consistent read), then watches from the list's
// resourceVersion. It does not ask for bookmarks (the notes do not know
// them), so a quiet watch's resourceVersion goes stale.
//
// A watch that closes is re-opened from the last resourceVersion seen. A
// watch that closes with no event at all is re-opened after retryDelay (1s):
// the notes say nothing, and without a pause a server that refuses watches
// would spin the loop. Any other watch error is noted and the loop waits for
// the close.
//
// 410 Gone/Expired. The notes have no answer; the automaton does what they
// would: list again and feed every listed object through the same rules as a
// create event. Keys the list no longer contains are kept: the notes have
// rules for events, none for "absent from a list". So an object deleted
// during a watch gap stays in the cache forever (client-go delivers a
// DeletedFinalStateUnknown tombstone here, EDGE-CASES 7), and every listed
// object already cached logs "create for key already cached: out of order?".
//
// The rules (step 3 of the notes' loop), in Cache.Apply:
//   - not cached + delete: nothing to delete; log "delete for unknown key";
//   - not cached + create: store a deep copy under namespace/name;
//   - cached + create: log "create for key already cached: out of order?",
//     then swap the new state in (last writer wins: the notes only say "log
//     it", and keeping the old object would keep a dead UID forever);
//   - cached + update: deep copy, swap in under the entry's lock;
//   - not cached + update (the notes do not cover it): log "update for
//     unknown key" and store a deep copy.
//
// Locks. A lock for the map (adding and removing entries) and a
// sync.RWMutex per entry. An event carries the object's whole new state, so
// the notes' "deep-copy, modify the copy, swap it in" is: deep-copy the
// event's object before taking any lock, then take the entry's write lock
// only to swap the pointer. Readers read while the copy is being made and
// wait only for the swap, as the notes want ("readers may read while the lock
// is held; writers wait"). Readers get deep copies, so no reader can change
// the cache. There is one writer (the watch loop); with two, an update could
// swap into an entry a concurrent delete had just unlinked, and be lost.
//
// The handler (step 4) runs after the cache is updated, in the watch loop's
// goroutine, and puts the source's key into a work queue: a plain FIFO, as
// the notes say, without de-duplication, rate limiting or failure memory. A
// failed key is appended again after retryDelay.
//
// "Synced" (the notes' first definition): no event arrived for 10x the loop
// time. The loop time is the longest measured trip round the main loop
// (receive, apply, enqueue), floored by the loopTime parameter (10ms). Under
// virtual time a trip costs nothing, so the floor is what acts: the quiet
// window is 100ms by default. The clock starts with the subject, so a list
// slower than the window already reads as "synced" with an empty cache, and
// a watch whose events are delayed longer than the window reads as synced
// while events are still in flight (EDGE-CASES 4). The signal flips back to
// false at the next event and is recorded at every flip as the signal
// "quiescence-synced".
//
// The controller (step 5) waits for the first flip to "synced", then runs
// workers (1 by default) that take keys from the FIFO, read the cache and
// write to the API server directly (never through the cache); their writes
// come back through the watch. The controller is the mirror controller of
// package subjects/internal/mirror: for every ConfigMap x, a ConfigMap
// x-mirror with the same data, owned by x.
//
// # Trace
//
// Each event given to the handler is a handler record (its event type, the
// rule applied in Detail, the old object's UID and resourceVersion when
// there was one, Initial for the first list); the log notes are note
// records; the FIFO's add/get/done/requeue are queue records; each reconcile
// has a "start" and an "end" record; a cache snapshot is recorded at each
// flip to synced, after each relist, and whenever a worker leaves the queue
// empty; the map is also the subject's sim.CacheSnapshotter cache,
// "naivecache", snapshotted by the sim at the end of a run.
//
// # What goes wrong (each a test)
//
//   - Quiet is not caught up (EDGE-CASES 4): with watch events 1s late the
//     signal says synced at 100ms, and the controller's own write is still in
//     flight for a second (TestQuiescenceSaysSyncedWhileTheControllersOwnWriteIsInFlight,
//     TestNaiveCacheUnderSimSaysSyncedBeforeItsOwnWriteIsDelivered).
//   - A delete lost in a 410 gap is never noticed: the object stays in the
//     map for good (TestNaiveCacheKeepsAnObjectDeletedDuringA410Gap,
//     TestNaiveCacheUnderSimKeepsADeleteLostInA410Gap).
//   - A delete and recreate in a 410 gap: the new object is swapped in
//     ("create for key already cached: out of order?"), but the mirror the
//     garbage collector removed stays cached, owned by the old UID; updating
//     it gets 404 and the key is retried every second for ever
//     (TestNaiveCacheRetriesForeverAMirrorDeletedDuringA410Gap). The informer
//     subjects see one update with a new UID and a tombstone, and converge.
//
// # Parameters
//
// loopTime (Go duration, 10ms), quietFactor (10), workers (1), retryDelay
// (Go duration, 1s), namespace ("" = all). An unknown parameter or a bad
// value makes Start fail with an error naming it.
//
// The package imports client-go for the ListerWatcher and the clientset the
// sim hands it (and the mirror controller's writes); the cache itself
// (Cache, Quiescence, FIFO) uses apimachinery only.
package naivecache
