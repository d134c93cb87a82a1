package sim_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cachelab/cachelab/sim"
)

// idle is a subject that starts nothing: the competitor is the only
// process with an informer, so only its order is client-go's.
type idle struct{}

func (idle) Start(context.Context, sim.Env) error { return nil }

var registerIdle = sync.OnceFunc(func() {
	sim.RegisterSubject(sim.SubjectInfo{Name: "test/idle", Summary: "starts nothing (sim tests only)", New: func() sim.Subject { return idle{} }})
})

// competitorPlan has the competitor label ConfigMaps of these names, which
// its informer's WatchList hands to its handler in Go's map order.
func competitorPlan(names ...string) *sim.Plan {
	p := &sim.Plan{Version: 1, Seed: 1, Subject: "test/idle", Steps: []sim.Step{}}
	for _, n := range names {
		p.Objects = append(p.Objects, cm(n))
	}
	p.Competitor = &sim.Competitor{Resource: "configmaps", Patch: []byte(`{"metadata":{"labels":{"owner":"competitor"}}}`)}
	return p
}

// competitorPatches returns the objects the competitor patched, in order.
func competitorPatches(tr *sim.Trace) []string {
	var out []string
	for _, w := range find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWrite && r.Actor == sim.ClientCompetitor }) {
		out = append(out, w.Verb+" "+w.Name)
	}
	return out
}

// The competitor's order is the lab's: client-go hands its informer's
// WatchList of five ConfigMaps to its handler in Go's map order, which
// differs from run to run, but its worker waits for its turn, takes every
// object queued by then and patches them in key order. Every run of the
// plan writes the same patches in the same order and releases the same
// delivery schedule.
func TestTheCompetitorPatchesABatchInKeyOrderWhateverClientGosOrder(t *testing.T) {
	registerIdle()
	want := []string{"patch a", "patch b", "patch c", "patch d", "patch e"}
	var first *sim.Trace
	for i := range 10 {
		tr := run(t, competitorPlan("e", "c", "a", "d", "b"))
		if got := competitorPatches(tr); !slices.Equal(got, want) {
			t.Fatalf("run %d: the competitor wrote %q, want %q", i+1, got, want)
		}
		turn := slices.Index(tr.Schedule, "turn competitor get #1")
		patch := slices.IndexFunc(tr.Schedule, func(e string) bool { return strings.HasPrefix(e, "req competitor patch ") })
		if turn < 0 || turn > patch {
			t.Fatalf("run %d: want the competitor's turn before its first patch; positions %d and %d in %q", i+1, turn, patch, tr.Schedule)
		}
		if first == nil {
			first = tr
		} else if d := sim.DiffDeliverySchedules(first.Schedule, tr.Schedule); d != "" {
			t.Fatalf("run %d: %s", i+1, d)
		}
	}
}

// A replay follows the recorded run in its first attempt when only the
// competitor got a batch: nothing of the competitor's order is left to
// client-go (before, a replay met it as a patch the schedule did not name,
// an order the lab should have decided, and started over until the map
// order recurred).
func TestAReplayFollowsTheCompetitorsRecordedOrderInItsFirstAttempt(t *testing.T) {
	registerIdle()
	plan := func() *sim.Plan { return competitorPlan("a", "b", "c", "d") }
	recorded := run(t, plan())
	want := competitorPatches(recorded)
	q := plan()
	q.Schedule = recorded.Schedule
	for i := range 10 {
		tr := run(t, q)
		if tr.Diverged || tr.Attempts != 1 {
			t.Fatalf("replay %d took %d attempts (diverged %v): %q", i+1, tr.Attempts, tr.Diverged, tr.Divergences)
		}
		if d := sim.DiffDeliverySchedules(recorded.Schedule, tr.Schedule); d != "" {
			t.Fatalf("replay %d: %s", i+1, d)
		}
		if got := competitorPatches(tr); !slices.Equal(got, want) {
			t.Fatalf("replay %d: the competitor wrote %q, the recorded run %q", i+1, got, want)
		}
	}
}
