package hpa_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/hpa"
	"github.com/cachelab/cachelab/upstream/internal/campaign"
	"github.com/cachelab/cachelab/upstream/internal/plangen"
)

// story: a Deployment web of 1 and an HPA over it (external metric
// "queue", averageValue 100, 1-10 replicas, scale-down window 0) created
// at 1 s with queue=300; the load rises to 1200 at 40 s (10 replicas, the
// maximum) and falls to 250 at 100 s (3). Watch events 200 ms late, Pods
// Ready 500 ms after the kubelet sees them.
func story(subject string) *sim.Plan {
	create := func(at time.Duration, obj string) sim.Step {
		return sim.Step{At: sim.Duration(at), Actor: "user", Op: "create", Object: json.RawMessage(obj)}
	}
	load := func(at time.Duration, v string) sim.Step {
		return sim.Step{At: sim.Duration(at), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: hpa.MetricsConfigMap,
			Patch: json.RawMessage(`{"data":{"queue":"` + v + `"}}`)}
	}
	p := plangen.Story("hpa-story", subject, 200*time.Millisecond, true)
	p.Deadline = sim.Duration(5 * time.Minute)
	p.Steps = []sim.Step{
		create(time.Second, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"metrics","namespace":"default"},"data":{"queue":"300"}}`),
		create(time.Second, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":1,`+
			`"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}}}}`),
		create(time.Second, `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"web","namespace":"default"},"spec":{`+
			`"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":10,`+
			`"metrics":[{"type":"External","external":{"metric":{"name":"queue"},"target":{"type":"AverageValue","averageValue":"100"}}}],`+
			`"behavior":{"scaleDown":{"stabilizationWindowSeconds":0}}}}`),
		load(40*time.Second, "1200"),
		load(100*time.Second, "250"),
	}
	return p
}

// The real HPA controller, gate on and off, scales the Deployment to 3,
// then 10, then 3 as the metric asks. The one failure allowed is
// read-your-writes's retried 409 on its own status write.
func TestRealHPAFollowsTheMetric(t *testing.T) {
	for _, gate := range []bool{true, false} {
		c := hpa.Controller(gate)
		campaign.OnlyOwnConflicts(t, c, story(c.Name))
	}
}

// The predicate fails when it should: the controller crashes at 30 s and
// is not restarted; the load then rises to 1200 and nobody scales.
func TestDesiredFailsWhenNobodyScales(t *testing.T) {
	c := hpa.Controller(true)
	p := story(c.Name)
	p.Steps = append(p.Steps[:3], sim.Step{At: sim.Duration(30 * time.Second), Actor: "controller", Op: "crash"}, p.Steps[3])
	campaign.FailsWith(t, c, p, "failing eventual-convergence on 3 replicas where 10 are wanted",
		"wants 10 replicas (queue=1200, averageValue 100, min 1, max 10) and Deployment web has 3")
}

// TestCampaign runs the campaign (make upstream) over the HPA controller,
// the KEP-5647 gate on and off.
func TestCampaign(t *testing.T) {
	campaign.Gates(t, "upstream/hpa/plans.go", hpa.Controller, hpa.Gen)
}

// The campaign's false alarms fixed in the invariants (docs/upstream.md,
// HPA, classes V and P) stay fixed: each plan, gate on and off, passes the
// invariant it failed. Seed 13: an update/scale decided from the HPA's own
// get/scale (read-your-writes); seed 15: one status write, then minutes of
// 15 s resyncs without a write until the deadline (stable-reconciliation).
func TestCampaignFalseAlarmsStayFixed(t *testing.T) {
	for _, tc := range []struct{ file, invariant string }{
		{"findings/false-alarm-rw-get-scale-13.json", "read-your-writes"},
		{"findings/false-alarm-stable-periodic-resync-15.json", "stable-reconciliation"},
	} {
		for _, gate := range []bool{true, false} {
			for _, f := range cachelabtest.Catch(t, hpa.Controller(gate), cachelabtest.Files(tc.file)) {
				for _, v := range f.Failed {
					if v.Invariant == tc.invariant {
						t.Errorf("%s, gate %v: %s failed again: %s", tc.file, gate, v.Invariant, v.Reason)
					}
				}
			}
		}
	}
}
