// Package legacy runs the same small controller (the mirror controller of
// subjects/internal/mirror: for every ConfigMap x, a ConfigMap x-mirror with
// the same data, owned by x) on two client-go informer paths, so that their
// differences can be shown side by side:
//
//   - "legacy-deltafifo" (DeltaFIFOSubject): an informer assembled by hand
//     from cache.New and cache.NewDeltaFIFOWithOptions (KnownObjects = the
//     store, EmitDeltaTypeReplaced), the pre-RealFIFO path. Shared informers
//     cannot use DeltaFIFO any more (InOrderInformers is locked on since
//     v0.36), so the controller.go pieces are put together here: the Process
//     function is processDeltas, recording a handler call per delta (a
//     Replaced or Sync delta for a known object is a MODIFIED call, its
//     Detail naming the delta type). Workers start when the DeltaFIFO's
//     synced channel closes (cache.WaitFor). The channel is also sampled with
//     cache.IsDone at the start of every process call and recorded as the
//     signal "fifo-synced" whenever the sample changes (so with an empty
//     initial list there is no record until the first event): the DeltaFIFO closes
//     it when the last initial item is popped, before it is processed
//     (EDGE-CASES 3). Consecutive deletes of one key coalesce and a key keeps
//     its first queue position (EDGE-CASES 20); a relist hands every object
//     to the handler again as a Replaced delta, resourceVersion unchanged
//     (EDGE-CASES 10); an ADD still queued when a relist misses the object
//     is delivered, then tombstoned, as in RealFIFO (EDGE-CASES 9: it leaked
//     before PR #115620).
//   - "informer-realfifo" (RealFIFOSubject): the same controller on
//     cache.NewSharedIndexInformerWithOptions with v0.37.2 defaults
//     (RealFIFO, AtomicFIFO, WatchList). Workers start when the handler
//     registration's HasSyncedChecker is done; the signals "informer-synced"
//     and "handler-synced" are recorded when each checker completes, and
//     "informer-synced" is also sampled at the start of every handler call
//     (a record only when the value changes), which shows the store synced
//     while the handler still works through the initial list (EDGE-CASES 1).
//     It also records "rv-synced" (EDGE-CASES 24, KEP-5647): the store's
//     resourceVersion (AtomicFIFO's LastStoreSyncResourceVersion) is at
//     least that of the controller's last write, sampled at every handler
//     call and after every write.
//
// Both use client-go's rate-limited workqueue and record handler calls,
// queue operations, reconciles ("start"/"end"), signals, and cache snapshots
// (when workers start and whenever a worker leaves the queue empty). Both
// implement sim.Converger with the mirror controller's desired state, and
// sim.CacheSnapshotter with their store, named after the subject.
// Variants of informer-realfifo (variants.go), each changing one thing for
// a scenario to contrast: panicking-handler (EDGE-CASES 2), no-watchlist
// (5), lastsync-rv (6), sources-only and skips-same-rv (10, 21),
// ignores-too-large (14).
//
// Parameters: workers (1), namespace ("" = all), resync (0: the informer's
// and the handler's resync period), dropEndBookmark (false: drop the
// k8s.io/initial-events-end bookmark from every watch), and for
// informer-realfifo only handlerDelay (Go duration, 0: how long every handler call takes, as a
// slow handler). legacy-deltafifo refuses handlerDelay: its handler runs
// under the DeltaFIFO's lock, and in a synctest bubble a goroutine waiting
// for a sync.Mutex (the reflector, adding the next event) is not durably
// blocked, so a sleep under that lock stops virtual time for good. Anything
// else is an error.
package legacy
