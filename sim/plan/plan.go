// Package plan defines cachelab's Plan: plain, versioned JSON that fixes
// everything a run does (the subject, the initial objects, the timeline of
// steps at virtual times, the fault policy's parameters and the seed), and
// reads and writes it strictly: unknown fields and bad values are rejected
// with errors naming the file, line, field and allowed values.
//
// Package sim re-exports every name of this package (sim.Plan is
// plan.Plan); the types live here, with no dependency beyond the standard
// library, so that the plan reader can be fuzzed quickly.
package plan

import (
	"encoding/json"
	"time"
)

// PlanVersion is the version of the Plan format this code reads and writes.
const PlanVersion = 1

// Plan is everything needed to reproduce a run. Same Plan + same code = same
// fault schedule. It is plain JSON; LoadPlan rejects unknown fields and bad
// values with an error naming the field and the allowed values.
type Plan struct {
	// Version must be PlanVersion.
	Version int `json:"version"`
	// Name labels the run ("tombstone-after-410", "random-42").
	Name string `json:"name,omitempty"`
	// Seed is the root of every random choice of the run.
	Seed uint64 `json:"seed"`
	// Subject is a registered subject's name (see RegisterSubject).
	Subject string `json:"subject"`
	// SubjectParams are passed to the subject as Env.Params.
	SubjectParams map[string]string `json:"subjectParams,omitempty"`
	// Access is how the subject reaches the server: "direct" (default: the
	// store through fakeapi's ListerWatcher and clientsets) or "http" (real
	// REST clients through fakeapi/http's handler over an in-memory pipe).
	// The other actors always use the direct path.
	Access string `json:"access,omitempty"`
	// Objects exist on the server before anything starts (typed JSON with
	// apiVersion and kind).
	Objects []json.RawMessage `json:"objects,omitempty"`
	// Steps happen at virtual times, in order of At (ties in list order).
	Steps []Step `json:"steps"`
	// Faults are the fault policy's parameters.
	Faults FaultPolicy `json:"faults"`
	// Deadline is the virtual time after which the run stops even if not
	// quiet. Optional; default 5m.
	Deadline Duration `json:"deadline,omitempty"`
	// Quiet is how long nothing may change (no write, write request, watch
	// event but bookmarks, fault or step; reads, handler calls and
	// reconciles do not count) for the run to be quiet (after the
	// timeline, and for wait-quiet steps), with no work under way (an open
	// reconcile, a queued key, a retry after a failure: the run goes on
	// until it is done, or to the deadline). Optional; default 10s.
	Quiet Duration `json:"quiet,omitempty"`
	// Kubelet, when set, runs the "kubelet" actor: an informer on Pods that
	// moves every Pod to phase Running with condition Ready after a delay.
	Kubelet *Kubelet `json:"kubelet,omitempty"`
	// Competitor, when set, runs an informer-fed competing writer under the
	// client name "competitor" (besides the competitor's steps).
	Competitor *Competitor `json:"competitor,omitempty"`
	// LivelockAfter ends the run as a livelock when one client makes the
	// same request to one object this many times at one virtual instant
	// (the clock stopped while requests went on). Optional; default 2000.
	LivelockAfter int `json:"livelockAfter,omitempty"`
	// MaxRecords is the run's record budget: when its trace reaches this
	// many records the run stops, with outcome "budget: ...", a run that
	// could not be judged (a controller looping on requests, or a plan
	// far larger than the lab's: a random plan's trace has a few hundred
	// records, a scenario's a few thousand). It bounds what one run holds
	// in memory. Optional; default 500000 (sim.DefaultMaxRecords).
	MaxRecords int `json:"maxRecords,omitempty"`
	// Schedule, optional, is a delivery schedule to enforce: the keys of
	// the requests answered and the events delivered, in the order a
	// recorded run released them (Trace.Schedule). The run releases each
	// turn's ticket when it is ready, and falls back to the canonical
	// order from the first turn it cannot follow. Without it the order is
	// canonical, which is already the same for every run of the plan
	// except where goroutines inside client-go or the subject race.
	Schedule []string `json:"schedule,omitempty"`
	// ShuffleSchedule, when not 0, seeds a random choice among the tickets
	// ready at each turn instead of the canonical order (after any
	// enforced Schedule): the same value gives the same schedule. The
	// canonical order is one interleaving among many; a shuffled one may
	// show what it hides. Optional; default 0 (canonical).
	ShuffleSchedule uint64 `json:"shuffleSchedule,omitempty"`
}

// Competitor configures the informer-fed competing writer: another
// controller that keeps every object of one resource in the shape of a
// JSON merge patch. Whenever its informer shows an object that the patch
// would change, it applies the patch, Delay after seeing it. Against a
// subject that wants another value, that is a write war (EDGE-CASES 26).
type Competitor struct {
	// Resource is the resource it watches and writes ("configmaps").
	Resource string `json:"resource"`
	// Patch is the JSON merge patch it enforces.
	Patch json.RawMessage `json:"patch"`
	// Delay is how long after seeing an object it patches it. Optional;
	// default 0.
	Delay Duration `json:"delay,omitempty"`
}

// Kubelet configures the pod-readiness actor.
type Kubelet struct {
	// ReadyAfter is how long after the kubelet first sees a Pod it sets
	// status.phase=Running and the Ready condition (through UpdateStatus).
	ReadyAfter Duration `json:"readyAfter,omitempty"`
}

// Step is one thing that happens at a virtual time.
type Step struct {
	// At is the virtual time since the start of the run.
	At Duration `json:"at"`
	// Actor performs the step: "user", "competitor", "kubelet" (API
	// operations), "faults" (fault injection) or "controller" (crash,
	// restart of the subject).
	Actor string `json:"actor"`
	// Op is the operation. API operations: create, update, patch, delete,
	// update-status (sets only the status of the object named by Name or
	// by Object's metadata.name: Object needs only {"status": ...} when
	// Resource and Name are given; metadata and spec stay as stored),
	// patch-status (Patch on the status subresource). Faults: disconnect,
	// break, expire (410 on the watch), compact, stale-replica, fail-next,
	// timeout-next-write, hold, release.
	// Controller: crash, restart. Any actor: wait-quiet.
	Op string `json:"op"`
	// Resource is the resource of an API operation or the watches a fault
	// targets ("pods", "configmaps", "bellerophons"); "" = all.
	Resource  string `json:"resource,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// Object is the object of create/update (JSON with apiVersion and kind).
	Object json.RawMessage `json:"object,omitempty"`
	// Patch is the body of a patch; PatchType is "merge" (default), "json"
	// or "strategic".
	Patch     json.RawMessage `json:"patch,omitempty"`
	PatchType string          `json:"patchType,omitempty"`
	// Target names the client whose watches a fault hits ("" = all clients).
	Target string `json:"target,omitempty"`
	// Code is the HTTP status of fail-next (429, 500, 503, 504).
	Code int `json:"code,omitempty"`
	// Verb is the verb fail-next and timeout-next-write apply to.
	Verb string `json:"verb,omitempty"`
	// Lag is the stale replica's lag in revisions (stale-replica).
	Lag int64 `json:"lag,omitempty"`
	// For is how long a fault lasts (stale-replica, hold); 0 = until undone.
	For Duration `json:"for,omitempty"`
	// NotOlderThan makes a stale replica (stale-replica) also serve the
	// reads that name a resourceVersion N without asking for it exactly:
	// lists at N (ResourceVersionMatch NotOlderThan, or none without a
	// limit) and WatchLists at N. A replica that has not reached N answers
	// 504 "Too large resource version" (EDGE-CASES 14), as a lagging
	// kube-apiserver's watch cache does. Default false: only reads at
	// resourceVersion "0" are served by the replica.
	NotOlderThan bool `json:"notOlderThan,omitempty"`
	// MidReconcile makes a crash wait until the subject is inside a reconcile.
	MidReconcile bool `json:"midReconcile,omitempty"`
	// AfterWrite, for crash, makes the crash wait for the subject's
	// AfterWrite-th write request of the run (create, update, patch,
	// delete, counted from 1 over every process of the subject, Events
	// not counted: see sim.IsCountedWrite): the
	// server applies it, and the process is cancelled before it sends
	// anything else, so a crash can fall between two writes of one
	// reconcile (Sieve's intermediate state). A controller step before it
	// fires crashes at once. For fail-next and timeout-next-write, the
	// fault waits for the first matching request after that write: aimed
	// at the subject's next write of that verb and resource.
	AfterWrite int `json:"afterWrite,omitempty"`
	// AsOf, for stale-replica, names the moment whose state the held
	// replica serves, instead of Lag: "step:N" is just before plan step N
	// (counted from 0) was played, "write:K" just before the subject's
	// K-th write request (as AfterWrite counts them) was applied. A moment
	// that has not happened when the step is played holds the replica at
	// the latest revision.
	AsOf string `json:"asOf,omitempty"`
	// Child, when set, picks the object of a patch or delete when the step
	// is played, instead of Name: one of the objects owned by a primary
	// (see ChildRef). Resource, when set, keeps only children of that
	// resource; Namespace is the primary's.
	Child ChildRef `json:"child,omitzero"`
}

// ChildRef names, by its owner, an object whose name the plan does not
// know: whatever the subject created with an ownerReference to the owner
// (a Deployment, a ConfigMap of a generated name). When the step is
// played, the owner is looked up as it is then (its current incarnation),
// its children are listed in order of resource, namespace and name, and
// the Index-th is picked (counting from 0, wrapping around their number).
// With no owner or no child the step fails, and the trace notes why.
type ChildRef struct {
	// Owner is the owner's resource ("foos", "foos.example.com") and
	// OwnerName its name.
	Owner     string `json:"owner"`
	OwnerName string `json:"ownerName"`
	// Index picks a child (see ChildRef).
	Index int `json:"index,omitempty"`
}

// FaultPolicy are the parameters of the random faults the policy draws from
// the plan's seed. The zero value injects no random fault.
type FaultPolicy struct {
	// Latency is the watch-event delay distribution; each watcher draws its
	// own delays, so streams interleave differently (cross-object
	// reordering). Order within one stream is always kept.
	Latency Distribution `json:"latency"`
	// DisconnectEvery, when non-zero, breaks each watch after a delay drawn
	// uniformly from [0, 2*DisconnectEvery].
	DisconnectEvery Duration `json:"disconnectEvery,omitempty"`
	// ExpireOnRewatch is the probability that a re-watch gets 410 Expired.
	ExpireOnRewatch float64 `json:"expireOnRewatch,omitempty"`
	// StaleReplicaLag, when non-zero, serves lists at resourceVersion "0"
	// from a replica this many revisions behind.
	StaleReplicaLag int64 `json:"staleReplicaLag,omitempty"`
	// ErrorRate is the probability that a request fails with one of
	// ErrorCodes (default 429, 500, 503).
	ErrorRate  float64 `json:"errorRate,omitempty"`
	ErrorCodes []int   `json:"errorCodes,omitempty"`
	// UnknownOutcomeRate is the probability that a write is applied but
	// reported to the client as a timeout.
	UnknownOutcomeRate float64 `json:"unknownOutcomeRate,omitempty"`
	// RequestLatency is the virtual time each request of the subject and
	// the other actors takes to be answered, drawn per request from this
	// distribution (so a controller that loops on requests moves the
	// clock). Optional; default none (answered at the instant asked).
	RequestLatency Distribution `json:"requestLatency,omitzero"`
	// ContractBreaking faults are never drawn unless set here; they are
	// labelled contract-breaking in the trace.
	ContractBreaking ContractBreaking `json:"contractBreaking"`
	// Until is the virtual time after which no random fault is drawn any
	// more (latency and stale replicas stay), so the system can settle;
	// faults are drawn up to and including Until. Optional; default: the
	// time of the last step. Timeline fault steps are not affected.
	Until Duration `json:"until,omitempty"`
}

// ContractBreaking are faults that break the API's promises.
type ContractBreaking struct {
	// DropRate is the probability that a watch event is silently dropped.
	DropRate float64 `json:"dropRate,omitempty"`
	// DuplicateRate is the probability that a watch event is sent twice.
	DuplicateRate float64 `json:"duplicateRate,omitempty"`
	// ReorderInStream lets events of one stream overtake each other.
	ReorderInStream bool `json:"reorderInStream,omitempty"`
}

// Distribution is a delay distribution.
type Distribution struct {
	// Kind is "none" (default), "fixed", "uniform" or "exponential".
	Kind string `json:"kind,omitempty"`
	// Min and Max bound uniform; Max is the fixed value for fixed and the
	// cap for exponential.
	Min Duration `json:"min,omitempty"`
	Max Duration `json:"max,omitempty"`
	// Mean is the mean of exponential.
	Mean Duration `json:"mean,omitempty"`
}

// Duration is a time.Duration that reads and writes JSON as a Go duration
// string ("1.5s"); a bare number is read as nanoseconds.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats d as time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }
