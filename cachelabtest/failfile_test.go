package cachelabtest_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
)

// A random plan that failed is drawn again from rapid's failfile on the
// next go test: it follows the delivery schedule of its run saved beside
// the report (and starts over while client-go hands a batch out in another
// order than it did), as -cachelab.plan and `cachelab replay` do, instead
// of running in the canonical order.
func TestARandomPlanReplayedFromItsFailfileFollowsItsSavedRun(t *testing.T) {
	scratch(t)
	setFlag(t, "rapid.seed", "1")
	c := clientGo("a", false)
	if first := cachelabtest.Catch(t, c, cachelabtest.Random()); len(first) == 0 {
		t.Fatal("random plans did not catch a handler that panics on ConfigMap a")
	}
	failfiles, _ := filepath.Glob(filepath.Join("testdata", "rapid", "*", "*.fail"))
	traces, _ := filepath.Glob(filepath.Join("testdata", "cachelab", "*", "random", "trace.jsonl"))
	if len(failfiles) != 1 || len(traces) != 1 {
		t.Fatalf("want one failfile and one saved run; got %q and %q", failfiles, traces)
	}
	saved, err := sim.ReadTraceFile(traces[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(saved.Schedule) == 0 {
		t.Fatal("the saved run has no delivery schedule to follow")
	}
	setFlag(t, "rapid.failfile", failfiles[0])
	again := cachelabtest.Catch(t, c, cachelabtest.Random())
	if len(again) == 0 {
		t.Fatal("the plan drawn from the failfile did not fail again")
	}
	if got := again[0].Plan.Schedule; !slices.Equal(got, saved.Schedule) {
		t.Fatalf("the plan drawn from the failfile ran with a schedule of %d turns, want its saved run's %d (it ran in the canonical order)", len(got), len(saved.Schedule))
	}
}
