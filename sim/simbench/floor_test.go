package simbench_test

import (
	"testing"
	"testing/synctest"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/simbench"
)

// TestFloorRunPlaysTheWholeTimeline checks the floor's run: 30 virtual
// seconds of operations then 1 s of quiet, and at least one handler call
// per initial object and per operation (relists add more).
func TestFloorRunPlaysTheWholeTimeline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		virtual, handled, err := simbench.FloorRun(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if want := simbench.StandardSpan + simbench.StandardQuiet; virtual != want {
			t.Errorf("floor run took %v of virtual time, want %v", virtual, want)
		}
		if min := simbench.StandardObjects + simbench.StandardOps; handled < min {
			t.Errorf("floor run made %d handler calls, want at least %d", handled, min)
		}
	})
}

// BenchmarkFloorRun runs the floor alone (for profiles).
func BenchmarkFloorRun(b *testing.B) {
	sim.Bubble(b, func(t *testing.T) {
		for range b.N {
			if _, _, err := simbench.FloorRun(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// BenchmarkServerRun runs the server baseline alone (for profiles).
func BenchmarkServerRun(b *testing.B) {
	sim.Bubble(b, func(t *testing.T) {
		for range b.N {
			if _, _, err := simbench.ServerRun(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// BenchmarkScenarioRun runs the standard scenario alone (for profiles).
func BenchmarkScenarioRun(b *testing.B) {
	p := simbench.StandardPlan("direct")
	sim.Bubble(b, func(t *testing.T) {
		for range b.N {
			if _, err := sim.RunInBubble(t.Context(), p); err != nil {
				t.Fatal(err)
			}
		}
	})
}
