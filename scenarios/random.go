package scenarios

import (
	"fmt"

	"github.com/cachelab/cachelab/sim"
)

// Random returns the random Plan number seed for subject, as `cachelab run
// --random N --seed S` runs them (seeds S, S+1, ...): PlanGen's example for
// that seed, named "random-<seed>". The same seed and subject always give
// the same Plan, so a failure can be run again by its seed, and the saved
// plan.json replays it exactly.
func Random(seed uint64, subject string) sim.Plan {
	p := PlanGen(subject).Example(int(seed))
	p.Name = fmt.Sprintf("random-%d", seed)
	return p
}
