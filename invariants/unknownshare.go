package invariants

import (
	"fmt"
	"sort"
	"strings"
)

// UnknownShare counts, over the runs of a campaign, the property verdicts
// that could not judge, apart by kind: Unknown for want of a record (what
// the lab could record and did not), and not applicable (the subject did
// nothing the invariant is about: nothing to judge). Measurements are not
// counted. The zero value is ready to use; Add each run's verdicts.
type UnknownShare struct {
	// Runs counts the runs added.
	Runs int
	// Properties counts the property verdicts added.
	Properties int
	// Unknown counts the Unknown properties that are not NotApplicable.
	Unknown int
	// NotApplicable counts the Unknown properties with nothing to judge.
	NotApplicable int
	reasons       map[reasonKey]*ReasonCount
}

type reasonKey struct {
	why string
	na  bool
}

// ReasonCount is one reason for which properties could not judge.
type ReasonCount struct {
	// Why is the reason's few words (Verdict.Short, or the reason's cause).
	Why string
	// NotApplicable is true for a reason with nothing to judge.
	NotApplicable bool
	// Verdicts counts the verdicts with this reason.
	Verdicts int
	// Invariants are the invariants that gave it, sorted.
	Invariants []string
}

// Add counts the verdicts of one run.
func (s *UnknownShare) Add(vs []Verdict) {
	s.Runs++
	for _, v := range vs {
		if v.Measurement || IsMeasurement(v.Invariant) {
			continue
		}
		s.Properties++
		if v.Status != Unknown {
			continue
		}
		if v.NotApplicable {
			s.NotApplicable++
		} else {
			s.Unknown++
		}
		why := v.Short
		if why == "" {
			why = shortReason(v.Reason)
		}
		k := reasonKey{why, v.NotApplicable}
		if s.reasons == nil {
			s.reasons = map[reasonKey]*ReasonCount{}
		}
		rc := s.reasons[k]
		if rc == nil {
			rc = &ReasonCount{Why: why, NotApplicable: v.NotApplicable}
			s.reasons[k] = rc
		}
		rc.Verdicts++
		if i := sort.SearchStrings(rc.Invariants, v.Invariant); i == len(rc.Invariants) || rc.Invariants[i] != v.Invariant {
			rc.Invariants = append(rc.Invariants, "")
			copy(rc.Invariants[i+1:], rc.Invariants[i:])
			rc.Invariants[i] = v.Invariant
		}
	}
}

// Top returns at most n reasons, the most frequent first (Unknown before
// not applicable at equal counts, then by reason); n <= 0 returns all.
func (s *UnknownShare) Top(n int) []ReasonCount {
	out := make([]ReasonCount, 0, len(s.reasons))
	for _, rc := range s.reasons {
		out = append(out, *rc)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Verdicts != b.Verdicts {
			return a.Verdicts > b.Verdicts
		}
		if a.NotApplicable != b.NotApplicable {
			return !a.NotApplicable
		}
		return a.Why < b.Why
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

// String reads "of 2000 property verdicts in 200 runs, 3 unknown (0.2%),
// 156 n/a (7.8%); unknown: 3 no desired-state record (eventual-convergence);
// n/a: 133 no object was ever written ... (7 invariants)", with at most the
// three top reasons of each kind; "" when nothing was added.
func (s *UnknownShare) String() string {
	if s.Properties == 0 {
		return ""
	}
	pct := func(n int) string { return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(s.Properties)) }
	out := fmt.Sprintf("of %d property verdicts in %d runs, %d unknown (%s), %d n/a (%s)",
		s.Properties, s.Runs, s.Unknown, pct(s.Unknown), s.NotApplicable, pct(s.NotApplicable))
	for _, na := range []bool{false, true} {
		var parts []string
		for _, rc := range s.Top(0) {
			if rc.NotApplicable != na || len(parts) == 3 {
				continue
			}
			invs := strings.Join(rc.Invariants, ", ")
			if len(rc.Invariants) > 3 {
				invs = fmt.Sprintf("%d invariants", len(rc.Invariants))
			}
			parts = append(parts, fmt.Sprintf("%d %s (%s)", rc.Verdicts, rc.Why, invs))
		}
		if len(parts) == 0 {
			continue
		}
		label := "unknown"
		if na {
			label = "n/a"
		}
		out += "; " + label + ": " + strings.Join(parts, "; ")
	}
	return out
}
