package campaign

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
)

// Gates runs the campaign (Run) over the controller with KEP-5647's gate
// on, then off, both on gen's plans: each gated subject's TestCampaign.
func Gates(t *testing.T, generator string, controller func(gate bool) cachelabtest.Controller, gen func(subject string) *rapid.Generator[sim.Plan]) {
	t.Helper()
	Run(t, generator, Subject{Controller: controller(true), Gen: gen}, Subject{Controller: controller(false), Gen: gen})
}

// FailsWith runs p against c and fails t unless exactly one plan failed
// and its report holds every one of wants; why says what was expected.
// It is each subject's test that its Desired predicate fails on purpose.
func FailsWith(t *testing.T, c cachelabtest.Controller, p *sim.Plan, why string, wants ...string) {
	t.Helper()
	failures := cachelabtest.Catch(t, c, cachelabtest.These(p))
	var report string
	if len(failures) > 0 {
		report = failures[0].Report
	}
	ok := len(failures) == 1
	for _, w := range wants {
		ok = ok && strings.Contains(report, w)
	}
	if !ok {
		t.Fatalf("got %d failures, want 1 %s:\n%s", len(failures), why, report)
	}
}

// OnlyOwnConflicts runs p against c and fails t for every failed verdict
// but read-your-writes's retried 409 on the controller's own write
// (optimistic concurrency, a measurement since issue 27); it logs each
// failing plan's report.
func OnlyOwnConflicts(t *testing.T, c cachelabtest.Controller, p *sim.Plan) {
	t.Helper()
	for _, f := range cachelabtest.Catch(t, c, cachelabtest.These(p)) {
		for _, v := range f.Failed {
			if v.Invariant != "read-your-writes" || !strings.Contains(v.Reason, "conflicted with its own write") {
				t.Errorf("%s: %s failed:\n%s", c.Name, v.Invariant, f.Report)
			}
		}
		t.Logf("%s:\n%s", c.Name, f.Report)
	}
}
