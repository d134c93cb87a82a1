package controller_test

import (
	"strings"
	"testing"

	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/examples/webapp/internal/controller"
	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// lifecycle is the user story the targeted campaign perturbs (Sieve runs
// an operator's end-to-end tests): a WebApp deleted at 2s, recreated at
// 4s, scaled at 6s, its greeting changed at 8s.
func lifecycle(t *testing.T) *sim.Plan {
	t.Helper()
	p, err := sim.LoadPlanFile("../../plans/lifecycle.json")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// hunted is the reconciler with bug planted, under one subject name for
// every campaign, so that a plan generated for one version runs as is on
// another (its faults aim at "webapp").
func hunted(bug controller.Bug) cachelabtest.Controller {
	c := lab(bug)
	c.Name = "webapp"
	return c
}

// The correct reconciler passes every targeted plan of the lifecycle with
// client-go's default (WatchList: a restart's first sync is consistent,
// so the stale-state restarts are pruned). As an older client whose
// informers list at resourceVersion 0 (WatchList off), the stale-state
// restarts run; some fail no-stale-harm: the restarted process rewrites
// the Deployment or ConfigMap from a WebApp older than one an earlier
// process saw (Sieve's time travel, the lists-stale-replica mutant's
// bug), a real harm of the old client that today's default retires.
// Nothing else fails.
func TestTargetedCampaignOnTheCorrectReconciler(t *testing.T) {
	t.Run("watchlist", func(t *testing.T) {
		clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
		rep := cachelabtest.Hunt(t, hunted(controller.NoBug), cachelabtest.HuntOptions{}, false, lifecycle(t))
		t.Logf("%d plans run, %d failed; %s CPU", len(rep.Rows), len(rep.Failures()), rep.CPU)
	})
	t.Run("lists", func(t *testing.T) {
		clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
		rep := cachelabtest.Hunt(t, hunted(controller.NoBug), cachelabtest.HuntOptions{}, true, lifecycle(t))
		stale := 0
		for _, row := range rep.Failures() {
			if row.Class != scenarios.ClassStale || strings.Join(row.Failed, ",") != invariants.NameNoStaleHarm {
				t.Errorf("plan %d (%s: %s) failed %v %s: only stale-state restarts may fail, and only no-stale-harm", row.Index, row.Class, row.Perturbation, row.Failed, row.Err)
			}
			stale++
		}
		t.Logf("%d plans run, %d stale-state restarts fail no-stale-harm (time travel of an informer that lists at resourceVersion 0); %s CPU", len(rep.Rows), stale, rep.CPU)
	})
}

// Each planted bug is found by its class's generator in the first
// targeted campaign on the lifecycle, run as a user runs it (every class,
// in generation order, here one plan at a time and stopped at the first
// failure, for the CPU to it), and the catch is the bug's: the correct
// reconciler passes the plan that caught it. stale-delete needs its
// restart to list from a lagging replica, which only an informer that
// lists at resourceVersion 0 does (WatchList off: an older client).
func TestTargetedCampaignFindsEachPlantedBugByItsClass(t *testing.T) {
	for _, c := range []struct {
		bug       controller.Bug
		class     string
		watchList bool
	}{
		{controller.StaleDelete, scenarios.ClassStale, false},
		{controller.ScaleOnObservedChange, scenarios.ClassUnobserved, true},
		{controller.RollOnConfigWrite, scenarios.ClassIntermediate, true},
	} {
		t.Run(string(c.bug), func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, c.watchList)
			// Generation order (class by class): the default order lets
			// every kind of perturbation go early, and another class may
			// catch a bug first (roll-on-config-write: an
			// interleaved-writer plan, plan 21 of 65).
			rep := cachelabtest.Hunt(t, hunted(c.bug), cachelabtest.HuntOptions{Parallel: 1, StopAtFirst: true, GenerationOrder: true}, true, lifecycle(t))
			first := rep.First()
			if first == nil {
				t.Fatalf("no targeted plan caught %s (%d generated)", c.bug, rep.Generated)
			}
			if first.Class != c.class || first.Verdict != "fail" {
				t.Errorf("the first catch of %s is plan %d, %s (%s %v %s), want a %s plan", c.bug, first.Index, first.Class, first.Verdict, first.Failed, first.Err, c.class)
			}
			if again := cachelabtest.Catch(t, hunted(controller.NoBug), cachelabtest.These(first.Plan)); len(again) > 0 {
				t.Errorf("the correct reconciler fails the plan that caught %s too:\n%s", c.bug, again[0].Report)
			}
			t.Logf("%s: plan %d of %d (%s: %s) fails %s; %s CPU to it (reference included)", c.bug, first.Index, rep.Generated, first.Class, first.Perturbation, strings.Join(first.Failed, ","), first.CPU)
		})
	}
}
