package sim

import (
	"time"
	_ "unsafe" // for go:linkname

	_ "k8s.io/apimachinery/pkg/util/wait" // the package whose jitter source is replaced
)

// jitterRand is apimachinery's wait.jitterRand, the source of every
// wait.Jitter draw: client-go's reflector backoff (jitter 1.0: a re-watch
// after a failure comes after [d, 2d)), leader election, JitterUntil loops.
// It defaults to math/rand's global source, which every run of a process
// shares: runs in parallel (cachelab run, property tests) draw each other's
// values, so a plan replayed alone re-watched at other virtual times than
// it did in its batch, and every fault drawn relative to a re-watch moved
// with it. apimachinery made it a package variable "so it can be overridden
// to make unit tests deterministic" (wait.go); the lab does so for good.
//
//go:linkname jitterRand k8s.io/apimachinery/pkg/util/wait.jitterRand
var jitterRand func() float64

func init() { jitterRand = clockJitter }

// clockJitter returns a value in [0, 1) that is a function of the current
// time only. Inside a synctest bubble the time is virtual and every run's
// clock starts at the same instant, so a run draws the same jitter at the
// same virtual time whatever other runs of the process do. Outside one
// (cachelab serve) it varies with the wall clock, as jitter should.
func clockJitter() float64 {
	x := uint64(time.Now().UnixNano())
	// splitmix64's finalizer.
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}
