package simbench_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/cachelab/cachelab/sim/simbench"
)

// TestHandOffFloorMakesEveryHandOff checks the hand-off floor's loop: n
// turns given, CPU time measured per turn; with its context ended it stops
// early instead of waiting for turns nobody asks for.
func TestHandOffFloorMakesEveryHandOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		per, made := simbench.HandOffFloor(t.Context(), 2000)
		if made != 2000 {
			t.Errorf("made %d hand-offs, want 2000", made)
		}
		if per <= 0 {
			t.Errorf("CPU per hand-off %v, want > 0", per)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, made := simbench.HandOffFloor(ctx, 2000); made >= 2000 {
			t.Errorf("with its context ended: made %d hand-offs, want fewer than 2000", made)
		}
	})
}
