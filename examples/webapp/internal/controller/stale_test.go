package controller_test

import (
	"strings"
	"testing"

	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/examples/webapp/internal/controller"
	"github.com/cachelab/cachelab/invariants"
)

// stalePlan is the hand-written stale-state plan: the WebApp deleted at
// 2s, recreated at 4s; at 6s a crash and a restart onto a replica held at
// the reconciler's 7th write, when the predecessor was terminating.
var stalePlan = cachelabtest.Files("../../plans/stale-restart.json")

// The planted stale-delete bug, on a restart onto a lagging replica with
// WatchList off (a list at resourceVersion 0, as older clients list):
// the restarted reconciler sees the deleted predecessor terminating and
// deletes the live successor's children by name. no-stale-harm fails it,
// naming the delete and the stale read; the correct reconciler, which
// reads the children's owner live, passes every invariant on the same
// plan (per-object-order included: its cache starting older after the
// restart is no order violation).
func TestLabCatchesStaleDeleteOnARestartOntoALaggingReplica(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	failures := cachelabtest.Catch(t, lab(controller.StaleDelete), stalePlan)
	if len(failures) != 1 {
		t.Fatalf("the lab caught %d failure(s) of stale-delete on the plan, want 1", len(failures))
	}
	var harm *invariants.Verdict
	for i, v := range failures[0].Failed {
		if v.Invariant == invariants.NameNoStaleHarm {
			harm = &failures[0].Failed[i]
		}
	}
	if harm == nil {
		t.Fatalf("no-stale-harm did not fail stale-delete:\n%s", failures[0].Report)
	}
	for _, want := range []string{"delete of", "predecessor of webapps/default/a", "terminating"} {
		if !strings.Contains(harm.Reason, want) {
			t.Errorf("no-stale-harm's reason lacks %q: %s", want, harm.Reason)
		}
	}
	if len(harm.Positions) != 2 {
		t.Errorf("no-stale-harm should name the delete and the stale read, got positions %v", harm.Positions)
	}
	if again := cachelabtest.Catch(t, lab(controller.NoBug), stalePlan); len(again) > 0 {
		t.Errorf("the correct reconciler fails the stale-restart plan:\n%s", again[0].Report)
	}
}
