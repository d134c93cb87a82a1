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

// TestPlansAreTheOnesTheTableWasMeasuredOn: the README's upstream table was
// measured on the plans of seeds 1-1000 of each package. A change of a
// generator's draws (their order, a new draw) changes every plan after it,
// and with them the table; this digest of the plans fails first. Change it
// only together with the table, after a new make upstream.
func TestPlansAreTheOnesTheTableWasMeasuredOn(t *testing.T) {
	for _, c := range []struct {
		plan         func(uint64, string) *sim.Plan
		gate, noGate string
		digest       string
	}{
		{job.Plan, job.Name, job.NameNoGate, "f7249aeee86c7168f65d48682b0dff4b41654db48ce94e98aac28243649c3893"},
		{replicaset.Plan, replicaset.Name, replicaset.NameNoGate, "8b92f4c8fd788ac2fb20262bf702c94370d2be1c7fd7cacdf015747e07ca86e1"},
	} {
		h := sha256.New()
		enc := json.NewEncoder(h)
		for seed := uint64(1); seed <= 1000; seed++ {
			for _, subject := range []string{c.gate, c.noGate} {
				if err := enc.Encode(c.plan(seed, subject)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got := fmt.Sprintf("%x", h.Sum(nil)); got != c.digest {
			t.Errorf("%s: the plans of seeds 1-1000 hash to %s, not %s: the generator's draws changed, so the README's table no longer describes these plans", c.gate, got, c.digest)
		}
	}
}
