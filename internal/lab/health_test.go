package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// reconcileTrace is a trace of subject "c" whose records are recs (their
// positions set), ended at end with outcome.
func reconcileTrace(end time.Duration, outcome string, recs ...sim.Record) *sim.Trace {
	for i := range recs {
		recs[i].Pos = i
		if recs[i].Actor == "" {
			recs[i].Actor = "c"
		}
	}
	return &sim.Trace{Plan: &sim.Plan{Subject: "c"}, Records: recs, End: sim.Duration(end), Outcome: outcome}
}

func rec(at time.Duration, op, key, result string) sim.Record {
	return sim.Record{At: sim.Duration(at), Kind: sim.RecReconcile, Op: op, Key: key, Result: result}
}

// reconciles-return fails a reconcile that ran a minute or more, whether it
// returned late, was cut by a crash or never returned, and is absent when
// every reconcile returned sooner (a long run of short reconciles too).
func TestAHungReconcileFailsReconcilesReturn(t *testing.T) {
	s := time.Second
	for name, tc := range map[string]struct {
		tr   *sim.Trace
		want string // "" = no reconciles-return verdict
	}{
		"short reconciles": {reconcileTrace(10*time.Minute, "quiet",
			rec(1*s, "start", "ns/a", ""), rec(2*s, "end", "ns/a", "ok"),
			rec(100*s, "start", "ns/a", ""), rec(159*s, "end", "ns/a", "ok")), ""},
		"returned late": {reconcileTrace(10*time.Minute, "quiet",
			rec(1*s, "start", "ns/a", ""), rec(70*s, "end", "ns/a", "timed out")),
			"of ns/a, started at t=1s and returned only at t=1m10s, with timed out"},
		"cut by a crash": {reconcileTrace(10*time.Minute, "quiet",
			rec(1*s, "start", "ns/b", ""), sim.Record{At: sim.Duration(90 * s), Kind: sim.RecCrash}),
			"of ns/b, started at t=1s and had not returned when"},
		"never returned": {reconcileTrace(2*time.Minute, "deadline",
			rec(7*s, "start", "ns/c", "")),
			"of ns/c, started at t=7s and had not returned when the run ended at t=2m0s (deadline)"},
		"stopped by the run's end": {reconcileTrace(2*time.Minute, "deadline",
			rec(7*s, "start", "ns/c", ""), rec(2*time.Minute, "end", "ns/c", "context canceled")),
			"returned only when the run ended at t=2m0s (deadline), with context canceled"},
	} {
		t.Run(name, func(t *testing.T) {
			var got *invariants.Verdict
			for _, v := range HealthVerdicts(tc.tr) {
				if v.Invariant == HealthReturns {
					got = &v
				}
			}
			switch {
			case tc.want == "" && got != nil:
				t.Errorf("got %s: %s, want no verdict", got.Status, got.Reason)
			case tc.want != "" && got == nil:
				t.Errorf("no reconciles-return verdict, want a failure")
			case tc.want != "" && (got.Status != invariants.Fail || !strings.Contains(got.Reason, tc.want)):
				t.Errorf("got %s: %s\nwant a failure containing %q", got.Status, got.Reason, tc.want)
			}
		})
	}
}
