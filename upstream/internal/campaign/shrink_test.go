package campaign_test

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/upstream/internal/campaign"
	"github.com/cachelab/cachelab/upstream/replicaset"
)

// idle is a controller that does nothing; its Desired fails while a
// ReplicaSet asks for 4 replicas or more: a plan fails eventual-convergence
// exactly when its last word on some ReplicaSet is such a size.
var idle = cachelabtest.Controller{
	Name:  "idle",
	Start: func(ctx context.Context, env *cachelabtest.Env) error { return nil },
	Desired: func(s *cachelabtest.State) error {
		for _, rs := range cachelabtest.List[appsv1.ReplicaSet](s, "") {
			if rs.Spec.Replicas != nil && *rs.Spec.Replicas >= 4 {
				return fmt.Errorf("ReplicaSet %s asks for %d replicas", rs.Name, *rs.Spec.Replicas)
			}
		}
		return nil
	},
}

// Shrink starts from the campaign's plan of the seed (it errs if rapid's
// first draw were another plan) and ends with a plan that still fails and
// has one step: a ReplicaSet of 4 or more made by the plan's one episode
// (or one at the start, and an episode that does not undo it).
func TestShrinkReachesOneStep(t *testing.T) {
	s := campaign.Subject{Controller: idle, Gen: replicaset.Gen}
	var seed uint64
	for seed = 1; seed < 200; seed++ {
		p := s.Plan(seed)
		if len(p.Steps) >= 4 && len(p.Objects) > 0 && failsIdle(t, s, seed) {
			break
		}
	}
	res, err := campaign.Shrink(t, s, seed, "eventual-convergence")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seed %d: %d -> %d steps in %d runs (steps, at run: %v):\n%s", seed, len(res.From.Steps), len(res.Plan.Steps), res.Runs, res.StepsAt, campaign.Steps(res.Plan))
	if !res.Reproduced || len(res.Plan.Steps) != 1 {
		t.Errorf("shrunk seed %d's plan (%d steps) to %d steps, want 1 (reproduced: %v)", seed, len(res.From.Steps), len(res.Plan.Steps), res.Reproduced)
	}
}

// Shrink refuses a seed whose plan does not fail the invariant.
func TestShrinkOfAPassingPlanIsAnError(t *testing.T) {
	s := campaign.Subject{Controller: idle, Gen: replicaset.Gen}
	var seed uint64
	for seed = 1; failsIdle(t, s, seed); seed++ {
	}
	if _, err := campaign.Shrink(t, s, seed, "eventual-convergence"); err == nil {
		t.Fatalf("seed %d passes, Shrink returned no error", seed)
	}
}

// failsIdle tells whether the plan of seed fails eventual-convergence.
func failsIdle(t *testing.T, s campaign.Subject, seed uint64) bool {
	for _, f := range cachelabtest.Catch(t, s.Controller, cachelabtest.These(s.Plan(seed))) {
		for _, v := range f.Failed {
			if v.Invariant == "eventual-convergence" {
				return true
			}
		}
	}
	return false
}
