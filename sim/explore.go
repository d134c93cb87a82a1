package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
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
// which goes first; and, at each handler turn that takes one object of a
// batch client-go hands out in Go's map order (a WatchList's objects, a
// relist's deletions, a resync), of which of the batch's objects comes
// first (ChoicePoint.Orders). No ticket decides that order: a schedule
// naming another object is followed as a replay follows a recorded run,
// started over until client-go's order gives it (up to ReplayAttempts
// times; Diverged counts those that never did). The canonical run (or, when p has a Schedule, the run
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
// sequence of releases are run once (by the schedule's digest, with the
// objects of the subject's turns: EntriesDigest): the subject saw the same
// answers in the same order; (4) the partial-order reduction
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
			alts := append(slices.Clip(cp.Ready[1:]), cp.Orders...)
			if len(alts) == 0 {
				continue
			}
			stack = append(stack, frame{parent: tr, turn: cp.Turn, alts: alts, deviations: deviations})
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
	seen[EntriesDigest(first.Schedule)] = true
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
			d := EntriesDigest(predicted)
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
		d := EntriesDigest(tr.Schedule)
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
					ex.Folded += len(cp.Ready) - 1 + len(cp.Orders)
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

// withBatchOrders returns choices (a run's choice points, when recorded)
// with the orders of client-go's batches in schedule added (batchOrders):
// each to the choice point of its turn, or as a choice point of its own,
// in the order of the turns.
func withBatchOrders(choices []ChoicePoint, schedule []string) []ChoicePoint {
	orders := batchOrders(schedule)
	if len(orders) == 0 {
		return choices
	}
	for i := range choices {
		if o, ok := orders[choices[i].Turn]; ok {
			choices[i].Orders = o
			delete(orders, choices[i].Turn)
		}
	}
	for turn, o := range orders {
		choices = append(choices, ChoicePoint{Turn: turn, Ready: []string{schedule[turn]}, Orders: o})
	}
	slices.SortFunc(choices, func(a, b ChoicePoint) int { return a.Turn - b.Turn })
	return choices
}

// batchOrders finds, in a delivery schedule, the subject's handler turns
// that took one object of a batch client-go hands out in Go's map order,
// and returns, by turn, the same turn about each other object of the batch
// still to come (distinct objects, in the order they came).
//
// A batch is a run of a client's handler turns of one kind ("turn <client>
// handler ..." about objects) with no event delivered to any of that
// client's watches in between: a handler call that no delivery caused
// comes out of a batch client-go had queued at once (a WatchList's
// objects after its end bookmark, a relist, a resync). Within it, the
// deletions of a relist (DELETED, from client-go's known objects: a map)
// come before the other objects, so each group is a batch of its own.
// The other objects are in map order after a WatchList (reflector.go's
// temporary store) and after a resync, but in the list's order after a
// list (no WatchList): when the client's last request or delivery before
// the batch is the answer to a list, only its deletions are a batch.
func batchOrders(schedule []string) map[int][]string {
	type member struct {
		turn    int
		key     string // the turn's key ("turn <client> handler ... #n")
		object  string // "<event type> <namespace>/<name>"
		deleted bool
	}
	type open struct {
		members []member
		epoch   int  // the client's deliveries when it opened
		listed  bool // the client's last request or delivery before it was a list
	}
	epoch := map[string]int{}    // deliveries to each client's watches so far
	listed := map[string]bool{}  // whether each client's last request or delivery was a list
	runs := map[string][]*open{} // per handler base: its batches, the last one open
	out := map[int][]string{}
	for i, e := range schedule {
		switch {
		case strings.HasPrefix(e, "event "):
			watcher := strings.Fields(e)[1]
			client := watcher[:max(strings.LastIndexByte(watcher, '/'), 0)]
			epoch[client]++
			listed[client] = false
		case strings.HasPrefix(e, "req "):
			f := strings.Fields(e)
			if len(f) > 2 {
				listed[f[1]] = f[2] == "list"
			}
		case strings.HasPrefix(e, "turn "):
			key, object := splitEntry(e)
			f := strings.Fields(key)
			if object == "" || len(f) < 4 || f[2] != "handler" {
				continue
			}
			client := f[1]
			base := key[:strings.LastIndex(key, " #")]
			m := member{turn: i, key: key, object: object, deleted: strings.HasPrefix(object, "DELETED ")}
			bs := runs[base]
			if n := len(bs); n > 0 {
				last := bs[n-1]
				prev := last.members[len(last.members)-1]
				if last.epoch == epoch[client] && prev.deleted == m.deleted {
					last.members = append(last.members, m)
					continue
				}
			}
			runs[base] = append(bs, &open{members: []member{m}, epoch: epoch[client], listed: listed[client]})
		}
	}
	for _, bs := range runs {
		for _, b := range bs {
			if len(b.members) < 2 || (b.listed && !b.members[0].deleted) {
				continue
			}
			for j, m := range b.members {
				seen := map[string]bool{m.object: true}
				for _, later := range b.members[j+1:] {
					if !seen[later.object] {
						seen[later.object] = true
						out[m.turn] = append(out[m.turn], m.key+objectSep+later.object)
					}
				}
			}
		}
	}
	return out
}

// EntriesDigest is ScheduleDigest with the objects of the subject's turns
// kept: Explore tells apart two schedules whose only difference is the
// order in which client-go handed out a batch, since it explores those
// orders too (ChoicePoint.Orders).
func EntriesDigest(schedule []string) string {
	h := sha256.New()
	for _, e := range schedule {
		h.Write([]byte(e))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
