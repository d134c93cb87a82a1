package cachelabtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/cachelab/cachelab/cachelabtest"
)

// A controller whose Start (or Setup) fails after leaving a goroutine
// blocked: the run's verdict leads with the start error, the cause, not
// with synctest's "deadlock" that the blocked goroutine causes after it
// (H4b: Kueue's Setup failed on an unserved kind and the verdict read
// "deadlock: main bubble goroutine has exited but blocked goroutines
// remain").
func TestAFailedStartIsNamedBeforeTheGoroutinesItLeftBlocked(t *testing.T) {
	scratch(t)
	leakThenFail := cachelabtest.Controller{Start: func(context.Context, *cachelabtest.Env) error {
		go func() { <-make(chan struct{}) }() // ignores ctx: still blocked when the run ends
		return errors.New("no config")
	}}
	setupFails := cachelabtest.Controller{Setup: func(ctrl.Manager) error {
		go func() { <-make(chan struct{}) }()
		return errors.New("setting index on kind LimitRange: no matches")
	}}
	for name, tc := range map[string]struct {
		c    cachelabtest.Controller
		want string
	}{
		"start": {leakThenFail, "no config"},
		"setup": {setupFails, "setting index on kind LimitRange: no matches"},
	} {
		failures := cachelabtest.Catch(t, tc.c, cachelabtest.These(plan(name)))
		if len(failures) != 1 || len(failures[0].Failed) == 0 {
			t.Fatalf("%s: %d failures, want 1", name, len(failures))
		}
		run := failures[0].Failed[0]
		if run.Invariant != "run" || !strings.Contains(run.Reason, "start: "+tc.want) || strings.HasPrefix(run.Reason, "deadlock") {
			t.Errorf("%s: run verdict %q: want it to lead with the start error %q", name, run.Reason, tc.want)
		}
		// synctest reports the goroutine left blocked when it sees it
		// (not always under -race): then after the cause.
		if i := strings.Index(run.Reason, "deadlock"); i >= 0 && (i < strings.Index(run.Reason, "start: ") || !strings.Contains(run.Reason, "blocked")) {
			t.Errorf("%s: run verdict %q: the deadlock should follow the start error and say what was blocked", name, run.Reason)
		}
	}
}
