package fakeapibench_test

import (
	"testing"
	"testing/synctest"

	"github.com/cachelab/cachelab/fakeapi/fakeapibench"
)

// TestEveryPathDeliversEveryUpdate runs a short workload on every path:
// each run must count its updates and some CPU time.
func TestEveryPathDeliversEveryUpdate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res, err := fakeapibench.Measure(t.Context(), 1, 300)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != len(fakeapibench.Paths) {
			t.Fatalf("got %d results, want one per path (%v)", len(res), fakeapibench.Paths)
		}
		for i, r := range res {
			if r.Path != fakeapibench.Paths[i] || r.Runs != 1 || r.Events != 300 || r.Allocs == 0 {
				t.Errorf("result %d: %+v, want path %s, 1 run, 300 events and some allocations", i, r, fakeapibench.Paths[i])
			}
		}
	})
}

// TestBadArguments are errors, not panics.
func TestBadArguments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		if _, err := fakeapibench.Run(t.Context(), "nope", 10); err == nil {
			t.Error("unknown path: no error")
		}
		if _, err := fakeapibench.Measure(t.Context(), 0, 10); err == nil {
			t.Error("0 rounds: no error")
		}
		if _, err := fakeapibench.Run(t.Context(), fakeapibench.Limit, 0); err == nil {
			t.Error("0 updates: no error")
		}
	})
}
