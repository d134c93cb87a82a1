package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"k8s.io/klog/v2"
	mathrand "math/rand"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/fakeapi/clientmetrics"
	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
)

// Run plays plan p inside a new synctest bubble (virtual time) and returns
// its trace. See RunInBubble for what a run does. The error is the run's own
// failure (bad plan, unknown subject, a subject that does not start); the
// trace is returned even then, with Outcome "error: ...", as far as it got.
func Run(tb testing.TB, p *Plan) (*Trace, error) { return runInNewBubble(tb, p, nil) }

// runInNewBubble is Run with the run's context marked by mark, if not nil
// (Explore's runs record their choice points).
func runInNewBubble(tb testing.TB, p *Plan, mark func(context.Context) context.Context) (*Trace, error) {
	return RunAttempts(p, func(attempt func(ctx context.Context)) error {
		Bubble(tb, func(t *testing.T) {
			ctx := t.Context()
			if mark != nil {
				ctx = mark(ctx)
			}
			attempt(ctx)
		})
		return nil
	})
}

// attemptKey marks the context of one attempt of a run (RunAttempts).
type attemptKey struct{}

// attemptInfo is the attempt a context runs, of how many.
type attemptInfo struct{ n, of int }

// RunAttempts runs plan p as RunInBubble does, each attempt in a new
// bubble that bubble makes (calling attempt inside it with the bubble's
// context, and returning an error if the bubble failed after it), and
// returns the last attempt's trace. A plan without a Schedule runs once.
// A plan with one is started over, in a new bubble, from the turn where it
// could not follow its Schedule, up to ReplayAttempts times (see
// RunInBubble): each attempt starts at the bubble's first instant, as the
// recorded run did, so that what client-go derives from the clock (an
// Event's name) is the same in every attempt.
func RunAttempts(p *Plan, bubble func(attempt func(ctx context.Context)) error) (*Trace, error) {
	attempts := 1
	if p != nil && len(p.Schedule) > 0 {
		attempts = max(ReplayAttempts, 1)
	}
	var divergences []string
	for n := 1; ; n++ {
		var tr *Trace
		err := errors.New("sim: the run's bubble failed before the run returned")
		var aborted string
		berr := bubble(func(ctx context.Context) {
			ctx = context.WithValue(ctx, attemptKey{}, attemptInfo{n, attempts})
			tr, err = RunInBubble(ctx, p)
			if tr != nil && tr.Outcome != "" && strings.HasPrefix(tr.Outcome, "diverged: ") && n < attempts {
				aborted = strings.TrimPrefix(tr.Outcome, "diverged: ")
			}
		})
		if aborted != "" && berr == nil {
			divergences = append(divergences, fmt.Sprintf("attempt %d: %s", n, aborted))
			continue
		}
		if tr != nil {
			tr.Attempts = n
			tr.Divergences = append(divergences, tr.Divergences...)
		}
		if berr != nil && err == nil {
			err = berr
		}
		return tr, err
	}
}

// Bubble runs f inside a new synctest bubble. synctest.Test needs a
// *testing.T: given one, Bubble calls it; given another testing.TB (a
// *testing.B in a benchmark), it makes a *testing.T with testing.RunTests,
// as the cachelab CLI does with testing.Main, and fails tb if the bubble
// fails.
func Bubble(tb testing.TB, f func(t *testing.T)) {
	tb.Helper()
	if t, ok := tb.(*testing.T); ok {
		synctest.Test(t, f)
		return
	}
	always := func(string, string) (bool, error) { return true, nil }
	// RunTests repeats its tests for -test.count and -test.cpu: run f once.
	ran := false
	ok := testing.RunTests(always, []testing.InternalTest{{
		Name: "sim.Bubble",
		F: func(t *testing.T) {
			if ran {
				return
			}
			ran = true
			synctest.Test(t, f)
		},
	}})
	if !ok {
		tb.Fatalf("sim: the bubble failed (see the sim.Bubble output above)")
	}
}

// RunInBubble plays plan p and returns its trace. It must be called from a
// goroutine inside a synctest bubble (Run makes one; rapid.SyncTest
// properties are already inside one), which it leaves with no goroutine of
// its own running.
//
// A run:
//  1. validates p and looks its subject up in the registry;
//  2. builds a fakeapi.Server with the fault policy as Hooks and the trace
//     recorder as Observer, registers the subject's CRDs and creates
//     p.Objects (client "setup");
//  3. starts the kubelet actor (if p.Kubelet is set), the subject's
//     helper actors for the whole run (SubjectInfo.Beside, which crash
//     steps do not stop) and the subject, with clients of its own name;
//  4. plays the steps at their virtual times (ties in list order), each
//     recorded as a RecStep before its effects; between two steps due at
//     the same instant it waits until every goroutine of the run is
//     blocked, so the later step sees the immediate reactions to the
//     earlier one (a re-watch after a closed watch);
//  5. after the last step, waits until quiet: nothing changed for p.Quiet
//     and no work under way (outcome "quiet"), or until p.Deadline (outcome "deadline");
//  6. records the subject's caches (CacheSnapshotter), stops everything,
//     records the server's state (RecFinal) and returns.
//
// Subjects record their own sync-signal flips (RecSignal), handler calls,
// queue operations and reconciles through Env.Rec.
func RunInBubble(ctx context.Context, p *Plan) (*Trace, error) {
	if p == nil {
		return nil, errors.New("sim: nil plan")
	}
	plan := p.Clone()
	plan.Normalize()
	plan.ApplyDefaults()
	tr := &Trace{Version: TraceVersion, Plan: plan}
	fail := func(err error) (*Trace, error) {
		tr.Outcome = "error: " + err.Error()
		return tr, err
	}
	if err := plan.Validate(); err != nil {
		return fail(fmt.Errorf("sim: bad plan: %w", err))
	}
	info, ok := LookupSubject(plan.Subject)
	if !ok {
		names := subjectNames()
		if len(names) == 0 {
			return fail(fmt.Errorf("sim: unknown subject %q: no subject is registered (import the subjects' packages)", plan.Subject))
		}
		return fail(fmt.Errorf("sim: unknown subject %q (known: %s)", plan.Subject, strings.Join(names, ", ")))
	}
	if err := checkBeside(info); err != nil {
		return fail(err)
	}
	PrepareClientGo()
	seedClientGo(plan.Seed)
	r := newRun(ctx, plan, info)
	defer r.shutdown()
	// An attempt of RunAttempts that is not the last stops where it
	// cannot follow the plan's Schedule (outcome "diverged: ..."), to be
	// started over; the last, or a run made here directly, goes on in the
	// canonical order from there, and says so.
	at, _ := ctx.Value(attemptKey{}).(attemptInfo)
	r.sched.abortOnDivergence = at.n < at.of
	tr2, err := r.play()
	if err != nil && r.sched.aborted() == "" {
		tr2.Outcome = "error: " + err.Error()
	}
	if r.sched.aborted() != "" {
		// The attempt was cut short: not an error of the run.
		tr2.Outcome, err = "diverged: "+r.sched.aborted(), nil
	}
	tr2.Attempts = max(at.n, 1)
	if tr2.Diverged && r.sched.aborted() == "" {
		tr2.Divergences = []string{fmt.Sprintf("attempt %d: %s", tr2.Attempts, r.sched.divergence)}
	}
	return tr2, err
}

// ReplayAttempts bounds how many times a run with a Schedule to follow is
// started over when it cannot follow it (RunAttempts; Run and the lab's
// runs go through it). What it cannot follow is client-go's order within
// one batch (a WatchList's initial objects, a relist's deletions), and the
// subject's own choice of the object it acts on (IsSubjectOrderDivergence),
// which come from Go's randomized map iteration: a small map of n objects
// is iterated from a random one of n starting points, so one batch of n
// takes about n attempts, and two batches the product. An attempt stops at
// the turn where it diverges, so a failed one costs the run up to there.
var ReplayAttempts = 100

// seedClientGo seeds math/rand's global source from the plan's seed.
// client-go draws the reflector's backoff jitter and watch timeouts from it
// (wait.Jitter, reflector.go), so without this a re-watch after a fault
// comes at a different virtual time in every run, and so does every fault
// drawn relative to it. Since Go 1.24 the seed takes effect only in programs
// built with GODEBUG randseednop=0 (a `//go:debug randseednop=0` line in
// the main package or a _test.go file; sim's own tests and the cachelab
// CLI set it); otherwise it is a no-op. Runs in parallel in one process
// share the global source, so their jitter draws interleave.
func seedClientGo(seed uint64) {
	//lint:ignore SA1019 the only way to make client-go's jitter reproducible
	mathrand.Seed(int64(seed))
}

// run is the state of one run.
type run struct {
	ctx    context.Context
	plan   *Plan
	info   SubjectInfo
	start  time.Time
	rec    *recorder
	policy *Policy
	sched  *scheduler
	srv    *fakeapi.Server
	res    *resolver

	subj       Subject
	subjCancel context.CancelFunc
	// besideCancel ends SubjectInfo.Beside's actors (beside.go).
	besideCancel context.CancelFunc
	// haltNoted is true once a livelock or a spent record budget is
	// recorded; haltMsg says which (the run's outcome).
	haltNoted bool
	haltMsg   string
	// crashFired, when non-nil, is closed when the armed mid-reconcile
	// crash of step crashStep fires.
	crashFired <-chan struct{}
	crashStep  int
	kubelet    *fakeapi.Kubelet
	competitor *competitor
	pipe       *fakehttp.Pipe // the subject's HTTP pipe (access "http")
	// metrics collects client-go's metrics of the subject's queues and
	// informers (Env.Metrics) in virtual time.
	metrics *clientmetrics.Collector
	done    bool
	// drained is true once shutdown let virtual time pass (shutdownGrace).
	drained bool
	// wake is the run loop's timer for its waits (pump).
	wake *time.Timer
}

func newRun(ctx context.Context, plan *Plan, info SubjectInfo) *run {
	start := time.Now()
	r := &run{ctx: ctx, plan: plan, info: info, start: start}
	r.policy = NewPolicy(plan, func() time.Duration { return time.Since(start) })
	r.sched = newScheduler(r.now, r.policy, plan.Schedule, plan.LivelockAfter)
	if ctx.Value(unscheduledKey{}) == nil {
		r.policy.sched = r.sched
	}
	r.sched.recordChoices = ctx.Value(choicesKey{}) != nil
	if plan.ShuffleSchedule != 0 {
		r.sched.random = stream(plan.Seed, "shuffle-schedule", fmt.Sprint(plan.ShuffleSchedule))
	}
	limit := plan.MaxRecords
	if limit <= 0 {
		limit = DefaultMaxRecords
	}
	r.rec = newRecorder(start, r.policy, limit)
	r.rec.progress = progressOf(ctx)
	r.metrics = newRunMetrics(r.now)
	r.srv = fakeapi.NewServer(fakeapi.Options{Hooks: r.policy, Observer: r.rec, ExternalGC: info.ExternalGC})
	r.policy.Attach(r.srv)
	return r
}

func (r *run) now() time.Duration { return time.Since(r.start) }

// play runs the whole plan and returns the trace.
func (r *run) play() (*Trace, error) {
	tr := &Trace{Version: TraceVersion, Plan: r.plan}
	finish := func(outcome string) *Trace {
		tr.Outcome = outcome
		return tr
	}
	for _, c := range r.info.CRDs {
		if err := r.srv.RegisterCRD(crdInfo(c)); err != nil {
			r.stop(tr)
			return finish(""), fmt.Errorf("sim: subject %s: register CRD %s: %w", r.info.Name, c.GVR, err)
		}
	}
	r.res = newResolver(r.srv)
	if err := r.startWebhooks(); err != nil { // admission.go
		r.stop(tr)
		return finish(""), err
	}
	setup := r.srv.Client(ClientSetup)
	if r.info.SystemNamespaces {
		if err := r.createSystemNamespaces(setup); err != nil {
			r.stop(tr)
			return finish(""), err
		}
	}
	for i, raw := range r.plan.Objects {
		if err := r.createObject(setup, raw); err != nil {
			if admissionDenied(err) {
				// The subject's admission webhook refused the object, as
				// it refuses a user's create in a cluster (a random plan's
				// object drawn from the schema may be one it does not
				// accept): noted, and the run goes on without it.
				actorRecorder{r.rec, ClientSetup}.Record(Record{Kind: RecNote,
					Detail: fmt.Sprintf("objects[%d] not created: %v (the run goes on without it)", i, err)})
				continue
			}
			r.stop(tr)
			return finish(""), fmt.Errorf("sim: objects[%d]: %w", i, err)
		}
	}
	if r.plan.Kubelet != nil {
		rec := actorRecorder{r.rec, "kubelet"}
		o := fakeapi.KubeletOptions{ReadyAfter: r.plan.Kubelet.ReadyAfter.D(), QueueMetrics: r.metrics.Workqueue(clientKubelet),
			InformerMetrics: r.metrics.Informer(clientKubelet),
			Report: func(pod cache.ObjectName, err error) {
				if err != nil {
					rec.Record(Record{Kind: RecNote, Key: pod.String(), Detail: "kubelet: set Running/Ready: " + err.Error()})
				}
			}}
		if id, err := r.metrics.InformerID(clientKubelet, "", schema.GroupVersionResource{Version: "v1", Resource: "pods"}); err == nil {
			o.InformerID = id
		}
		r.kubelet = fakeapi.StartKubeletWithOptions(r.ctx, r.srv.Client(clientKubelet), o)
	}
	if c := r.plan.Competitor; c != nil {
		gvr, err := r.res.byResource(c.Resource)
		if err != nil {
			r.stop(tr)
			return finish(""), fmt.Errorf("sim: competitor.resource: %w", err)
		}
		var turn func(ctx context.Context, what, object string)
		if r.policy.sched != nil {
			turn = func(ctx context.Context, what, object string) { r.sched.turn(ctx, ClientCompetitor, what, object) }
		}
		r.competitor = startCompetitor(r.ctx, r.srv.Client(ClientCompetitor), gvr, r.res.kinds[gvr], *c, actorRecorder{r.rec, ClientCompetitor}, turn)
	}
	if err := r.startBeside(); err != nil {
		r.stop(tr)
		return finish(""), err
	}
	if err := r.startSubject(); err != nil {
		r.stop(tr)
		return finish(""), err
	}
	deadline := r.plan.Deadline.D()
	outcome := ""
	order := stepOrder(r.plan.Steps)
	for k, i := range order {
		s := r.plan.Steps[i]
		r.sleepUntil(min(s.At.D(), deadline+1))
		if r.halted() {
			outcome = r.haltMsg
			break
		}
		if r.now() > deadline {
			outcome = "deadline"
			r.rec.record(Record{Kind: RecNote, Actor: "sim", Step: i, Detail: fmt.Sprintf("deadline %s passed before step %d", r.plan.Deadline, i)})
			break
		}
		r.playStep(i)
		if k+1 < len(order) && r.plan.Steps[order[k+1]].At.D() <= r.now() {
			// The next step is due at this same instant: let what this
			// one set off without taking virtual time (a reflector's
			// re-watch after a closed watch, an event delivered at once)
			// happen first, as it would if the next step came a
			// nanosecond later. Without this the next step races it.
			r.pump(r.now(), nil, true)
		}
	}
	if outcome == "" {
		switch {
		case r.waitQuiet():
			outcome = "quiet"
		case r.halted():
			outcome = r.haltMsg
		default:
			outcome = "deadline"
		}
	}
	r.stop(tr)
	return finish(outcome), nil
}

// waitQuiet lets the run go on until nothing changed for the plan's quiet
// period (activity) and no work is under way (true), or
// the deadline passed or the run must stop (false: a livelock, a spent
// record budget).
//
// A retry is pending when a key's latest reconcile failed or was requeued
// with AddRateLimited and has not run again (pendingRetries): the
// controller is not done, and its rate limiter's backoff (controller-
// runtime's and client-go's default grows to 1000 s) may be longer than
// the quiet period. Virtual time costs nothing, so the run goes on until
// the retry comes; a deadline that passes first is noted in the trace with
// the retries still pending.
func (r *run) waitQuiet() bool {
	deadline, quiet := r.plan.Deadline.D(), r.plan.Quiet.D()
	for {
		now := r.now()
		last := r.rec.lastActivity()
		if r.halted() {
			return false
		}
		if now-last >= quiet {
			why, pending := r.rec.pendingRetry()
			if !pending {
				return true
			}
			if now >= deadline {
				r.rec.record(Record{Kind: RecNote, Actor: "sim", Step: -1, Detail: fmt.Sprintf("deadline %s passed quiet but not settled: %s", r.plan.Deadline, why)})
				return false
			}
			r.sleepUntil(min(now+quiet, deadline))
			continue
		}
		if now >= deadline {
			return false
		}
		r.sleepUntil(min(last+quiet, deadline))
	}
}

// sleepUntil lets the run go on until virtual time t (see pump).
func (r *run) sleepUntil(t time.Duration) { r.pump(t, nil, false) }

// DefaultMaxRecords is Plan.MaxRecords when the plan sets none: 500,000
// records, about 236 MB of Records. A random plan's trace has a few
// hundred, the longest scenario's a few thousand; but a correct controller
// that hot-loops for a while and then converges is a legitimate run: the
// examples' copier, recreating a Secret the instant garbage collector
// removes during a 7 s watch hold (its owner was recreated meanwhile),
// records about 103,000, and the first default, 100,000, cut it off as a
// failure in CI.
const DefaultMaxRecords = 500000

// halted reports whether the run must stop before its end: the scheduler
// found a livelock, or the trace reached its record budget. The first
// time, it records why; haltMsg is the run's outcome.
func (r *run) halted() bool {
	msg := r.sched.livelocked()
	if msg == "" {
		msg = r.sched.aborted()
		if msg != "" {
			msg = "diverged: " + msg
		}
	}
	if msg == "" {
		over, _ := r.rec.overBudget()
		if !over {
			return false
		}
		msg = fmt.Sprintf("budget: the trace reached its budget of %d records (plan.maxRecords) at t=%s, and the run was stopped there: it was not judged to its end", r.rec.limit, r.now())
	}
	if !r.haltNoted {
		r.haltNoted = true
		r.rec.finalRecords()
		if _, dropped := r.rec.overBudget(); dropped > 0 {
			msg += fmt.Sprintf(" (%d records past twice the budget were dropped)", dropped)
		}
		r.rec.record(Record{Kind: RecNote, Actor: "sim", Detail: msg})
		r.haltMsg = msg
	}
	return true
}

// pump is the run loop's scheduler: until virtual time until (or until done
// is closed, or the scheduler finds a livelock), it waits for every other
// goroutine of the bubble to block, then gives ONE ready ticket (a request,
// a watch event, a drawn disconnect) its turn, and again; when none is
// ready it sleeps until the next is due, one is added, or until. It
// performs an armed mid-reconcile crash when it fires.
//
// Tickets due at until itself are left for later (a step due at until is
// played first) unless drain is set, when pump releases every ticket ready
// at until before it returns.
//
// When the clock reaches an instant, synctest fires every timer due then
// in one batch, before any goroutine runs; synctest.Wait then returns once
// all they set off is done, so a release never races a timer of client-go
// or the subject due at the same instant (a workqueue's rate-limited
// re-add). Goroutines woken by the same batch race each other: deliberate
// delays of the lab's own go through the scheduler instead (Env.Sleep).
func (r *run) pump(until time.Duration, done <-chan struct{}, drain bool) {
	for {
		synctest.Wait()
		// Every goroutine of the bubble is blocked: whatever they added is
		// in the scheduler's queue, read below. A "ticket added" left in
		// notify (added just as the select below returned) would only send
		// the loop round once more for nothing.
		select {
		case <-r.sched.notify:
		default:
		}
		if r.crashFired != nil {
			select {
			case <-r.crashFired:
				r.crashFired = nil
				r.crash(r.armedCrashDetail())
				continue
			default:
			}
		}
		if done != nil {
			select {
			case <-done:
				return
			default:
			}
		}
		if r.rec.over.Load() || r.sched.stopped() {
			return
		}
		now := r.now()
		if now >= until && !drain {
			return
		}
		if t := r.sched.next(now); t != nil {
			r.sched.release(t)
			continue
		}
		if now >= until {
			return
		}
		wake := until
		if next := r.sched.nextDue(); next >= 0 && next < wake {
			wake = next
		}
		// One timer for the run, reset at each wait (a run waits about
		// once per instant: a new timer each time was 1,500 of the 5,400
		// allocations a scheduled standard run makes more than an
		// unscheduled one). Since Go 1.23 a stopped timer sends nothing
		// stale after Reset.
		if r.wake == nil {
			r.wake = time.NewTimer(wake - now)
		} else {
			r.wake.Reset(wake - now)
		}
		// Nothing of the bubble runs until this loop blocks here (every
		// other goroutine is blocked since synctest.Wait, and the clock
		// only moves once this one is blocked too): a ticket added from
		// now on is added while the loop listens.
		r.sched.listening.Store(true)
		select {
		case <-r.sched.notify:
		case <-r.wake.C:
		case <-r.crashFired:
		case <-done:
		}
		r.sched.listening.Store(false)
		r.wake.Stop()
	}
}

// startSubject builds a fresh subject from the factory and starts it.
func (r *run) startSubject() error {
	name := r.info.Name
	subj := r.info.New()
	if subj == nil {
		return fmt.Errorf("sim: subject %s: factory returned nil", name)
	}
	env := Env{
		Name:    name,
		Rec:     actorRecorder{r.rec, name},
		Params:  r.plan.SubjectParams,
		Metrics: r.metrics,
		Sleep: func(ctx context.Context, what string, d time.Duration) {
			r.sched.sleep(ctx, name, what, d)
		},
	}
	if r.policy.sched != nil {
		env.Turn = func(ctx context.Context, what, object string) { r.sched.turn(ctx, name, what, object) }
	}
	ctx, cancel := context.WithCancel(r.ctx)
	var lw func(gvr schema.GroupVersionResource, ns string) fakeapi.ListerWatcher
	switch r.plan.Access {
	case "http":
		var err error
		if env, lw, err = r.httpEnv(env); err != nil {
			cancel()
			return fmt.Errorf("sim: subject %s: http clients: %w", name, err)
		}
	default:
		// Bound to the process: once a crash ends it, nothing it sends
		// reaches the server.
		client := r.srv.Client(name).BoundTo(ctx)
		env.Kube, env.Dynamic = client.Clientset(), client.Dynamic()
		lw = func(gvr schema.GroupVersionResource, ns string) fakeapi.ListerWatcher {
			return client.ListerWatcher(gvr, ns)
		}
	}
	env.ListerWatcher = func(gvr schema.GroupVersionResource, ns string) cache.ListerWatcherWithContext { return lw(gvr, ns) }
	env.RESTConfig = r.restConfig(name)
	if cb := r.plan.Faults.ContractBreaking; cb != (ContractBreaking{}) {
		env.ListerWatcher = func(gvr schema.GroupVersionResource, ns string) cache.ListerWatcherWithContext {
			return newBreakingLW(lw(gvr, ns), r, name, gvr)
		}
	}
	ctx = klog.NewContext(ctx, newTraceLogger(r.rec, name))
	// Start runs on a goroutine of its own while the run loop gives the
	// requests it makes their turns: a Start that waits for its caches
	// to sync (as sample-controller's Run does) does not deadlock.
	var startErr error
	if !r.callUntilDeadline(cancel, func() { startErr = subj.Start(ctx, env) }) {
		if over, _ := r.rec.overBudget(); over {
			return fmt.Errorf("sim: subject %s: the trace reached its budget of %d records (plan.maxRecords) before Start returned", name, r.rec.limit)
		}
		return fmt.Errorf("sim: subject %s: start did not return before the deadline %s (Start must return once its goroutines are started)", name, r.plan.Deadline)
	}
	if startErr != nil {
		cancel()
		synctest.Wait()
		return fmt.Errorf("sim: subject %s: start: %w", name, startErr)
	}
	// Desired is asked once the subject is configured (after Start), then
	// after every write.
	if c, ok := subj.(Converger); ok {
		r.rec.setConverger(c, name)
	}
	r.subj, r.subjCancel = subj, cancel
	return nil
}

// crash cancels the subject's context, waits for its goroutines to block or
// end, and drops it.
func (r *run) crash(detail string) {
	if r.subj == nil {
		return
	}
	r.rec.record(Record{Kind: RecCrash, Actor: r.info.Name, Detail: detail})
	r.sched.settle()
	r.subjCancel()
	r.sched.failClient(r.info.Name)
	synctest.Wait()
	r.subj, r.subjCancel = nil, nil
}

// playStep plays plan step i now.
func (r *run) playStep(i int) {
	s := r.plan.Steps[i]
	r.policy.StepPlayed(i)
	rec := Record{Kind: RecStep, Step: i, Actor: s.Actor, Op: s.Op, Resource: s.Resource, Namespace: s.Namespace, Name: s.Name}
	switch s.Actor {
	case "user", "competitor", "kubelet":
		if s.Op == "wait-quiet" {
			r.rec.record(rec)
			r.waitQuiet()
			return
		}
		if s.Child != (ChildRef{}) {
			// A step aimed at a child acts on the object it resolves to
			// now: the step record names it (two runs of one plan may
			// resolve it to different objects).
			rs, err := r.resolveChild(s)
			if err != nil {
				r.rec.record(rec)
				r.rec.record(Record{Kind: RecNote, Actor: s.Actor, Step: i, Op: s.Op, Detail: "step failed: " + err.Error()})
				return
			}
			s = rs
			rec.Resource, rec.Namespace, rec.Name = s.Resource, s.Namespace, s.Name
		}
		r.rec.record(rec)
		if err := r.apiStep(s); err != nil {
			r.rec.record(Record{Kind: RecNote, Actor: s.Actor, Step: i, Op: s.Op, Detail: "step failed: " + err.Error()})
		}
	case "faults":
		r.rec.record(rec)
		r.faultStep(i)
	case "controller":
		r.rec.record(rec)
		r.disarm()
		switch s.Op {
		case "crash":
			if s.MidReconcile {
				r.crashMidReconcile(i)
			} else if s.AfterWrite > 0 {
				r.crashAfterWrite(i)
			} else {
				r.crash(fmt.Sprintf("step %d", i))
			}
		case "restart":
			if r.subj != nil {
				r.crash(fmt.Sprintf("step %d: restart of a running subject", i))
			}
			// Recorded first: the new process's requests follow it.
			r.rec.record(Record{Kind: RecRestart, Actor: r.info.Name, Step: i})
			if err := r.startSubject(); err != nil {
				r.rec.record(Record{Kind: RecNote, Actor: "sim", Step: i, Detail: err.Error()})
			}
		case "wait-quiet":
			r.waitQuiet()
		}
	}
}

// crashMidReconcile arms a crash for when the subject next records a
// reconcile start; the timeline goes on meanwhile. If no reconcile starts,
// the crash happens at the next controller step (or not at all).
func (r *run) crashMidReconcile(i int) {
	if r.subj == nil {
		return
	}
	r.crashFired, r.crashStep = r.rec.armCrash(r.info.Name), i
}

// disarm cancels an armed mid-reconcile crash that has not fired, crashing
// now instead (a later controller step needs the crash done).
func (r *run) disarm() {
	if r.crashFired == nil {
		return
	}
	select {
	case <-r.crashFired:
		r.crash(r.armedCrashDetail())
	default:
		r.rec.disarmCrash()
		r.policy.DisarmCrashes()
		r.crash(fmt.Sprintf("step %d: no reconcile started before step; crashed now", r.crashStep))
	}
	r.crashFired = nil
}

// faultStep applies fault step i.
func (r *run) faultStep(i int) {
	s := r.plan.Steps[i]
	note := func(format string, a ...any) {
		r.rec.record(Record{Kind: RecNote, Actor: ActorFaults, Step: i, Detail: fmt.Sprintf(format, a...)})
	}
	switch s.Op {
	case "disconnect", "break", "expire":
		n := 0
		for _, w := range r.srv.Watchers() {
			if !resourceMatches(s.Resource, w.Resource) || (s.Target != "" && s.Target != w.Client) || exempt(w.Client) {
				continue
			}
			var err error
			switch s.Op {
			case "disconnect":
				err = r.srv.CloseWatch(w.ID, false)
			case "break":
				err = r.srv.CloseWatch(w.ID, true)
			case "expire":
				err = r.srv.ExpireWatch(w.ID)
			}
			if err == nil {
				n++
			}
		}
		if n == 0 {
			note("%s: no open watch matched (resource %q, target %q)", s.Op, s.Resource, s.Target)
		}
	case "compact":
		rv := r.srv.ResourceVersion() - s.Lag
		r.rec.record(Record{Kind: RecFault, Actor: ActorFaults, Fault: FaultCompact, RV: rv, Step: i,
			Detail: fmt.Sprintf("step %d: compact history up to revision %d", i, rv)})
		if err := r.srv.Compact(rv); err != nil {
			note("compact to %d: %v", rv, err)
		}
	case "stale-replica":
		held := r.policy.StaleReplica(i)
		reads := "lists and watches at resourceVersion 0"
		if s.NotOlderThan {
			reads = "lists and watches at resourceVersion 0, lists and WatchLists at a given resourceVersion (504 Too large when behind it),"
		}
		r.rec.record(Record{Kind: RecFault, Actor: ActorFaults, Fault: "stale-replica-on", Lag: s.Lag, RV: held, Target: s.Target, Step: i,
			Detail: fmt.Sprintf("step %d: %s served by a replica held at revision %d%s (%d behind) for %s, then caught up", i, reads, held, asOfText(s.AsOf), r.srv.ResourceVersion()-held, forText(s.For))})
	case "fail-next", "timeout-next-write":
		r.policy.Arm(i)
	case "hold":
		end := r.policy.Hold(i)
		r.rec.record(Record{Kind: RecFault, Actor: ActorFaults, Fault: FaultHold, Resource: s.Resource, Target: s.Target, Step: i,
			Detail: fmt.Sprintf("step %d: watch deliveries held until %s", i, end)})
	case "release":
		r.rec.record(Record{Kind: RecFault, Actor: ActorFaults, Fault: FaultRelease, Resource: s.Resource, Target: s.Target, Step: i,
			Detail: fmt.Sprintf("step %d", i)})
	case "wait-quiet":
		r.waitQuiet()
	}
}

func forText(d Duration) string {
	if d == 0 {
		return "the rest of the run"
	}
	return d.String()
}

// stop ends the run: cache snapshots, stop every actor, final state.
func (r *run) stop(tr *Trace) {
	if r.done {
		return
	}
	r.done = true
	if r.crashFired != nil {
		r.rec.disarmCrash()
		r.crashFired = nil
	}
	if cs, ok := r.subj.(CacheSnapshotter); ok && r.subj != nil {
		for _, snap := range cs.SnapshotCaches() {
			objs := append([]ObjectState(nil), snap.Objects...)
			SortObjectStates(objs)
			r.rec.record(Record{Kind: RecCache, Actor: r.info.Name, Handler: snap.Name, Objects: objs})
		}
	}
	r.policy.Stop()
	if r.subjCancel != nil {
		r.subjCancel()
	}
	if r.besideCancel != nil {
		r.besideCancel()
	}
	if r.kubelet != nil {
		r.kubelet.Stop()
	}
	if r.competitor != nil {
		r.competitor.stop()
	}
	synctest.Wait()
	if _, diverged, why := r.sched.schedule(); diverged >= 0 && !r.sched.abortOnDivergence {
		r.rec.record(Record{Kind: RecNote, Actor: "sim", Detail: "the run could not follow its plan's schedule and went on in the canonical order: " + why})
	}
	r.rec.record(Record{Kind: RecFinal, Actor: "server", Objects: r.finalState()})
	tr.End = Duration(r.now())
	tr.Records = r.rec.close()
	var diverged int
	tr.Schedule, diverged, _ = r.sched.schedule()
	tr.Diverged = diverged >= 0
	if r.sched.recordChoices {
		tr.Choices = withBatchOrders(r.sched.choicePoints(), tr.Schedule)
	}
	tr.tickets, tr.disturbed = r.sched.ticketLog()
	tr.Metrics = r.metrics.Series()
	r.shutdown()
}

// shutdown releases frozen goroutines and closes the server's watches, so
// nothing of the run outlives it.
func (r *run) shutdown() {
	if r.subjCancel != nil {
		r.subjCancel()
		r.subjCancel = nil
	}
	if r.besideCancel != nil {
		r.besideCancel()
		r.besideCancel = nil
	}
	if r.kubelet != nil {
		r.kubelet.Stop()
	}
	if r.competitor != nil {
		r.competitor.stop()
	}
	r.policy.Stop()
	r.sched.close()
	r.rec.release()
	r.metrics.Release()
	if r.pipe != nil {
		r.pipe.Close()
	}
	r.srv.Close()
	synctest.Wait()
	if !r.drained {
		// Time stops once a bubble's main goroutine has exited, so a
		// goroutine of the subject waiting out a backoff that ignores its
		// context (client-go's watchList: `<-r.clock.After(...)`, up to
		// 60 s) would outlive the run and synctest would end the bubble
		// as deadlocked. Let virtual time pass until it wakes and sees its
		// context ended; the trace is already taken.
		r.drained = true
		time.Sleep(shutdownGrace)
		synctest.Wait()
	}
}

// shutdownGrace is how much virtual time a run lets pass after it stopped
// everything: client-go's longest clock wait that ignores its context (the
// reflector's backoff, [30 s, 60 s) at most) and a margin.
const shutdownGrace = 2 * time.Minute

// finalState describes every object on the server.
func (r *run) finalState() []ObjectState {
	var out []ObjectState
	for _, obj := range r.srv.Objects() {
		gvr := r.res.gvrOf(obj)
		if st, ok := ObjectStateOf(ResourceName(gvr), obj); ok {
			out = append(out, st)
		}
	}
	SortObjectStates(out)
	return out
}

// crdInfo converts a subject's CRD for the server.
func crdInfo(c CRD) fakeapi.ResourceInfo {
	info := fakeapi.ResourceInfo{GVR: c.GVR, Kind: c.Kind, ListKind: c.ListKind, Namespaced: c.Namespaced, HasStatus: c.HasStatus,
		OpenAPIV3Schema: c.OpenAPIV3Schema}
	if info.ListKind == "" {
		info.ListKind = c.Kind + "List"
	}
	if c.Validate != nil {
		validate := c.Validate
		info.Validate = func(u *unstructured.Unstructured) field.ErrorList {
			var errs field.ErrorList
			for _, reason := range validate(u.Object) {
				path, msg := field.NewPath("object"), reason
				if p, m, ok := strings.Cut(reason, ": "); ok && !strings.Contains(p, " ") {
					parts := strings.Split(p, ".")
					path, msg = field.NewPath(parts[0], parts[1:]...), m
				}
				errs = append(errs, &field.Error{Type: field.ErrorTypeInvalid, Field: path.String(), BadValue: field.OmitValueType{}, Detail: msg})
			}
			return errs
		}
	}
	return info
}

// resolver maps the resource names and kinds of a plan to served resources.
type resolver struct {
	byName     map[string]schema.GroupVersionResource
	byKind     map[schema.GroupVersionKind]schema.GroupVersionResource
	namespaced map[schema.GroupVersionResource]bool
	kinds      map[schema.GroupVersionResource]string
	names      []string
}

func newResolver(s *fakeapi.Server) *resolver {
	res := &resolver{
		byName:     map[string]schema.GroupVersionResource{},
		byKind:     map[schema.GroupVersionKind]schema.GroupVersionResource{},
		namespaced: map[schema.GroupVersionResource]bool{},
		kinds:      map[schema.GroupVersionResource]string{},
	}
	for _, ri := range s.Resources() {
		full := ResourceName(ri.GVR)
		res.byName[full] = ri.GVR
		res.names = append(res.names, full)
		if old, dup := res.byName[ri.GVR.Resource]; !dup || (old.Group != "" && ri.GVR.Group == "") {
			res.byName[ri.GVR.Resource] = ri.GVR
		}
		res.byKind[ri.GVR.GroupVersion().WithKind(ri.Kind)] = ri.GVR
		res.namespaced[ri.GVR] = ri.Namespaced
		res.kinds[ri.GVR] = ri.Kind
	}
	return res
}

func (res *resolver) byResource(name string) (schema.GroupVersionResource, error) {
	if gvr, ok := res.byName[name]; ok {
		return gvr, nil
	}
	return schema.GroupVersionResource{}, fmt.Errorf("unknown resource %q (served: %s)", name, strings.Join(res.names, ", "))
}

func (res *resolver) gvrOf(obj runtime.Object) schema.GroupVersionResource {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		if gvks, _, err := scheme.Scheme.ObjectKinds(obj); err == nil && len(gvks) > 0 {
			gvk = gvks[0]
		}
	}
	return res.byKind[gvk]
}

// target resolves the resource, namespace and object of an API step.
func (r *run) target(s Step) (gvr schema.GroupVersionResource, ns string, u *unstructured.Unstructured, err error) {
	if len(s.Object) > 0 {
		u = &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(s.Object); err != nil {
			return gvr, "", nil, fmt.Errorf("object: %w", err)
		}
	}
	switch {
	case s.Resource != "":
		gvr, err = r.res.byResource(s.Resource)
	case u != nil:
		var ok bool
		if gvr, ok = r.res.byKind[u.GroupVersionKind()]; !ok {
			err = fmt.Errorf("no served resource has kind %s; name one with \"resource\"", u.GroupVersionKind())
		}
	default:
		err = errors.New("name the resource (\"resource\": \"pods\")")
	}
	if err != nil {
		return gvr, "", nil, err
	}
	ns = s.Namespace
	if ns == "" && u != nil {
		ns = u.GetNamespace()
	}
	if ns == "" && r.res.namespaced[gvr] {
		ns = metav1.NamespaceDefault
	}
	if u != nil && r.res.namespaced[gvr] && u.GetNamespace() == "" {
		u.SetNamespace(ns)
	}
	return gvr, ns, u, nil
}

// createObject creates one of the plan's initial objects.
func (r *run) createObject(c *fakeapi.Client, raw []byte) error {
	gvr, ns, u, err := r.target(Step{Object: raw})
	if err != nil {
		return err
	}
	// Like a user step's, served at once: a webhook admitting the object
	// makes its requests under this context (fakeapi's webhook calls
	// carry the write's), and the run loop gives no turns meanwhile.
	_, err = c.Create(ungated(r.ctx), gvr, ns, u, metav1.CreateOptions{})
	return err
}

// apiStep applies an API operation step with the actor's client. A step
// aimed at a child comes resolved (playStep records what it resolved to).
func (r *run) apiStep(s Step) error {
	c := r.srv.Client(s.Actor)
	if s.Op == "update-status" {
		return r.updateStatus(c, s)
	}
	gvr, ns, u, err := r.target(s)
	if err != nil {
		return err
	}
	// The run loop serves its own steps' requests: they are not scheduled.
	ctx := ungated(r.ctx)
	switch s.Op {
	case "create":
		_, err = c.Create(ctx, gvr, ns, u, metav1.CreateOptions{})
	case "update":
		if u.GetResourceVersion() == "" {
			// No resourceVersion in the plan: replace the current object
			// (a read-modify-write, as kubectl replace after a get).
			cur, gerr := c.Get(ctx, gvr, ns, u.GetName(), metav1.GetOptions{})
			if gerr != nil {
				return gerr
			}
			m, merr := meta.Accessor(cur)
			if merr != nil {
				return merr
			}
			u.SetResourceVersion(m.GetResourceVersion())
		}
		_, err = c.Update(ctx, gvr, ns, u, metav1.UpdateOptions{})
	case "patch", "patch-status":
		pt := types.MergePatchType
		switch s.PatchType {
		case "json":
			pt = types.JSONPatchType
		case "strategic":
			pt = types.StrategicMergePatchType
		}
		var sub []string
		if s.Op == "patch-status" {
			sub = []string{"status"}
		}
		_, err = c.Patch(ctx, gvr, ns, s.Name, pt, s.Patch, metav1.PatchOptions{}, sub...)
	case "delete":
		err = c.Delete(ctx, gvr, ns, s.Name, metav1.DeleteOptions{})
	}
	return err
}

// updateStatus plays an update-status step: it reads the object the step
// names (by its name or its object's metadata.name), puts the step's status
// in place of its status and writes it back through the status
// subresource, at the resourceVersion the step's object gives or else at
// the one read. Only the status changes: the object's metadata (its
// ownerReferences, finalizers, labels) and spec stay as they are, whatever
// the step's object holds besides its status.
func (r *run) updateStatus(c *fakeapi.Client, s Step) error {
	var in map[string]any
	if err := json.Unmarshal(s.Object, &in); err != nil {
		return fmt.Errorf("object: %w", err)
	}
	step := &unstructured.Unstructured{Object: in}
	var gvr schema.GroupVersionResource
	var err error
	switch {
	case s.Resource != "":
		gvr, err = r.res.byResource(s.Resource)
	default:
		var ok bool
		if gvr, ok = r.res.byKind[step.GroupVersionKind()]; !ok {
			err = fmt.Errorf("no served resource has kind %s; name one with \"resource\"", step.GroupVersionKind())
		}
	}
	if err != nil {
		return err
	}
	name := s.Name
	if name == "" {
		name = step.GetName()
	}
	ns := s.Namespace
	if ns == "" {
		ns = step.GetNamespace()
	}
	if ns == "" && r.res.namespaced[gvr] {
		ns = metav1.NamespaceDefault
	}
	ctx := ungated(r.ctx)
	cur, err := c.Get(ctx, gvr, ns, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cur)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: obj}
	if gvk := cur.GetObjectKind().GroupVersionKind(); !gvk.Empty() {
		u.SetGroupVersionKind(gvk)
	} else {
		u.SetAPIVersion(gvr.GroupVersion().String())
		u.SetKind(r.res.kinds[gvr])
	}
	u.Object["status"] = in["status"]
	if rv := step.GetResourceVersion(); rv != "" {
		u.SetResourceVersion(rv)
	}
	_, err = c.UpdateStatus(ctx, gvr, ns, u, metav1.UpdateOptions{})
	return err
}
