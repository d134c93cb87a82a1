package invariants

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
}
