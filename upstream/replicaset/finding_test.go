package replicaset_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/internal/campaign"
	"github.com/cachelab/cachelab/upstream/replicaset"
)

// unknownOutcomeOverCreate is the campaign's finding with the KEP-5647 gate
// on (first seen as seed 38), cut down by hand: the controller's Pod watch
// is held for 5 s (a lagging Pod cache), and its first Pod create is applied
// by the server but answered 504 (an unknown outcome). RealPodControl
// returns the error, so OnWrite (the gate's hook, which records a write's
// resourceVersion) is not called, and manageReplicas lowers the
// expectations for the create it takes as failed; the sync is requeued,
// the expectations are satisfied, the Pod cache still shows no Pod, and
// the controller creates a second Pod for a ReplicaSet of one.
func unknownOutcomeOverCreate(subject string) *sim.Plan {
	return &sim.Plan{
		Version: sim.PlanVersion, Name: "unknown-outcome-overcreate", Seed: 1, Subject: subject,
		Deadline: sim.Duration(3 * time.Minute), Quiet: sim.Duration(45 * time.Second),
		Faults: sim.FaultPolicy{RequestLatency: sim.Distribution{Kind: "fixed", Max: sim.Duration(time.Millisecond)}},
		Steps: []sim.Step{
			{At: sim.Duration(time.Second), Actor: "faults", Op: "hold", Resource: "pods", Target: subject, For: sim.Duration(5 * time.Second)},
			{At: sim.Duration(time.Second), Actor: "faults", Op: "timeout-next-write", Resource: "pods", Verb: "create", Target: subject},
			{At: sim.Duration(time.Second), Actor: "user", Op: "create", Object: json.RawMessage(
				`{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`)},
		},
	}
}

// TestFindingUnknownOutcomeOverCreate replays the finding against the
// controller with the gate on and off. Both create a second Pod for a
// ReplicaSet of one; if the gate-on controller stops doing so (an upstream
// fix), this test fails so that the README's table and note are updated.
func TestFindingUnknownOutcomeOverCreate(t *testing.T) {
	for _, gate := range []bool{true, false} {
		c := replicaset.Controller(gate)
		p := unknownOutcomeOverCreate(c.Name)
		p.Name += "-" + strings.TrimPrefix(c.Name, "upstream/")
		failures := cachelabtest.Catch(t, c, cachelabtest.These(p))
		var failed []string
		for _, f := range failures {
			for _, v := range f.Failed {
				failed = append(failed, v.Invariant)
			}
			t.Logf("%s:\n%s", c.Name, f.Report)
		}
		if !slices.Contains(failed, "no-duplicate-children") {
			t.Errorf("%s no longer over-creates in the finding's plan (failed: %v): update upstream/README and the main README", c.Name, failed)
		}
	}
}

// The shrinker reaches the hand cut: the campaign's plan of seed 12 (12
// steps, gate off) over-creates; rapid's shrinker (campaign.Shrink) cuts
// it to a plan no larger than unknownOutcomeOverCreate's 3 steps (measured:
// 2, the applied-but-504 Pod create and the ReplicaSet's create, with a
// few ms of watch latency instead of the held Pod watch).
func TestShrinkReachesTheHandCut(t *testing.T) {
	if testing.Short() {
		t.Skip("about 80 runs of the real controller")
	}
	s := campaign.Subject{Controller: replicaset.Controller(false), Gen: replicaset.Gen}
	res, err := campaign.Shrink(t, s, 12, "no-duplicate-children")
	if err != nil {
		t.Fatal(err)
	}
	cut := len(unknownOutcomeOverCreate(s.Controller.Name).Steps)
	t.Logf("seed 12: %d -> %d steps in %d runs (steps, at run: %v), hand cut %d:\n%s",
		len(res.From.Steps), len(res.Plan.Steps), res.Runs, res.StepsAt, cut, campaign.Steps(res.Plan))
	if len(res.Plan.Steps) > cut {
		t.Errorf("shrunk seed 12's plan to %d steps, the hand cut has %d", len(res.Plan.Steps), cut)
	}
}
