package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/invariants/tracebuild"
	"github.com/cachelab/cachelab/sim"
)

// A judge that outlasts the per-run limit gives Unknown verdicts that say
// judging stopped, where and why, and the test moves on: the check under
// way (here one forced to be slow: it returns only when the test ends)
// and the one after it are Unknown, the one before keeps its verdict. The
// check under way is told to stop: its options' Stop is closed when the
// judge gives up. Nothing here depends on how fast the machine is: the
// slow check never returns within the limit.
func TestAJudgeThatOutlastsTheLimitIsUnknownAndSaysWhy(t *testing.T) {
	tr := tracebuild.New("ctrl").Trace("quiet")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	quick := func(name string) namedCheck {
		return namedCheck{name: name, check: func(*sim.Trace, invariants.Options) invariants.Verdict {
			return invariants.Verdict{Invariant: name, Status: invariants.Pass, Reason: "judged"}
		}}
	}
	told := make(chan (<-chan struct{}), 1)
	slow := namedCheck{name: "slow", check: func(_ *sim.Trace, opts invariants.Options) invariants.Verdict {
		told <- opts.Stop
		<-release
		return invariants.Verdict{Invariant: "slow", Status: invariants.Fail, Reason: "too late to count"}
	}}
	vs := checkWithin(tr, []namedCheck{quick("before"), slow, quick("after")}, 50*time.Millisecond)
	for _, v := range vs {
		t.Logf("%s %s (%s): %s", v.Invariant, v.Status, v.Short, v.Reason)
	}
	if len(vs) != 3 || vs[0].Status != invariants.Pass || vs[0].Reason != "judged" {
		t.Fatalf("got %d verdicts, the first %+v: want 3, the check done before the limit kept", len(vs), vs[0])
	}
	for i, want := range []string{"while this invariant was judging", "before this invariant started"} {
		v := vs[i+1]
		if v.Status != invariants.Unknown || !strings.Contains(v.Reason, "judging stopped after") || !strings.Contains(v.Reason, want) ||
			!strings.Contains(v.Reason, "slow took longer") || v.Short == "" {
			t.Fatalf("%s: %s (%q): %s; want Unknown, judging stopped %s, naming the slow check", v.Invariant, v.Status, v.Short, v.Reason, want)
		}
	}
	// The slow check had started (the limit passed while it judged), so
	// its Stop is in told; checkWithin closed it before returning.
	stop := <-told
	if stop == nil {
		t.Fatal("the check under way was given no Stop")
	}
	select {
	case <-stop:
	default:
		t.Error("the check under way was not told to stop: its Stop is still open after the judge gave up")
	}
}

// Within the limit, or with no limit, every check's own verdict stands.
func TestAJudgeWithinTheLimitKeepsEveryVerdict(t *testing.T) {
	b := tracebuild.New("ctrl")
	b.Create("user", tracebuild.Obj{Resource: "bellerophons", Namespace: "ns", Name: "p"})
	tr := b.Trace("quiet")
	want := invariants.Check(tr)
	for _, limit := range []time.Duration{0, time.Hour} {
		got := checkWithin(tr, allChecks(), limit)
		if len(got) != len(want) {
			t.Fatalf("limit %s: %d verdicts, want %d", limit, len(got), len(want))
		}
		for i := range want {
			if got[i].Invariant != want[i].Invariant || got[i].Status != want[i].Status || got[i].Reason != want[i].Reason {
				t.Fatalf("limit %s: verdict %d is %s %s (%s), want %s %s (%s)", limit, i, got[i].Invariant, got[i].Status, got[i].Reason, want[i].Invariant, want[i].Status, want[i].Reason)
			}
		}
	}
}
