package sim_test

import (
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim"
)

// explorePlan is small: one ConfigMap, a competitor that labels it and
// the simtest informer, no latency, so the competitor's and the subject's
// watches get each event at the same instant.
func explorePlan() *sim.Plan {
	p := plan(
		sim.Step{At: at(time.Second), Actor: "user", Op: "create", Object: cm("b")},
		sim.Step{At: at(2 * time.Second), Actor: "user", Op: "delete", Resource: "configmaps", Name: "a"},
	)
	p.Competitor = &sim.Competitor{Resource: "configmaps", Patch: []byte(`{"metadata":{"labels":{"owner":"competitor"}}}`)}
	return p
}

func TestExploreRunsDistinctSchedulesWithinTheBound(t *testing.T) {
	p := explorePlan()
	var digests []string
	var ex sim.Exploration
	var err error
	ex, err = sim.Explore(t, p, sim.ExploreOptions{MaxDeviations: 1, MaxSchedules: 100, OnSchedule: func(tr *sim.Trace, dev int) {
		digests = append(digests, sim.ScheduleDigest(tr.Schedule))
		if tr.Outcome != "quiet" {
			t.Errorf("schedule %d ended %q", len(digests), tr.Outcome)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", ex)
	if ex.ChoicePoints == 0 {
		t.Fatal("the canonical run has no choice point: nothing to explore")
	}
	if ex.Schedules < 2 || ex.Schedules != len(digests) {
		t.Fatalf("%d schedules (%d reported), want more than one", ex.Schedules, len(digests))
	}
	seen := map[string]bool{}
	for _, d := range digests {
		if seen[d] {
			t.Fatalf("schedule %s run twice", d)
		}
		seen[d] = true
	}
	if !ex.Complete() {
		t.Fatalf("one deviation from a small plan did not fit 100 schedules: %d pending", ex.Pending)
	}
	// With one deviation allowed, every choice point of the canonical run
	// gives len(Ready)-1 alternatives: each was run, or was a duplicate or
	// diverged.
	if got := ex.Schedules - 1 + ex.Duplicates + ex.Diverged; got != ex.Runs-1 {
		t.Fatalf("runs %d do not add up: %+v", ex.Runs, ex)
	}
}
