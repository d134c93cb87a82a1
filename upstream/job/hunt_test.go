package job_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/internal/hunt"
	"github.com/cachelab/cachelab/upstream/job"
)

// TestHunt runs the lab's targeted campaign on the real controller, the
// KEP-5647 gate on and off, side by side with random plans of the same
// generator (go test -run TestHunt -upstream.hunt=3; docs/targeted-faults.md).
func TestHunt(t *testing.T) {
	for _, gate := range []bool{true, false} {
		c := job.Controller(gate)
		t.Run(c.Name, func(t *testing.T) { hunt.SideBySide(t, c, job.Plan) })
	}
}

// The targeted campaign on the workloads of seeds 1001-1003 (the gate on)
// finds the Job recreate finding (docs/upstream-findings/
// job-recreate-same-name.md) in fewer plans than random plans of the same
// generator from seed 1001 (random plan 5 deletes and recreates Job a
// while the Job watch is held). None of the three workloads deletes and
// recreates a Job, and a campaign perturbs only what its workloads do:
// before the lifecycle workload derived from the first workload's
// reference (lab.HuntOptions.DeriveLifecycle), the campaign found nothing
// in its 58 plans. Now the derived workload deletes and recreates Job a
// under the same name, and the recreate hidden behind a relist runs first.
func TestHuntFindsTheJobRecreateInFewerPlansThanRandom(t *testing.T) {
	c := job.Controller(true)
	random := 0
	for i := range 20 {
		if len(cachelabtest.Catch(t, c, cachelabtest.These(job.Plan(1001+uint64(i), c.Name)))) > 0 {
			random = i + 1
			break
		}
	}
	if random == 0 {
		t.Fatal("no random plan of seeds 1001-1020 fails: the baseline moved (re-measure docs/targeted-faults.md)")
	}
	var ws []*sim.Plan
	for i := range 3 {
		ws = append(ws, job.Plan(1001+uint64(i), c.Name))
	}
	rep := cachelabtest.Hunt(t, c, cachelabtest.HuntOptions{Parallel: 1, StopAtFirst: true, DeriveLifecycle: true}, true, ws...)
	var b strings.Builder
	rep.WriteTable(&b)
	t.Logf("random: first failure at plan %d\n%s", random, b.String())
	f := rep.First()
	if f == nil {
		t.Fatalf("the targeted campaign found nothing (random: plan %d)", random)
	}
	if f.Index >= random || f.Class != scenarios.ClassUnobserved || !slices.Contains(f.Failed, "finalizers") {
		t.Errorf("first failure at plan %d (%s: %v), want the recreate finding (unobserved-state: finalizers) before random's plan %d",
			f.Index, f.Class, f.Failed, random)
	}
	if !strings.Contains(f.Plan.Name, "-lifecycle-") {
		t.Errorf("first failure %s: want a plan of the derived lifecycle workload", f.Plan.Name)
	}
}
