package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// A registered controller is judged by `cachelab replay --repeat` as the
// recorded run was: a recorded run that failed matches-reference alone (a
// controller that copies a ConfigMap when it is added and never when it
// changes, crashed and restarted after the change: the reference, with no
// crash, copies the change; the run does not) is reproduced as that
// failure, and a controller that copies every change passes its replays.
// Before, the replays were judged by the trace invariants alone, so the
// recorded failure read "reproduced the failed set {}".
func TestReplayJudgesARegisteredControllersRunAsTheRecordedRunWasJudged(t *testing.T) {
	dir := t.TempDir()
	planFile := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(planFile, []byte(`{"version":1,"name":"change-then-restart","seed":1,"subject":"bellerophon",
 "objects":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"n":"0"}}],
 "steps":[{"at":"1s","actor":"user","op":"patch","resource":"configmaps","namespace":"default","name":"a","patch":{"data":{"n":"1"}}},
  {"at":"2s","actor":"controller","op":"crash"},{"at":"3s","actor":"controller","op":"restart"}],
 "deadline":"2m","quiet":"20s"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		onUpdate bool
		failed   string
	}{
		{"lab-test/replay-copy-on-add", false, invariants.NameMatchesReference},
		{"lab-test/replay-copy-on-change", true, ""},
	} {
		t.Cleanup(func() { lab.SetAccepted(c.name, nil) })
		if err := cachelabtest.Register(cachelabtest.Controller{Name: c.name, Start: copyOnAdd(c.onUpdate)}); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out-"+lab.Safe(c.name))
		code, stdout, errs := run(t, "run", planFile, "--subject", c.name, "--out", out)
		if want := map[bool]int{true: ExitOK, false: ExitUnexpected}[c.failed == ""]; code != want {
			t.Fatalf("%s: run exited %d, want %d:\n%s%s", c.name, code, want, stdout, errs)
		}
		saved := filepath.Join(out, "change-then-restart", lab.Safe(c.name), lab.PlanFile)
		in, err := lab.LoadInput(saved)
		if err != nil || in.Recorded == nil {
			t.Fatalf("%s: the run's files: %v (recorded run read: %t)", c.name, err, err == nil && in.Recorded != nil)
		}
		// The recorded run failed matches-reference alone: no trace
		// invariant tells it.
		if f := lab.FailedInvariants(lab.CheckTrace(in.Recorded)); len(f) != 0 {
			t.Fatalf("%s: the recorded trace fails %v by the invariants alone; this test needs a run that fails matches-reference only", c.name, f)
		}
		rep, _, err := lab.Reproduce(lab.TestHost(t), in, 2)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := strings.Join(rep.Failed, ","); got != c.failed || !rep.Reproduced() {
			t.Errorf("%s: recorded failed set {%s}, want {%s}; reproduced %d of %d: %s", c.name, got, c.failed, rep.SameFailed, rep.Runs, rep)
		}
		// Without the saved verdicts beside the trace, the recorded run's
		// matches-reference is judged again: the same failed set.
		if err := os.Rename(filepath.Join(filepath.Dir(saved), lab.VerdictsFile), filepath.Join(dir, "verdicts-"+lab.Safe(c.name)+".json")); err != nil {
			t.Fatal(err)
		}
		rep, _, err = lab.Reproduce(lab.TestHost(t), in, 1)
		if got := strings.Join(rep.Failed, ","); err != nil || got != c.failed || !rep.Reproduced() {
			t.Errorf("%s, no verdicts.json: recorded failed set {%s}, want {%s}; reproduced %d of %d: %s (%v)", c.name, got, c.failed, rep.SameFailed, rep.Runs, rep, err)
		}
		code, stdout, errs = run(t, "replay", "--repeat", "2", saved)
		// Each replay says how it followed the recorded run.
		for _, want := range []string{"replay 1: followed the recorded run in attempt ", "replay 2: followed the recorded run in attempt "} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s: cachelab replay --repeat 2 does not say %q:\n%s%s", c.name, want, stdout, errs)
			}
		}
		if want := "reproduced the failed set {" + map[bool]string{true: "none", false: c.failed}[c.failed == ""] + "} in 2/2"; !strings.Contains(stdout, want) {
			t.Errorf("%s: cachelab replay --repeat 2 does not say %q (exit %d):\n%s%s", c.name, want, code, stdout, errs)
		}
	}
}

// `cachelab replay` of a plan whose schedule cannot be followed (it names
// a turn that never comes) says so, and that its verdicts judge another
// interleaving; a plan without a schedule or a recorded run says it ran in
// the canonical order.
func TestReplaySaysWhenItCouldNotFollowTheRecordedRun(t *testing.T) {
	defer func(n int) { sim.ReplayAttempts = n }(sim.ReplayAttempts)
	sim.ReplayAttempts = 2
	dir := t.TempDir()
	write := func(name, schedule string) string {
		path := filepath.Join(dir, name, "plan.json")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(`{"version":1,"name":"`+name+`","seed":1,"subject":"bellerophon",
 "objects":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"n":"0"}}],
 "steps":[{"at":"1s","actor":"user","op":"patch","resource":"configmaps","namespace":"default","name":"a","patch":{"data":{"n":"1"}}}],
 `+schedule+`"deadline":"1m","quiet":"10s"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	_, stdout, errs := run(t, "replay", write("unfollowable", `"schedule":["req nobody get configmaps/default/never #1"],`))
	if want := "this replay: could NOT follow the recorded run: none of its 2 attempts did (2 met an order the lab should have decided"; !strings.Contains(stdout, want) {
		t.Errorf("the replay does not say %q:\n%s%s", want, stdout, errs)
	}
	_, stdout, errs = run(t, "replay", write("alone", ""))
	if want := "this replay: no recorded run (trace.jsonl) beside the plan: it ran in the canonical order"; !strings.Contains(stdout, want) {
		t.Errorf("the replay does not say %q:\n%s%s", want, stdout, errs)
	}
}
