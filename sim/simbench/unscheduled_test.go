package simbench_test

import (
	"testing"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/simbench"
)

// The standard scenario without the scheduler (cachelab bench's
// direct-unscheduled) ends quiet in every run. It did not in 3 of 100:
// the test subject recorded a queue's "add" after the Add, so the worker
// it woke could record its "get" first, and the key looked queued and not
// taken for ever (work under way keeps a run from being quiet): the run
// went on to its deadline and the bench stopped ("direct run ended
// deadline, want quiet"). With turns the worker waits, so only a run
// without them met it.
func TestAnUnscheduledStandardRunEndsQuiet(t *testing.T) {
	for i := range 100 {
		var tr *sim.Trace
		var err error
		sim.Bubble(t, func(t *testing.T) {
			tr, err = sim.RunInBubble(sim.WithoutScheduler(t.Context()), simbench.StandardPlan("direct"))
		})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Outcome != "quiet" {
			t.Fatalf("run %d of the standard scenario without the scheduler ended %q, want quiet", i+1, tr.Outcome)
		}
	}
}
