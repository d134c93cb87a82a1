package cachelabtest

import (
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// referenceOptions are the comparison's options for a Test's controller.
func (rep *reporter) referenceOptions() invariants.ReferenceOptions {
	return invariants.ReferenceOptions{}
}

// judgeReference adds the matches-reference verdict to r: it runs r's plan
// without faults twice (with run, in a bubble of the caller's), or takes
// the end state of those reference runs from the cache, and compares the
// end states, leaving out every path whose value differs between the two
// fault-free runs (the controller's own nondeterminism).
// Nothing is added when the oracle is off (-cachelab.reference=false), the
// plan has no fault, or the run itself failed (its error says why).
func (rep *reporter) judgeReference(r *lab.Result, run func(*sim.Plan) (*sim.Trace, error)) {
	lab.JudgeReference(r, &rep.refs, rep.referenceOptions(), run)
}
