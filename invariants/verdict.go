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
	// Measurement is true for a verdict that measures a definition of
	// "synced" (sync-soundness/...) rather than judging the subject: its
	// Fail means "this definition claimed sync too early" (unsound), never
	// that the run failed. See IsMeasurement.
	Measurement bool `json:"measurement,omitempty"`
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
func IsMeasurement(name string) bool { return strings.HasPrefix(name, NameSyncSoundnessPrefix) }

// Failed reports whether v is a failed property of the subject: a Fail
// that is not a measurement.
func (v Verdict) Failed() bool {
	return v.Status == Fail && !v.Measurement && !IsMeasurement(v.Invariant)
}

// Label is how the verdict's status reads: pass, fail or unknown for a
// property; sound, unsound or unknown for a measurement.
func (v Verdict) Label() string {
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
	// Pass, Fail and Unknown count the properties of the subject.
	Pass, Fail, Unknown int
	// Sound, Unsound and Unmeasured count the measurements.
	Sound, Unsound, Unmeasured int
}

// Count tallies vs.
func Count(vs []Verdict) Tally {
	var t Tally
	for _, v := range vs {
		m := v.Measurement || IsMeasurement(v.Invariant)
		switch {
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
		default:
			t.Unknown++
		}
	}
	return t
}

// String reads "10 pass, 0 fail, 1 unknown; measured: 2 of 4 sync
// definitions unsound".
func (t Tally) String() string {
	s := fmt.Sprintf("%d pass, %d fail, %d unknown", t.Pass, t.Fail, t.Unknown)
	if n := t.Sound + t.Unsound; n > 0 {
		s += fmt.Sprintf("; measured: %d of %d sync definitions unsound", t.Unsound, n)
	}
	return s
}
