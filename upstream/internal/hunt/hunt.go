// Package hunt runs the lab's targeted campaign (cachelabtest.Hunt:
// Sieve's stale, unobserved and intermediate state and the lab's
// extensions, aimed by a fault-free reference run) on an upstream
// controller, side by side with random plans of the same generator: plans
// and CPU to the first failure of each, and every targeted failure with
// its class and reasons (for triage: a correct controller's failure is a
// false alarm or a finding).
package hunt

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/fakeapi/fakeapibench"
	"github.com/cachelab/cachelab/sim"
)

var (
	workloadsFlag = flag.Int("upstream.hunt", 0, "targeted campaign: perturb the user actions of this many random plans (seeds from -upstream.huntseed; 0: skip)")
	seedFlag      = flag.Uint64("upstream.huntseed", 1, "first seed of the targeted campaign's workloads and of the random baseline's plans")
	randomFlag    = flag.Int("upstream.huntrandom", 200, "random baseline: run up to this many random plans (seeds from -upstream.huntseed) to the first failure")
	parallelFlag  = flag.Int("upstream.huntparallel", 1, "runs at a time in the targeted campaign (1: the CPU to each plan is exact)")
	lifecycleFlag = flag.Bool("upstream.huntlifecycle", true, "targeted campaign: add the lifecycle workload derived from the first workload's reference run (lab.HuntOptions.DeriveLifecycle)")
)

// SideBySide runs, when -upstream.hunt=N is given, the targeted campaign of
// c on the user actions of plan's seeds s..s+N-1 (their faults removed),
// then random plans from seed s until the first failure (at most
// -upstream.huntrandom), and logs both: plans and CPU to the first
// failure, and each targeted failure. Without the flag it skips t.
func SideBySide(t *testing.T, c cachelabtest.Controller, plan func(seed uint64, subject string) *sim.Plan) {
	n := *workloadsFlag
	if n <= 0 {
		t.Skip("give -upstream.hunt=N (the workloads of the targeted campaign)")
	}
	var ws []*sim.Plan
	for i := range n {
		ws = append(ws, plan(*seedFlag+uint64(i), c.Name))
	}
	rep := cachelabtest.Hunt(t, c, cachelabtest.HuntOptions{Parallel: *parallelFlag, DeriveLifecycle: *lifecycleFlag}, true, ws...)
	var b strings.Builder
	rep.WriteTable(&b)
	t.Logf("targeted campaign of %s:\n%s", c.Name, b.String())
	targeted := fmt.Sprintf("no failure in %d plans, %s CPU", len(rep.Rows), rep.CPU.Round(time.Millisecond))
	if f := rep.First(); f != nil {
		targeted = fmt.Sprintf("first failure at plan %d of %d (%s: %s), %s CPU; %d of %d plans fail (%s), %s CPU in all",
			f.Index, rep.Generated, f.Class, strings.Join(f.Failed, ","), f.CPU.Round(time.Millisecond),
			len(rep.Failures()), len(rep.Rows), byClass(rep), rep.CPU.Round(time.Millisecond))
	}
	start := fakeapibench.ProcessCPU()
	random := fmt.Sprintf("no failure in %d plans, %s CPU", *randomFlag, time.Duration(0))
	for i := range *randomFlag {
		p := plan(*seedFlag+uint64(i), c.Name)
		failures := cachelabtest.Catch(t, c, cachelabtest.These(p))
		if len(failures) > 0 {
			var names []string
			for _, v := range failures[0].Failed {
				names = append(names, v.Invariant)
			}
			random = fmt.Sprintf("first failure at plan %d (seed %d: %s), %s CPU", i+1, *seedFlag+uint64(i), strings.Join(names, ","),
				(fakeapibench.ProcessCPU() - start).Round(time.Millisecond))
			break
		}
		if i == *randomFlag-1 {
			random = fmt.Sprintf("no failure in %d plans, %s CPU", *randomFlag, (fakeapibench.ProcessCPU() - start).Round(time.Millisecond))
		}
	}
	t.Logf("%s, workloads seeds %d..%d:\n  targeted: %s\n  random:   %s", c.Name, *seedFlag, *seedFlag+uint64(n)-1, targeted, random)
}

// byClass counts a campaign's failing plans per class and failed
// invariant: "unobserved-state 2 (eventual-convergence 2), ...".
func byClass(rep *cachelabtest.HuntReport) string {
	type count struct {
		n   int
		inv map[string]int
	}
	var order []string
	per := map[string]*count{}
	for _, r := range rep.Failures() {
		c := per[r.Class]
		if c == nil {
			c = &count{inv: map[string]int{}}
			per[r.Class] = c
			order = append(order, r.Class)
		}
		c.n++
		for _, f := range r.Failed {
			c.inv[f]++
		}
		if r.Err != "" {
			c.inv["error"]++
		}
	}
	var parts []string
	for _, class := range order {
		var invs []string
		for k, v := range per[class].inv {
			invs = append(invs, fmt.Sprintf("%s %d", k, v))
		}
		parts = append(parts, fmt.Sprintf("%s %d (%s)", class, per[class].n, strings.Join(slices.Sorted(slices.Values(invs)), ", ")))
	}
	return strings.Join(parts, "; ")
}
