package lab_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// interleavedWorkload is one Bellerophon scaled 1 -> 2, with a user step
// that fails in every run (a patch of a Bellerophon that does not exist).
func interleavedWorkload(subject string) *sim.Plan {
	at := func(d time.Duration) sim.Duration { return sim.Duration(d) }
	return &sim.Plan{Version: sim.PlanVersion, Name: "interleaved", Seed: 5, Subject: subject,
		Objects:  []json.RawMessage{json.RawMessage(`{"apiVersion":"lab.cachelab.dev/v1alpha1","kind":"Bellerophon","metadata":{"name":"a","namespace":"default"},"spec":{"replicas":1,"version":"v1"}}`)},
		Kubelet:  &sim.Kubelet{ReadyAfter: at(time.Second)},
		Faults:   sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: at(20 * time.Millisecond)}},
		Deadline: at(time.Minute),
		Steps: []sim.Step{
			{At: at(500 * time.Millisecond), Actor: "user", Op: "patch", Resource: "bellerophons", Namespace: "default", Name: "ghost", Patch: json.RawMessage(`{"spec":{"replicas":2}}`)},
			{At: at(3 * time.Second), Actor: "user", Op: "patch", Resource: "bellerophons", Namespace: "default", Name: "a", Patch: json.RawMessage(`{"spec":{"replicas":2}}`)},
		}}
}

// An interleaved-writer plan adds a competitor's write to the workload: its
// reference must have that write too. With a workload step that fails in
// every run (left out of the targeted plan's reference), the reference plan
// had as many steps as the workload's and hunt took the workload's
// reference run (no competitor label): the correct Bellerophon failed
// matches-reference. It passes every plan now; the planted stale-status
// (a status merge patch from its cached copy) fails one. (drops-conflicts
// passes this workload: a later event brings its dropped key back.)
func TestHuntInterleavedWriterJudgesAgainstAReferenceWithTheCompetitorsWrite(t *testing.T) {
	for _, c := range []struct {
		subject  string
		wantFail bool
	}{
		{"bellerophon", false},
		{"bellerophon/stale-status", true},
	} {
		t.Run(c.subject, func(t *testing.T) {
			rep, err := lab.HuntPlans(lab.TestHost(t), []*sim.Plan{interleavedWorkload(c.subject)},
				lab.HuntOptions{Parallel: 1, Classes: []string{scenarios.ClassInterleaved}})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Rows) == 0 {
				t.Fatalf("no interleaved-writer plan generated (pruned: %+v)", rep.Pruned)
			}
			failed := rep.Failures()
			for _, r := range failed {
				t.Logf("#%d %s: %s %v %v", r.Index, r.Perturbation, r.Verdict, r.Reasons, r.Err)
			}
			if got := len(failed) > 0; got != c.wantFail {
				t.Errorf("%d of %d plans failed, want failures: %v", len(failed), len(rep.Rows), c.wantFail)
			}
		})
	}
}

// The lifecycle workloads of a mutant are its base subject's catalogue
// stories with a user delete, planned for the mutant; a subject no scenario
// names has none.
func TestLifecycleWorkloadsAreTheCataloguesStoriesWithADelete(t *testing.T) {
	ws, err := lab.LifecycleWorkloads("bellerophon/finalizer-never-removed")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range ws {
		names = append(names, w.Name)
		if w.Subject != "bellerophon/finalizer-never-removed" {
			t.Errorf("%s: subject %q", w.Name, w.Subject)
		}
		deletes := false
		for _, s := range w.Steps {
			deletes = deletes || (s.Actor == "user" && s.Op == "delete")
		}
		if !deletes {
			t.Errorf("%s: no user delete", w.Name)
		}
	}
	if !slices.Contains(names, "finalizer-cleanup") {
		t.Errorf("lifecycle workloads %v: want finalizer-cleanup (a Bellerophon deleted and left to its finalizer)", names)
	}
	if slices.Contains(names, "competing-writer") {
		t.Errorf("lifecycle workloads %v: competing-writer deletes nothing", names)
	}
	if ws, err := lab.LifecycleWorkloads("no-such-subject"); err != nil || len(ws) != 0 {
		t.Errorf("no-such-subject: %d workloads, %v; want none", len(ws), err)
	}
}
