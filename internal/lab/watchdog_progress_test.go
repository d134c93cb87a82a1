package lab

import (
	"testing"
	"time"
)

// The watchdog gives up on a run that makes no record for a whole limit,
// lets a slow run that keeps recording go on (a loaded machine: the
// examples' secretsync stopped once at 2 minutes at load 28), and stops a
// run that records forever after maxWatchedRounds limits. Ticks and the
// record count are fed by hand: no wall time passes.
func TestTheWatchdogTellsASlowRunFromAStuckOne(t *testing.T) {
	limit := 4 * time.Second
	start := time.Unix(0, 0)
	for name, tc := range map[string]struct {
		recordsAt func(tick int) int64 // the record count seen at each tick (a quarter of the limit)
		doneAfter int                  // ticks before the run ends; 0: never
		wantTicks int                  // ticks at which it is given up on; 0: it ends
	}{
		"stuck from the start":       {func(int) int64 { return 0 }, 0, 4},
		"stuck after some records":   {func(i int) int64 { return int64(min(i, 3) * 10) }, 0, 7},
		"slow, recording each tick":  {func(i int) int64 { return int64(i) }, 30, 0},
		"slow, a record every limit": {func(i int) int64 { return int64(i / 3) }, 30, 0},
		"recording forever":          {func(i int) int64 { return int64(i) }, 0, 4 * maxWatchedRounds},
	} {
		t.Run(name, func(t *testing.T) {
			counts := make(chan int64)
			done := make(chan struct{})
			ticks := make(chan time.Time)
			type result struct {
				total   time.Duration
				records int64
				ok      bool
			}
			res := make(chan result, 1)
			go func() {
				total, records, ok := watch(done, ticks, func() int64 { return <-counts }, start, limit)
				res <- result{total, records, ok}
			}()
			for i := 1; ; i++ {
				if tc.doneAfter > 0 && i > tc.doneAfter {
					close(done)
					break
				}
				select {
				case ticks <- start.Add(time.Duration(i) * limit / 4):
					counts <- tc.recordsAt(i)
				case r := <-res:
					if tc.wantTicks == 0 || r.ok {
						t.Fatalf("given up on at tick %d (%v), want it to go on", i-1, r)
					}
					if got := int(r.total / (limit / 4)); got != tc.wantTicks {
						t.Errorf("given up on at tick %d, want %d", got, tc.wantTicks)
					}
					return
				}
				if i > 100 {
					t.Fatal("never given up on")
				}
			}
			if r := <-res; !r.ok || tc.wantTicks != 0 {
				t.Errorf("got %+v, want to be given up on at tick %d", r, tc.wantTicks)
			}
		})
	}
}
