package sim

import (
	"bytes"
	"encoding/json"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/fakeapi"
)

// recorder builds the trace of one run. It is the server's Observer (each
// fakeapi.Observation becomes a Record) and, through actorRecorder, the
// subjects' Recorder. It also keeps a mirror of the server's state for
// Converger subjects and the trigger of mid-reconcile crashes.
type recorder struct {
	start  time.Time
	policy *Policy

	mu      sync.Mutex
	recs    []Record
	lastAct time.Duration
	closed  bool

	// Converger support: the server's state rebuilt from write
	// observations (always kept), and the last answer of Desired (-1: not
	// asked yet).
	conv      Converger
	convActor string
	keys      []objKey       // sorted by compareKeys
	objs      []ServerObject // objs[i] is the object of keys[i]
	desired   int

	// Mid-reconcile crash: when armedActor records a reconcile start,
	// armed is closed and the recording goroutine blocks on freeze.
	armedActor  string
	armed       chan struct{}
	freeze      chan struct{}
	releaseOnce sync.Once

	// marker identifies the run to RunRef.
	marker RunMarker

	// The record budget (Plan.MaxRecords; 0: none): over is set when the
	// trace reaches limit records, which ends the run (see run.halted);
	// until then records past twice the budget, made between two of the
	// run loop's checks, are dropped and counted, unless final (the end
	// of the run's snapshots).
	limit int
	over  atomic.Bool
	// progress, when set (WithProgress), counts the records made.
	progress *atomic.Int64
	dropped  int
	final    bool
}

// RunMarker is what a RunRef points to: one per run.
type RunMarker struct{ _ byte }

// RunRef returns a weak reference that identifies the run rec records: the
// same for every Recorder sim hands to the starts of a subject within one
// run, different across runs, and holding nothing of the run alive (its
// Value is nil once the run has ended and been collected). A subject keeps
// per-run state across its own crash and restart in a map keyed by it,
// sweeping the keys whose Value is nil. ok is false for a Recorder sim did
// not make.
func RunRef(rec Recorder) (ref weak.Pointer[RunMarker], ok bool) {
	a, isSim := rec.(actorRecorder)
	if !isSim || a.r == nil {
		return weak.Pointer[RunMarker]{}, false
	}
	return weak.Make(&a.r.marker), true
}

type objKey struct {
	gvr      schema.GroupVersionResource
	ns, name string
}

// recordsHint is the number of records of the longest run so far (at most
// maxRecordsHint): a new run reserves that many at once, since growing a
// slice of Records step by step copies and discards several times the
// final trace.
var recordsHint atomic.Int64

const maxRecordsHint = 1 << 16

func newRecorder(start time.Time, policy *Policy, limit int) *recorder {
	return &recorder{start: start, policy: policy, desired: -1, freeze: make(chan struct{}), limit: limit,
		recs: make([]Record, 0, max(1024, recordsHint.Load()))}
}

// overBudget reports whether the trace has reached its record budget, and
// how many records past twice the budget were dropped.
func (r *recorder) overBudget() (over bool, dropped int) {
	if !r.over.Load() {
		return false, 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return true, r.dropped
}

// finalRecords lifts the budget for the records of the run's end.
func (r *recorder) finalRecords() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.final = true
}

// now returns the virtual time since the run started.
func (r *recorder) now() time.Duration { return time.Since(r.start) }

// add stamps and appends rec; it reports whether rec was recorded.
func (r *recorder) addLocked(rec Record, at time.Duration) {
	if r.closed {
		return
	}
	if n := len(r.recs); r.limit > 0 && n >= r.limit && !r.final {
		r.over.Store(true)
		if n >= 2*r.limit {
			r.dropped++
			return
		}
	}
	rec.Pos = len(r.recs)
	rec.At = Duration(at)
	r.recs = append(r.recs, rec)
	if r.progress != nil {
		r.progress.Add(1)
	}
	if activity(rec) {
		r.lastAct = at
	}
}

// activity reports whether rec counts against quiet: what changes the
// server's state or the run's (writes and every write request, failed or
// not, the watch events they cause, faults, steps, crashes), not what only
// looks: reads (get, list and watch requests, lists, watch opens and
// closes), bookmarks, a subject's handler calls, workqueue operations and
// reconciles, cache snapshots and log lines. A controller with a periodic
// resync (an informer's resync period, an AddAfter loop, the HPA's 15 s)
// reads and reconciles forever and writes nothing once settled: its run is
// quiet. Work under way is not: a reconcile open or a key queued or
// retried after a failure keeps the run going (pendingRetries).
func activity(rec Record) bool {
	switch rec.Kind {
	case RecSent, RecDelivered:
		return rec.EventType != string(watch.Bookmark)
	case RecCache, RecFinal, RecLog, RecHandler, RecQueue, RecReconcile, RecList, RecWatchOpen, RecWatchClose:
		return false
	case RecRequest:
		return !readVerb(rec.Verb)
	}
	return true
}

// readVerb reports whether a request's verb only reads ("get",
// "get/scale", "list", "watch").
func readVerb(verb string) bool {
	v, _, _ := strings.Cut(verb, "/")
	return v == "get" || v == "list" || v == "watch"
}

// record appends a run-side record at the current virtual time. A
// RecFinal of a Converger subject whose desired state does not hold at the
// end carries the Converger's reason of that moment in its Detail (the
// RecDesired records hold the reason of each flip, which may be long
// stale by then).
func (r *recorder) record(rec Record) {
	at := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec.Kind == RecFinal && r.conv != nil && rec.Detail == "" {
		if ok, why := r.conv.Desired(r.objs[:len(r.objs):len(r.objs)]); !ok {
			rec.Detail = why
		}
	}
	r.addLocked(rec, at)
}

// lastActivity returns when the last activity was recorded.
func (r *recorder) lastActivity() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastAct
}

// close stops recording and returns the records.
func (r *recorder) close() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if n := int64(min(len(r.recs), maxRecordsHint)); n > recordsHint.Load() {
		recordsHint.Store(n)
	}
	return r.recs
}

// actorRecorder is the Recorder handed to one actor (a subject).
type actorRecorder struct {
	r     *recorder
	actor string
}

var _ Recorder = actorRecorder{}

// Record stamps and appends rec (Actor defaults to the subject's name). A
// reconcile "start" record of a subject armed for a mid-reconcile crash
// never returns: the calling goroutine is frozen until the run ends, then
// ends itself with runtime.Goexit (see RecReconcile).
func (a actorRecorder) Record(rec Record) {
	if rec.Actor == "" {
		rec.Actor = a.actor
	}
	r := a.r
	at := r.now()
	r.mu.Lock()
	r.addLocked(rec, at)
	var fire chan struct{}
	if r.armed != nil && rec.Kind == RecReconcile && rec.Op == "start" && rec.Actor == r.armedActor {
		fire = r.armed
		r.armed, r.armedActor = nil, ""
	}
	r.mu.Unlock()
	if fire != nil {
		close(fire)
		<-r.freeze
		// The run is over and the process this goroutine belonged to
		// crashed while it was frozen: it ends here, running its deferred
		// calls (a WaitGroup's Done, a queue's Done) so that the rest of
		// the subject can stop. Resuming the reconcile instead (its next
		// request, a retry's backoff sleep) would outlive the run, and the
		// bubble would end with goroutines still blocked.
		runtime.Goexit()
	}
}

// Now returns the virtual time since the run started.
func (a actorRecorder) Now() time.Duration { return a.r.now() }

// armCrash arms the mid-reconcile crash of actor; the returned channel is
// closed when actor records a reconcile start.
func (r *recorder) armCrash(actor string) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.armedActor = actor
	r.armed = make(chan struct{})
	return r.armed
}

// disarmCrash cancels an armed crash that did not fire.
func (r *recorder) disarmCrash() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.armed, r.armedActor = nil, ""
}

// release lets frozen goroutines return (at the end of the run).
func (r *recorder) release() { r.releaseOnce.Do(func() { close(r.freeze) }) }

// setConverger makes the recorder evaluate c now and after every server
// write (c nil: stop evaluating).
func (r *recorder) setConverger(c Converger, actor string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.conv, r.convActor = c, actor
	if c != nil {
		r.evaluateLocked(r.now())
	}
}

// Observe implements fakeapi.Observer: it turns an observation into a
// record (requests of the sim's own client are not traced) and feeds the
// policy's watch bookkeeping.
func (r *recorder) Observe(o fakeapi.Observation) {
	if o.Request != nil && o.Request.Client == ClientSim {
		return
	}
	if o.Watcher != nil {
		switch o.Kind {
		case fakeapi.ObsWatchOpen:
			r.policy.WatchOpened(*o.Watcher)
		case fakeapi.ObsWatchClose:
			r.policy.WatchClosed(o.Watcher.ID)
		case fakeapi.ObsSent:
			r.policy.WatchSent(*o.Watcher)
		}
	}
	at := r.now()
	if !o.At.IsZero() {
		at = o.At.Sub(r.start)
	}
	var m objMeta
	if o.Kind == fakeapi.ObsWrite {
		m = parseMeta(o.Object)
	}
	rec := r.convert(o, m)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addLocked(rec, at)
	if o.Kind == fakeapi.ObsWrite && !r.closed {
		r.applyWriteLocked(o, m, at)
	}
}

// convert turns an observation into a record; m is the metadata of a
// write's object.
func (r *recorder) convert(o fakeapi.Observation, m objMeta) Record {
	rec := Record{
		Resource:  ResourceName(o.Resource),
		Namespace: o.Namespace,
		Name:      o.Name,
		UID:       string(o.UID),
		RV:        o.RV,
	}
	if o.Resource.Empty() {
		rec.Resource = ""
	}
	if o.Request != nil {
		rec.Actor = o.Request.Client
		rec.Verb = verbOf(o.Request.Verb, o.Request.Subresource)
	}
	if o.Watcher != nil {
		rec.Actor = o.Watcher.Client
		rec.Watcher = r.policy.WatcherName(*o.Watcher)
		if rec.Resource == "" {
			rec.Resource = ResourceName(o.Watcher.Resource)
			rec.Namespace = o.Watcher.Namespace
		}
	}
	if o.Event != nil {
		rec.EventType = string(o.Event.Type)
		rec.Initial = o.Event.InitialEvent
	}
	switch o.Kind {
	case fakeapi.ObsRequest:
		rec.Kind = RecRequest
		rec.Code = o.Code
		rec.Reason = string(o.Reason)
	case fakeapi.ObsWrite:
		rec.Kind = RecWrite
		rec.Verb = o.Verb
		if o.Request != nil && o.Request.Subresource != "" && !strings.Contains(o.Verb, "/") {
			rec.Verb = verbOf(o.Verb, o.Request.Subresource)
		}
		// The server's encoder ends objects with a newline: drop it, so the
		// record reads back from JSON unchanged.
		rec.Object = bytes.TrimSpace(o.Object)
		rec.ByGC = o.ByGC
		if o.Request != nil && o.Request.Verb == "update" && !o.ByGC {
			rec.BaseRV, _ = strconv.ParseInt(o.Request.Precondition, 10, 64)
		}
		if o.ByGC || o.Request == nil {
			rec.Actor = "gc"
		}
		rec.Owner = m.owner()
	case fakeapi.ObsList:
		rec.Kind = RecList
		rec.Lag = o.Lag
		rec.Count = o.Count
	case fakeapi.ObsWatchOpen:
		rec.Kind = RecWatchOpen
		rec.RV = o.RV
		rec.WatchList = o.Watcher != nil && o.Watcher.WatchList
		if o.Watcher != nil {
			rec.Detail = "from resourceVersion " + strconv.Quote(o.Watcher.StartRV)
		}
	case fakeapi.ObsWatchClose:
		rec.Kind = RecWatchClose
		rec.Reason = string(o.Reason)
	case fakeapi.ObsSent:
		rec.Kind = RecSent
	case fakeapi.ObsDelivered:
		rec.Kind = RecDelivered
	case fakeapi.ObsFault:
		rec.Kind = RecFault
		rec.Target = rec.Actor
		rec.Actor = ActorFaults
		rec.Fault = o.Fault
		rec.ContractBreaking = o.ContractBreaking
		rec.Lag = o.Lag
		rec.Code = faultCode(o.Fault)
	case fakeapi.ObsCompact:
		rec.Kind = RecCompact
	default:
		rec.Kind = RecNote
		rec.Detail = "unknown observation " + string(o.Kind)
	}
	return rec
}

// faultCode returns the status code a named fault answers with (the
// "-<code>" suffix of error-<code> and fail-next-<code>; 504 for writes
// reported as timeouts), 0 if none.
func faultCode(name string) int {
	switch name {
	case FaultTimeoutNextWrite, FaultUnknownOutcome:
		return 504
	case FaultExpireOnRewatch:
		return 410
	}
	if i := strings.LastIndexByte(name, '-'); i >= 0 {
		if n, err := strconv.Atoi(name[i+1:]); err == nil {
			return n
		}
	}
	return 0
}

// verbOf names a verb with its subresource: "update/status".
func verbOf(verb, sub string) string {
	if sub == "" {
		return verb
	}
	return verb + "/" + sub
}

// objMeta is the part of an object's metadata the trace needs.
type objMeta struct {
	Metadata struct {
		DeletionTimestamp *string  `json:"deletionTimestamp"`
		Finalizers        []string `json:"finalizers"`
		OwnerReferences   []struct {
			UID        string `json:"uid"`
			Controller *bool  `json:"controller"`
		} `json:"ownerReferences"`
	} `json:"metadata"`
}

// parseMeta reads the metadata fields the trace needs. Most objects have
// none of them: a substring check spares decoding those.
func parseMeta(b []byte) objMeta {
	var m objMeta
	if len(b) > 0 && (bytes.Contains(b, []byte(`"ownerReferences"`)) || bytes.Contains(b, []byte(`"finalizers"`)) ||
		bytes.Contains(b, []byte(`"deletionTimestamp"`))) {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

func (m objMeta) owner() string {
	for _, o := range m.Metadata.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			return o.UID
		}
	}
	return ""
}

// applyWriteLocked updates the mirror of the server's state with one write
// (m is the metadata of its object) and, for a Converger subject, records
// RecDesired when its answer changes.
func (r *recorder) applyWriteLocked(o fakeapi.Observation, m objMeta, at time.Duration) {
	k := objKey{o.Resource, o.Namespace, o.Name}
	gone := len(m.Metadata.Finalizers) == 0 && (o.Verb == "delete" || m.Metadata.DeletionTimestamp != nil)
	if o.Event != nil && o.Event.Type != "" {
		// The store says what the write did; an update that removed the
		// last finalizer is a DELETED event whose object still lists it.
		gone = o.Event.Type == watch.Deleted
	}
	i, had := slices.BinarySearchFunc(r.keys, k, compareKeys)
	switch {
	case gone && had:
		r.keys = slices.Delete(r.keys, i, i+1)
		r.objs = slices.Delete(r.objs, i, i+1)
	case !gone && had:
		r.objs[i] = ServerObject{Resource: o.Resource, Object: o.Object}
	case !gone:
		r.keys = slices.Insert(r.keys, i, k)
		r.objs = slices.Insert(r.objs, i, ServerObject{Resource: o.Resource, Object: o.Object})
	}
	if r.conv != nil {
		r.evaluateLocked(at)
	}
}

// compareKeys orders objects by resource, namespace and name.
func compareKeys(a, b objKey) int {
	if c := strings.Compare(a.gvr.Group, b.gvr.Group); c != 0 {
		return c
	}
	if c := strings.Compare(a.gvr.Version, b.gvr.Version); c != 0 {
		return c
	}
	if c := strings.Compare(a.gvr.Resource, b.gvr.Resource); c != 0 {
		return c
	}
	if c := strings.Compare(a.ns, b.ns); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

// evaluateLocked asks the Converger about the mirrored state and records a
// change of its answer. The slice is the mirror itself (capped, so an
// append reallocates): Converger.Desired must not modify it.
func (r *recorder) evaluateLocked(at time.Duration) {
	ok, why := r.conv.Desired(r.objs[:len(r.objs):len(r.objs)])
	v := 0
	if ok {
		v = 1
	}
	if v != r.desired {
		r.desired = v
		r.addLocked(Record{Kind: RecDesired, Actor: r.convActor, Value: ok, Detail: why}, at)
	}
}

// ObjectStateOf describes obj (a typed object or *unstructured.Unstructured)
// for a snapshot; resource is its trace name (see ResourceName). ok is false
// when obj has no object metadata.
func ObjectStateOf(resource string, obj any) (ObjectState, bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ObjectState{}, false
	}
	rv, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	st := ObjectState{
		Resource:    resource,
		Namespace:   m.GetNamespace(),
		Name:        m.GetName(),
		UID:         string(m.GetUID()),
		RV:          rv,
		Terminating: m.GetDeletionTimestamp() != nil,
		Finalizers:  append([]string(nil), m.GetFinalizers()...),
	}
	if len(st.Finalizers) == 0 {
		st.Finalizers = nil
	}
	for _, o := range m.GetOwnerReferences() {
		if o.Controller != nil && *o.Controller {
			st.Owner = string(o.UID)
		}
	}
	return st, true
}

// SortObjectStates sorts a snapshot by resource, namespace and name.
func SortObjectStates(s []ObjectState) {
	sort.Slice(s, func(i, j int) bool {
		a, b := s[i], s[j]
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
}
