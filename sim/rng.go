package sim

import (
	"hash/fnv"
	"math/rand/v2"
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
