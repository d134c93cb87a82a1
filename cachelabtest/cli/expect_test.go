package cli

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/invariants"
)

// A controller registered for the command with cachelabtest.Register: a
// failure its Expect accepts shows in the run line as an expected fail,
// with the reason, and the run is as expected (exit 0); without the Expect
// the same run is a plain failure (FAIL, exit 1). Never a pass.
func TestTheRunLineShowsAFailureTheControllerExpectsAsExpected(t *testing.T) {
	never := func(*cachelabtest.State) error { return errors.New("never the state the team wants") }
	c := cachelabtest.Controller{
		Name:    "lab-test/expects",
		Start:   func(context.Context, *cachelabtest.Env) error { return nil },
		Desired: never,
	}
	t.Cleanup(func() { lab.SetAccepted(c.Name, nil) })

	if err := cachelabtest.Register(c); err != nil {
		t.Fatal(err)
	}
	code, stdout, errs := run(t, "run", "--random", "1", "--seed", "3", "--subject", c.Name, "--out", "")
	if code != ExitUnexpected || !strings.Contains(stdout, "FAIL  random-3") || !strings.Contains(stdout, "unexpected: "+invariants.NameEventualConvergence) {
		t.Fatalf("without Expect: exit %d, want %d and a FAIL line naming eventual-convergence:\n%s%s", code, ExitUnexpected, stdout, errs)
	}

	c.Expect = []cachelabtest.Expectation{{Invariant: invariants.NameEventualConvergence, Reason: "the predicate never holds, on purpose"}}
	if err := cachelabtest.Register(c); err != nil {
		t.Fatal(err)
	}
	code, stdout, errs = run(t, "run", "--random", "1", "--seed", "3", "--subject", c.Name, "--out", "")
	t.Log(stdout)
	want := "1 expected fail, "
	accepted := "expected fail: eventual-convergence (Controller.Expect: the predicate never holds, on purpose)"
	if code != ExitOK || !strings.Contains(stdout, "ok    random-3") || !strings.Contains(stdout, want) || !strings.Contains(stdout, accepted) {
		t.Errorf("with Expect: exit %d, want %d and an ok line with %q and %q:\n%s%s", code, ExitOK, want, accepted, stdout, errs)
	}
	if strings.Contains(stdout, "unexpected: "+invariants.NameEventualConvergence) {
		t.Errorf("the accepted failure is still shown as unexpected:\n%s", stdout)
	}

	c.Name = ""
	if err := cachelabtest.Register(c); err == nil {
		t.Error("Register of a Controller with no Name: no error")
	}
	c.Name = "lab-test/expects"
	c.Expect = []cachelabtest.Expectation{{Invariant: "eventual-convergense", Reason: "typo"}}
	if err := cachelabtest.Register(c); err == nil || !strings.Contains(err.Error(), "did you mean eventual-convergence") {
		t.Errorf("Register with an Expect naming no invariant: %v, want an error suggesting eventual-convergence", err)
	}
}
