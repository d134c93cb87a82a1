package invariants_test

import (
	"strings"
	"testing"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/invariants/tracebuild"
)

// A run whose plan writes nothing gives every invariant about the
// subject's actions nothing to judge: not applicable, not a record the
// trace lacks.
func TestARunThatWroteNothingIsNotApplicableNotUnknown(t *testing.T) {
	b := tracebuild.New(ctrl)
	b.WatchOpen(ctrl, "ctrl/configmaps#1", "configmaps", true)
	b.Desired(ctrl, true, "")
	b.Final()
	vs := invariants.Check(b.Trace("quiet"))
	tally := invariants.Count(vs)
	if tally.Unknown != 0 || tally.NotApplicable == 0 {
		t.Fatalf("tally %+v: want every property that could not judge n/a, none unknown", tally)
	}
	if s := tally.String(); !strings.Contains(s, " n/a") {
		t.Errorf("tally reads %q: want the n/a count", s)
	}
	if s := invariants.UnknownSummary(vs); !strings.HasPrefix(s, "most invariants could not judge, nothing to judge: no object was ever written") {
		t.Errorf("summary %q: want nothing to judge, not 'the trace lacks'", s)
	}
}

// Over a campaign, the share of properties that could not judge is
// counted by kind, and the reasons are ranked.
func TestUnknownShareCountsByKindAndRanksTheReasons(t *testing.T) {
	var s invariants.UnknownShare
	if s.String() != "" {
		t.Fatalf("empty share reads %q", s.String())
	}
	na := func(inv string) invariants.Verdict {
		return invariants.Verdict{Invariant: inv, Status: invariants.Unknown, NotApplicable: true, Short: "no write by the subject"}
	}
	unk := invariants.Verdict{Invariant: "eventual-convergence", Status: invariants.Unknown, Reason: "no desired-state record: the subject records none"}
	pass := invariants.Verdict{Invariant: "finalizers", Status: invariants.Pass, Reason: "ok"}
	measure := invariants.Verdict{Invariant: "sync-soundness/fifo-synced", Status: invariants.Unknown, Reason: "no signal"}
	s.Add([]invariants.Verdict{pass, unk, measure, na("read-your-writes"), na("no-stale-harm")})
	s.Add([]invariants.Verdict{pass, na("read-your-writes"), measure})
	s.Add([]invariants.Verdict{pass, pass})
	if s.Runs != 3 || s.Properties != 8 || s.Unknown != 1 || s.NotApplicable != 3 {
		t.Fatalf("share %+v: want 3 runs, 8 properties (measurements apart), 1 unknown, 3 n/a", s)
	}
	top := s.Top(0)
	if len(top) != 2 || top[0].Why != "no write by the subject" || top[0].Verdicts != 3 || !top[0].NotApplicable ||
		strings.Join(top[0].Invariants, ",") != "no-stale-harm,read-your-writes" || top[1].Why != "no desired-state record" {
		t.Fatalf("top reasons %+v", top)
	}
	if got := s.Top(1); len(got) != 1 {
		t.Errorf("Top(1) gave %d reasons", len(got))
	}
	want := "of 8 property verdicts in 3 runs, 1 unknown (12.5%), 3 n/a (37.5%); unknown: 1 no desired-state record (eventual-convergence); n/a: 3 no write by the subject (no-stale-harm, read-your-writes)"
	if got := s.String(); got != want {
		t.Errorf("share reads\n%q, want\n%q", got, want)
	}
}
