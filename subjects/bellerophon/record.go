package bellerophon

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/sim"
)

// The names of the sync signals the controller records (RecSignal). Each is
// recorded per resource (Record.Resource set) and for all three resources
// together (Record.Resource empty), first as false when the controller
// starts and then at every flip.
const (
	// SignalInformerSynced: informer.HasSynced, the store has the initial
	// list.
	SignalInformerSynced = "informer-synced"
	// SignalHandlerSynced: the handler registration's HasSynced, the
	// controller's handler has returned on every initial item.
	SignalHandlerSynced = "handler-synced"
	// SignalRVSynced: the informer has synced and its store resourceVersion
	// (Store.LastStoreSyncResourceVersion) is at least the resourceVersion
	// of the controller's last create or update of that resource. Deletes
	// return no resourceVersion and are not counted.
	SignalRVSynced = "rv-synced"
	// SignalQuiescenceSynced: no handler call for 10x the loop time (the
	// origin notes' definition). Recorded once, when it first holds.
	SignalQuiescenceSynced = "quiescence-synced"
)

// recorder wraps the sim.Recorder (which may be nil outside the sim) with
// the controller's actor name, and the run's turns (Env.Turn, nil outside
// the sim).
type recorder struct {
	actor string
	rec   sim.Recorder
	turns func(what, object string)
}

// turn waits for the run's turn to do what says to object, before
// recording it (see sim.Env.Turn): a handler call, a worker's Get, a sync
// signal checker woken by a channel one of them closed. Goroutines woken
// by one release then record one at a time, in the order the plan decides.
func (r recorder) turn(what, object string) {
	if r.turns != nil {
		r.turns(what, object)
	}
}

func (r recorder) record(rec sim.Record) {
	if r.rec == nil {
		return
	}
	if rec.Actor == "" {
		rec.Actor = r.actor
	}
	r.rec.Record(rec)
}

func (r recorder) note(format string, args ...any) {
	r.record(sim.Record{Kind: sim.RecNote, Detail: fmt.Sprintf(format, args...)})
}

// parseRV reads a resourceVersion as the fake server writes them (decimal);
// anything else reads as 0.
func parseRV(rv string) int64 {
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// handlerRecord describes one handler call. obj may be a
// DeletedFinalStateUnknown; key is then taken from the tombstone.
func handlerRecord(handler, resource, eventType string, obj any) sim.Record {
	r := sim.Record{Kind: sim.RecHandler, Handler: handler, EventType: eventType, Resource: resource}
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		r.Tombstone = true
		if ns, name, err := cache.SplitMetaNamespaceKey(tomb.Key); err == nil {
			r.Namespace, r.Name = ns, name
		}
		obj = tomb.Obj
	}
	if obj == nil {
		return r
	}
	if m, err := meta.Accessor(obj); err == nil {
		r.Namespace, r.Name = m.GetNamespace(), m.GetName()
		r.UID, r.RV = string(m.GetUID()), parseRV(m.GetResourceVersion())
	}
	return r
}

// signals tracks the sync signals of the controller's three informers and
// records each flip.
type signals struct {
	mu  sync.Mutex
	rec recorder
	// resources in a stable order; per resource the informer and handler
	// registration whose signals are tracked.
	resources []string
	informers map[string]cache.SharedIndexInformer
	regs      map[string]cache.ResourceEventHandlerRegistration
	// lastWriteRV is the resourceVersion of the controller's last create or
	// update per resource.
	lastWriteRV map[string]int64
	// values are the last recorded values, keyed signal + "/" + resource
	// ("" resource for the aggregate).
	values map[string]bool
	// quiescence: the time of the last handler call and whether the
	// quiescence signal has fired.
	lastEvent   time.Time
	quietWindow time.Duration
	quiet       bool
	quietCh     chan struct{}
}

func newSignals(rec recorder, quietWindow time.Duration) *signals {
	return &signals{
		rec: rec, informers: map[string]cache.SharedIndexInformer{},
		regs: map[string]cache.ResourceEventHandlerRegistration{}, lastWriteRV: map[string]int64{},
		values: map[string]bool{}, quietWindow: quietWindow, quietCh: make(chan struct{}), lastEvent: time.Now(),
	}
}

func (s *signals) add(resource string, inf cache.SharedIndexInformer, reg cache.ResourceEventHandlerRegistration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resources = append(s.resources, resource)
	s.informers[resource] = inf
	s.regs[resource] = reg
}

// start records every signal as false (as they are before the informers
// run).
func (s *signals) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sig := range []string{SignalInformerSynced, SignalHandlerSynced, SignalRVSynced} {
		for _, r := range append(append([]string(nil), s.resources...), "") {
			s.values[sig+"/"+r] = false
			s.rec.record(sim.Record{Kind: sim.RecSignal, Signal: sig, Resource: r, Value: false})
		}
	}
	s.values[SignalQuiescenceSynced+"/"] = false
	s.rec.record(sim.Record{Kind: sim.RecSignal, Signal: SignalQuiescenceSynced, Value: false})
}

// wrote notes the controller's own create or update of resource at rv.
func (s *signals) wrote(resource, rv string) {
	s.mu.Lock()
	n := parseRV(rv)
	if n > s.lastWriteRV[resource] {
		s.lastWriteRV[resource] = n
	}
	s.mu.Unlock()
	s.check()
}

// event notes a handler call (for quiescence) and checks the signals.
func (s *signals) event() {
	s.mu.Lock()
	s.lastEvent = time.Now()
	s.mu.Unlock()
	s.check()
}

// storeRV is the informer store's resourceVersion.
func storeRV(inf cache.SharedIndexInformer) int64 {
	return parseRV(inf.GetStore().LastStoreSyncResourceVersion())
}

// check evaluates every signal and records those that flipped.
func (s *signals) check() {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := map[string]bool{SignalInformerSynced: true, SignalHandlerSynced: true, SignalRVSynced: true}
	for _, r := range s.resources {
		inf := s.informers[r]
		informerSynced := cache.IsDone(inf.HasSyncedChecker())
		handlerSynced := cache.IsDone(s.regs[r].HasSyncedChecker())
		rvSynced := informerSynced && storeRV(inf) >= s.lastWriteRV[r]
		// In this order, not a map's: signals that flip in one check are
		// recorded in one order in every run (issue 16).
		for _, f := range []struct {
			sig string
			v   bool
		}{{SignalInformerSynced, informerSynced}, {SignalHandlerSynced, handlerSynced}, {SignalRVSynced, rvSynced}} {
			s.set_locked(f.sig, r, f.v)
			all[f.sig] = all[f.sig] && f.v
		}
	}
	for _, sig := range []string{SignalInformerSynced, SignalHandlerSynced, SignalRVSynced} {
		s.set_locked(sig, "", all[sig])
	}
}

func (s *signals) set_locked(sig, resource string, v bool) {
	k := sig + "/" + resource
	if old, ok := s.values[k]; ok && old == v {
		return
	}
	s.values[k] = v
	s.rec.record(sim.Record{Kind: sim.RecSignal, Signal: sig, Resource: resource, Value: v})
}

// rvSynced reports whether resource's store has caught up with the
// controller's last write of it.
func (s *signals) rvSynced(resource string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	inf := s.informers[resource]
	return inf != nil && storeRV(inf) >= s.lastWriteRV[resource]
}

// watchQuiescence fires the quiescence signal once no handler call came for
// quietWindow, then returns; it returns early when stop closes.
func (s *signals) watchQuiescence(stop <-chan struct{}) {
	for {
		s.mu.Lock()
		wait := s.lastEvent.Add(s.quietWindow).Sub(time.Now())
		if wait <= 0 {
			s.quiet = true
			s.values[SignalQuiescenceSynced+"/"] = true
			s.rec.record(sim.Record{Kind: sim.RecSignal, Signal: SignalQuiescenceSynced, Value: true})
			close(s.quietCh)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-stop:
			t.Stop()
			return
		case <-t.C:
			s.rec.turn("check quiescence", "")
		}
	}
}

// watchDone records check() as soon as each informer's and registration's
// sync channel closes, so flips are recorded when they happen, not at the
// next handler call. It returns when all are done or stop closes.
func (s *signals) watchDone(stop <-chan struct{}) {
	s.mu.Lock()
	var chans []<-chan struct{}
	for _, r := range s.resources {
		chans = append(chans, s.informers[r].HasSyncedChecker().Done(), s.regs[r].HasSyncedChecker().Done())
	}
	s.mu.Unlock()
	for _, ch := range chans {
		select {
		case <-stop:
			return
		case <-ch:
			s.rec.turn("check signals", "")
			s.check()
		}
	}
}

// recordingQueue is the controller's workqueue with every operation
// recorded into the trace (RecQueue: add, get, done, forget, requeue).
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[cache.ObjectName]
	rec recorder
}

func (q recordingQueue) op(op string, key cache.ObjectName) {
	q.rec.record(sim.Record{Kind: sim.RecQueue, Op: op, Key: key.String()})
}

// Add records "add" and adds key.
func (q recordingQueue) Add(key cache.ObjectName) {
	q.op("add", key)
	q.TypedRateLimitingInterface.Add(key)
}

// Get gets a key, waits for the turn to process it, and records "get".
// Done takes no turn: it is called by the worker that holds the key, which
// runs in a turn already (its Get's, or a request's answer).
func (q recordingQueue) Get() (cache.ObjectName, bool) {
	key, shutdown := q.TypedRateLimitingInterface.Get()
	if !shutdown {
		q.rec.turn("get", key.String())
		q.op("get", key)
	}
	return key, shutdown
}

// Done records "done" and marks key done.
func (q recordingQueue) Done(key cache.ObjectName) {
	q.op("done", key)
	q.TypedRateLimitingInterface.Done(key)
}

// Forget records "forget" and forgets key's failures.
func (q recordingQueue) Forget(key cache.ObjectName) {
	q.op("forget", key)
	q.TypedRateLimitingInterface.Forget(key)
}

// AddRateLimited records "requeue" and re-adds key after its backoff.
func (q recordingQueue) AddRateLimited(key cache.ObjectName) {
	q.op("requeue", key)
	q.TypedRateLimitingInterface.AddRateLimited(key)
}

// AddAfter records "requeue" (its Detail "after <d>": a retry Bellerophon
// chose, not one after a failure) and re-adds key after d.
func (q recordingQueue) AddAfter(key cache.ObjectName, d time.Duration) {
	q.rec.record(sim.Record{Kind: sim.RecQueue, Op: "requeue", Key: key.String(), Detail: sim.RequeueAfterPrefix + d.String()})
	q.TypedRateLimitingInterface.AddAfter(key, d)
}

// uidOf returns the UID of obj, or "" when it has no metadata.
func uidOf(obj any) types.UID {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetUID()
	}
	return ""
}
