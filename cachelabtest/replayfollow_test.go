package cachelabtest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/sim"
)

// A failure replayed with the replay command it printed (-cachelab.plan,
// the run's trace.jsonl beside the plan) says how the replay followed the
// recorded run: in which attempt, and which order the attempts that could
// not follow met. A replay that could not follow it at all says so
// loudly, and a plan without its recorded run says it ran in the
// canonical order: neither reads as a plain failure of the recorded run.
func TestAReplaySaysHowItFollowedTheRecordedRun(t *testing.T) {
	scratch(t)
	bad := clientGo("a", false)
	first := cachelabtest.Catch(t, bad, cachelabtest.These(plan("first")))
	if len(first) != 1 {
		t.Fatalf("%d failures, want 1", len(first))
	}
	if strings.Contains(first[0].Report, "recorded run") {
		t.Errorf("a plain run's failure speaks of a recorded run:\n%s", first[0].Report)
	}
	_, path, _ := strings.Cut(first[0].ReplayCommand, "-cachelab.plan=")
	recorded, err := sim.ReadTraceFile(filepath.Join(filepath.Dir(path), lab.TraceFile))
	if err != nil {
		t.Fatal(err)
	}

	// The replay command: it follows the recorded run (in the first attempt
	// or, where client-go handed the relist of a and a-copy out in another
	// order, a later one).
	setFlag(t, "cachelab.plan", path)
	again := cachelabtest.Catch(t, bad, cachelabtest.These(plan("other")))
	if len(again) != 1 || !strings.Contains(again[0].Report, "this replay: followed the recorded run in attempt ") {
		t.Fatalf("the replay's failure does not say it followed the recorded run: %d failures\n%v", len(again), reports(again))
	}

	// A plan whose schedule names a turn that never comes: every attempt
	// stops there, and the last goes on in the canonical order.
	defer func(n int) { sim.ReplayAttempts = n }(sim.ReplayAttempts)
	sim.ReplayAttempts = 2
	p := plan("unfollowable")
	p.Subject = "bellerophon" // a saved plan has one; the replay sets the test's
	p.Schedule = append([]string{recorded.Schedule[0], "req nobody get configmaps/default/never #1"}, recorded.Schedule[1:]...)
	planFile := filepath.Join(t.TempDir(), "plan.json")
	save(t, p, planFile)
	setFlag(t, "cachelab.plan", planFile)
	lost := cachelabtest.Catch(t, bad, cachelabtest.These(plan("other")))
	if len(lost) != 1 || !strings.Contains(lost[0].Report, "this replay: could NOT follow the recorded run: none of its 2 attempts did (2 met an order the lab should have decided at turn 1)") {
		t.Fatalf("the replay that could not follow does not say so: %d failures\n%v", len(lost), reports(lost))
	}

	// A plan without its recorded run beside it.
	alone := filepath.Join(t.TempDir(), "plan.json")
	p = plan("alone")
	p.Subject = "bellerophon"
	save(t, p, alone)
	setFlag(t, "cachelab.plan", alone)
	canonical := cachelabtest.Catch(t, bad, cachelabtest.These(plan("other")))
	if len(canonical) != 1 || !strings.Contains(canonical[0].Report, "this replay: no recorded run (trace.jsonl) beside the plan: it ran in the canonical order") {
		t.Fatalf("the replay of a plan alone does not say it ran in the canonical order: %d failures\n%v", len(canonical), reports(canonical))
	}
}

func save(t *testing.T, p *sim.Plan, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := p.Save(f); err != nil {
		t.Fatal(err)
	}
}

func reports(fs []*cachelabtest.Failure) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Report)
	}
	return strings.Join(out, "\n---\n")
}
