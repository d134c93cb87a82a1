package scenarios_test

import (
	"testing"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/reports"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// TestEachMutantsReportMarksTheStepItsBugBreaks runs each Bellerophon
// mutant in the scenario that teaches its bug and checks the record the
// report marks as the first failure: the step the documented bug breaks
// (the handler call that drops a tombstone, the duplicate create), not
// what set it in motion (the user's delete) nor a snapshot taken later.
func TestEachMutantsReportMarksTheStepItsBugBreaks(t *testing.T) {
	for _, tc := range []struct {
		scenario, subject string
		kind              sim.RecordKind // "" when check says
		check             func(r sim.Record) bool
		what              string
	}{
		{"tombstone-not-unwrapped", "bellerophon/tombstone-not-unwrapped", sim.RecHandler, func(r sim.Record) bool { return r.EventType == "DELETED" && r.Tombstone }, "the DELETED handler call with a tombstone it drops"},
		{"delete-recreate-during-gap", "bellerophon/no-uid-check", "", func(r sim.Record) bool {
			return r.Name == "web" && (r.Kind == sim.RecHandler && r.EventType == "MODIFIED" || r.Kind == sim.RecRequest && r.Code == 409)
		}, "the update that hides web's new UID, or its write from the old incarnation's copy (409)"},
		{"duplicate-creates-lagging-cache", "bellerophon/no-expectations", sim.RecWrite, isCreate, "the duplicate create"},
		{"quiescence-restart", "bellerophon/quiescence-synced", sim.RecWrite, isCreate, "the duplicate create"},
		{"store-vs-handler-synced", "bellerophon/informer-synced", sim.RecWrite, isCreate, "the duplicate create"},
		{"unknown-outcome-write", "bellerophon/timeout-as-failure", sim.RecWrite, isCreate, "the duplicate create"},
		{"finalizer-cleanup", "bellerophon/children-under-terminating", sim.RecWrite, isCreate, "the create under a terminating owner"},
		{"finalizer-cleanup", "bellerophon/finalizer-never-removed", sim.RecReconcile, func(r sim.Record) bool { return r.Key == "default/web" }, "the reconcile of the deleted web that leaves its finalizer"},
		{"read-your-writes", "bellerophon/no-read-your-writes", sim.RecRequest, func(r sim.Record) bool { return r.Code == 409 }, "the write from a stale copy that collides (409) with its own"},
		{"conflict-stale-copy", "bellerophon/drops-conflicts", sim.RecReconcile, func(r sim.Record) bool { return r.Op == "end" && r.Result != "ok" }, "the reconcile whose conflict it drops"},
		{"time-travel-stale-replica", "bellerophon/lists-stale-replica", sim.RecHandler, func(r sim.Record) bool { return r.Name == "web" && r.Initial }, "the handler call of the restart's stale initial list that shows web older than before"},
		{"competing-writer", "bellerophon/stale-status", sim.RecWrite, func(r sim.Record) bool { return r.Actor == "bellerophon/stale-status" }, "its write that reverts the competitor's change"},
	} {
		t.Run(tc.subject, func(t *testing.T) {
			t.Parallel()
			s, err := scenarios.Get(tc.scenario)
			if err != nil {
				t.Fatal(err)
			}
			p := s.PlanFor(tc.subject)
			tr, err := sim.Run(t, &p)
			if err != nil {
				t.Fatal(err)
			}
			pos, inv := reports.FirstFailure(tr, invariants.Check(tr))
			if pos < 0 {
				t.Fatalf("no failure marked")
			}
			r := tr.Records[pos]
			if tc.kind != "" && r.Kind != tc.kind || !tc.check(r) {
				r.Object, r.Objects = nil, nil
				t.Errorf("%s marks #%d (%s): %+v; want %s (a %s record)", tc.scenario, pos, inv, r, tc.what, tc.kind)
			}
		})
	}
}

func isCreate(r sim.Record) bool {
	return r.Verb == "create" && r.Actor != "user" && r.Actor != "setup"
}
