package job_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/job"
)

// TestFindingUnknownOutcomeOverCreate is upstream/replicaset's finding for
// the Job controller, cut the same way: the Pod watch held 5 s, the first
// Pod create applied but answered 504, a Job of parallelism 1. RealPodControl
// returns the error, so the gate's OnWrite hook never records the Pod, and
// the Job controller creates a second one. If the gate-on controller stops
// doing so, this test fails so that the README is updated.
func TestFindingUnknownOutcomeOverCreate(t *testing.T) {
	for _, gate := range []bool{true, false} {
		c := job.Controller(gate)
		p := &sim.Plan{
			Version: sim.PlanVersion, Name: "unknown-outcome-overcreate-" + strings.TrimPrefix(c.Name, "upstream/"), Seed: 1, Subject: c.Name,
			Deadline: sim.Duration(3 * time.Minute), Quiet: sim.Duration(45 * time.Second),
			Faults: sim.FaultPolicy{RequestLatency: sim.Distribution{Kind: "fixed", Max: sim.Duration(time.Millisecond)}},
			Steps: []sim.Step{
				{At: sim.Duration(time.Second), Actor: "faults", Op: "hold", Resource: "pods", Target: c.Name, For: sim.Duration(5 * time.Second)},
				{At: sim.Duration(time.Second), Actor: "faults", Op: "timeout-next-write", Resource: "pods", Verb: "create", Target: c.Name},
				{At: sim.Duration(time.Second), Actor: "user", Op: "create", Object: json.RawMessage(
					`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"work","namespace":"default"},"spec":{"parallelism":1,"completions":5,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`)},
			},
		}
		var failed []string
		for _, f := range cachelabtest.Catch(t, c, cachelabtest.These(p)) {
			for _, v := range f.Failed {
				failed = append(failed, v.Invariant)
			}
			t.Logf("%s:\n%s", c.Name, f.Report)
		}
		if !slices.Contains(failed, "no-duplicate-children") {
			t.Errorf("%s does not over-create in the cut plan (failed: %v): update upstream/README and the main README", c.Name, failed)
		}
	}
}
