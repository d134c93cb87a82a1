package invariants_test

import (
	"testing"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

func TestAllListsEveryInvariantOnceWithASummaryAndAContract(t *testing.T) {
	seen := map[string]bool{}
	for _, inv := range invariants.All() {
		if seen[inv.Name] {
			t.Fatalf("invariant %q listed twice", inv.Name)
		}
		seen[inv.Name] = true
		if inv.Summary == "" || inv.Contract == "" {
			t.Fatalf("invariant %q lacks a summary or a contract", inv.Name)
		}
		if got, ok := invariants.Lookup(inv.Name); !ok || got.Name != inv.Name {
			t.Fatalf("Lookup(%q) = %v, %v", inv.Name, got.Name, ok)
		}
	}
	for _, name := range []string{invariants.NameEventualConvergence, invariants.NameStableReconciliation,
		invariants.NamePerObjectOrder, invariants.NameDeleteRecreate, invariants.NameNoLostDeletes,
		invariants.NameNoDuplicateChildren, invariants.NameNoLostUpdates, invariants.NameFinalizers, invariants.NameReadYourWrites,
		invariants.NameNoStaleHarm, invariants.NameRetriedConflicts,
		"sync-soundness/informer-synced", "sync-soundness/handler-synced", "sync-soundness/quiescence-synced",
		"sync-soundness/rv-synced", "sync-soundness/desired"} {
		if !seen[name] {
			t.Fatalf("All() lacks %q", name)
		}
	}
	if _, ok := invariants.Lookup("no-such-invariant"); ok {
		t.Fatal("Lookup of an unknown name succeeded")
	}
}

func TestCheckReturnsOneVerdictPerInvariantInOrder(t *testing.T) {
	tr := newHealthyRun().end().Trace("quiet")
	vs := invariants.Check(tr)
	all := invariants.All()
	if len(vs) != len(all) {
		t.Fatalf("%d verdicts for %d invariants", len(vs), len(all))
	}
	for i, v := range vs {
		if v.Invariant != all[i].Name {
			t.Fatalf("verdict %d is %q, want %q", i, v.Invariant, all[i].Name)
		}
		// desired == actual flips before the subject's own last writes come
		// back through its watch: that signal is unsound even here (a
		// finding about the signal, not the subject).
		if v.Status == invariants.Fail && v.Invariant != "sync-soundness/desired" {
			t.Fatalf("the healthy run fails %s: %s", v.Invariant, v.Reason)
		}
	}
}

func TestEmptyOrNilTraceIsUnknownForEveryInvariant(t *testing.T) {
	for _, tr := range []*sim.Trace{nil, {}} {
		for _, v := range invariants.Check(tr) {
			if v.Status != invariants.Unknown || v.Reason == "" {
				t.Fatalf("%s on an empty trace: %s (%q), want unknown with a reason", v.Invariant, v.Status, v.Reason)
			}
		}
	}
}

func TestChecksDoNotPanicOnRecordsMissingFields(t *testing.T) {
	// A trace with malformed objects and missing keys: every check must
	// answer, never panic.
	tr := &sim.Trace{Outcome: "quiet", Records: []sim.Record{
		{Pos: 0, Kind: sim.RecWrite, Actor: "ctrl", Verb: "create", Resource: "pods", Name: "a", UID: "u", Owner: "nobody", Object: []byte("{not json")},
		{Pos: 1, Kind: sim.RecHandler, Actor: "ctrl", EventType: "DELETED", Tombstone: true},
		{Pos: 2, Kind: sim.RecSignal, Actor: "ctrl", Signal: "informer-synced", Value: true},
		{Pos: 3, Kind: sim.RecWrite, Actor: "ctrl", Verb: "update", Resource: "pods", Name: "a", UID: "u", Object: []byte("[]")},
		{Pos: 7, Kind: sim.RecFinal},
		{Pos: 5, Kind: sim.RecDesired, Value: true},
	}}
	for _, v := range invariants.Check(tr) {
		if v.Reason == "" {
			t.Fatalf("%s: no reason", v.Invariant)
		}
	}
	invariants.SyncSoundness(tr)
}
