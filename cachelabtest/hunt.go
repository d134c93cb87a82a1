package cachelabtest

import (
	"strings"
	"testing"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/sim"
)

// HuntOptions configures a targeted campaign (Hunt): which classes of
// perturbation, how many plans, how to shrink. The zero value runs every
// class.
type HuntOptions = lab.HuntOptions

// HuntReport is a targeted campaign's result: its rows (class,
// perturbation, verdict, shrunk plan, replay command), Failures, First and
// WriteTable.
type HuntReport = lab.HuntReport

// Hunt runs the targeted campaign of c (Sieve's stale, unobserved and
// intermediate state, aimed by a reference run) on each workload plan,
// whose user actions drive c (its Subject is set to c), and returns the
// campaign. Every targeted plan that fails an invariant is an error of t,
// with the campaign's table, unless expectFailures is set (a test of a
// planted bug then asserts on the report).
//
//	rep := cachelabtest.Hunt(t, ctrl, cachelabtest.HuntOptions{}, false, workload)
func Hunt(t *testing.T, c Controller, opt HuntOptions, expectFailures bool, workloads ...*sim.Plan) *HuntReport {
	t.Helper()
	name := c.Name
	if name == "" {
		name = lab.Safe(t.Name())
	}
	c.Name = name
	if err := sim.ReplaceSubject(c.subjectInfo("a controller under a targeted campaign (" + t.Name() + ")")); err != nil {
		t.Fatal(err)
	}
	sim.PrepareClientGo()
	var ws []*sim.Plan
	for i, w := range workloads {
		if w == nil {
			t.Fatalf("cachelabtest.Hunt: workload %d of %d is nil", i+1, len(workloads))
		}
		w = w.Clone()
		w.Subject = name
		ws = append(ws, w)
	}
	rep, err := lab.HuntPlans(lab.TestHost(t), ws, opt)
	if err != nil {
		t.Fatalf("cachelabtest.Hunt: %v", err)
	}
	if !expectFailures && len(rep.Failures()) > 0 {
		var b strings.Builder
		rep.WriteTable(&b)
		t.Errorf("cachelabtest.Hunt: %d of %d targeted plans failed:\n%s", len(rep.Failures()), len(rep.Rows), b.String())
	}
	return rep
}
