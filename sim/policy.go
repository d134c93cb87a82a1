package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/fakeapi"
)

// Fault names, as they appear in RecFault records (Record.Fault). Request
// errors are named "error-<code>" when drawn at random (ErrorRate) and
// "fail-next-<code>" when a fail-next step asked for them.
const (
	FaultTimeoutNextWrite = "timeout-next-write" // a write applied, reported as a 504 timeout (step)
	FaultUnknownOutcome   = "unknown-outcome"    // the same, drawn at random (UnknownOutcomeRate)
	FaultExpireOnRewatch  = "expire-on-rewatch"  // a re-watch answered 410 Expired (ExpireOnRewatch)
	FaultStaleReplica     = "stale-replica"      // a list or watch at RV "0" served by a lagging replica
	FaultWatchClose       = "watch-close"        // a watch closed cleanly (disconnect step or DisconnectEvery)
	FaultWatchBreak       = "watch-break"        // a watch broken abruptly (break step or DisconnectEvery)
	FaultWatchExpire      = "watch-expire"       // a 410 ERROR event on a watch (expire step)
	FaultCompact          = "compact"            // history compacted (compact step)
	FaultHold             = "hold"               // watch deliveries held (hold step)
	FaultRelease          = "release"            // a hold released (release step)
	FaultCrash            = "crash"              // the subject crashed (crash step)
)

// Client names with a fixed role in a run.
const (
	// ClientSim is the sim's own client (final state); never faulted, never
	// traced.
	ClientSim = "sim"
	// ClientSetup creates Plan.Objects before the run starts; never faulted.
	ClientSetup = "setup"
	// ClientUser applies the user's steps. Random faults spare it (the
	// plan's steps are the scenario's input); targeted faults (fail-next,
	// timeout-next-write with Target "user") hit it.
	ClientUser = "user"
	// ActorFaults is the actor of fault records.
	ActorFaults = "faults"
)

// ResourceName is how a resource is named in traces and plans: the plural
// resource for the core group ("pods"), resource.group otherwise
// ("bellerophons.lab.cachelab.dev").
func ResourceName(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Resource
	}
	return gvr.Resource + "." + gvr.Group
}

// resourceMatches reports whether a plan's resource name (as written in a
// step: "", "pods", "bellerophons" or "bellerophons.lab.cachelab.dev")
// names gvr.
func resourceMatches(name string, gvr schema.GroupVersionResource) bool {
	return name == "" || name == gvr.Resource || name == ResourceName(gvr)
}

// Policy is the fault policy of one run: it implements fakeapi.Hooks from a
// plan's FaultPolicy and Seed, and keeps the state of the timeline's fault
// steps (armed one-shot faults, stale-replica windows, holds).
//
// Every random choice draws from a stream named by what it is about (see
// stream): per watch, the stream is named by (kind of draw, client,
// resource, ordinal of the watch among that client's watches of that
// resource); per request by (kind of draw, client, verb, resource, object,
// and n: the request is that client's n-th such request to that object).
// Nothing is drawn from a stream shared by unrelated requests, so a fault
// lands on the same request whatever else happened around it; and with the
// run's scheduler (see sched.go) requests reach the policy in an order that
// does not depend on how goroutines interleave.
//
// Random faults are drawn only up to FaultPolicy.Until (default: the time
// of the last step); latency and the stale replica apply all along.
// The policy records nothing itself: the server observes every fault it
// applies (fakeapi.ObsFault, named by RequestFault.Name) and the run turns
// those observations into RecFault records, so the trace shows the faults
// that happened, when they happened. The fault names are listed with
// FaultNames.
type Policy struct {
	seed   uint64
	faults FaultPolicy
	until  time.Duration
	steps  []Step
	end    time.Duration // the plan's deadline
	// now returns the virtual time since the run started.
	now func() time.Duration

	// sched, when set (Run sets it), orders requests and deliveries and
	// runs the drawn disconnects in their turn.
	sched *scheduler

	mu     sync.Mutex
	server *fakeapi.Server
	// requests counts each client's requests per verb and object (the
	// n-th request names a fault draw).
	requests map[string]int
	watchers map[fakeapi.WatcherID]*watcherState
	ordinals map[string]int
	armed    []armedFault
	stale    []window
	holds    []window
	stopped  bool
	// moments is the bookkeeping of the named moments of the run (see
	// targeted.go): the subject's writes, the revision before each step.
	moments moments
}

var _ fakeapi.Hooks = (*Policy)(nil)

// watcherState is the policy's view of one watch.
type watcherState struct {
	info    fakeapi.WatcherInfo
	name    string
	latency *rand.Rand
	open    bool
	timer   *time.Timer
	disc    time.Duration // drawn disconnect delay, -1 if none
	abrupt  bool
	// catchUp, when non-zero, is when the held replica that served this
	// watch catches up: its events after info.ReplicaRV wait until then.
	catchUp time.Duration
	// disc holds the scheduled disconnect (with a scheduler).
	discTicket *ticket
	// sent holds the send times of events not yet given a delay: the
	// server sends events to a watch in order and asks for their delays in
	// the same order. sentBase is the sequence number of sent[0], delays
	// the number of delays given so far.
	sent     []time.Duration
	sentBase int
	delays   int
}

// armedFault is a one-shot fault waiting for a matching request.
type armedFault struct {
	step     int
	op       string // fail-next, timeout-next-write
	code     int
	verb     string
	resource string
	target   string
	// afterWrite, when > 0, keeps the fault for a request that comes
	// after the subject's afterWrite-th write request (Step.AfterWrite).
	afterWrite int
}

// window is a fault that lasts [from, to) of virtual time.
type window struct {
	step     int
	from, to time.Duration
	resource string
	target   string
	lag      int64
	// held is the revision a stale-replica window's replica is held at: it
	// has seen nothing after it until the window ends (to; 0: the run's
	// end), then it has caught up.
	held int64
	// notOlderThan: the replica also serves reads at a given RV (stale-replica
	// step with NotOlderThan).
	notOlderThan bool
}

// NewPolicy returns the policy of plan p. now returns the virtual time since
// the run started (nil: the time since the call to NewPolicy).
func NewPolicy(p *Plan, now func() time.Duration) *Policy {
	if now == nil {
		start := time.Now()
		now = func() time.Duration { return time.Since(start) }
	}
	until := p.Faults.Until.D()
	if until == 0 {
		for _, s := range p.Steps {
			until = max(until, s.At.D())
		}
	}
	deadline := p.Deadline.D()
	if deadline == 0 {
		deadline = DefaultDeadline
	}
	return &Policy{
		seed: p.Seed, faults: p.Faults, until: until, steps: p.Steps, end: deadline,
		moments:  moments{subject: p.Subject, stepRV: map[int]int64{}},
		now:      now,
		watchers: map[fakeapi.WatcherID]*watcherState{},
		ordinals: map[string]int{},
		requests: map[string]int{},
	}
}

// Attach gives the policy the server its timers act on (disconnects).
func (p *Policy) Attach(s *fakeapi.Server) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.server = s
}

// Stop cancels every pending timer; no fault is injected afterwards.
func (p *Policy) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	for _, w := range p.watchers {
		if w.timer != nil {
			w.timer.Stop()
			w.timer = nil
		}
		if w.discTicket != nil {
			p.sched.withdraw(w.discTicket)
			w.discTicket = nil
		}
	}
}

// AwaitRequest implements fakeapi.Scheduler: with a scheduler, a request
// waits for its turn, due after the drawn request latency.
func (p *Policy) AwaitRequest(ctx context.Context, req fakeapi.RequestInfo) error {
	if p.sched == nil {
		return nil
	}
	return p.sched.awaitRequest(ctx, req, p.requestLatency)
}

// requestLatency draws the latency of the request named key.
func (p *Policy) requestLatency(key string) time.Duration {
	d := p.faults.RequestLatency
	if d.Kind == "" || d.Kind == "none" {
		return 0
	}
	return d.Draw(stream(p.seed, "request-latency", key))
}

// AwaitDelivery implements fakeapi.Scheduler: with a scheduler, a ready
// event waits for its turn; without one it goes at once.
func (p *Policy) AwaitDelivery(w fakeapi.WatcherInfo, ev fakeapi.EventInfo, seq int) (<-chan struct{}, func()) {
	if p.sched == nil || exempt(w.Client) {
		ch := make(chan struct{})
		close(ch)
		return ch, func() {}
	}
	return p.sched.awaitDelivery(p.WatcherName(w), seq)
}

// WatchTimeout implements fakeapi.Scheduler. client-go's reflector asks for
// a timeout drawn from math/rand's global source in [5m, 10m] (shared by
// every run of a process, so runs in parallel draw each other's values);
// the policy replaces such a timeout with one drawn in the same range from
// the plan's seed and the watch's name. Shorter timeouts, which a client
// chose deliberately, are kept.
func (p *Policy) WatchTimeout(w fakeapi.WatcherInfo, requested time.Duration) time.Duration {
	const lo, hi = 5 * time.Minute, 10 * time.Minute
	if requested < lo || requested > hi {
		return requested
	}
	p.mu.Lock()
	name := p.watcherLocked(w).name
	p.mu.Unlock()
	secs := stream(p.seed, "watch-timeout", name).Int64N(int64((hi-lo)/time.Second) + 1)
	return lo + time.Duration(secs)*time.Second
}

// exempt reports whether client is never faulted.
func exempt(client string) bool { return client == ClientSim || client == ClientSetup }

// nextOrdinal counts occurrences of key from 1 (watch ordinals of the
// sim's own wrappers).
func (p *Policy) nextOrdinal(key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ordinals["#"+key]++
	return p.ordinals["#"+key]
}

// WatcherName returns the trace name of a watch: "client/resource#n", n
// counting the client's watches of that resource from 1.
func (p *Policy) WatcherName(w fakeapi.WatcherInfo) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.watcherLocked(w).name
}

func (p *Policy) watcherLocked(w fakeapi.WatcherInfo) *watcherState {
	if st, ok := p.watchers[w.ID]; ok {
		return st
	}
	res := ResourceName(w.Resource)
	key := w.Client + "/" + res
	p.ordinals[key]++
	n := p.ordinals[key]
	st := &watcherState{
		info:    w,
		name:    key + "#" + strconv.Itoa(n),
		latency: stream(p.seed, "latency", w.Client, res, strconv.Itoa(n)),
		open:    true,
		disc:    -1,
	}
	if p.faults.DisconnectEvery > 0 {
		r := stream(p.seed, "disconnect", w.Client, res, strconv.Itoa(n))
		every := int64(p.faults.DisconnectEvery)
		st.disc = time.Duration(r.Int64N(2*every + 1))
		st.abrupt = r.IntN(2) == 1
	}
	p.watchers[w.ID] = st
	return st
}

// WatchOpened tells the policy a watch opened (the run's observer calls it):
// with DisconnectEvery set, it schedules the watch's disconnect. It does not
// call the server and may be called with the server's lock held.
func (p *Policy) WatchOpened(w fakeapi.WatcherInfo) {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.watcherLocked(w)
	if w.ReplicaRV > 0 {
		st.catchUp = p.catchUpLocked(w, now)
	}
	if st.disc < 0 || p.stopped || exempt(w.Client) || now+st.disc > p.until {
		return
	}
	id, abrupt := w.ID, st.abrupt
	if p.sched != nil {
		st.discTicket = p.sched.at(now+st.disc, "disconnect "+st.name, func() { p.disconnect(id, abrupt) })
		return
	}
	st.timer = time.AfterFunc(st.disc, func() { p.disconnect(id, abrupt) })
}

// WatchClosed tells the policy a watch closed: its pending disconnect is
// cancelled.
func (p *Policy) WatchClosed(id fakeapi.WatcherID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st, ok := p.watchers[id]; ok {
		st.open = false
		if st.timer != nil {
			st.timer.Stop()
			st.timer = nil
		}
		if st.discTicket != nil {
			p.sched.withdraw(st.discTicket)
			st.discTicket = nil
		}
	}
}

// disconnect closes a watch on its drawn schedule.
func (p *Policy) disconnect(id fakeapi.WatcherID, abrupt bool) {
	p.mu.Lock()
	st := p.watchers[id]
	srv := p.server
	if p.stopped || st == nil || !st.open || srv == nil {
		p.mu.Unlock()
		return
	}
	st.timer, st.discTicket = nil, nil
	p.mu.Unlock()
	// The server observes the close as a watch-close or watch-break fault;
	// ErrNoSuchWatch means the watch ended meanwhile: nothing to inject.
	_ = srv.CloseWatch(id, abrupt)
}

// DisconnectDelay returns the disconnect delay drawn for a watch (whether or
// not it fires before Until), and whether it is abrupt; ok is false when
// DisconnectEvery is 0.
func (p *Policy) DisconnectDelay(w fakeapi.WatcherInfo) (d time.Duration, abrupt, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.watcherLocked(w)
	return st.disc, st.abrupt, st.disc >= 0
}

// EventDelay implements fakeapi.Hooks: each watch draws its own latency
// for each event from FaultPolicy.Latency (so different watches interleave
// differently), and events sent while a hold covers the watch wait until
// the hold ends.
func (p *Policy) EventDelay(w fakeapi.WatcherInfo, ev fakeapi.EventInfo) time.Duration {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.watcherLocked(w)
	sentAt := now
	if i := st.delays - st.sentBase; i < len(st.sent) {
		sentAt = st.sent[i]
		st.sent = st.sent[i+1:]
		st.sentBase = st.delays + 1
	}
	st.delays++
	var d time.Duration
	if k := p.faults.Latency.Kind; k != "" && k != "none" && !exempt(w.Client) {
		d = p.faults.Latency.Draw(st.latency)
	}
	for _, h := range p.holds {
		if sentAt >= h.from && sentAt < h.to && resourceMatches(h.resource, w.Resource) && (h.target == "" || h.target == w.Client) {
			d = max(d, h.to-sentAt)
		}
	}
	if st.catchUp > sentAt && w.ReplicaRV > 0 && ev.RV > w.ReplicaRV && !ev.InitialEvent {
		// Served by a held replica: what it had not seen reaches the
		// watch when it catches up.
		d = max(d, st.catchUp-sentAt)
	}
	return d
}

// catchUpLocked returns when the held replica that served watch w (opened
// at now) catches up: the end of the stale-replica window holding it at
// w.ReplicaRV (the run's end for a window without one); 0 when no window
// holds it there (the policy-wide StaleReplicaLag, a count of revisions,
// catches up at once).
func (p *Policy) catchUpLocked(w fakeapi.WatcherInfo, now time.Duration) time.Duration {
	var end time.Duration
	for _, win := range p.stale {
		if win.held > w.ReplicaRV || now < win.from || (win.to != 0 && now >= win.to) || (win.target != "" && win.target != w.Client) {
			continue
		}
		to := win.to
		if to == 0 {
			to = p.end
		}
		end = max(end, to)
	}
	return end
}

// WatchSent tells the policy the server queued an event for a watch (the
// run's observer calls it for every fakeapi.ObsSent), so that holds apply
// to events by the time they were sent.
func (p *Policy) WatchSent(w fakeapi.WatcherInfo) {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.watcherLocked(w)
	if st.delays > st.sentBase+len(st.sent) {
		// The delay of this event was asked for before it was observed
		// (both at the same virtual time): keep the sequence aligned.
		st.sentBase++
		return
	}
	st.sent = append(st.sent, now)
}

// BeforeRequest implements fakeapi.Hooks: armed one-shot faults first
// (fail-next, timeout-next-write), then, up to Until and except for the
// user, random 410s on re-watch, random request errors and writes with
// unknown outcome; lists and watches at resourceVersion "0" are served by the
// stale replica when one lags.
func (p *Policy) BeforeRequest(req fakeapi.RequestInfo) fakeapi.RequestFault {
	if exempt(req.Client) {
		return fakeapi.RequestFault{}
	}
	now := p.now()
	k := p.countSubjectWrite(req)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.decideLocked(req, now, k)
}

// decideLocked decides req's fault; k is req's rank among the subject's
// counted writes (0: not one).
func (p *Policy) decideLocked(req fakeapi.RequestInfo, now time.Duration, k int) fakeapi.RequestFault {
	write := slices.Contains(WriteVerbs, req.Verb)
	// The request's name for its draws: what it is (client, verb, object)
	// and how many such requests came before it. With the scheduler,
	// requests reach the policy in their turn, so the count is the same
	// in every run of the plan.
	base, _ := requestKey(req)
	p.requests[base]++
	key := base + " #" + strconv.Itoa(p.requests[base])
	// The subject's writes before this request (a write does not come
	// after itself).
	before := len(p.moments.writeRV)
	if k > 0 {
		before = k - 1
	}
	for i, a := range p.armed {
		if (a.target != "" && a.target != req.Client) || !resourceMatches(a.resource, req.Resource) || a.afterWrite > before {
			continue
		}
		if a.op == "fail-next" && (a.verb == "" || a.verb == req.Verb) {
			p.armed = slices.Delete(p.armed, i, i+1)
			return fakeapi.RequestFault{Err: statusError(a.code, fmt.Sprintf("fail-next, step %d", a.step)), Name: "fail-next-" + strconv.Itoa(a.code)}
		}
		if a.op == "timeout-next-write" && write && (a.verb == "" || a.verb == req.Verb) {
			p.armed = slices.Delete(p.armed, i, i+1)
			return fakeapi.RequestFault{ApplyThenTimeout: true, Name: FaultTimeoutNextWrite}
		}
	}
	if now <= p.until && req.Client != ClientUser {
		if p.faults.ExpireOnRewatch > 0 && req.Verb == "watch" && req.ResourceVersion != "" && req.ResourceVersion != "0" && !req.SendInitialEvents {
			r := stream(p.seed, "rewatch", key)
			if r.Float64() < p.faults.ExpireOnRewatch {
				return fakeapi.RequestFault{Err: statusError(410, "expireOnRewatch"), Name: FaultExpireOnRewatch}
			}
		}
		if p.faults.ErrorRate > 0 && len(p.faults.ErrorCodes) > 0 {
			r := stream(p.seed, "error", key)
			x, i := r.Float64(), r.IntN(len(p.faults.ErrorCodes))
			if x < p.faults.ErrorRate {
				code := p.faults.ErrorCodes[i]
				return fakeapi.RequestFault{Err: statusError(code, "errorRate"), Name: "error-" + strconv.Itoa(code)}
			}
		}
		if p.faults.UnknownOutcomeRate > 0 && write {
			r := stream(p.seed, "unknown-outcome", key)
			if r.Float64() < p.faults.UnknownOutcomeRate {
				return fakeapi.RequestFault{ApplyThenTimeout: true, Name: FaultUnknownOutcome}
			}
		}
	}
	if req.ResourceVersion != "" && (req.Verb == "list" || req.Verb == "watch") {
		// Reads at "0" go to the replica (FaultPolicy.StaleReplicaLag and
		// every window); reads at a given RV only in a notOlderThan window.
		// The store serves the lag where kube-apiserver's watch cache
		// would (an Exact list, a plain watch from N are its own business)
		// and answers 504 Too large when the replica is behind N.
		var (
			lag  int64
			held int64
		)
		if req.ResourceVersion == "0" {
			lag = p.faults.StaleReplicaLag
		}
		// A plain watch from N at or below a held replica's revision
		// continues a read that replica served (the list at "0" before
		// it): the same lagging member serves it.
		var from int64 = -1
		if req.Verb == "watch" && !req.SendInitialEvents && req.ResourceVersion != "0" {
			if n, err := strconv.ParseInt(req.ResourceVersion, 10, 64); err == nil {
				from = n
			}
		}
		for _, w := range p.stale {
			if now >= w.from && (w.to == 0 || now < w.to) && (w.target == "" || w.target == req.Client) && (req.ResourceVersion == "0" || w.notOlderThan || (from >= 0 && from <= w.held)) {
				if held == 0 || w.held < held {
					held = w.held
				}
			}
		}
		if lag > 0 || held > 0 {
			return fakeapi.RequestFault{ReplicaLag: lag, ReplicaAt: held, Name: FaultStaleReplica}
		}
	}
	return fakeapi.RequestFault{}
}

// statusError returns the apierrors error a fault answers with.
func statusError(code int, why string) error {
	msg := "injected by cachelab's fault policy (" + why + ")"
	switch code {
	case 410:
		return apierrors.NewResourceExpired("too old resource version: " + msg)
	case 429:
		return apierrors.NewTooManyRequests(msg, 1)
	case 500:
		return apierrors.NewInternalError(errors.New(msg))
	case 503:
		return apierrors.NewServiceUnavailable(msg)
	case 504:
		return apierrors.NewTimeoutError(msg, 1)
	}
	return apierrors.NewInternalError(fmt.Errorf("%s: code %d", msg, code))
}

// Arm arms the one-shot fault of step i (fail-next or timeout-next-write):
// the next matching request gets it; with Step.AfterWrite K, the next
// matching request after the subject's K-th write request.
func (p *Policy) Arm(i int) {
	s := p.steps[i]
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = append(p.armed, armedFault{step: i, op: s.Op, code: s.Code, verb: s.Verb, resource: s.Resource, target: s.Target, afterWrite: s.AfterWrite})
}

// StaleReplica starts the stale-replica window of step i: a replica held
// at the revision Lag revisions behind the latest when the step is played
// serves lists and watches at resourceVersion "0", for For (0: until the
// end of the run), then catches up. It is behind in time, as a lagging
// watch cache is: writes made meanwhile (the controller's own among them)
// do not move it, and a watch it serves delivers the events it had not
// seen, in order, when it catches up. With NotOlderThan, lists and
// WatchLists at a given resourceVersion N are served by it too; the store
// answers 504 "Too large resource version" when the replica has not
// reached N (EDGE-CASES 14). It returns the held revision.
func (p *Policy) StaleReplica(i int) int64 {
	s := p.steps[i]
	now := p.now()
	w := window{step: i, from: now, lag: s.Lag, target: s.Target, notOlderThan: s.NotOlderThan}
	if s.For > 0 {
		w.to = now + s.For.D()
	}
	latest, _ := p.serverRV()
	p.mu.Lock()
	defer p.mu.Unlock()
	w.held = max(latest-s.Lag, 1)
	if s.AsOf != "" {
		if rv, ok := p.momentRVLocked(s.AsOf); ok {
			w.held = max(min(rv, latest), 1)
		} else {
			w.held = max(latest, 1)
		}
	}
	p.stale = append(p.stale, w)
	return w.held
}

// Hold starts the hold of step i: events sent to matching watches are not
// delivered before the hold ends, at the first of: For after the step, the
// next release step with the same resource and target, the deadline. It
// returns when the hold ends (virtual time since the start).
func (p *Policy) Hold(i int) time.Duration {
	s := p.steps[i]
	now := p.now()
	end := max(HoldEnd(p.steps, i, p.end), now)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holds = append(p.holds, window{step: i, from: now, to: end, resource: s.Resource, target: s.Target})
	return end
}

// HoldEnd computes when the hold of steps[i] ends: For after it, the next
// release step with the same resource and target, or deadline, whichever
// is first. It is a pure function of the plan.
func HoldEnd(steps []Step, i int, deadline time.Duration) time.Duration {
	s := steps[i]
	end := deadline
	if s.For > 0 {
		end = min(end, s.At.D()+s.For.D())
	}
	order := stepOrder(steps)
	pos := slices.Index(order, i)
	for _, j := range order[pos+1:] {
		r := steps[j]
		if r.Actor == ActorFaults && r.Op == "release" && r.Resource == s.Resource && r.Target == s.Target {
			end = min(end, r.At.D())
			break
		}
	}
	return end
}

// stepOrder returns the indexes of steps in the order they are played: by
// At, ties in list order.
func stepOrder(steps []Step) []int {
	order := make([]int, len(steps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return steps[order[a]].At < steps[order[b]].At })
	return order
}
