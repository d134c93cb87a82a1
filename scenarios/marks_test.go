package scenarios_test

import (
	"strings"
	"testing"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/reports"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// markCases are the mutants whose report marks a step, each in the
// scenario that teaches its bug: the record the mark must be.
var markCases = []struct {
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
	{"read-your-writes", "bellerophon/no-read-your-writes", sim.RecReconcile, func(r sim.Record) bool { return r.Op == "end" && r.Result == "ok" && r.Key == "default/web" }, "the reconcile that judged web's status from a copy older than its own Degraded write, and left it (its 409s are measured, not failures)"},
	{"conflict-stale-copy", "bellerophon/drops-conflicts", sim.RecReconcile, func(r sim.Record) bool { return r.Op == "end" && r.Result != "ok" }, "the reconcile whose conflict it drops"},
	{"competing-writer", "bellerophon/stale-status", sim.RecWrite, func(r sim.Record) bool { return r.Actor == "bellerophon/stale-status" }, "its write that reverts the competitor's change"},
	{"panicking-handler-never-syncs", "informer-realfifo/panicking-handler", sim.RecHandler, func(r sim.Record) bool { return r.EventType == "ADDED" }, "the OnAdd after which its handler is gone (the panic on the poisoned ConfigMap stopped it)"},
	{"relist-is-not-resync", "informer-realfifo/skips-same-rv", sim.RecHandler, isSkippedResync, "the relist's OnUpdate it skips as a resync"},
	{"resync-same-object", "informer-realfifo/skips-same-rv", sim.RecHandler, isSkippedResync, "the resync's OnUpdate it skips"},
	{"too-large-resource-version", "informer-realfifo/ignores-too-large", sim.RecRequest, func(r sim.Record) bool { return r.Code == 504 }, "its reflector's request answered 504 (Too large resource version), which it retries at the same resourceVersion"},
}

// TestEachMutantsReportMarksTheStepItsBugBreaks runs each mutant
// in the scenario that teaches its bug and checks the record the
// report marks as the first failure: the step the documented bug breaks
// (the handler call that drops a tombstone, the duplicate create), not
// what set it in motion (the user's delete) nor a snapshot taken later.
func TestEachMutantsReportMarksTheStepItsBugBreaks(t *testing.T) {
	for _, tc := range markCases {
		t.Run(tc.scenario+"/"+tc.subject, func(t *testing.T) {
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

// Every mutant is in the test above, or here with the reason its
// scenarios mark nothing: a mutant whose documented behaviour breaks no
// invariant in the scenario that shows it (a variant the story contrasts
// with the real path). For those the test checks that no property fails.
var unmarkedMutants = map[string]struct{ scenario, why string }{
	"informer-realfifo/no-watchlist":    {"changes-between-list-and-watch", "LIST then watch is a supported path: its story shows it loses nothing"},
	"informer-realfifo/sources-only":    {"relist-is-not-resync", "a relist (or resync) repairs what it ignores: its story shows the repair"},
	"informer-realfifo/lastsync-rv":     {"lastsync-rv-is-not-sync", "its story measures a definition of synced (sync-soundness/lastsync-rv: unsound), which is not a failure of the run"},
	"bellerophon/lists-stale-replica":   {"time-travel-stale-replica", "its story shows the time travel (its lists from the replica, six revisions behind, in claims; per-object-order's pass counts the RV going down across the restart) and the restarted caches' unsound sync measurements; its status write from the stale copy collides with its own last write (a 409, measured) and is retried from a fresh read, so read-your-writes passes: its harm, duplicate children, shows under targeted stale-state plans (docs/targeted-faults.md)"},
	"informer-realfifo/list-without-rv": {"synthetic-adds-out-of-order", "the synthetic ADDED replayed by its re-watch from \"\" makes it create a mirror it already made: a 409 AlreadyExists it retries, measured (retried-conflicts), not a failure (issue 27)"},
}

// TestEveryMutantsMarkIsTested fails when a registered mutant is neither
// in markCases nor in unmarkedMutants, or when an unmarked one fails a
// property after all.
func TestEveryMutantsMarkIsTested(t *testing.T) {
	marked := map[string]bool{}
	for _, tc := range markCases {
		marked[tc.subject] = true
	}
	for _, info := range sim.Subjects() {
		if _, ok := unmarkedMutants[info.Name]; info.Mutant && !marked[info.Name] && !ok {
			t.Errorf("mutant %s is not in markCases: add the record its report must mark", info.Name)
		}
	}
	for name, u := range unmarkedMutants {
		t.Run(name, func(t *testing.T) {
			s, err := scenarios.Get(u.scenario)
			if err != nil {
				t.Fatal(err)
			}
			p := s.PlanFor(name)
			tr, err := sim.Run(t, &p)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range invariants.Check(tr) {
				if v.Failed() && !invariants.IsMeasurement(v.Invariant) {
					t.Errorf("%s fails %s in %s: add the record its report must mark to markCases (listed as unmarked because %s)", name, v.Invariant, u.scenario, u.why)
				}
			}
		})
	}
}

func isSkippedResync(r sim.Record) bool { return strings.Contains(r.Detail, "skipped as a resync") }

func isCreate(r sim.Record) bool {
	return r.Verb == "create" && r.Actor != "user" && r.Actor != "setup"
}
