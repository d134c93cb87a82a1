package cachelabtest

import (
	"testing"

	"github.com/cachelab/cachelab/invariants"
)

// The keep-going summary counts the plans whose failures Controller.Expect
// accepts, apart from the failing ones: H35's LeaderWorkerSet campaign read
// "0 of 60 random plans failed" while 13 plans had accepted failures.
func TestKeepGoingCountsAcceptedFailuresApart(t *testing.T) {
	k := keepGoing{on: true, byInvariant: map[string]int{}}
	fail := func(names ...string) []invariants.Verdict {
		var vs []invariants.Verdict
		for _, n := range names {
			vs = append(vs, invariants.Verdict{Invariant: n, Status: invariants.Fail})
		}
		return vs
	}
	k.plans = 5
	k.failed(fail("read-your-writes"))
	k.accepted(fail("no-panics", "stable-reconciliation"))
	k.accepted(fail("no-panics"))
	k.accepted(nil)
	want := "cachelab: keep-going: 1 of 5 random plans failed; failing plans per invariant: read-your-writes 1; 2 plans with failures Controller.Expect accepts: no-panics 2, stable-reconciliation 1"
	if got := k.summary(); got != want {
		t.Errorf("summary:\n got %s\nwant %s", got, want)
	}
	k = keepGoing{on: true, plans: 3, byInvariant: map[string]int{}}
	if got, want := k.summary(), "cachelab: keep-going: 0 of 3 random plans failed"; got != want {
		t.Errorf("summary with nothing failed or accepted:\n got %s\nwant %s", got, want)
	}
}
