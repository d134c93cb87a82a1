package controller_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// TestSurvey runs N random plans (CACHELAB_SURVEY=N, seeds 0..N-1) on the
// correct secretsync reconciler, without stopping at the first failure, and counts the
// failures of each verdict: with the differential oracle on, a
// matches-reference failure of this correct controller is a false alarm
// to triage (docs/reference-run.md).
//
//	CACHELAB_SURVEY=200 go test ./secretsync/internal/controller -run TestSurvey -v
func TestSurvey(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CACHELAB_SURVEY"))
	if n <= 0 {
		t.Skip("set CACHELAB_SURVEY=N to run N random plans and count the failures of each verdict")
	}
	t.Chdir(t.TempDir())
	gen := scenarios.PlanGenWith("secretsync", scenarios.GenOptions{ChildResource: "secrets", ChildName: func(s string) string { return s }})
	var plans []*sim.Plan
	for i := range n {
		p := gen.Example(i)
		p.Name = fmt.Sprintf("survey-%d", i)
		p.Faults.RequestLatency = sim.Distribution{Kind: "fixed", Max: sim.Duration(cachelabtest.DefaultRequestCost)}
		plans = append(plans, &p)
	}
	start := time.Now()
	failures := cachelabtest.Catch(t, lab(false), cachelabtest.These(plans...))
	count := map[string]int{}
	var lines []string
	for _, f := range failures {
		var names []string
		for _, v := range f.Failed {
			count[v.Invariant]++
			names = append(names, v.Invariant)
		}
		lines = append(lines, fmt.Sprintf("%s: %s", f.Plan.Name, strings.Join(names, ", ")))
		t.Log(f.Report)
	}
	t.Logf("%d plans in %s: %d failed; failures per verdict %v\n%s", n, time.Since(start).Round(time.Second), len(failures), count, strings.Join(lines, "\n"))
}
