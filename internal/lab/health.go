package lab

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// The names of the health verdicts Test adds to the invariants' verdicts.
const (
	// HealthNoPanics fails when the controller panicked in a recorded
	// handler, a reconcile, its start or a goroutine recovered by
	// utilruntime.HandleCrash.
	HealthNoPanics = "no-panics"
	// HealthStarted fails when a controller-runtime manager stopped with
	// an error before the run ended.
	HealthStarted = "manager-running"
	// HealthSynced fails when, in a run that ended quiet, an informer of
	// the controller's last process never synced, or was given an event
	// handler but never started (the factory's Start never called).
	HealthSynced = "informers-synced"
	// HealthReturns fails when a reconcile of the controller ran for
	// hangBound of virtual time or more: it returned that late, only when
	// its process was stopped (a crash, the run's end), or never. A worker
	// blocked that long handles nothing else of its queue (with one worker,
	// the controller is stuck). It is shown only when it fails.
	HealthReturns = "reconciles-return"
)

// hangBound is how long a reconcile may run, in virtual time, before
// HealthReturns fails it.
const hangBound = 60 * time.Second

// syncBound is how long an informer may take to sync, in virtual time,
// before HealthSynced fails it.
const syncBound = 60 * time.Second

// HealthVerdicts judges the controller's health from a run's trace: it
// did not panic, its manager kept running, its informers synced. They read
// the records the recording wrappers write (RecordInformer, a
// controller-runtime manager's); for a controller without them they are
// Unknown.
func HealthVerdicts(tr *sim.Trace) []invariants.Verdict {
	if tr == nil || tr.Plan == nil {
		return nil
	}
	actor := tr.Plan.Subject
	var panics, stops []sim.Record
	nCalls := 0
	// informers not synced in the last process, per resource: the record
	// of its "false" (removed by a "true").
	unsynced := map[string]sim.Record{}
	// lastFailedList is the last failed list or watch of each resource by
	// the controller: why an informer did not sync.
	lastFailedList := map[string]sim.Record{}
	// handled are the resources of the last process whose informer got
	// an event handler (its handler-synced "false"), with that record;
	// started, those whose informer ran (its informer-synced "false").
	handled, started := map[string]sim.Record{}, map[string]bool{}
	// open are the reconciles under way, by key; hung, the [start, end]
	// of those that ran hangBound or more (end is the zero Record when the
	// run ended with the reconcile still open).
	open := map[string]sim.Record{}
	var hung [][2]sim.Record
	ended := func(start, end sim.Record) {
		if end.At.D()-start.At.D() >= hangBound {
			hung = append(hung, [2]sim.Record{start, end})
		}
	}
	closeOpen := func(at sim.Duration) {
		for _, k := range slices.Sorted(maps.Keys(open)) {
			ended(open[k], sim.Record{At: at})
		}
		clear(open)
	}
	for _, r := range tr.Records {
		if r.Actor != actor {
			continue
		}
		switch r.Kind {
		case sim.RecRequest:
			if (r.Verb == "list" || r.Verb == "watch") && r.Code >= 400 {
				lastFailedList[r.Resource] = r
			}
		case sim.RecHandler:
			nCalls++
		case sim.RecReconcile:
			nCalls++
			if r.Op == "start" {
				open[r.Key] = r
			} else if start, ok := open[r.Key]; ok {
				ended(start, r)
				delete(open, r.Key)
			}
		case sim.RecNote:
			switch r.Op {
			case OpPanic:
				panics = append(panics, r)
			case OpStartError:
				stops = append(stops, r)
			}
		case sim.RecRestart, sim.RecCrash:
			closeOpen(r.At)
			clear(unsynced)
			clear(handled)
			clear(started)
		case sim.RecSignal:
			if r.Signal == SignalHandlerSynced && !r.Value {
				if _, ok := handled[r.Resource]; !ok {
					handled[r.Resource] = r
				}
			}
			if r.Signal != SignalInformerSynced || r.Handler != "" {
				continue
			}
			started[r.Resource] = true
			if r.Value {
				delete(unsynced, r.Resource)
			} else {
				unsynced[r.Resource] = r
			}
		}
	}
	closeOpen(tr.End)
	var out []invariants.Verdict
	if len(hung) > 0 {
		out = append(out, hungVerdict(hung, tr))
	}
	switch {
	case len(panics) > 0:
		first := panics[0]
		what, stack, _ := strings.Cut(first.Detail, "\n\n")
		pos := make([]int, 0, len(panics))
		for _, r := range panics {
			pos = append(pos, r.Pos)
		}
		out = append(out, invariants.Verdict{Invariant: HealthNoPanics, Status: invariants.Fail, Positions: pos,
			Reason: fmt.Sprintf("the controller panicked %d time(s); first at t=%s: %s", len(panics), first.At, what), Detail: stack})
	case nCalls == 0:
		out = append(out, invariants.Verdict{Invariant: HealthNoPanics, Status: invariants.Unknown,
			Reason: "the trace has no recorded handler call or reconcile of the controller: nothing says whether its code ran without panicking"})
	default:
		out = append(out, invariants.Verdict{Invariant: HealthNoPanics, Status: invariants.Pass,
			Reason: fmt.Sprintf("%d recorded handler call(s) and reconcile(s), no panic", nCalls)})
	}
	if len(stops) > 0 {
		out = append(out, invariants.Verdict{Invariant: HealthStarted, Status: invariants.Fail, Positions: []int{stops[0].Pos},
			Reason: fmt.Sprintf("at t=%s %s", stops[0].At, stops[0].Detail)})
	}
	// An informer must sync within syncBound of its start, or by the end
	// of a run that ended quiet (nothing left to happen).
	var never []string
	var pos []int
	for _, res := range slices.Sorted(maps.Keys(unsynced)) {
		r := unsynced[res]
		if tr.Outcome == "quiet" || tr.End.D()-r.At.D() >= syncBound {
			never = append(never, res)
			pos = append(pos, r.Pos)
		}
	}
	// An informer given a handler but never run: its handlers are never
	// called, and nothing else in the trace says why the controller did
	// nothing.
	var idle []string
	var idlePos []int
	for _, res := range slices.Sorted(maps.Keys(handled)) {
		r := handled[res]
		if !started[res] && (tr.Outcome == "quiet" || tr.End.D()-r.At.D() >= syncBound) {
			idle = append(idle, res)
			idlePos = append(idlePos, r.Pos)
		}
	}
	switch {
	case len(idle) > 0:
		out = append(out, invariants.Verdict{Invariant: HealthSynced, Status: invariants.Fail, Positions: idlePos,
			Reason: fmt.Sprintf("the informer(s) of %s got an event handler at t=%s but never started (run ended at t=%s, %s): their handlers were never called; start the factory after adding handlers (env.Informers.Start(ctx.Done()), or the informer's Run)",
				strings.Join(idle, ", "), handled[idle[0]].At, tr.End, tr.Outcome)})
	case len(never) > 0:
		why := "see the list requests in the trace"
		if r, ok := lastFailedList[never[0]]; ok {
			why = fmt.Sprintf("its last %s of %s was answered %d %s at t=%s", r.Verb, r.Resource, r.Code, r.Reason, r.At)
			pos = append(pos, r.Pos)
		}
		out = append(out, invariants.Verdict{Invariant: HealthSynced, Status: invariants.Fail, Positions: pos,
			Reason: fmt.Sprintf("the informer(s) of %s never synced (started at t=%s, run ended at t=%s, %s): the controller never saw the initial list; %s",
				strings.Join(never, ", "), unsynced[never[0]].At, tr.End, tr.Outcome, why)})
	case len(unsynced) > 0:
		out = append(out, invariants.Verdict{Invariant: HealthSynced, Status: invariants.Unknown,
			Reason: fmt.Sprintf("%d informer(s) of the last process had not synced when the run ended, less than %s after they started: too early to require it", len(unsynced), syncBound)})
	}
	return out
}

// hungVerdict is HealthReturns' failure for the reconciles that ran
// hangBound or more ([start, end] each; end.Pos 0 and no Key when it never
// returned), the first one told.
func hungVerdict(hung [][2]sim.Record, tr *sim.Trace) invariants.Verdict {
	start, end := hung[0][0], hung[0][1]
	pos := make([]int, 0, 2*len(hung))
	for _, h := range hung {
		pos = append(pos, h[0].Pos)
		if h[1].Key != "" {
			pos = append(pos, h[1].Pos)
		}
	}
	var how string
	switch {
	case end.Key == "":
		how = fmt.Sprintf("had not returned when the run ended at t=%s (%s)", tr.End, FirstLineOf(tr.Outcome))
	case end.At.D() >= tr.End.D():
		how = fmt.Sprintf("returned only when the run ended at t=%s (%s)", tr.End, FirstLineOf(tr.Outcome))
	default:
		how = fmt.Sprintf("returned only at t=%s", end.At)
	}
	if end.Result != "" && end.Result != "ok" {
		how += ", with " + FirstLineOf(end.Result)
	}
	return invariants.Verdict{Invariant: HealthReturns, Status: invariants.Fail, Positions: pos,
		Reason: fmt.Sprintf("%d reconcile(s) ran %s or more; the first, of %s, started at t=%s and %s: a worker blocked this long handles nothing else of its queue",
			len(hung), hangBound, start.Key, start.At, how)}
}
