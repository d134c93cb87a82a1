package plan

import (
	"math"
	"math/rand/v2"
	"time"
)

// Draw returns one delay drawn from d with r:
//   - none (or ""): 0;
//   - fixed: Max;
//   - uniform: uniformly in [Min, Max];
//   - exponential: exponential with mean Mean, capped at Max (when Max is 0,
//     at 10*Mean).
//
// Draw consumes a fixed number of values from r for a given Kind, so later
// draws do not depend on earlier values.
func (d Distribution) Draw(r *rand.Rand) time.Duration {
	switch d.Kind {
	case "fixed":
		return d.Max.D()
	case "uniform":
		lo, hi := d.Min.D(), d.Max.D()
		v := r.Uint64()
		if hi <= lo {
			return lo
		}
		return lo + time.Duration(v%uint64(hi-lo+1))
	case "exponential":
		limit := d.Max.D()
		if limit <= 0 {
			limit = 10 * d.Mean.D()
		}
		// Inverse CDF: one value per draw.
		v := time.Duration(-math.Log1p(-r.Float64()) * float64(d.Mean.D()))
		if v > limit || v < 0 {
			v = limit
		}
		return v
	}
	return 0
}
