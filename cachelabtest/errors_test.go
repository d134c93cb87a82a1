package cachelabtest_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// malformed is plan("malformed") with a step the plan format rejects: a
// create that names its object twice (steps[3].name is not used by op
// create).
func malformed() *sim.Plan {
	p := plan("malformed")
	p.Steps[3].Name = "b"
	return p
}

// wrongInputs are calls of Test and Catch that cannot run what they were
// given: each must fail its test with the message matched, never pass and
// never return a caught failure.
var wrongInputs = map[string]struct {
	call func(t *testing.T)
	want string
}{
	"test-malformed-plan": {func(t *testing.T) {
		cachelabtest.Test(t, clientGo("", false), cachelabtest.These(malformed()))
	}, `plan "malformed" cannot run: .*steps\[3\]\.name: not used by op create`},
	"catch-malformed-plan": {func(t *testing.T) {
		if f := cachelabtest.Catch(t, clientGo("", false), cachelabtest.These(malformed())); len(f) != 0 {
			t.Errorf("Catch returned %d caught failures for a plan that cannot run", len(f))
		}
	}, `plan "malformed" cannot run: .*steps\[3\]\.name: not used by op create`},
	"catch-missing-file": {func(t *testing.T) {
		cachelabtest.Catch(t, clientGo("", false), cachelabtest.Files("no-such-plan.json"))
	}, `no-such-plan.json`},
	"catch-unknown-scenario": {func(t *testing.T) {
		cachelabtest.Catch(t, clientGo("", false), cachelabtest.Scenarios("no-such-scenario"))
	}, `no-such-scenario`},
	"these-nil": {func(t *testing.T) {
		cachelabtest.Test(t, clientGo("", false), cachelabtest.These(nil))
	}, `These: plan 1 of 1 is nil`},
	"children-unserved": {func(t *testing.T) {
		cachelabtest.Test(t, clientGo("", false), cachelabtest.Random(cachelabtest.Children("widgets", "%s")))
	}, `Children\("widgets", \.\.\.\): the lab's server does not serve "widgets"`},
	"children-without-%s": {func(t *testing.T) {
		cachelabtest.Catch(t, clientGo("", false), cachelabtest.Random(cachelabtest.Children("secrets", "copy")))
	}, `the name format has no %s`},
	"negative-request-cost": {func(t *testing.T) {
		cachelabtest.Test(t, clientGo("", false), cachelabtest.Random(cachelabtest.RequestCost(-time.Second)))
	}, `RequestCost\(-1s\): a request cannot take negative time`},
	"expect-unknown-invariant": {func(t *testing.T) {
		c := clientGo("", false)
		c.Expect = []cachelabtest.Expectation{{Invariant: "read-your-write", Reason: "retried 409s"}}
		cachelabtest.Catch(t, c, cachelabtest.These(plan("x")))
	}, `Controller.Expect\[0\] \("read-your-write"\): no invariant or health verdict has this name`},
	"manager-options-without-setup": {func(t *testing.T) {
		c := clientGo("", false)
		c.ManagerOptions = func(*manager.Options) {}
		cachelabtest.Test(t, c, cachelabtest.These(plan("x")))
	}, `Controller.ManagerOptions is set without Setup`},
	"expect-without-reason": {func(t *testing.T) {
		c := clientGo("", false)
		c.Expect = []cachelabtest.Expectation{{Invariant: invariants.NameReadYourWrites}}
		cachelabtest.Test(t, c, cachelabtest.These(plan("x")))
	}, `give the Reason`},
	"expect-matching-no-regexp": {func(t *testing.T) {
		c := clientGo("", false)
		c.Expect = []cachelabtest.Expectation{{Invariant: invariants.NameMatchesReference, Reason: "Q4", Matching: "clusterqueues/(a"}}
		cachelabtest.Test(t, c, cachelabtest.These(plan("x")))
	}, `Matching "clusterqueues/\(a" is no regular expression`},
	"expect-matching-twice": {func(t *testing.T) {
		c := clientGo("", false)
		c.Expect = []cachelabtest.Expectation{
			{Invariant: invariants.NameMatchesReference, Reason: "Q4", Matching: "clusterqueues/a"},
			{Invariant: invariants.NameMatchesReference, Reason: "Q4 again", Matching: "clusterqueues/a"},
		}
		cachelabtest.Test(t, c, cachelabtest.These(plan("x")))
	}, `named twice with Matching "clusterqueues/a"`},
}

// TestWrongInputIsAnErrorOfTheTest runs each wrong input in a child
// process (a failed test cannot be observed from inside its own process
// without failing it) and requires it to fail its test with a message
// saying what is wrong; a correct call, run the same way, passes.
func TestWrongInputIsAnErrorOfTheTest(t *testing.T) {
	if os.Getenv("CACHELAB_WRONG_INPUT") != "" {
		t.Skip("in the child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWrongInputChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "CACHELAB_WRONG_INPUT=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child process passed; want each wrong input to fail its test:\n%s", out)
	}
	for name, tc := range wrongInputs {
		if !strings.Contains(string(out), "--- FAIL: TestWrongInputChild/"+name+" ") {
			t.Errorf("%s: did not fail its test", name)
		}
		if !regexp.MustCompile(tc.want).Match(out) {
			t.Errorf("%s: no error matching %q in the output", name, tc.want)
		}
	}
	if !strings.Contains(string(out), "--- PASS: TestWrongInputChild/correct ") {
		t.Errorf("a correct plan did not pass in the child:\n%s", out)
	}
	if t.Failed() {
		t.Logf("child output:\n%s", out)
	}
}

// TestWrongInputChild is TestWrongInputIsAnErrorOfTheTest's child.
func TestWrongInputChild(t *testing.T) {
	if os.Getenv("CACHELAB_WRONG_INPUT") == "" {
		t.Skip("run by TestWrongInputIsAnErrorOfTheTest")
	}
	scratch(t)
	for name, tc := range wrongInputs {
		t.Run(name, tc.call)
	}
	t.Run("correct", func(t *testing.T) {
		cachelabtest.Test(t, clientGo("", false), cachelabtest.These(plan("correct")))
	})
}

// A plan that cannot run is an error in a batch too (the CLI's run and
// campaigns): its result is not OK and says why.
func TestAMalformedPlanInABatchIsAnError(t *testing.T) {
	p := malformed()
	p.Subject = "bellerophon"
	results, _ := lab.RunBatch(lab.TestHost(t), []lab.Job{lab.NewJob(p, nil)}, lab.Options{Sequential: true})
	if len(results) != 1 || results[0].OK() || results[0].Err == nil || !strings.Contains(results[0].Err.Error(), "not used by op create") {
		t.Fatalf("a malformed plan in a batch: %+v, want a result that is not OK, with the plan's error", results[0])
	}
}

// A controller that adds an event handler but never starts its informers
// does nothing: informers-synced fails, saying so; the same controller
// that starts them passes it.
func TestAControllerThatNeverStartsItsInformersFails(t *testing.T) {
	scratch(t)
	idle := func(start bool) cachelabtest.Controller {
		return cachelabtest.Controller{Start: func(ctx context.Context, env *cachelabtest.Env) error {
			inf := env.Informers.Core().V1().ConfigMaps().Informer()
			if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) {}}); err != nil {
				return err
			}
			if start {
				env.Informers.Start(ctx.Done())
			}
			return nil
		}}
	}
	failures := cachelabtest.Catch(t, idle(false), cachelabtest.These(plan("idle")))
	if len(failures) != 1 {
		t.Fatalf("%d failures, want 1", len(failures))
	}
	if v, ok := verdict(failures[0].Failed, lab.HealthSynced); !ok || !strings.Contains(v.Reason, "never started") || !strings.Contains(v.Reason, "configmaps") {
		t.Errorf("informers-synced verdict %+v, want a failure saying the configmaps informer never started", v)
	}
	if failures := cachelabtest.Catch(t, idle(true), cachelabtest.These(plan("started"))); len(failures) != 0 {
		t.Errorf("the controller that starts its informers failed:\n%s", failures[0].Report)
	}
}

// Catch under random plans returns the shrunk failure without failing its
// test, and each call runs its plans once (go test -count=N reruns the
// test, not Catch's plans).
func TestCatchOfRandomPlansDoesNotFailItsTest(t *testing.T) {
	scratch(t)
	failures := cachelabtest.Catch(t, clientGo("a", false), cachelabtest.Random())
	if len(failures) == 0 {
		t.Fatal("random plans did not catch a handler that panics on ConfigMap a")
	}
	last := failures[len(failures)-1]
	if v, ok := verdict(last.Failed, lab.HealthNoPanics); !ok || v.Status != invariants.Fail {
		t.Errorf("the shrunk failure's verdicts %+v, want no-panics failed", last.Failed)
	}
	if t.Failed() {
		t.Error("Catch failed its test")
	}
	var cms []json.RawMessage
	_ = cms
	_ = corev1.ConfigMap{}
}

// pkgDir is the package's folder, where go test starts the binary.
var pkgDir, _ = os.Getwd()

// A relative -cachelab.plan (as the replay command prints it, run from the
// module's root) is the package folder's, even in a test that has changed
// its working directory since.
func TestARelativeReplayPlanIsThePackageFolders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	saved := plan("saved")
	saved.Subject = "bellerophon" // as a saved plan has one; the replay sets the test's
	if err := saved.Save(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rel, err := filepath.Rel(pkgDir, path)
	if err != nil {
		t.Fatal(err)
	}
	// Somewhere else, deeper: rel read from here names no file.
	elsewhere := filepath.Join(t.TempDir(), "a", "b", "c", "d")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(elsewhere)
	if err := flag.Set("cachelab.plan", rel); err != nil {
		t.Fatal(err)
	}
	defer flag.Set("cachelab.plan", "")
	failures := cachelabtest.Catch(t, clientGo("a", false), cachelabtest.These(plan("other")))
	if len(failures) != 1 || failures[0].Plan.Name != "saved" {
		t.Fatalf("%d failures (%v), want the saved plan's, read from %s", len(failures), failures, rel)
	}
}
