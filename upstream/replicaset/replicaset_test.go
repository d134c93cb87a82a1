package replicaset_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/internal/campaign"
	"github.com/cachelab/cachelab/upstream/replicaset"
)

// scaleStory: a ReplicaSet of 3, scaled to 5 then 1, watch events 500 ms
// late. The real controller, gate on and off, ends with the right pods and
// never creates beyond spec.replicas.
func scaleStory(subject string) *sim.Plan {
	p := replicaset.Plan(0, subject)
	p.Name = "scale-story"
	p.Faults = sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: sim.Duration(500 * time.Millisecond)},
		RequestLatency: sim.Distribution{Kind: "fixed", Max: sim.Duration(time.Millisecond)}}
	p.Objects = nil
	create := sim.Step{At: sim.Duration(time.Second), Actor: "user", Op: "create",
		Object: json.RawMessage(`{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`)}
	scale := func(at time.Duration, n int) sim.Step {
		return sim.Step{At: sim.Duration(at), Actor: "user", Op: "patch", Resource: "replicasets", Namespace: "default", Name: "web",
			Patch: json.RawMessage(fmt.Sprintf(`{"spec":{"replicas":%d}}`, n))}
	}
	p.Steps = []sim.Step{create, scale(3*time.Second, 5), scale(6*time.Second, 1)}
	return p
}

func TestRealReplicaSetControllerScales(t *testing.T) {
	c := replicaset.Controller(true)
	cachelabtest.Test(t, c, cachelabtest.These(scaleStory(c.Name)))
}

// With the gate off the same story converges without a duplicate create;
// what else it fails (read-your-writes: a status write from a copy older
// than its own last write, answered 409) is logged, not asserted.
func TestRealReplicaSetControllerScalesWithoutGate(t *testing.T) {
	c := replicaset.Controller(false)
	for _, f := range cachelabtest.Catch(t, c, cachelabtest.These(scaleStory(c.Name))) {
		for _, v := range f.Failed {
			if v.Invariant == "no-duplicate-children" || v.Invariant == "eventual-convergence" || v.Invariant == "run" {
				t.Errorf("gate off: %s failed:\n%s", v.Invariant, f.Report)
			}
		}
		t.Logf("gate off:\n%s", f.Report)
	}
}

// The predicate fails when it should: the controller crashes after the
// ReplicaSet's pods exist and is not restarted; the user then scales the
// ReplicaSet to 4, which nobody acts on. eventual-convergence must fail with
// Desired's reason.
func TestDesiredFailsWhenPodsDoNotMatch(t *testing.T) {
	c := replicaset.Controller(true)
	p := scaleStory(c.Name)
	p.Steps = append(p.Steps[:1],
		sim.Step{At: sim.Duration(5 * time.Second), Actor: "controller", Op: "crash"},
		sim.Step{At: sim.Duration(6 * time.Second), Actor: "user", Op: "patch", Resource: "replicasets", Namespace: "default", Name: "web",
			Patch: json.RawMessage(`{"spec":{"replicas":4}}`)})
	failures := cachelabtest.Catch(t, c, cachelabtest.These(p))
	if len(failures) != 1 {
		t.Fatalf("got %d failures, want 1", len(failures))
	}
	var names []string
	for _, v := range failures[0].Failed {
		names = append(names, v.Invariant)
	}
	if !strings.Contains(strings.Join(names, " "), "eventual-convergence") ||
		!strings.Contains(failures[0].Report, "wants 4 pods and controls 3") {
		t.Fatalf("failed %v, want eventual-convergence saying the ReplicaSet wants 4 pods and controls 3; report:\n%s", names, failures[0].Report)
	}
}

// TestCampaign runs the campaign (make upstream): -upstream.plans random
// plans (Plan) against the controller with the KEP-5647 gate on and off.
func TestCampaign(t *testing.T) {
	campaign.Gates(t, "upstream/replicaset/plans.go", replicaset.Controller, replicaset.Gen)
}
