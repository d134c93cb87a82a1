package sim

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// choicesKey marks the context of a run whose choice points are recorded.
type choicesKey struct{}

// ExploreOptions bound an exploration (see Explore).
type ExploreOptions struct {
	// MaxSchedules stops the exploration after this many distinct
	// schedules. Optional; default 200.
	MaxSchedules int
	// MaxDeviations is how many turns of one schedule may differ from the
	// canonical choice (the bound, as in CHESS's preemption bounding: every
	// schedule within this many deviations is run, if the budget allows).
	// Optional; default 2.
	MaxDeviations int
	// NoReduction turns the partial-order reduction off (see Explore):
	// every alternative is run, also those it proves equivalent to a
	// schedule already run.
	NoReduction bool
	// Stop, optional, is asked before each run: true ends the exploration
	// (a wall-clock budget kept by the caller: inside the bubble the clock
	// is virtual).
	Stop func() bool
	// OnSchedule, optional, is called with each distinct schedule's trace
	// and the number of deviations it makes, in the order they are run.
	OnSchedule func(tr *Trace, deviations int)
	// OnEquivalent, optional, is called for each alternative the reduction
	// did not run: the delivery schedule it would have released, and the
	// run it is equivalent to (whose outcome it shares).
	OnEquivalent func(schedule []string, same *Trace)
}

// Exploration is what Explore covered.
type Exploration struct {
	// Schedules is the number of distinct delivery schedules run.
	Schedules int
	// Runs is the number of runs made: Schedules, plus Diverged, plus the
	// Duplicates that were run.
	Runs int
	// Duplicates are runs whose delivery schedule had been covered already
	// (a different choice led to the same order of releases), and
	// alternatives not run because the reduction predicted such a
	// schedule.
	Duplicates int
	// Diverged are runs that could not follow their enforced prefix (a
	// goroutine inside client-go or the subject raced, so the ticket the
	// prefix named was not ready): not counted as schedules.
	Diverged int
	// Equivalent are the alternatives the partial-order reduction did not
	// run: each releases the same tickets as a schedule that was run, in
	// an order that differs only in swaps of independent releases (see
	// Explore). Schedules + Equivalent is the number of distinct schedules
	// covered.
	Equivalent int
	// Folded are alternatives not pushed: those of a run the reduction
	// had predicted, at turns after the swapped ticket's, each equivalent
	// to its parent run's alternative at the same turn, which has one
	// deviation fewer and is explored in its place (see Explore). Not
	// counted in Schedules or Equivalent, and OnSchedule and OnEquivalent
	// are not called for them.
	Folded int
	// Mispredicted are runs the reduction had predicted (an alternative
	// within the bound whose own alternatives still had to be run) whose
	// schedule was not the predicted one: a measure of how far the
	// reduction's assumption (a process reacts the same to the same
	// history) held. Their alternatives were all explored.
	Mispredicted int
	// Pending is the number of alternatives not run when the budget ran
	// out; 0 means the whole space within MaxDeviations was covered.
	Pending int
	// ChoicePoints is the number of choice points of the canonical run.
	ChoicePoints int
}

// Complete reports whether every schedule within the deviation bound was
// run.
func (e Exploration) Complete() bool { return e.Pending == 0 }

// Explore runs plan p under every delivery schedule that differs from the
// canonical one in at most MaxDeviations turns, depth first, within the
// budget. Each schedule runs in a bubble of its own (Run), so that every
// run starts at the same virtual instant: names client-go derives from the
// clock (an Event's) then repeat from run to run.
//
// A schedule is a choice, at each turn where more than one ticket (request
// answer, watch event, drawn disconnect, a subject's turn) is ready, of
// which goes first. The canonical run (or, when p has a Schedule, the run
// that follows it: explore a recorded run) makes every choice by the
// scheduler's order; a deviation
// releases another ready ticket instead, and the run goes on canonically
// after it (a prefix of the recorded schedule plus the alternative,
// enforced through Plan.Schedule).
//
// The reductions, and why they are sound: (1) only tickets ready at the
// same turn are permuted: a ticket due later cannot go first without
// moving virtual time, which the plan fixes; (2) events of one watch are
// never permuted (only a watch's head asks for a turn: order within a
// stream is the API's promise); (3) two choices that lead to the same
// sequence of releases are run once (by the schedule's digest): the subject
// saw the same answers in the same order; (4) the partial-order reduction
// below (unless NoReduction).
//
// The partial-order reduction. A run's processes share nothing but the
// API server: the subject (every client that is not a lab actor, taken as
// ONE process, since a subject's clients share its memory, its workqueue
// and its caches), the kubelet and the competing writer (the lab's own
// code, each with state of its own). Releasing a ticket wakes one process
// (a request's answer, an event of its watch, the end of its sleep), which
// runs until the whole bubble is blocked before the next release. Two
// releases a and b are independent when neither is an action of the run
// loop (a drawn disconnect), they wake different processes, they are not
// two requests of which one writes (reads, that is get, list and watch,
// commute with each other; a write moves the global resourceVersion every
// answer shows), and they are not a write and an event delivery (a write
// appends to watches' queues, and a watch asks for its next event's turn
// when it delivers one or when a write fills an empty queue: the order
// changes when that ticket is asked). Independent releases commute: each
// process sees the same answers and events in the same order either way,
// and the server applies the same writes in the same order.
//
// At a choice point of a run R at turn k, the alternative "release r
// first" is released by R later, at turn m. If r is independent of every
// release of R at turns k..m-1 (call them X), r's process has seen nothing
// of X, and X's processes nothing of r: the alternative run releases r,
// then X, then R's turns after m, the same tickets as R with r moved ahead
// of X, provided its canonical order picks X's tickets in R's order. It
// does when no ticket asked in reaction to r has the same due time as one
// asked in reaction to X (the scheduler orders ready tickets by due time,
// then by the turn asked, and moving r ahead of X changes only the turns
// asked of those two sets), and when no ticket was withdrawn or failed
// during X (a closed watch, a crash: they are not modelled). Such an
// alternative is not run when it could have no alternatives of its own
// within the bound (it is at the last deviation): every process saw what
// it saw in R, so R's verdicts are its verdicts. An alternative with
// deviations left is run (its own alternatives at turns k+1..m are new),
// but its alternatives after turn m are not pushed: each is equivalent, by
// the same argument, to R's alternative at that turn, which has one
// deviation fewer and is explored already.
//
// What the argument assumes: a process reacts the same to the same history
// (the lab's determinism, modulo goroutine interleavings inside one
// process, which no exploration controls: Diverged counts them), and the
// verdicts depend on what each process saw and did, not on how the
// records of two processes interleave in the trace. The reduction is
// checked against the unreduced exploration on plans where both complete
// (TestExploreReductionFindsTheSameOutcomes); Mispredicted measures the
// first assumption on every run it can check.
func Explore(tb testing.TB, p *Plan, opts ExploreOptions) (Exploration, error) {
	if opts.MaxSchedules <= 0 {
		opts.MaxSchedules = 200
	}
	if opts.MaxDeviations <= 0 {
		opts.MaxDeviations = 2
	}
	var ex Exploration
	seen := map[string]bool{}
	type frame struct {
		parent     *Trace   // the run whose choice point this is
		turn       int      // the choice turn
		alts       []string // alternatives still to run at that turn
		deviations int      // deviations of the parent
	}
	var stack []frame
	// push adds tr's choice points at turns in [from, to) (to < 0: all
	// after from).
	push := func(tr *Trace, from, to, deviations int) {
		if deviations >= opts.MaxDeviations {
			return
		}
		// Pushed in reverse so that earlier choice points are explored
		// first (depth first from the start of the run).
		for i := len(tr.Choices) - 1; i >= 0; i-- {
			cp := tr.Choices[i]
			if cp.Turn < from || cp.Turn >= len(tr.Schedule) || (to >= 0 && cp.Turn >= to) {
				continue
			}
			stack = append(stack, frame{parent: tr, turn: cp.Turn, alts: cp.Ready[1:], deviations: deviations})
		}
	}
	run := func(schedule []string) (*Trace, error) {
		q := p.Clone()
		q.Schedule = schedule
		ex.Runs++
		return runInNewBubble(tb, q, func(ctx context.Context) context.Context {
			return context.WithValue(ctx, choicesKey{}, true)
		})
	}
	// The first run is the canonical one, or the one p's Schedule names
	// (a recorded run): its order of client-go's batches (a WatchList's
	// objects, which Go's map order decides) is then the recorded one, and
	// two explorations of the plan cover the same schedules.
	first, err := run(p.Schedule)
	if err != nil {
		return ex, err
	}
	if first.Outcome == "" {
		return ex, errors.New("sim: explore: the canonical run did not finish")
	}
	seen[ScheduleDigest(first.Schedule)] = true
	ex.Schedules = 1
	ex.ChoicePoints = len(first.Choices)
	if opts.OnSchedule != nil {
		opts.OnSchedule(first, 0)
	}
	push(first, 0, -1, 0)
	for len(stack) > 0 {
		if ex.Schedules >= opts.MaxSchedules || (opts.Stop != nil && opts.Stop()) {
			break
		}
		f := &stack[len(stack)-1]
		alt := f.alts[0]
		parent, k, deviations := f.parent, f.turn, f.deviations+1
		f.alts = f.alts[1:]
		if len(f.alts) == 0 {
			stack = stack[:len(stack)-1]
		}
		var predicted []string
		m := -1
		if !opts.NoReduction {
			predicted, m = predictSwap(parent, k, alt)
		}
		if predicted != nil {
			d := ScheduleDigest(predicted)
			if seen[d] {
				ex.Duplicates++
				continue
			}
			if deviations >= opts.MaxDeviations {
				seen[d] = true
				ex.Equivalent++
				if opts.OnEquivalent != nil {
					opts.OnEquivalent(predicted, parent)
				}
				continue
			}
		}
		schedule := append(slices.Clip(parent.Schedule[:k]), alt)
		tr, err := run(schedule)
		if err != nil {
			return ex, err
		}
		if tr.Diverged {
			ex.Diverged++
			continue
		}
		d := ScheduleDigest(tr.Schedule)
		if seen[d] {
			ex.Duplicates++
			continue
		}
		seen[d] = true
		ex.Schedules++
		if opts.OnSchedule != nil {
			opts.OnSchedule(tr, deviations)
		}
		switch {
		case predicted == nil:
			push(tr, len(schedule), -1, deviations)
		case slices.Equal(tr.Schedule, predicted):
			// Its alternatives after turn m are the parent's (see above).
			push(tr, len(schedule), m+1, deviations)
			for _, cp := range tr.Choices {
				if cp.Turn > m && cp.Turn < len(tr.Schedule) {
					ex.Folded += len(cp.Ready) - 1
				}
			}
		default:
			ex.Mispredicted++
			push(tr, len(schedule), -1, deviations)
		}
	}
	for _, f := range stack {
		ex.Pending += len(f.alts)
	}
	return ex, nil
}

// The lab's own actors, each a process of its own for the reduction.
const clientKubelet = "kubelet"

// processOf names the process a client belongs to: the kubelet and the
// competitor are the lab's own, every other client is the subject's.
func processOf(client string) string {
	switch client {
	case clientKubelet, ClientCompetitor:
		return client
	}
	return "subject"
}

// dependent reports whether releasing a and b in either order can make a
// difference to what a process sees (see Explore).
func dependent(a, b ticketInfo) bool {
	switch {
	case a.kind == kindAction || b.kind == kindAction:
		return true
	case processOf(a.client) == processOf(b.client):
		return true
	}
	request := func(t ticketInfo) bool { return t.kind == kindRead || t.kind == kindWrite }
	if request(a) && request(b) && (a.kind == kindWrite || b.kind == kindWrite) {
		return true
	}
	return (a.kind == kindWrite && b.kind == kindEvent) || (a.kind == kindEvent && b.kind == kindWrite)
}

// dependentRelation is dependent; a test replaces it with a wrong one to
// see the reduction's check fail.
var dependentRelation = dependent

// predictSwap returns the delivery schedule that releasing alt at turn k
// of run tr (instead of tr's choice) leads to, and the turn m at which tr
// released alt, when the reduction can prove it (see Explore): the same
// tickets as tr, with alt moved ahead of tr's turns k..m-1. nil when it
// cannot.
func predictSwap(tr *Trace, k int, alt string) ([]string, int) {
	m := slices.Index(tr.Schedule[k+1:], alt)
	if m < 0 || len(tr.tickets) == 0 {
		return nil, -1
	}
	m += k + 1
	for _, d := range tr.disturbed {
		if d > k && d <= m+1 {
			return nil, -1
		}
	}
	info := make(map[string]ticketInfo, len(tr.tickets))
	for _, t := range tr.tickets {
		info[t.key] = t
	}
	a, ok := info[alt]
	if !ok {
		return nil, -1
	}
	for _, key := range tr.Schedule[k:m] {
		x, ok := info[key]
		if !ok || dependentRelation(a, x) {
			return nil, -1
		}
	}
	// Tickets asked in reaction to X (turns k+1..m) and to alt (m+1)
	// must not tie on due time.
	dues := map[time.Duration]bool{}
	for _, t := range tr.tickets {
		if t.turn > k && t.turn <= m {
			dues[t.due] = true
		}
	}
	for _, t := range tr.tickets {
		if t.turn == m+1 && dues[t.due] {
			return nil, -1
		}
	}
	out := make([]string, 0, len(tr.Schedule))
	out = append(out, tr.Schedule[:k]...)
	out = append(out, alt)
	out = append(out, tr.Schedule[k:m]...)
	return append(out, tr.Schedule[m+1:]...), m
}

// ExploreRandom runs plan p n times, run i (from 0) under the shuffled
// schedule ShuffleSchedule = i+1: at every turn where several tickets are
// ready, one drawn at random from the plan's seed and that number goes
// first, the same every time. It is the baseline exploration is measured
// against: onRun is called with each run's trace, whose plan replays it.
func ExploreRandom(tb testing.TB, p *Plan, n int, onRun func(i int, tr *Trace)) error {
	for i := range n {
		q := p.Clone()
		q.ShuffleSchedule = uint64(i + 1)
		tr, err := Run(tb, q)
		if err != nil {
			return err
		}
		onRun(i, tr)
	}
	return nil
}
