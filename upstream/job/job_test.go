package job_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/internal/campaign"
	"github.com/cachelab/cachelab/upstream/internal/plangen"
	"github.com/cachelab/cachelab/upstream/job"
)

func story(subject string) *sim.Plan {
	p := plangen.Story("job-story", subject, 500*time.Millisecond, false)
	p.Steps = []sim.Step{
		{At: sim.Duration(time.Second), Actor: "user", Op: "create", Object: json.RawMessage(
			`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"work","namespace":"default"},"spec":{"parallelism":3,"completions":10,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`)},
		{At: sim.Duration(4 * time.Second), Actor: "user", Op: "patch", Resource: "jobs", Namespace: "default", Name: "work",
			Patch: json.RawMessage(`{"spec":{"parallelism":5}}`)},
	}
	return p
}

func TestRealJobController(t *testing.T) {
	for _, gate := range []bool{true, false} {
		c := job.Controller(gate)
		cachelabtest.Test(t, c, cachelabtest.These(story(c.Name)))
	}
}

// The predicate fails when it should: the controller crashes once the
// Job's 3 Pods exist and is not restarted; the user raises parallelism to
// 5, which nobody acts on.
func TestDesiredFailsWhenPodsDoNotMatch(t *testing.T) {
	c := job.Controller(true)
	p := story(c.Name)
	p.Steps = []sim.Step{p.Steps[0],
		{At: sim.Duration(3 * time.Second), Actor: "controller", Op: "crash"},
		p.Steps[1]}
	campaign.FailsWith(t, c, p, "saying the Job wants 5 active pods and controls 3", "wants 5 active pods and controls 3")
}

// TestCampaign runs the campaign (make upstream) over the Job controller,
// the KEP-5647 gate on and off.
func TestCampaign(t *testing.T) {
	campaign.Gates(t, "upstream/job/plans.go", job.Controller, job.Gen)
}
