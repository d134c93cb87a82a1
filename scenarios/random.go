package scenarios

import (
	"fmt"
	"sync"

	"pgregory.net/rapid"

	"github.com/cachelab/cachelab/sim"
)

// Random returns the random Plan number seed for subject, as `cachelab run
// --random N --seed S` runs them (seeds S, S+1, ...): the example for that
// seed of the subject's generator (SetPlanGen's, else PlanGen), named
// "random-<seed>". The same seed and subject always give the same Plan, so
// a failure can be run again by its seed, and the saved plan.json replays
// it exactly.
func Random(seed uint64, subject string) sim.Plan {
	p := planGenFor(subject).Example(int(seed))
	p.Name = fmt.Sprintf("random-%d", seed)
	return p
}

// planGens are the generators SetPlanGen gave, by subject.
var planGens sync.Map // subject -> *rapid.Generator[sim.Plan]

// SetPlanGen makes gen the generator of subject's random plans: Random,
// and so `cachelab run --random`, `cachelab hunt`'s workloads and
// `cachelab time-to-bug`, draw from it instead of PlanGen's ConfigMap
// plans (cachelabtest.Register gives a controller's own Random plans this
// way). A nil gen goes back to PlanGen.
func SetPlanGen(subject string, gen *rapid.Generator[sim.Plan]) {
	if gen == nil {
		planGens.Delete(subject)
		return
	}
	planGens.Store(subject, gen)
}

// planGenFor is subject's generator: SetPlanGen's, else PlanGen.
func planGenFor(subject string) *rapid.Generator[sim.Plan] {
	if g, ok := planGens.Load(subject); ok {
		return g.(*rapid.Generator[sim.Plan])
	}
	return PlanGen(subject)
}
