package lab

import (
	"regexp"
	"slices"
	"sort"
	"sync"

	"github.com/cachelab/cachelab/invariants"
)

// The failures a controller's team accepts on purpose
// (cachelabtest.Controller.Expect), by subject: every run of the subject
// in this process (Test's, the CLI's run lines, index and reports) shows
// such a failure as expected, with its reason; it is never a pass, nor an
// unexpected failure.
var accepted = struct {
	sync.Mutex
	bySubject map[string][]Acceptance
}{bySubject: map[string][]Acceptance{}}

// Acceptance is one failure a controller's team accepts
// (cachelabtest.Expectation): a failure of Invariant, and when Match is
// set only one whose reason or detail (a matches-reference diff) Match
// finds; Reason is why, shown beside it.
type Acceptance struct {
	Invariant, Reason string
	Match             *regexp.Regexp
}

// Accepts reports whether v is a failure a accepts.
func (a Acceptance) Accepts(v invariants.Verdict) bool {
	return v.Invariant == a.Invariant && v.Failed() &&
		(a.Match == nil || a.Match.MatchString(v.Reason) || a.Match.MatchString(v.Detail))
}

// AcceptanceOf returns the first of acc that accepts failure v, if one
// does.
func AcceptanceOf(acc []Acceptance, v invariants.Verdict) (Acceptance, bool) {
	for _, a := range acc {
		if a.Accepts(v) {
			return a, true
		}
	}
	return Acceptance{}, false
}

// AcceptedIn returns the failures of vs that acc accepts: invariant ->
// the reason of the first acceptance that accepts it (nil: none).
func AcceptedIn(acc []Acceptance, vs []invariants.Verdict) map[string]string {
	var out map[string]string
	for _, v := range vs {
		if a, ok := AcceptanceOf(acc, v); ok {
			if out == nil {
				out = map[string]string{}
			}
			out[v.Invariant] = a.Reason
		}
	}
	return out
}

// SetAccepted records the failures subject's team accepts. None clears
// them.
func SetAccepted(subject string, acc []Acceptance) {
	accepted.Lock()
	defer accepted.Unlock()
	if len(acc) == 0 {
		delete(accepted.bySubject, subject)
		return
	}
	accepted.bySubject[subject] = slices.Clone(acc)
}

// AcceptedFor returns the failures subject's team accepts (nil: none).
func AcceptedFor(subject string) []Acceptance {
	accepted.Lock()
	defer accepted.Unlock()
	return slices.Clone(accepted.bySubject[subject])
}

// acceptedFailures returns r's failed properties that its subject's team
// accepts, by invariant, with the reason; nil for a scenario's run (its
// expectations judge it).
func (r *Result) acceptedFailures() map[string]string {
	if r.Judged() || r.Job.Plan == nil {
		return nil
	}
	return AcceptedIn(AcceptedFor(r.Job.Plan.Subject), r.Verdicts)
}

// AcceptedFailures returns, sorted, the failed properties of r that its
// subject's team accepts (SetAccepted), each as "invariant (Controller.Expect:
// reason)".
func (r *Result) AcceptedFailures() []string {
	acc := r.acceptedFailures()
	out := make([]string, 0, len(acc))
	for inv, why := range acc {
		out = append(out, inv+" (Controller.Expect: "+why+")")
	}
	sort.Strings(out)
	return out
}

// The subjects the command judges as cachelabtest.Test judges them: the
// controllers cachelabtest.Register registers.
var judgedAsTest sync.Map // subject -> struct{}

// SetJudgedAsTest makes every run of subject in this process's batches
// (RunBatch: `cachelab run`, replay, hunt...) judged as cachelabtest.Test
// judges a controller: the health verdicts (informers-synced, no-panics,
// reconciles-return) and, for a plan with faults, the differential oracle
// matches-reference join the invariants. off makes it judged by the
// invariants alone, as the lab's own subjects are.
func SetJudgedAsTest(subject string, on bool) {
	if on {
		judgedAsTest.Store(subject, struct{}{})
	} else {
		judgedAsTest.Delete(subject)
	}
}

// JudgedAsTestSubjects returns the subjects SetJudgedAsTest is on for
// (the controllers cachelabtest.Register registered), sorted.
func JudgedAsTestSubjects() []string {
	var out []string
	judgedAsTest.Range(func(k, _ any) bool {
		out = append(out, k.(string))
		return true
	})
	slices.Sort(out)
	return out
}

// judgedAsTestFor reports whether SetJudgedAsTest is on for subject.
func judgedAsTestFor(subject string) bool {
	_, ok := judgedAsTest.Load(subject)
	return ok
}
