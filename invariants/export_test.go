package invariants

import "github.com/cachelab/cachelab/sim"

// JudgeReadYourWrites is read-your-writes with its work count: naive
// looks at every own write for each write judged (the check's first,
// quadratic form), budget bounds the candidates looked at.
func JudgeReadYourWrites(tr *sim.Trace, naive bool, budget int) (Verdict, int) {
	return judgeReadYourWrites(tr, naive, budget, Options{})
}

// JudgeFinalizers is finalizers with its work count (removed objects its
// handler calls looked at).
func JudgeFinalizers(tr *sim.Trace) (Verdict, int) { return judgeFinalizers(tr, DefaultOptions()) }

// ReadYourWritesBudget is the budget read-your-writes runs with.
const ReadYourWritesBudget = readYourWritesBudget
