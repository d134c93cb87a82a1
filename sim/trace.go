package sim

import "encoding/json"

// TraceVersion is the version of the Trace format written by this code.
const TraceVersion = 1

// Trace is the ordered record of one run. It is plain data: invariants and
// reports read it and never reach back into live objects.
type Trace struct {
	// Version is TraceVersion when written.
	Version int `json:"version"`
	// Plan is the plan that produced the trace (its name, seed and subject
	// are what a reader needs to replay it).
	Plan *Plan `json:"plan,omitempty"`
	// Records are in the order they happened; Records[i].Pos == i.
	Records []Record `json:"records"`
	// End is the virtual time at which the run ended.
	End Duration `json:"end"`
	// Outcome says how the run ended: "quiet" (timeline done and nothing
	// left to do), "deadline" (the plan's deadline passed first),
	// "livelock: ..." (the clock stopped while requests went on; what
	// looped) or "error: ..." when the run itself failed.
	Outcome string `json:"outcome"`
	// Schedule is the run's delivery schedule: the key of every request
	// answered and every watch event delivered to the subject and the other
	// actors, in the order the run's scheduler released them (see
	// Plan.Schedule).
	Schedule []string `json:"schedule,omitempty"`
	// Metrics are client-go's own metrics of the subject's workqueues and
	// informers (depth, adds, retries, queue latency, work duration; the
	// informer's queued items, processing latency and store
	// resourceVersion) over the run's virtual time, one series per metric,
	// client and queue or informer (see metrics.go). They are not records.
	Metrics []MetricSeries `json:"metrics,omitempty"`
	// Diverged is true when the run could not follow its plan's Schedule
	// to the end (at some turn the ticket it named was not ready), in its
	// last attempt. Not written to trace files.
	Diverged bool `json:"-"`
	// Attempts is how many times the run was started to follow its
	// plan's Schedule: a run that could not follow it (client-go handed
	// a WatchList's objects or a relist's deletions to the handlers in
	// another Go map order than the recorded run, or the subject chose
	// another object to act on: IsSubjectOrderDivergence) is started
	// over, up to ReplayAttempts times. 1 for a run without a Schedule.
	Attempts int `json:"attempts,omitempty"`
	// Divergences says, for each attempt that could not follow the
	// plan's Schedule, at which turn and why ("turn 12: the schedule
	// names X; ready: Y, Z"); the last one is the trace's own when
	// Diverged.
	Divergences []string `json:"divergences,omitempty"`
	// Choices are the turns at which more than one ticket was ready, when
	// the run was made to be explored (see Explore). Not written to trace
	// files.
	Choices []ChoicePoint `json:"-"`
	// tickets and disturbed are the scheduler's log when choices are
	// recorded (see scheduler.tickets): what Explore's reduction reads.
	tickets   []ticketInfo
	disturbed []int
}

// RecordKind names what a Record reports.
type RecordKind string

// The kinds of record. The comment after each names the fields it sets
// besides Pos, At and Kind.
const (
	// Server side (from fakeapi observations). Verbs carry their
	// subresource: "update/status", "patch/status". Writes by the store's
	// garbage collector have Actor "gc" and ByGC set. Watchers are named
	// "client/resource#n", n counting that client's watches of that
	// resource from 1.
	RecRequest    RecordKind = "request"     // Actor, Verb, Resource, Namespace, Name, Code, Reason, Fault
	RecWrite      RecordKind = "write"       // Actor, Verb, Resource, Namespace, Name, UID, RV, Object, Owner, ByGC
	RecList       RecordKind = "list"        // Actor, Resource, Namespace, RV, Lag, Count
	RecWatchOpen  RecordKind = "watch-open"  // Actor, Watcher, Resource, Namespace, RV (start), WatchList
	RecWatchClose RecordKind = "watch-close" // Actor, Watcher, Reason
	RecSent       RecordKind = "sent"        // Actor, Watcher, EventType, Resource, Namespace, Name, UID, RV, Initial
	RecDelivered  RecordKind = "delivered"   // same fields as RecSent
	RecFault      RecordKind = "fault"       // Actor "faults", Fault, Detail, ContractBreaking, Target (client), and the target's fields (Watcher; Verb, Resource, Namespace, Name, Code)
	RecCompact    RecordKind = "compact"     // RV

	// Subject side (recorded by subjects through Recorder). Subjects record
	// their own sync signals: one RecSignal each time a signal they track
	// (informer HasSynced, handler HasSynced, their own) flips.
	RecHandler RecordKind = "handler" // Actor, Handler, EventType (ADDED/MODIFIED/DELETED), Resource, Namespace, Name, UID, RV, OldUID, OldRV, Initial, Tombstone
	RecSignal  RecordKind = "signal"  // Actor, Signal, Value
	RecQueue   RecordKind = "queue"   // Actor, Op (add/get/done/forget/requeue), Key
	// RecReconcile: a subject records Op "start" when a reconcile begins
	// (before it reads or writes anything) and Op "end" with Result when it
	// returns. A crash step with MidReconcile fires at the first "start"
	// after the step's time; the reconciling goroutine is frozen inside
	// Recorder.Record and never returns, as if the process died there:
	// when the run ends it exits with runtime.Goexit (its deferred calls
	// run; what they record is dropped). Subjects must not hold locks other goroutines
	// need to stop while recording "start".
	RecReconcile RecordKind = "reconcile" // Actor, Op ("start"/"end"), Key, Result ("ok" or the error, on "end"), Detail
	RecCache     RecordKind = "cache"     // Actor, Handler (cache name), Objects: a snapshot of one cache
	RecNote      RecordKind = "note"      // Actor, Detail: anything else worth showing
	// RecLog: a klog/logr line the subject, or client-go working for it,
	// logged with the subject's context (V <= LogVerbosity): Op "info" or
	// "error", Count the verbosity of an info line, Reason the error,
	// Detail the message and its key=value pairs.
	RecLog RecordKind = "log" // Actor, Op, Count, Reason, Detail

	// Run side (recorded by sim itself). Faults injected by timeline steps
	// that the server does not observe itself (hold, release, compact,
	// stale-replica-on) are RecFault records with Step set; see the Fault*
	// constants for every fault name.
	RecStep    RecordKind = "step"    // Step (index into Plan.Steps), Actor, Op, Detail
	RecCrash   RecordKind = "crash"   // Actor (the subject), Detail
	RecRestart RecordKind = "restart" // Actor
	RecDesired RecordKind = "desired" // Actor, Value (desired == actual after this server write), Detail
	RecFinal   RecordKind = "final"   // Objects: the server's state at the end of the run; Detail: why desired != actual then (Converger subjects)
)

// Record is one thing that happened during a run, at a virtual time. Fields
// not meaningful for Kind are zero and omitted from JSON.
type Record struct {
	// Pos is the record's index in Trace.Records.
	Pos int `json:"pos"`
	// At is the virtual time since the run started.
	At   Duration   `json:"at"`
	Kind RecordKind `json:"kind"`
	// Actor is who did it: "server", "gc", a client name ("bellerophon",
	// "user", "competitor", "kubelet"), or the fault policy ("faults").
	Actor string `json:"actor,omitempty"`

	Verb      string `json:"verb,omitempty"`
	Resource  string `json:"resource,omitempty"` // e.g. "pods", "bellerophons.lab.cachelab.dev"
	Namespace string `json:"ns,omitempty"`
	Name      string `json:"name,omitempty"`
	UID       string `json:"uid,omitempty"`
	RV        int64  `json:"rv,omitempty"`
	// OldUID and OldRV describe the old object of an update handler call.
	OldUID string `json:"oldUID,omitempty"`
	OldRV  int64  `json:"oldRV,omitempty"`
	// Owner is the UID of the controller ownerReference of a written object.
	Owner string `json:"owner,omitempty"`
	// Object is the object's JSON as written (write records).
	Object json.RawMessage `json:"object,omitempty"`
	ByGC   bool            `json:"byGC,omitempty"`
	// BaseRV is, for an update, the resourceVersion the writer sent with
	// the object (its optimistic-concurrency precondition: the copy the
	// write was built from, which the server found current); 0 for an
	// unconditional update and for other verbs.
	BaseRV int64 `json:"baseRV,omitempty"`

	Code   int    `json:"code,omitempty"`
	Reason string `json:"reason,omitempty"`

	Lag   int64 `json:"lag,omitempty"`
	Count int   `json:"count,omitempty"`

	Watcher   string `json:"watcher,omitempty"` // e.g. "bellerophon/pods#3"
	WatchList bool   `json:"watchList,omitempty"`
	EventType string `json:"event,omitempty"` // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
	Initial   bool   `json:"initial,omitempty"`
	Tombstone bool   `json:"tombstone,omitempty"`

	Handler string `json:"handler,omitempty"`
	Signal  string `json:"signal,omitempty"`
	Value   bool   `json:"value,omitempty"`

	Op     string `json:"op,omitempty"`
	Key    string `json:"key,omitempty"`
	Result string `json:"result,omitempty"`
	Step   int    `json:"step,omitempty"`

	Fault            string `json:"fault,omitempty"`
	ContractBreaking bool   `json:"contractBreaking,omitempty"`
	// Target is the client a fault hits (fault records).
	Target string `json:"target,omitempty"`

	// Objects is a snapshot of a cache or of the server: one entry per object.
	Objects []ObjectState `json:"objects,omitempty"`

	Detail string `json:"detail,omitempty"`
}

// ObjectState is one object in a snapshot: enough to compare a cache with
// the server.
type ObjectState struct {
	Resource  string `json:"resource"`
	Namespace string `json:"ns,omitempty"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	RV        int64  `json:"rv"`
	// Terminating is true when deletionTimestamp is set.
	Terminating bool `json:"terminating,omitempty"`
	// Finalizers are the object's finalizers.
	Finalizers []string `json:"finalizers,omitempty"`
	// Owner is the UID of the controller ownerReference, if any.
	Owner string `json:"owner,omitempty"`
}
