package cachelabtest

import (
	"strings"
	"testing"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// A replay that passes logs, under -v, how it followed the recorded run;
// one that could not follow it says so, so that its pass never reads as
// the recorded run's; a run that is no replay says nothing of it.
func TestAPassingReplaysSummarySaysHowItFollowed(t *testing.T) {
	pass := []invariants.Verdict{{Invariant: "no-panics", Status: invariants.Pass}}
	replay := &sim.Plan{Name: "p", Schedule: []string{"req x get configmaps/default/a #1"}}
	lost := "at t=0s, turn 3: the schedule names \"req x get configmaps/default/a #1\"; ready: req x list configmaps #1"
	rep := &reporter{}
	for _, c := range []struct {
		name string
		tr   *sim.Trace
		want string
	}{
		{"a plain run", &sim.Trace{Plan: &sim.Plan{Name: "p"}, Attempts: 1}, ""},
		{"followed", &sim.Trace{Plan: replay, Attempts: 1}, "\n  this replay: followed the recorded run in attempt 1 of at most"},
		{"lost", &sim.Trace{Plan: replay, Attempts: 100, Diverged: true, Divergences: []string{"attempt 100: " + lost}},
			"\n  this replay: could NOT follow the recorded run: none of its 100 attempts did"},
	} {
		r := &lab.Result{Job: lab.NewJob(c.tr.Plan, nil), Trace: c.tr, Verdicts: pass}
		got := rep.summary(r)
		if c.want == "" && strings.Contains(got, "replay") || !strings.Contains(got, c.want) {
			t.Errorf("%s: summary\n  %s\nwant it to say %q", c.name, got, c.want)
		}
	}
	rep.notFollowed = lab.WhyNotFollowed(&sim.Plan{Name: "p"}, nil)
	r := &lab.Result{Job: lab.NewJob(&sim.Plan{Name: "p"}, nil), Trace: &sim.Trace{Plan: &sim.Plan{Name: "p"}, Attempts: 1}, Verdicts: pass}
	if got := rep.summary(r); !strings.Contains(got, "this replay: no recorded run (trace.jsonl) beside the plan: it ran in the canonical order") {
		t.Errorf("a replay of a plan alone: summary\n  %s\ndoes not say it ran in the canonical order", got)
	}
}
