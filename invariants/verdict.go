package invariants

import (
	"fmt"
	"strings"
)

// Status is the three-valued outcome of a check, as porcupine's CheckResult:
// a check that cannot decide says Unknown rather than guess.
type Status string

// The outcomes.
const (
	Pass    Status = "pass"
	Fail    Status = "fail"
	Unknown Status = "unknown"
)

// Verdict is one invariant's judgement of one trace.
type Verdict struct {
	// Invariant is the invariant's name ("per-object-order").
	Invariant string `json:"invariant"`
	Status    Status `json:"status"`
	// Reason is one sentence a newcomer understands.
	Reason string `json:"reason"`
	// Positions are the trace positions (Record.Pos) that prove the verdict,
	// first the most telling.
	Positions []int `json:"positions,omitempty"`
	// Detail, optional, is a longer explanation (a cache-vs-server diff).
	Detail string `json:"detail,omitempty"`
	// At, on a Fail, is the position of the first record where the
	// invariant's own evidence departs from what it must be: the step that
	// broke it (a handler dropping a tombstone, a duplicate create, the
	// subject's write that reverted another's change), which a report
	// marks as the first failure. Nil when unset; see Mark.
	At *int `json:"at,omitempty"`
	// Trigger, optional on a Fail, is the position of what set the failure
	// in motion (the user's delete, a fault), shown as context.
	Trigger *int `json:"trigger,omitempty"`
	// Measurement is true for a verdict that measures rather than judges
	// the subject: a definition of "synced" (sync-soundness/...), whose
	// Fail means "this definition claimed sync too early" (unsound), or a
	// cost of idiomatic behaviour (retried-conflicts), which is always
	// Pass or Unknown. Never a failure of the run. See IsMeasurement.
	Measurement bool `json:"measurement,omitempty"`
	// Short, optional, is a few words for a one-line summary: for an
	// Unknown, what the trace lacked ("no desired-state record"); for a
	// cost measurement, its figure ("3 retried 409s, resolved within
	// 20ms"). See UnknownSummary and Costs.
	Short string `json:"short,omitempty"`
	// NotApplicable, on an Unknown, says the invariant had nothing to
	// judge because the subject never did what it is about (it wrote
	// nothing, created no child, added no finalizer), not because the
	// trace lacked a record: reports show it as "n/a", apart from the
	// Unknowns that a missing record caused.
	NotApplicable bool `json:"notApplicable,omitempty"`
}

// Mark returns the position a report marks as v's first failure: At when
// set, else the first of Positions; -1 when v cites none.
func (v Verdict) Mark() int {
	if v.At != nil {
		return *v.At
	}
	if len(v.Positions) > 0 {
		return v.Positions[0]
	}
	return -1
}

// IsMeasurement reports whether the invariant named name measures a
// definition of "synced" (how often it lied) instead of judging the
// subject. A measurement's Fail reads "unsound", and never makes a run red.
func IsMeasurement(name string) bool {
	return strings.HasPrefix(name, NameSyncSoundnessPrefix) || isCost(name)
}

// isCost reports whether name is a measurement of a cost (not of a sync
// definition): it reads "measured", never sound or unsound.
func isCost(name string) bool { return name == NameRetriedConflicts }

// Failed reports whether v is a failed property of the subject: a Fail
// that is not a measurement.
func (v Verdict) Failed() bool {
	return v.Status == Fail && !v.Measurement && !IsMeasurement(v.Invariant)
}

// Label is how the verdict's status reads: pass, fail or unknown for a
// property; sound, unsound or unknown for a measurement.
func (v Verdict) Label() string {
	if isCost(v.Invariant) && v.Status != Unknown {
		return "measured"
	}
	if v.Measurement || IsMeasurement(v.Invariant) {
		switch v.Status {
		case Pass:
			return "sound"
		case Fail:
			return "unsound"
		}
	}
	return string(v.Status)
}

// Tally counts verdicts: properties by status, measurements apart.
type Tally struct {
	// Pass, Fail and Unknown count the properties of the subject; Unknown
	// leaves out the NotApplicable ones (nothing to judge), counted apart.
	Pass, Fail, Unknown, NotApplicable int
	// Sound, Unsound and Unmeasured count the measurements of sync
	// definitions, Costs the cost measurements (retried-conflicts).
	Sound, Unsound, Unmeasured, Costs int
}

// Count tallies vs.
func Count(vs []Verdict) Tally {
	var t Tally
	for _, v := range vs {
		m := v.Measurement || IsMeasurement(v.Invariant)
		switch {
		case isCost(v.Invariant):
			t.Costs++
		case m && v.Status == Pass:
			t.Sound++
		case m && v.Status == Fail:
			t.Unsound++
		case m:
			t.Unmeasured++
		case v.Status == Pass:
			t.Pass++
		case v.Status == Fail:
			t.Fail++
		case v.NotApplicable:
			t.NotApplicable++
		default:
			t.Unknown++
		}
	}
	return t
}

// String reads "10 pass, 0 fail, 1 unknown, 2 n/a; measured: 2 of 4 sync
// definitions unsound" (", N n/a" only when some property had nothing to
// judge).
func (t Tally) String() string {
	s := fmt.Sprintf("%d pass, %d fail, %d unknown", t.Pass, t.Fail, t.Unknown)
	if t.NotApplicable > 0 {
		s += fmt.Sprintf(", %d n/a", t.NotApplicable)
	}
	if n := t.Sound + t.Unsound; n > 0 {
		s += fmt.Sprintf("; measured: %d of %d sync definitions unsound", t.Unsound, n)
	}
	return s
}

// UnknownSummary says, in one line, why the properties in vs that are
// Unknown could not judge, grouped by what the trace lacked: "no
// desired-state record (eventual-convergence, stable-reconciliation); no
// write by the subject (no-lost-updates)". When most properties are
// Unknown it opens with "most invariants could not judge: the trace lacks
// ...". Empty when none is Unknown.
func UnknownSummary(vs []Verdict) string {
	groups := map[string][]string{}
	var order []string
	props, unknowns, allNA := 0, 0, true
	for _, v := range vs {
		if v.Measurement || IsMeasurement(v.Invariant) {
			continue
		}
		props++
		if v.Status != Unknown {
			continue
		}
		unknowns++
		allNA = allNA && v.NotApplicable
		why := v.Short
		if why == "" {
			why = shortReason(v.Reason)
		}
		if _, ok := groups[why]; !ok {
			order = append(order, why)
		}
		groups[why] = append(groups[why], v.Invariant)
	}
	if unknowns == 0 {
		return ""
	}
	parts := make([]string, 0, len(order))
	for _, why := range order {
		parts = append(parts, fmt.Sprintf("%s (%s)", why, strings.Join(groups[why], ", ")))
	}
	s := strings.Join(parts, "; ")
	if 2*unknowns > props {
		lead := "most invariants could not judge, the trace lacks: "
		if allNA {
			lead = "most invariants could not judge, nothing to judge: "
		}
		s = lead + s
	}
	return s
}

// Costs returns the figures of the cost measurements in vs that measured
// something ("3 retried 409s, resolved within 20ms"), for a run line.
func Costs(vs []Verdict) []string {
	var out []string
	for _, v := range vs {
		if isCost(v.Invariant) && v.Status == Pass && v.Short != "" && len(v.Positions) > 0 {
			out = append(out, v.Short)
		}
	}
	return out
}

// shortReason cuts a reason at its first colon or comma: the words before
// are the cause.
func shortReason(r string) string {
	if i := strings.IndexAny(r, ":,("); i > 0 {
		r = r[:i]
	}
	return strings.TrimSpace(r)
}
