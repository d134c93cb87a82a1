package replicaset_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/replicaset"
)

// plan129795 reads findings/129795-expectations-expire.json for subject:
// kubernetes/kubernetes#129795, the ReplicaSet controller's Pod watch
// delayed past its expectations' timeout. A ReplicaSet of 2 is created at
// 1 s while the controller's Pod watch is held for 6 minutes: it creates
// 2 Pods and expects 2 creations it cannot observe. At 5 m 30 s the user
// touches the ReplicaSet (an annotation), which queues a sync. The
// expectations are 5 m 29 s old, past ExpectationsTimeout (5 minutes):
// SatisfiedExpectations returns true for an expired record, the Pod cache
// still shows no Pod, and manageReplicas creates 2 more.
func plan129795(t *testing.T, subject string) *sim.Plan {
	t.Helper()
	b, err := os.ReadFile("findings/129795-expectations-expire.json")
	if err != nil {
		t.Fatal(err)
	}
	var p sim.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	p.Subject = subject
	p.Name += "-" + strings.TrimPrefix(subject, "upstream/")
	for i := range p.Steps {
		if p.Steps[i].Target != "" {
			p.Steps[i].Target = subject
		}
	}
	return &p
}

// TestIssue129795ExpiredExpectationsOverCreate replays #129795 with the
// KEP-5647 gate off (v1.35 and before: the controller over-creates,
// no-duplicate-children fails) and on (v1.36+ default: the sync waits for
// the Pod informer to reach the resourceVersion of the controller's own
// Pod creates, so it creates nothing more and the invariant passes). If
// either side changes, the test fails so that
// docs/upstream-findings/129795.md is updated.
func TestIssue129795ExpiredExpectationsOverCreate(t *testing.T) {
	for _, gate := range []bool{false, true} {
		c := replicaset.Controller(gate)
		var failed []string
		for _, f := range cachelabtest.Catch(t, c, cachelabtest.These(plan129795(t, c.Name))) {
			for _, v := range f.Failed {
				failed = append(failed, v.Invariant)
			}
			t.Logf("%s:\n%s", c.Name, f.Report)
		}
		if got, want := slices.Contains(failed, "no-duplicate-children"), !gate; got != want {
			t.Errorf("%s: no-duplicate-children failed = %t (failed: %v), want %t", c.Name, got, failed, want)
		}
	}
}
