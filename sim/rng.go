package sim

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"
)

// stream returns the random stream named by parts under seed. Every random
// choice of a run draws from a stream named by what it is about (the kind of
// draw, the client, the resource, the watch's ordinal for that client and
// resource), never from a stream shared by unrelated goroutines, so that a
// schedule depends on the plan and not on goroutine interleavings.
func stream(seed uint64, parts ...string) *rand.Rand {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

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
