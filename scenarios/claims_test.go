package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim"
)

const claimed = `scenario claimed
title    Claims
edge     4
deadline 1m
object {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default}}
at 1s user create {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: default}}
----
naivecache: eventual-convergence=pass
# Two ConfigMaps are written, one by setup.
claim naivecache: count write resource=configmaps = 2
claim naivecache: count write actor=setup >= 1
claim naivecache: first write actor=user name=b at 1s..1s
claim naivecache: flips quiescence-synced false = 1
claim naivecache: flip quiescence-synced 1 sound
claim naivecache: flip quiescence-synced 2 false at 1s..2s
`

// claimTrace is a run of "claimed" by naivecache: a list of a, a sound
// quiescence flip, then b written at 1 s and a flip at 1.5 s that misses it.
func claimTrace() *sim.Trace {
	at := func(d time.Duration) sim.Duration { return sim.Duration(d) }
	recs := []sim.Record{
		{Kind: sim.RecWrite, Actor: "setup", Verb: "create", Resource: "configmaps", Namespace: "default", Name: "a", UID: "u1", RV: 2},
		{Kind: sim.RecList, Actor: "naivecache", Resource: "configmaps", RV: 2, Count: 1},
		{Kind: sim.RecSignal, Actor: "naivecache", Resource: "configmaps", Signal: "quiescence-synced", Value: true, At: at(100 * time.Millisecond)},
		{Kind: sim.RecWrite, Actor: "user", Verb: "create", Resource: "configmaps", Namespace: "default", Name: "b", UID: "u2", RV: 3, At: at(time.Second)},
		{Kind: sim.RecSignal, Actor: "naivecache", Resource: "configmaps", Signal: "quiescence-synced", At: at(time.Second)},
		{Kind: sim.RecSignal, Actor: "naivecache", Resource: "configmaps", Signal: "quiescence-synced", Value: true, At: at(1500 * time.Millisecond)},
	}
	for i := range recs {
		recs[i].Pos = i
	}
	return &sim.Trace{Version: sim.TraceVersion, Records: recs, End: at(2 * time.Second), Outcome: "quiet"}
}

func TestClaimsThatTheRunBearsOutHold(t *testing.T) {
	s, err := Parse("data/claimed.txt", []byte(claimed))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Claims) != 6 {
		t.Fatalf("parsed %d claims, want 6", len(s.Claims))
	}
	if ms := s.CheckClaims("naivecache", claimTrace()); len(ms) != 0 {
		t.Errorf("claims that hold were reported: %v", ms)
	}
	if b := s.Narrative[len(s.Narrative)-1]; b.Kind != BlockClaim || b.Index != 0 {
		t.Errorf("the narrative before the first claim is %+v, want a claim block for claim 0", b)
	}
}

// TestAFalseClaimIsAMismatchThatSaysWhatTheRunShows makes each form of
// claim fail on purpose.
func TestAFalseClaimIsAMismatchThatSaysWhatTheRunShows(t *testing.T) {
	for _, tc := range []struct{ claim, want string }{
		{"count write resource=configmaps = 10", "the run has 2 such record(s)"},
		{"count write actor=subject > 0", "the run has 0 such record(s)"},
		{"first write name=b at 2s..3s", "the first one is #3 at 1s"},
		{"first handler at 0s..1s", "the run has no such record"},
		{"flips quiescence-synced sound = 2", "the run has 1 sound flip(s) of quiescence-synced (sound, #2 at 100ms; false, #5 at 1.5s)"},
		{"flip quiescence-synced 1 false", "flip 1 of quiescence-synced is sound, #2 at 100ms"},
		{"flip quiescence-synced 2 false at 0s..1s", "flip 2 of quiescence-synced is false, #5 at 1.5s"},
		{"flip quiescence-synced 3 sound", "quiescence-synced flipped to true 2 time(s)"},
	} {
		text := strings.Replace(claimed, "claim naivecache: count write resource=configmaps = 2", "claim naivecache: "+tc.claim, 1)
		s, err := Parse("data/claimed.txt", []byte(text))
		if err != nil {
			t.Fatalf("%s: %v", tc.claim, err)
		}
		ms := s.CheckClaims("naivecache", claimTrace())
		if len(ms) != 1 {
			t.Errorf("%s: %d mismatches, want 1: %v", tc.claim, len(ms), ms)
			continue
		}
		if ms[0].Claim != tc.claim || ms[0].Line != 10 || !strings.Contains(ms[0].Reason, tc.want) {
			t.Errorf("%s: got %+v, want the claim on line 10 and a reason containing %q", tc.claim, ms[0], tc.want)
		}
		if got := ms[0].String(); !strings.Contains(got, "the story claims") {
			t.Errorf("%s: String() = %q", tc.claim, got)
		}
	}
}

func TestMalformedClaimsNameTheLineAndWhatToDo(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"claim naivecache count write = 1", "write `claim SUBJECT:"},
		{"claim naivecache: tally write = 1", `unknown form "tally"`},
		{"claim naivecache: count writes = 1", `unknown record kind "writes"`},
		{"claim naivecache: count write colour=red = 1", `unknown key "colour"`},
		{"claim naivecache: count write = many", `"many" is not a count`},
		{"claim naivecache: count write 5", "end with a comparison"},
		{"claim naivecache: first write at 3s..1s", "FROM <= TO"},
		{"claim naivecache: flips sometimes-synced all = 1", `unknown signal "sometimes-synced"`},
		{"claim naivecache: flip quiescence-synced 0 sound", "number the flip from 1"},
		{"claim naivecache: flip quiescence-synced 1 maybe", "a flip is sound or false"},
		{"claim bellerophon: count write = 1", "which no expectation line names"},
	} {
		text := strings.Replace(claimed, "claim naivecache: count write resource=configmaps = 2", tc.line, 1)
		_, err := Parse("data/claimed.txt", []byte(text))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "data/claimed.txt:10: ") {
			t.Errorf("%s: err = %v, want data/claimed.txt:10: ...%s", tc.line, err, tc.want)
		}
	}
}
