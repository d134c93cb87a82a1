package cachelabtest_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// withZ is plan(name) where the user also creates ConfigMap "z" at 5s.
func withZ(name string) *sim.Plan {
	p := plan(name)
	p.Steps = append(p.Steps, sim.Step{At: sim.Duration(5 * time.Second), Actor: "user", Op: "create",
		Object: json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"z","namespace":"default"}}`)})
	return p
}

// A failure the team accepts (Controller.Expect) does not fail the plan,
// and Catch counts plans to the first failure that is not expected; the
// accepted failure is still shown, with its reason, in the failure text
// and the HTML report. Without the Expect the same plans fail.
func TestAnExpectedFailureIsShownButDoesNotFailThePlan(t *testing.T) {
	scratch(t)
	// The predicate never holds: eventual-convergence fails every plan.
	// The handler panics on ConfigMap "z", which only the third plan
	// creates: no-panics fails that plan only.
	c := clientGo("z", false)
	c.Desired = func(*cachelabtest.State) error { return errors.New("never the state the team wants") }
	plans := cachelabtest.These(plan("one"), plan("two"), withZ("three"))

	if failures := cachelabtest.Catch(t, c, plans); len(failures) != 3 {
		t.Fatalf("without Expect: %d failures, want all 3 plans", len(failures))
	}

	c.Expect = []cachelabtest.Expectation{{Invariant: invariants.NameEventualConvergence, Reason: "the test's predicate never holds, on purpose"}}
	failures := cachelabtest.Catch(t, c, plans)
	if len(failures) != 1 {
		t.Fatalf("with Expect: %d failures, want the third plan's only", len(failures))
	}
	f := failures[0]
	if f.Plan.Name != "three" || f.Runs != 3 {
		t.Errorf("first unexpected failure: plan %q after %d runs, want plan three after 3", f.Plan.Name, f.Runs)
	}
	if len(f.Failed) != 1 || f.Failed[0].Invariant != lab.HealthNoPanics {
		t.Errorf("failed %v, want no-panics only", f.Failed)
	}
	if len(f.Expected) != 1 || f.Expected[0].Invariant != invariants.NameEventualConvergence || f.Expected[0].Status != invariants.Fail {
		t.Errorf("expected %v, want eventual-convergence, still failed", f.Expected)
	}
	if !strings.Contains(f.Report, "expected (Controller.Expect: the test's predicate never holds, on purpose) eventual-convergence") {
		t.Errorf("the failure text does not show the expected failure with its reason:\n%s", f.Report)
	}
	html, err := os.ReadFile(f.ReportPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "the test&#39;s predicate never holds, on purpose") && !strings.Contains(string(html), "the test's predicate never holds, on purpose") {
		t.Errorf("the HTML report %s does not show the accepted failure's reason", f.ReportPath)
	}

	// Test passes the plans whose only failure is accepted.
	cachelabtest.Test(t, c, cachelabtest.These(plan("one"), plan("two")))
}

// An expectation with Matching accepts only the failures of its invariant
// whose reason or detail it finds: a team names the object or path a known
// bug leaves, and another failure of the same invariant still fails. The
// same plans: accepted with a Matching the reason has; failing, with the
// same invariant, under a Matching it has not; and two expectations of one
// invariant, each narrowed, accept what either names.
func TestAnExpectationMatchingAcceptsOnlyTheFailuresItNames(t *testing.T) {
	scratch(t)
	c := clientGo("", false)
	c.Desired = func(*cachelabtest.State) error { return errors.New("never the state the team wants") }
	plans := cachelabtest.These(plan("one"), plan("two"))
	for _, tc := range []struct {
		name   string
		expect []cachelabtest.Expectation
		want   int // failures
	}{
		{"names-it", []cachelabtest.Expectation{{Invariant: invariants.NameEventualConvergence, Reason: "known", Matching: `never the state the team \w+`}}, 0},
		{"names-another", []cachelabtest.Expectation{{Invariant: invariants.NameEventualConvergence, Reason: "known", Matching: `configmaps/default/elsewhere`}}, 2},
		{"two-narrowed", []cachelabtest.Expectation{
			{Invariant: invariants.NameEventualConvergence, Reason: "another bug", Matching: `configmaps/default/elsewhere`},
			{Invariant: invariants.NameEventualConvergence, Reason: "known", Matching: `team wants`},
		}, 0},
	} {
		c.Expect = tc.expect
		failures := cachelabtest.Catch(t, c, plans)
		if len(failures) != tc.want {
			t.Errorf("%s: %d failures, want %d", tc.name, len(failures), tc.want)
		}
		for _, f := range failures {
			if len(f.Expected) != 0 || len(f.Failed) != 1 || f.Failed[0].Invariant != invariants.NameEventualConvergence {
				t.Errorf("%s: failed %v, expected %v; want eventual-convergence failed, nothing accepted", tc.name, f.Failed, f.Expected)
			}
		}
	}
	c.Expect = []cachelabtest.Expectation{{Invariant: invariants.NameEventualConvergence, Reason: "known", Matching: `team wants`}}
	cachelabtest.Test(t, c, plans)
}
