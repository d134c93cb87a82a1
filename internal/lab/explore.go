package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/simbench"
)

// ExploreOptions configure ExplorePlan.
type ExploreOptions struct {
	// MaxSchedules, MaxDeviations: see sim.ExploreOptions (defaults 200
	// and 2).
	MaxSchedules  int
	MaxDeviations int
	// NoReduction runs every alternative, also those the partial-order
	// reduction proves equivalent to a schedule run (see sim.Explore).
	NoReduction bool
	// MaxWall stops the exploration after this much wall-clock time.
	// Optional; default none.
	MaxWall time.Duration
	// Out, when set, is the folder where each failing schedule's plan
	// (with its enforced Schedule), trace and verdicts are written, one
	// folder per failing schedule: Out/schedule-N.
	Out string
	// Replay returns the command that replays the plan saved at path.
	Replay func(planPath string) string
}

// ExploreResult is what exploring one plan found.
type ExploreResult struct {
	// Exploration is what was covered.
	sim.Exploration
	// Outcomes counts, per invariant (measurements included), the
	// schedules that passed, failed or were unknown: those run and those
	// the reduction proved equivalent to one run (with its verdicts).
	Outcomes map[string]map[invariants.Status]int
	// Failing are the schedules that failed an invariant of the subject
	// (measurements excluded), in the order they were run.
	Failing []FailingSchedule
	// Wall and CPU are the exploration's wall-clock and process CPU time.
	Wall, CPU time.Duration
}

// FailingSchedule is one schedule that failed.
type FailingSchedule struct {
	// N numbers the schedule among those run (the canonical one is 1).
	N int
	// Deviations is how many turns differ from the canonical order (-1
	// for an equivalent schedule: not counted).
	Deviations int
	// Equivalent is true for a schedule that was not run: the reduction
	// proved it equivalent to schedule SameAs, whose verdicts it shares.
	// Its plan replays it; no trace was written.
	Equivalent bool
	// SameAs is the number of the schedule an equivalent one shares its
	// verdicts with (0 if it was run).
	SameAs int
	// Failed are the failed invariants.
	Failed []string
	// Plan is the plan with the schedule to enforce (Plan.Schedule).
	Plan *sim.Plan
	// Dir is where its files were written ("" if none).
	Dir string
	// Replay is the command that replays it ("" if not written).
	Replay string
}

// ExplorePlan explores the delivery schedules of p (see sim.Explore) under
// host, judges every schedule and collects the failing ones.
func ExplorePlan(host Host, p *sim.Plan, opts ExploreOptions) (*ExploreResult, error) {
	res := &ExploreResult{Outcomes: map[string]map[invariants.Status]int{}}
	start, cpu0 := simbench.WallClock(), simbench.ProcessCPU()
	// runErr is the exploration's error; saveErr the first failing
	// schedule the callbacks could not write (kept apart: sim.Explore's
	// own result is assigned to runErr after they ran).
	var runErr, saveErr error
	n := 0
	// What each schedule run was judged, by schedule digest, for the
	// equivalent schedules that share it.
	type judged struct {
		n        int
		statuses map[string]invariants.Status
		failed   []string
	}
	runs := map[string]judged{}
	count := func(statuses map[string]invariants.Status) {
		for inv, st := range statuses {
			m := res.Outcomes[inv]
			if m == nil {
				m = map[invariants.Status]int{}
				res.Outcomes[inv] = m
			}
			m[st]++
		}
	}
	save := func(fs FailingSchedule, tr *sim.Trace) {
		if opts.Out != "" {
			fs.Dir = filepath.Join(opts.Out, fmt.Sprintf("schedule-%d", fs.N))
			if err := writeSchedule(fs.Dir, fs.Plan, tr); err != nil {
				if saveErr == nil {
					saveErr = fmt.Errorf("schedule %d failed %s, and could not be written: %w", fs.N, strings.Join(fs.Failed, ", "), err)
				}
				return
			}
			if opts.Replay != nil {
				fs.Replay = opts.Replay(filepath.Join(fs.Dir, PlanFile))
			}
		}
		res.Failing = append(res.Failing, fs)
	}
	ok, out := host(func(t *testing.T) {
		res.Exploration, runErr = sim.Explore(t, p, sim.ExploreOptions{
			MaxSchedules:  opts.MaxSchedules,
			MaxDeviations: opts.MaxDeviations,
			NoReduction:   opts.NoReduction,
			Stop:          func() bool { return opts.MaxWall > 0 && simbench.WallClock()-start > opts.MaxWall },
			OnSchedule: func(tr *sim.Trace, deviations int) {
				n++
				vs := invariants.Check(tr)
				j := judged{n: n, statuses: map[string]invariants.Status{}, failed: FailedInvariants(vs)}
				for _, v := range vs {
					j.statuses[v.Invariant] = v.Status
				}
				runs[sim.EntriesDigest(tr.Schedule)] = j
				count(j.statuses)
				if len(j.failed) == 0 {
					return
				}
				fs := FailingSchedule{N: n, Deviations: deviations, Failed: j.failed, Plan: tr.Plan.Clone()}
				fs.Plan.Schedule = slices.Clone(tr.Schedule)
				save(fs, tr)
			},
			OnEquivalent: func(schedule []string, same *sim.Trace) {
				n++
				j := runs[sim.EntriesDigest(same.Schedule)]
				count(j.statuses)
				if len(j.failed) == 0 {
					return
				}
				fs := FailingSchedule{N: n, Deviations: -1, Failed: j.failed, Plan: same.Plan.Clone(), Equivalent: true, SameAs: j.n}
				fs.Plan.Schedule = slices.Clone(schedule)
				save(fs, nil)
			},
		})
	})
	res.Wall, res.CPU = simbench.WallClock()-start, simbench.ProcessCPU()-cpu0
	if runErr == nil {
		runErr = saveErr
	}
	if runErr != nil {
		return res, runErr
	}
	if !ok {
		return res, fmt.Errorf("the exploration's bubble failed:\n%s", out)
	}
	return res, nil
}

// writeSchedule writes a failing schedule's plan and trace (if it was run).
func writeSchedule(dir string, p *sim.Plan, tr *sim.Trace) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, PlanFile))
	if err != nil {
		return err
	}
	if err := p.Save(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if tr == nil {
		return nil
	}
	return sim.WriteTraceFile(filepath.Join(dir, TraceFile), tr)
}

// Summary is the exploration in a few lines: schedules, coverage, outcomes
// per invariant, time.
func (r *ExploreResult) Summary() string {
	var b strings.Builder
	cover := "the whole space within the bound"
	if !r.Complete() {
		cover = fmt.Sprintf("NOT the whole space: %d alternatives left when the budget ran out", r.Pending)
	}
	fmt.Fprintf(&b, "%d distinct schedules covered: %d run, %d equivalent to one run (partial-order reduction); %d runs (%d duplicates, %d diverged), %d choice points in the canonical run; covered %s; %s wall, %s CPU\n",
		r.Schedules+r.Equivalent, r.Schedules, r.Equivalent, r.Runs, r.Duplicates, r.Diverged, r.ChoicePoints, cover, r.Wall.Round(time.Millisecond), r.CPU.Round(time.Millisecond))
	if r.Folded > 0 {
		fmt.Fprintf(&b, "%d more schedules not run: each is equivalent to an alternative its parent run explores with one deviation fewer (not counted below)\n", r.Folded)
	}
	if r.Mispredicted > 0 {
		fmt.Fprintf(&b, "%d runs the reduction had predicted released another schedule (their alternatives were all explored)\n", r.Mispredicted)
	}
	names := make([]string, 0, len(r.Outcomes))
	for name := range r.Outcomes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		m := r.Outcomes[name]
		kind := ""
		if IsMeasurement(name) {
			kind = " (measurement)"
		}
		fmt.Fprintf(&b, "  %-36s pass %d, fail %d, unknown %d%s\n", name, m[invariants.Pass], m[invariants.Fail], m[invariants.Unknown], kind)
	}
	return b.String()
}
