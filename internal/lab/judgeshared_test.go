package lab

import (
	"reflect"
	"testing"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// sharedJudgeTraces runs random plans of the lab's subject and two of its
// mutants (n seeds each) and, with catalogue, every scenario of the
// catalogue on its own subject (the edge cases, many of them failing), and
// returns their traces: the material the shared judging must judge exactly
// as each check alone does.
func sharedJudgeTraces(t testing.TB, n int, catalogue bool) []*sim.Trace {
	var out []*sim.Trace
	if catalogue {
		all, err := scenarios.All()
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range all {
			p := sc.Plan
			tr, err := sim.Run(t, &p)
			if err != nil {
				t.Fatalf("%s: %v", sc.Name, err)
			}
			out = append(out, tr)
		}
	}
	for _, subject := range []string{"bellerophon", "bellerophon/stale-status", "bellerophon/tombstone-not-unwrapped"} {
		for seed := uint64(1); seed <= uint64(n); seed++ {
			p := scenarios.Random(seed, subject)
			tr, err := sim.Run(t, &p)
			if err != nil {
				t.Fatalf("%s seed %d: %v", subject, seed, err)
			}
			out = append(out, tr)
		}
	}
	return out
}

// judgeAlone is every check of tr with options of its own: nothing shared.
func judgeAlone(tr *sim.Trace) []invariants.Verdict {
	var out []invariants.Verdict
	for _, inv := range invariants.All() {
		out = append(out, inv.CheckWith(tr, invariants.Options{}))
	}
	return out
}

// The checks of one trace share what they parse and judge alike
// (invariants.Options.Shared: the sync-soundness reports, the server
// replays' write facts, each write's flattened JSON). Their verdicts are
// the verdicts each check gives alone, on every trace; and one Shared
// options used for a second trace starts over rather than answering with
// the first trace's facts.
func TestSharedJudgingGivesTheVerdictsOfEachCheckAlone(t *testing.T) {
	trs := sharedJudgeTraces(t, 4, true)
	failed := 0
	for i, tr := range trs {
		alone := judgeAlone(tr)
		if got := checkWithin(tr, allChecks(), 0); !reflect.DeepEqual(got, alone) {
			t.Errorf("trace %d (%s): shared verdicts differ from each check alone:\n got %+v\nwant %+v", i, tr.Plan.Name, got, alone)
		}
		for _, v := range alone {
			if v.Failed() && !invariants.IsMeasurement(v.Invariant) {
				failed++
			}
		}
	}
	if failed == 0 {
		t.Errorf("no check failed on any of the %d traces: the catalogue's edge cases should give the comparison failing verdicts too", len(trs))
	}
	// One Shared options, two traces in turn, then the first again.
	opts := invariants.Options{}.Shared()
	for _, tr := range []*sim.Trace{trs[0], trs[len(trs)-1], trs[0]} {
		var got []invariants.Verdict
		for _, inv := range invariants.All() {
			got = append(got, inv.CheckWith(tr, opts))
		}
		if want := judgeAlone(tr); !reflect.DeepEqual(got, want) {
			t.Errorf("%s judged with options shared with another trace: verdicts differ from each check alone", tr.Plan.Name)
		}
	}
}

// BenchmarkJudging judges the same traces with every check alone (the
// baseline: each parses the trace's objects again, and each of the
// sync-soundness verdicts judges every signal) and with the checks sharing
// (invariants.Options.Shared, what the lab's runs use): compare the two
// ns/op of one run.
func BenchmarkJudging(b *testing.B) {
	trs := sharedJudgeTraces(b, 4, false)
	b.Run("each-check-alone", func(b *testing.B) {
		for b.Loop() {
			for _, tr := range trs {
				judgeAlone(tr)
			}
		}
	})
	b.Run("shared", func(b *testing.B) {
		for b.Loop() {
			for _, tr := range trs {
				checkWithin(tr, allChecks(), 0)
			}
		}
	})
}
