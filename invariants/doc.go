// Package invariants checks properties over a sim.Trace and returns
// Verdicts. Every check is a pure function of the trace: it never reaches
// back into live objects, starts no goroutine and reads no clock. Each
// invariant is worded as the client-go or API contract it checks (quoted in
// its doc comment), and ships with a trace that must fail it.
//
// Use Check (or CheckWith for non-default Options) to run every invariant,
// All to list them, and SyncSoundness for the per-signal HasSynced
// comparison (false positives and latency of each "synced" definition).
//
// # What the checks read: conventions for trace writers
//
// The checks only read the Trace. The sim records server-side records from
// fakeapi's observations; subjects record their side through sim.Recorder.
// The checks rely on these conventions (a record that lacks a field they
// need makes the affected invariant Unknown, never a guess):
//
//   - The subject. The subject's actor names are the Actor values of
//     subject-side records (RecHandler, RecSignal, RecQueue, RecReconcile,
//     RecCache, RecCrash, RecRestart, RecDesired), plus Plan.Subject. Its
//     writes are the RecWrite records with one of those actors. Writes to
//     "events" (Event recorder output) never count as the subject's
//     reconciliation writes.
//   - Keys. An object's key is resource/namespace/name, where the resource is
//     cut at its first dot ("bellerophons.lab.cachelab.dev" and
//     "bellerophons" are the same resource), so server-side and subject-side
//     spellings match. UIDs join records across resources.
//   - RecWrite: Actor (client name, or "gc" / ByGC for the garbage
//     collector), Verb (create, update, patch, delete, ...), Resource,
//     Namespace, Name, UID, RV, Owner (the controller ownerReference's UID)
//     and Object (the object's JSON as stored; for a delete, its last state).
//     EventType, when set, is the watch event the write produced (ADDED,
//     MODIFIED, DELETED). When it is empty a write removes the object if its
//     Verb is "delete" and the object has no finalizers left, or if the
//     object has a deletionTimestamp and no finalizers left; a "delete" that
//     leaves finalizers only marks the object terminating. A DELETED
//     RecSent/RecDelivered event with the write's UID and RV also marks it
//     as a removal: the store records an update that empties a terminating
//     object's finalizers with the object's last state (finalizers still
//     listed), as kube-apiserver's watch does.
//   - RecSent / RecDelivered: Actor (the watching client), Watcher (one
//     watch stream), EventType, Resource, Namespace, Name, UID, RV, Initial.
//   - RecHandler: Actor, Handler (the registration name), EventType
//     ADDED/MODIFIED/DELETED, Resource, Namespace, Name, UID, RV; OldUID and
//     OldRV for updates; Initial (isInInitialList); Tombstone for a
//     DeletedFinalStateUnknown (Namespace/Name from its Key, UID and RV from
//     its last known Obj, empty/zero when Obj is nil).
//   - RecSignal: Actor, Signal, Value (the signal's new value, recorded when
//     it changes), Resource (the informer's resource; empty = every resource
//     the subject watches) and, for handler-synced, Handler. Signal names:
//     "informer-synced" (SharedInformer.HasSynced), "handler-synced"
//     (ResourceEventHandlerRegistration.HasSynced), "fifo-synced" (legacy
//     DeltaFIFO's HasSyncedChecker), "quiescence-synced" (no event for 10x
//     the loop time) and "rv-synced" (cache RV >= the RV of our last write).
//     RecDesired records from the sim are the fifth definition, "desired".
//   - RecCache: Actor, Handler (the cache's name), Resource and Namespace
//     (what it caches; inferred from its objects or from RecHandler records
//     with the same Handler name when empty), Objects. The last snapshot of
//     each cache is compared with RecFinal. A snapshot of a store the server
//     does not serve (Bellerophon's "backups") is the subject's record of the
//     world outside the cluster: entries carry the UID of the object they
//     belong to, and the finalizers check wants none left for a removed
//     object.
//   - RecFinal: Objects, the server's state at the end of the run.
//   - RecFault: ContractBreaking marks faults that break the API's promises;
//     verdicts mention them when they fail.
//   - RecCrash / RecRestart: Actor is the subject. A crash drops every cache
//     and handler state: handler views are rebuilt per process incarnation.
//   - RecList / RecWatchOpen by the subject: the start of an (initial) list,
//     which fixes what informer-synced and handler-synced promise.
//   - RecRequest with Verb "get" and Code 200 by the subject: a fresh read
//     (no-lost-updates counts it as having observed every earlier write).
//     RecRequest with Code 409 and Reason "Conflict" or "AlreadyExists" on
//     a subject's write: retried-conflicts measures it and the time to the
//     retry that resolved it (never a failure). Code 504 on a subject's
//     write: the write's outcome was unknown to it (read-your-writes does
//     not expect it to wait for that write's resourceVersion).
//   - RecReconcile Op "start": a reconcile began (no-duplicate-children
//     allows any version of the owner the subject's handlers had been given
//     by then); "start" and "end" by key tell read-your-writes and
//     no-stale-harm which reconcile a write belongs to (the one of the
//     written object's namespace/name or its owner's) and what it read
//     (the handler calls and deliveries before it).
//
// # Judging the subject, judging a signal
//
// SubjectInvariants judge the subject; the sync-soundness verdicts judge a
// signal the subject records (a correct subject may record an unsound one,
// such as quiescence). Verdicts say Unknown rather than guess: when the
// trace lacks what a check needs, or when the sim's own records are known to
// be stale (a desired-state record computed without a removal only a DELETED
// event shows).
package invariants
