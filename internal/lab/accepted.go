package lab

import (
	"maps"
	"slices"
	"sort"
	"sync"
)

// The failures a controller's team accepts on purpose
// (cachelabtest.Controller.Expect), by subject: every run of the subject
// in this process (Test's, the CLI's run lines, index and reports) shows
// such a failure as expected, with its reason; it is never a pass, nor an
// unexpected failure.
var accepted = struct {
	sync.Mutex
	bySubject map[string]map[string]string
}{bySubject: map[string]map[string]string{}}

// SetAccepted records the failures subject's team accepts: invariant ->
// reason. An empty map clears them.
func SetAccepted(subject string, byInvariant map[string]string) {
	accepted.Lock()
	defer accepted.Unlock()
	if len(byInvariant) == 0 {
		delete(accepted.bySubject, subject)
		return
	}
	accepted.bySubject[subject] = maps.Clone(byInvariant)
}

// AcceptedFor returns the failures subject's team accepts (nil: none).
func AcceptedFor(subject string) map[string]string {
	accepted.Lock()
	defer accepted.Unlock()
	return maps.Clone(accepted.bySubject[subject])
}

// acceptedFailures returns r's failed properties that its subject's team
// accepts, by invariant, with the reason; nil for a scenario's run (its
// expectations judge it).
func (r *Result) acceptedFailures() map[string]string {
	if r.Judged() || r.Job.Plan == nil {
		return nil
	}
	acc := AcceptedFor(r.Job.Plan.Subject)
	if len(acc) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, v := range r.Verdicts {
		if why, ok := acc[v.Invariant]; ok && v.Failed() {
			out[v.Invariant] = why
		}
	}
	return out
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
