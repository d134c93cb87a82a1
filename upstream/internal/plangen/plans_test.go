package plangen_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/job"
	"github.com/cachelab/cachelab/upstream/replicaset"
)

// TestPlansAreTheOnesTheTableWasMeasuredOn: the campaign tables (make
// upstream, docs/upstream.md) are measured on the plans of seeds 1, 2, ...
// of each package. A change of a generator's draws (their order, a new
// draw, rapid's engine) changes every plan after it, and with them the
// tables; this digest of the plans of seeds 1-200 fails first. Change it
// only together with the tables, after a new make upstream.
func TestPlansAreTheOnesTheTableWasMeasuredOn(t *testing.T) {
	for _, c := range []struct {
		plan         func(uint64, string) *sim.Plan
		gate, noGate string
		digest       string
	}{
		{job.Plan, job.Name, job.NameNoGate, "b8d8931a26fd9c3f0d583085e8da2e9fcc75a7df2653b0bdc49008ced6597116"},
		{replicaset.Plan, replicaset.Name, replicaset.NameNoGate, "d2492810b0b7589ce3a0046140df440af0fda7e26f23b7c6bd5d70d9a1af1480"},
	} {
		h := sha256.New()
		enc := json.NewEncoder(h)
		for seed := uint64(1); seed <= 200; seed++ {
			for _, subject := range []string{c.gate, c.noGate} {
				if err := enc.Encode(c.plan(seed, subject)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got := fmt.Sprintf("%x", h.Sum(nil)); got != c.digest {
			t.Errorf("%s: the plans of seeds 1-200 hash to %s, not %s: the generator's draws changed, so the campaign tables no longer describe these plans", c.gate, got, c.digest)
		}
	}
}

// The plan of a seed is the same at every call (a campaign's seed names
// one plan), and plans of different seeds differ.
func TestAPlanIsAFunctionOfItsSeed(t *testing.T) {
	a, b := replicaset.Plan(7, replicaset.Name), replicaset.Plan(7, replicaset.Name)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatalf("seed 7 gave two plans:\n%s\n%s", ja, jb)
	}
	jc, _ := json.Marshal(replicaset.Plan(8, replicaset.Name))
	if string(ja) == string(jc) {
		t.Fatalf("seeds 7 and 8 gave the same plan: %s", ja)
	}
	if a.Name != "rs-7" || len(a.Steps) == 0 {
		t.Fatalf("seed 7's plan is named %q with %d steps, want rs-7 with steps", a.Name, len(a.Steps))
	}
}
