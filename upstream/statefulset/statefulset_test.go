package statefulset_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/internal/campaign"
	"github.com/cachelab/cachelab/upstream/internal/plangen"
	"github.com/cachelab/cachelab/upstream/statefulset"
)

// story: a StatefulSet of 3 (OrderedReady, RollingUpdate) created at 1 s,
// rolled to a new image at 6 s, scaled to 4 at 14 s and down to 2 at 20 s;
// watch events 200 ms late, Pods Ready 500 ms after the kubelet sees them.
func story(subject string) *sim.Plan {
	patch := func(at time.Duration, body string) sim.Step {
		return sim.Step{At: sim.Duration(at), Actor: "user", Op: "patch", Resource: "statefulsets", Namespace: "default", Name: "db",
			Patch: json.RawMessage(body)}
	}
	p := plangen.Story("ordered-rollout-story", subject, 200*time.Millisecond, true)
	p.Steps = []sim.Step{
		{At: sim.Duration(time.Second), Actor: "user", Op: "create", Object: json.RawMessage(
			`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"default"},"spec":{"replicas":3,"serviceName":"db",` +
				`"podManagementPolicy":"OrderedReady","updateStrategy":{"type":"RollingUpdate"},"selector":{"matchLabels":{"app":"db"}},` +
				`"template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[{"name":"c","image":"busybox:1.35"}]}}}}`)},
		patch(6*time.Second, `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox:1.36"}]}}}}`),
		patch(14*time.Second, `{"spec":{"replicas":4}}`),
		patch(20*time.Second, `{"spec":{"replicas":2}}`),
	}
	return p
}

// The real StatefulSet controller with the gate on creates, rolls and
// scales the set to the desired state. The one failure allowed is
// read-your-writes's retried 409 on its own status write (optimistic
// concurrency, which issue 27 makes a measurement, not a failure). Gate
// off is logged, not asserted: on main at 9fc148a its run of this story
// recreates web-2 at the old revision from a set read before its own
// status write, again and again, until the deadline (the gate-off side of
// docs/upstream-findings/141250.md); at a997fc6 it passed (measured: the
// lab's ordering of same-instant deliveries changed in between, not
// bisected).
func TestRealStatefulSetControllerRollsAndScales(t *testing.T) {
	for _, gate := range []bool{true, false} {
		c := statefulset.Controller(gate)
		for _, f := range cachelabtest.Catch(t, c, cachelabtest.These(story(c.Name))) {
			for _, v := range f.Failed {
				if gate && (v.Invariant != "read-your-writes" || !strings.Contains(v.Reason, "conflicted with its own write")) {
					t.Errorf("%s: %s failed:\n%s", c.Name, v.Invariant, f.Report)
				}
			}
			t.Logf("%s:\n%s", c.Name, f.Report)
		}
	}
}

// The predicate fails when it should: the controller crashes once the set
// runs and is not restarted; the user then rolls it to a new image, which
// nobody acts on.
func TestDesiredFailsWhenTheRollDoesNotHappen(t *testing.T) {
	c := statefulset.Controller(true)
	p := story(c.Name)
	p.Steps = []sim.Step{p.Steps[0], {At: sim.Duration(5 * time.Second), Actor: "controller", Op: "crash"}, p.Steps[1]}
	campaign.FailsWith(t, c, p, "failing eventual-convergence on a Pod with the old template",
		"eventual-convergence: the subject's desired state did not hold", "with an old template (images busybox:1.35, want busybox:1.36)")
}

// TestCampaign runs the campaign (make upstream) over the StatefulSet
// controller, the KEP-5647 gate on and off.
func TestCampaign(t *testing.T) {
	campaign.Gates(t, "upstream/statefulset/plans.go", statefulset.Controller, statefulset.Gen)
}
