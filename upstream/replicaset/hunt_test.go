package replicaset_test

import (
	"testing"

	"github.com/cachelab/cachelab/upstream/internal/hunt"
	"github.com/cachelab/cachelab/upstream/replicaset"
)

// TestHunt runs the lab's targeted campaign on the real controller, the
// KEP-5647 gate on and off, side by side with random plans of the same
// generator (go test -run TestHunt -upstream.hunt=3; docs/targeted-faults.md).
func TestHunt(t *testing.T) {
	for _, gate := range []bool{true, false} {
		c := replicaset.Controller(gate)
		t.Run(c.Name, func(t *testing.T) { hunt.SideBySide(t, c, replicaset.Plan) })
	}
}
