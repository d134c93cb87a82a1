package job_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/internal/campaign"
	"github.com/cachelab/cachelab/upstream/job"
)

func story(subject string) *sim.Plan {
	return &sim.Plan{
		Version: sim.PlanVersion, Name: "job-story", Seed: 1, Subject: subject,
		Deadline: sim.Duration(3 * time.Minute), Quiet: sim.Duration(45 * time.Second),
		Faults: sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: sim.Duration(500 * time.Millisecond)},
			RequestLatency: sim.Distribution{Kind: "fixed", Max: sim.Duration(time.Millisecond)}},
		Steps: []sim.Step{
			{At: sim.Duration(time.Second), Actor: "user", Op: "create", Object: json.RawMessage(
				`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"work","namespace":"default"},"spec":{"parallelism":3,"completions":10,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`)},
			{At: sim.Duration(4 * time.Second), Actor: "user", Op: "patch", Resource: "jobs", Namespace: "default", Name: "work",
				Patch: json.RawMessage(`{"spec":{"parallelism":5}}`)},
		},
	}
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
	failures := cachelabtest.Catch(t, c, cachelabtest.These(p))
	if len(failures) != 1 || !strings.Contains(failures[0].Report, "wants 5 active pods and controls 3") {
		var report string
		if len(failures) > 0 {
			report = failures[0].Report
		}
		t.Fatalf("got %d failures, want 1 saying the Job wants 5 active pods and controls 3:\n%s", len(failures), report)
	}
}

// TestCampaign runs the campaign (make upstream) over the Job controller,
// the KEP-5647 gate on and off.
func TestCampaign(t *testing.T) {
	campaign.Run(t, "upstream/job/plans.go",
		campaign.Subject{Controller: job.Controller(true), Gen: job.Gen},
		campaign.Subject{Controller: job.Controller(false), Gen: job.Gen})
}
