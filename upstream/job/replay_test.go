package job_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/internal/campaign"
	"github.com/cachelab/cachelab/upstream/job"
)

// findingF is a run of the campaign's plan 6 (gate on) that failed
// matches-reference (docs/upstream.md, F): scaling Job a from 3 to 1, the
// controller removed the tracking finalizer of Pods a-bbbbc and a-bbbbf and
// their deletes were answered 503; its next sync picked a-bbbbf and
// a-bbbbd to delete, and a-bbbbc stayed alive without its finalizer. Which
// Pods a sync picks is the controller's own order: activePodsForRemoval
// sorts the lister's Pods (which come out of the indexer's Go map) with
// controller.ActivePods, and Pods created in one second tie. About 1 run
// in 5 of plan 6 picks so.
const findingF = "findings/finalizer-left-6"

// A replay of F follows the recorded run, starting over while the
// controller picks other Pods than the recorded run did, and says that
// this is what each attempt that could not follow met: the controller's
// own order, not an order the lab should have decided (before
// sim.IsSubjectOrderDivergence, every such attempt was told as one). The
// other attempts that start over meet client-go's map order (the
// WatchList of Jobs a and b after the restart). Each followed replay
// fails matches-reference as the recorded run did, with its sync
// measurements (compared with the recorded trace judged again: the saved
// verdicts.json writes a measurement's status in words, and compared
// with it 0 of 3 replays had them).
func TestAReplayOfFindingFSaysTheControllerPickedOtherPods(t *testing.T) {
	rep, err := campaign.Reproduce(t, job.Controller(true), findingF, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep.Summary())
	if rep.Errors > 0 || rep.NotFollowed > 0 || rep.OtherDivergences > 0 {
		t.Errorf("%d replays could not run, %d could not follow, %d met an order the lab should have decided; want 0, 0, 0", rep.Errors, rep.NotFollowed, rep.OtherDivergences)
	}
	if rep.SameFailed != rep.Runs || rep.SameDeliveries != rep.Runs || rep.SameMeasurements != rep.Runs {
		t.Errorf("%d of %d replays failed {%s} as recorded, %d had the recorded delivery schedule, %d its sync measurements; want all", rep.SameFailed, rep.Runs, strings.Join(rep.Failed, ", "), rep.SameDeliveries, rep.SameMeasurements)
	}
	for i, tr := range rep.Replays {
		for _, d := range tr.Divergences {
			// After the restart at 10.311 s, the WatchList of Jobs a and
			// b reaches the handler in client-go's map order.
			pods := sim.IsSubjectOrderDivergence(d) && strings.Contains(d, "pods/default/a-")
			if !pods && !sim.IsMapOrderDivergence(d) {
				t.Errorf("replay %d: a divergence told neither as the controller's choice of Pods nor as client-go's map order: %q", i+1, d)
			}
		}
	}
}

// A saved run without its trace cannot be reproduced: the error says what
// is missing.
func TestReproduceWithoutTheRecordedTraceSaysSo(t *testing.T) {
	dir := t.TempDir()
	plan, err := os.ReadFile(filepath.Join(findingF, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plan.json"), plan, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = campaign.Reproduce(t, job.Controller(true), dir, 1)
	if err == nil || !strings.Contains(err.Error(), "no trace.jsonl") {
		t.Fatalf("got %v, want an error saying there is no trace.jsonl", err)
	}
	if _, err := campaign.Reproduce(t, job.Controller(false), findingF, 1); err == nil || !strings.Contains(err.Error(), "not of upstream/job-nogate") {
		t.Fatalf("got %v, want an error saying the run is not the gate-off controller's", err)
	}
}
