package plan

import "testing"

func TestParseMomentReadsStepsAndWritesAndRejectsTheRest(t *testing.T) {
	for _, c := range []struct {
		in   string
		kind string
		n    int
		ok   bool
	}{
		{"step:0", MomentStep, 0, true},
		{"step:12", MomentStep, 12, true},
		{"write:1", MomentWrite, 1, true},
		{"write:0", "", 0, false},
		{"step:-1", "", 0, false},
		{"step", "", 0, false},
		{"revision:3", "", 0, false},
		{"write:x", "", 0, false},
	} {
		kind, n, err := ParseMoment(c.in)
		if (err == nil) != c.ok || kind != c.kind || n != c.n {
			t.Errorf("ParseMoment(%q) = %q, %d, %v", c.in, kind, n, err)
		}
		if c.ok && FormatMoment(kind, n) != c.in {
			t.Errorf("FormatMoment(%q, %d) = %q, want %q", kind, n, FormatMoment(kind, n), c.in)
		}
	}
}

func TestStepValidationNamesBadAfterWriteAndAsOf(t *testing.T) {
	p := &Plan{Version: PlanVersion, Subject: "x", Steps: []Step{
		{Actor: "controller", Op: "crash", AfterWrite: -1},
		{Actor: "faults", Op: "stale-replica", AsOf: "yesterday"},
		{Actor: "faults", Op: "hold", AsOf: "step:1"},
		{Actor: "controller", Op: "crash", AfterWrite: 2, MidReconcile: true},
	}}
	var fields []string
	for i := range p.Steps {
		for _, e := range p.validateStep(i) {
			fields = append(fields, e.Field)
		}
	}
	want := map[string]bool{"steps[0].afterWrite": true, "steps[1].asOf": true, "steps[2].asOf": true, "steps[3].afterWrite": true}
	for _, f := range fields {
		delete(want, f)
	}
	if len(want) != 0 {
		t.Errorf("validation errors on %v, missing %v", fields, want)
	}
}
