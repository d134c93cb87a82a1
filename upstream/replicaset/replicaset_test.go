package replicaset_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/replicaset"
)

var (
	plansFlag = flag.Int("upstream.plans", 0, "random plans per subject for TestCampaign (0: skip)")
	seedFlag  = flag.Uint64("upstream.seed", 1, "first seed of TestCampaign's plans")
	tableFlag = flag.String("upstream.table", "", "file to write TestCampaign's table to (besides the test log)")
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

// cpu returns the process's CPU time (user + system).
func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// row is one subject's campaign result.
type row struct {
	subject     string
	plans       int
	failedPlans int
	byInv       map[string]int
	firstCPU    time.Duration // CPU time until the first failing plan ended; 0: none
	firstPlan   string
	firstSize   int
	firstReport string
	cpu         time.Duration
}

// TestCampaign runs -upstream.plans random plans (Plan, seeds from
// -upstream.seed) against the real ReplicaSet controller with the KEP-5647
// gate on and off, and prints per subject the plans run, the plans failing
// each invariant and the CPU time to the first failure.
func TestCampaign(t *testing.T) {
	n := *plansFlag
	if n <= 0 {
		t.Skip("give -upstream.plans=N (make upstream)")
	}
	_ = os.RemoveAll(filepath.Join("testdata", "cachelab", "TestCampaign"))
	var rows []*row
	for _, gate := range []bool{true, false} {
		c := replicaset.Controller(gate)
		rw := &row{subject: c.Name, byInv: map[string]int{}}
		start := cpu()
		for i := range n {
			seed := *seedFlag + uint64(i)
			p := replicaset.Plan(seed, c.Name)
			p.Name = fmt.Sprintf("%s-%d", strings.TrimPrefix(c.Name, "upstream/"), seed)
			failures := cachelabtest.Catch(t, c, cachelabtest.These(p))
			rw.plans++
			if len(failures) == 0 {
				continue
			}
			rw.failedPlans++
			var names []string
			for _, v := range failures[0].Failed {
				rw.byInv[v.Invariant]++
				names = append(names, v.Invariant)
			}
			keep := rw.firstCPU == 0 || slices.Contains(names, "no-duplicate-children")
			if keep {
				t.Logf("%s seed %d failed %s: %s", c.Name, seed, strings.Join(names, ", "), failures[0].ReportPath)
			} else if failures[0].ReportPath != "" {
				// Only the first failure's and the over-creations' files
				// are kept (about 400 kB each).
				_ = os.RemoveAll(filepath.Dir(failures[0].ReportPath))
			}
			if rw.firstCPU == 0 {
				rw.firstCPU = cpu() - start
				rw.firstPlan = fmt.Sprintf("seed %d", seed)
				rw.firstSize = len(p.Steps)
				rw.firstReport = failures[0].ReportPath
				t.Logf("%s: first failure at plan %d (seed %d):\n%s", c.Name, i+1, seed, failures[0].Report)
			}
		}
		rw.cpu = cpu() - start
		rows = append(rows, rw)
	}
	table := formatTable(rows, *seedFlag, n)
	fmt.Print(table)
	if *tableFlag != "" {
		if err := os.WriteFile(*tableFlag, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// formatTable renders the rows as a Markdown table.
func formatTable(rows []*row, seed uint64, n int) string {
	invs := map[string]bool{}
	for _, r := range rows {
		for k := range r.byInv {
			invs[k] = true
		}
	}
	var names []string
	for k := range invs {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "\nseeds %d..%d (upstream/replicaset/plans.go), k8s.io/kubernetes v1.37.1\n\n", seed, seed+uint64(n)-1)
	b.WriteString("| subject | plans run | plans failing | ")
	for _, k := range names {
		b.WriteString(k + " | ")
	}
	b.WriteString("CPU to first failure | first failing plan (steps) | CPU total |\n|---|---|---|")
	for range names {
		b.WriteString("---|")
	}
	b.WriteString("---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d | ", r.subject, r.plans, r.failedPlans)
		for _, k := range names {
			fmt.Fprintf(&b, "%d | ", r.byInv[k])
		}
		first, plan := "none", "none"
		if r.firstCPU > 0 {
			first = r.firstCPU.Round(time.Millisecond).String()
			plan = fmt.Sprintf("%s (%d) %s", r.firstPlan, r.firstSize, r.firstReport)
		}
		fmt.Fprintf(&b, "%s | %s | %s |\n", first, plan, r.cpu.Round(time.Millisecond))
	}
	return b.String()
}
