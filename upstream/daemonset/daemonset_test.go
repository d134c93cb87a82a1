package daemonset_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/daemonset"
	"github.com/cachelab/cachelab/upstream/internal/campaign"
	"github.com/cachelab/cachelab/upstream/internal/plangen"
)

// story: Nodes n1 and n2 (ready at 0 s); a DaemonSet "agent"
// (RollingUpdate, maxUnavailable 1) created at 1 s, rolled to a new image
// at 6 s; Node n3 added at 10 s and ready at 11 s; rolled back at 16 s.
// Watch events 200 ms late, Pods Ready 500 ms after the kubelet sees them.
func story(subject string) *sim.Plan {
	node := func(name string) json.RawMessage {
		return json.RawMessage(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"` + name + `"}}`)
	}
	untaint := func(at time.Duration, name string) sim.Step {
		return sim.Step{At: sim.Duration(at), Actor: "user", Op: "patch", Resource: "nodes", Name: name, Patch: json.RawMessage(`{"spec":{"taints":null}}`)}
	}
	p := plangen.Story("daemonset-story", subject, 200*time.Millisecond, true)
	p.Objects = []json.RawMessage{node("n1"), node("n2")}
	p.Steps = []sim.Step{
		untaint(0, "n1"), untaint(0, "n2"),
		{At: sim.Duration(time.Second), Actor: "user", Op: "create", Object: json.RawMessage(
			`{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"agent","namespace":"default"},"spec":{` +
				`"updateStrategy":{"type":"RollingUpdate"},"selector":{"matchLabels":{"app":"agent"}},` +
				`"template":{"metadata":{"labels":{"app":"agent"}},"spec":{"containers":[{"name":"c","image":"busybox:1.35"}]}}}}`)},
		{At: sim.Duration(6 * time.Second), Actor: "user", Op: "patch", Resource: "daemonsets", Namespace: "default", Name: "agent",
			Patch: json.RawMessage(`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox:1.36"}]}}}}`)},
		{At: sim.Duration(10 * time.Second), Actor: "user", Op: "create", Object: node("n3")},
		untaint(11*time.Second, "n3"),
		{At: sim.Duration(16 * time.Second), Actor: "user", Op: "patch", Resource: "daemonsets", Namespace: "default", Name: "agent",
			Patch: json.RawMessage(`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox:1.35"}]}}}}`)},
	}
	return p
}

// The real DaemonSet controller, gate on and off, runs one Ready Pod per
// ready Node, rolls them, follows a Node added, rolls them back. The one
// failure allowed is read-your-writes's retried 409 on its own status
// write (optimistic concurrency, a measurement since issue 27).
func TestRealDaemonSetControllerFollowsNodesAndRolls(t *testing.T) {
	for _, gate := range []bool{true, false} {
		c := daemonset.Controller(gate)
		campaign.OnlyOwnConflicts(t, c, story(c.Name))
	}
}

// The predicate fails when it should: the controller crashes once the
// set runs and is not restarted; Node n3 then becomes ready, and nobody
// puts a Pod on it.
func TestDesiredFailsWhenANewNodeGetsNoPod(t *testing.T) {
	c := daemonset.Controller(true)
	p := story(c.Name)
	p.Steps = append(p.Steps[:3], sim.Step{At: sim.Duration(5 * time.Second), Actor: "controller", Op: "crash"}, p.Steps[4], p.Steps[5])
	campaign.FailsWith(t, c, p, "failing eventual-convergence on node n3 without a Pod",
		"eventual-convergence: the subject's desired state did not hold", "has 0 active pods on node n3, want 1")
}

// TestCampaign runs the campaign (make upstream) over the DaemonSet
// controller, the KEP-5647 gate on and off.
func TestCampaign(t *testing.T) {
	campaign.Gates(t, "upstream/daemonset/plans.go", daemonset.Controller, daemonset.Gen)
}

// The campaign's matches-reference false alarm of seed 9 (docs/upstream.md,
// DaemonSet, class H: a Pod kept from generation 1 against the reference's
// Pod recreated at generation 3, same revision) stays fixed, gate on and
// off.
func TestCampaignFalseAlarmStaysFixed(t *testing.T) {
	const file = "findings/false-alarm-reference-pod-template-generation-9.json"
	for _, gate := range []bool{true, false} {
		for _, f := range cachelabtest.Catch(t, daemonset.Controller(gate), cachelabtest.Files(file)) {
			for _, v := range f.Failed {
				if v.Invariant == "matches-reference" {
					t.Errorf("%s, gate %v: matches-reference failed again: %s", file, gate, v.Reason)
				}
			}
		}
	}
}
