package sim

import (
	"context"
	"errors"
	"testing"
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
	// Stop, optional, is asked before each run: true ends the exploration
	// (a wall-clock budget kept by the caller: inside the bubble the clock
	// is virtual).
	Stop func() bool
	// OnSchedule, optional, is called with each distinct schedule's trace
	// and the number of deviations it makes, in the order they are run.
	OnSchedule func(tr *Trace, deviations int)
}

// Exploration is what Explore covered.
type Exploration struct {
	// Schedules is the number of distinct delivery schedules run.
	Schedules int
	// Runs is the number of runs made: Schedules, plus Duplicates, plus
	// Diverged.
	Runs int
	// Duplicates are runs whose delivery schedule had been run already
	// (a different choice led to the same order of releases).
	Duplicates int
	// Diverged are runs that could not follow their enforced prefix (a
	// goroutine inside client-go or the subject raced, so the ticket the
	// prefix named was not ready): not counted as schedules.
	Diverged int
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
// answer, watch event, drawn disconnect) is ready, of which goes first. The
// canonical run makes every choice by the scheduler's order; a deviation
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
// saw the same answers in the same order. No other independence is
// assumed, so schedules that a more clever partial-order reduction would
// merge are run separately.
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
		prefix     []string // the schedule before the choice turn
		alts       []string // alternatives still to run at that turn
		deviations int      // deviations of the prefix
	}
	var stack []frame
	push := func(tr *Trace, after, deviations int) {
		if deviations >= opts.MaxDeviations {
			return
		}
		// Pushed in reverse so that earlier choice points are explored
		// first (depth first from the start of the run).
		for i := len(tr.Choices) - 1; i >= 0; i-- {
			cp := tr.Choices[i]
			if cp.Turn < after || cp.Turn > len(tr.Schedule) {
				continue
			}
			stack = append(stack, frame{prefix: tr.Schedule[:cp.Turn], alts: cp.Ready[1:], deviations: deviations})
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
	first, err := run(nil)
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
	push(first, 0, 0)
	for len(stack) > 0 {
		if ex.Schedules >= opts.MaxSchedules || (opts.Stop != nil && opts.Stop()) {
			break
		}
		f := &stack[len(stack)-1]
		alt := f.alts[0]
		prefix, deviations := f.prefix, f.deviations+1
		f.alts = f.alts[1:]
		if len(f.alts) == 0 {
			stack = stack[:len(stack)-1]
		}
		schedule := append(append([]string(nil), prefix...), alt)
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
		push(tr, len(schedule), deviations)
	}
	for _, f := range stack {
		ex.Pending += len(f.alts)
	}
	return ex, nil
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
