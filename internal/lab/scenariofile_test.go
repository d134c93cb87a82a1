package lab

import (
	"os"
	"path/filepath"
	"testing"
)

// A plan saved by one test (its subject and the faults aimed at it named
// after that test) and run through Files by another aims those faults at
// the controller that runs it, not at a client that no longer exists.
// Faults aimed at another client stay aimed at it.
func TestAPlanFilesFaultsAimedAtItsSubjectAimAtTheController(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.json")
	plan := `{"version": 1, "name": "p", "seed": 1, "subject": "TestSaved",
  "steps": [
    {"at": "1s", "actor": "faults", "op": "stale-replica", "lag": 2, "for": "3s", "target": "TestSaved"},
    {"at": "1s", "actor": "faults", "op": "stale-replica", "lag": 2, "for": "3s", "target": "subject"},
    {"at": "1s", "actor": "faults", "op": "stale-replica", "lag": 2, "for": "3s", "target": "competitor"},
    {"at": "1s", "actor": "faults", "op": "stale-replica", "lag": 2, "for": "3s"}
  ], "deadline": "1m", "quiet": "10s"}`
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadFile(path, "TestOther")
	if err != nil {
		t.Fatal(err)
	}
	if p.Subject != "TestOther" {
		t.Errorf("subject = %q, want TestOther", p.Subject)
	}
	for i, want := range []string{"TestOther", "TestOther", "competitor", ""} {
		if got := p.Steps[i].Target; got != want {
			t.Errorf("step %d's target = %q, want %q", i, got, want)
		}
	}
}
