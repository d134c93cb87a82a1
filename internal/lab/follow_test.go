package lab_test

import (
	"strings"
	"testing"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/sim"
)

// A replay's words say in which attempt it followed the recorded run, and
// which order each attempt that could not follow met, with its turn; a
// replay that could not follow in any attempt says so first; a run that
// followed no schedule says nothing.
func TestHowAReplayFollowedNamesTheAttemptAndTheOrdersItMet(t *testing.T) {
	subject := "at t=8s, turn 42: the schedule names \"req upstream/job patch pods/default/a-bbbbc #1\", but upstream/job asked about pods/default/a-bbbbd instead (which object it acts on is its own order, decided inside it from the same answers and events: a lister's Go map order, a sort with ties; not the lab's)"
	mapOrder := "at t=0s, turn 10: the schedule names \"turn c handler configmaps #1 @ADDED default/a\", but client-go handed out ADDED default/c before ADDED default/a (its order within a batch: Go's map order)"
	lab0 := "at t=1s, turn 7: the schedule names \"req nobody get configmaps/default/never #1\"; ready: req c list configmaps #2"
	for _, d := range []string{subject, mapOrder} {
		if lab.DivergenceOrder(d) == lab.OrderLab {
			t.Fatalf("sim does not tell this divergence's order: %q", d)
		}
	}
	replay := &sim.Plan{Schedule: []string{"req x get pods #1"}}
	for _, c := range []struct {
		name string
		tr   *sim.Trace
		want []string
	}{
		{"no schedule", &sim.Trace{Plan: &sim.Plan{}, Attempts: 1}, nil},
		{"first attempt", &sim.Trace{Plan: replay, Attempts: 1}, []string{"followed the recorded run in attempt 1 of at most 100"}},
		{"after restarts", &sim.Trace{Plan: replay, Attempts: 4, Divergences: []string{"attempt 1: " + subject, "attempt 2: " + mapOrder, "attempt 3: " + subject}},
			[]string{"followed the recorded run in attempt 4 of at most 100; 3 attempts before could not: 2 met the controller's own order at turn 42, 1 met client-go's map order at turn 10",
				"\n  2 attempts, the controller's own order: " + subject, "\n  1 attempt, client-go's map order: " + mapOrder}},
		{"never", &sim.Trace{Plan: replay, Attempts: 100, Diverged: true, Divergences: append(repeat("attempt n: "+lab0, 99), "attempt 100: "+mapOrder)},
			[]string{"could NOT follow the recorded run: none of its 100 attempts did (1 met client-go's map order at turn 10, 99 met an order the lab should have decided at turn 7)",
				"\n  99 attempts, an order the lab should have decided: " + lab0}},
	} {
		got := lab.HowFollowed(c.tr)
		if len(c.want) == 0 && got != "" {
			t.Errorf("%s: %q, want nothing", c.name, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the words do not say\n  %s\ngot\n  %s", c.name, w, got)
			}
		}
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
