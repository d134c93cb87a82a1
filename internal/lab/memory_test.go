package lab

import (
	"context"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
	_ "github.com/cachelab/cachelab/subjects/bellerophon"
)

// looper creates and deletes one ConfigMap in a loop, as fast as its
// requests are answered: with a millisecond per request, its trace grows
// by thousands of records per virtual second for as long as the run goes.
type looper struct{}

func (looper) Start(ctx context.Context, env sim.Env) error {
	go func() {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "default"}}
		for ctx.Err() == nil {
			_, _ = env.Kube.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
			_ = env.Kube.CoreV1().ConfigMaps("default").Delete(ctx, "x", metav1.DeleteOptions{})
		}
	}()
	return nil
}

func init() {
	sim.RegisterSubject(sim.SubjectInfo{Name: "lab-test/looper", Summary: "creates and deletes a ConfigMap in a loop (lab tests only)", New: func() sim.Subject { return looper{} }})
}

// A campaign with one pathological plan, whose run would record about
// 6 records per virtual millisecond for 5 minutes (some 1.8 million
// records, 850 MB of them), stops that run at its record budget: its trace
// stays within twice the budget, its outcome says so, and it counts as
// unexpected (not judged), never as a pass, while the other runs go on.
func TestACampaignWithAPathologicalPlanStaysWithinItsBudget(t *testing.T) {
	const budget = 5000
	var jobs []Job
	for seed := uint64(1); seed <= 3; seed++ {
		p := scenarios.Random(seed, "bellerophon")
		jobs = append(jobs, NewJob(&p, nil))
	}
	bad := &sim.Plan{Version: sim.PlanVersion, Name: "looping", Seed: 1, Subject: "lab-test/looper", Steps: []sim.Step{},
		Deadline: sim.Duration(5 * time.Minute), MaxRecords: budget,
		Faults: sim.FaultPolicy{RequestLatency: sim.Distribution{Kind: "fixed", Max: sim.Duration(time.Millisecond)}}}
	jobs = append(jobs, NewJob(bad, nil))
	var seen int
	rs, _ := RunBatch(TestHost(t), jobs, Options{DropTraces: true, OnDone: func(r *Result) {
		if r.Job.Plan.Name == "looping" && r.Trace != nil {
			seen = len(r.Trace.Records)
		}
	}})
	for _, r := range rs[:3] {
		if r.Err != nil {
			t.Errorf("%s: %v", r.Job.ID, r.Err)
		}
	}
	r := rs[3]
	if r.Records < budget || r.Records > 2*budget+100 || seen != r.Records {
		t.Errorf("the looping run kept %d records (%d seen by OnDone), want its budget of %d and at most twice it", r.Records, seen, budget)
	}
	if !strings.HasPrefix(r.Outcome, "budget: ") {
		t.Errorf("outcome %q, want a budget outcome", r.Outcome)
	}
	if r.OK() || len(r.Unexpected()) == 0 || !strings.Contains(r.Unexpected()[0], "budget") {
		t.Errorf("a run stopped at its budget counts as unexpected (not judged), got OK=%v %q", r.OK(), r.Unexpected())
	}
	if r.Trace != nil {
		t.Errorf("the campaign kept the stopped run's trace")
	}
}

// liveHeap is the heap the last GC found live, after a full GC.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestACampaignsMemoryDoesNotGrowWithItsRuns runs random plans of the real
// controller in batches as `cachelab run --random N` does (DropTraces) and
// checks that the live heap after 3N runs is not larger than after N by
// more than a few kilobytes per run: before, every run kept its recorder
// and trace alive (~1 MB per run, 3.2 GB RSS for 2,000 runs). `make
// campaign-memory` checks 10,000 runs against the RSS budget.
func TestACampaignsMemoryDoesNotGrowWithItsRuns(t *testing.T) {
	const n = 8
	seed := uint64(1)
	batch := func() {
		var jobs []Job
		for range n {
			p := scenarios.Random(seed, "bellerophon")
			seed++
			jobs = append(jobs, NewJob(&p, nil))
		}
		rs, _ := RunBatch(TestHost(t), jobs, Options{DropTraces: true})
		for _, r := range rs {
			if r.Err != nil {
				t.Fatalf("%s: %v", r.Job.ID, r.Err)
			}
		}
	}
	batch() // warm up: caches, schemes and the like built once per process
	after1 := liveHeap()
	batch()
	batch()
	after3 := liveHeap()
	growth := int64(after3) - int64(after1)
	const perRun = 64 << 10
	t.Logf("live heap after %d runs: %d KB; after %d: %d KB (%+d KB per run)", n, after1>>10, 3*n, after3>>10, growth/(2*n)>>10)
	if growth > 2*n*perRun {
		t.Errorf("the live heap grew by %d KB over %d runs (%d KB per run, budget %d KB): something keeps each run alive", growth>>10, 2*n, growth/(2*n)>>10, perRun>>10)
	}
}
