package cachelabtest

import (
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/cachelab/cachelab/scenarios"
	_ "github.com/cachelab/cachelab/subjects/bellerophon"
)

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
