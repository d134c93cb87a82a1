package invariants_test

import (
	"testing"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// An invariant about what the subject does, on a run where the subject did
// none of it (it wrote nothing), is Unknown and marked not applicable; an
// Unknown caused by a missing record (no final server state) is not.
func TestAnInvariantTheSubjectGaveNothingToJudgeIsNotApplicable(t *testing.T) {
	tr := &sim.Trace{Plan: &sim.Plan{Subject: "s"}, Outcome: "quiet", Records: []sim.Record{
		{Pos: 0, Kind: sim.RecWrite, Actor: "user", Verb: "create", Resource: "configmaps", Namespace: "default", Name: "a", UID: "u1", RV: 1},
	}}
	vs := invariants.Check(tr)
	byName := map[string]invariants.Verdict{}
	for _, v := range vs {
		byName[v.Invariant] = v
	}
	for _, name := range []string{invariants.NameReadYourWrites, invariants.NameNoLostUpdates, invariants.NameNoDuplicateChildren, invariants.NameFinalizers} {
		if v := byName[name]; v.Status != invariants.Unknown || !v.NotApplicable {
			t.Errorf("%s: %s, not applicable %v (%s); want unknown and not applicable: the subject did nothing it is about", name, v.Status, v.NotApplicable, v.Reason)
		}
	}
	if v := byName[invariants.NameNoLostDeletes]; v.Status != invariants.Unknown || v.NotApplicable {
		t.Errorf("%s: %s, not applicable %v; want unknown for want of a record, not 'not applicable'", invariants.NameNoLostDeletes, v.Status, v.NotApplicable)
	}
}
