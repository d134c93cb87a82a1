package lab

import (
	"testing"

	"github.com/cachelab/cachelab/sim"
)

// A step aimed at a child is known by the object its step record names:
// the oracle compares it between the two runs (a faulted run whose faults
// changed which children existed acts on another object).
func TestChildTargetsNameWhatEachChildStepResolvedTo(t *testing.T) {
	p := &sim.Plan{Steps: []sim.Step{
		{Actor: "user", Op: "patch", Resource: "webapps", Namespace: "default", Name: "a"},
		{Actor: "competitor", Op: "patch", Child: sim.ChildRef{Owner: "webapps", OwnerName: "a"}},
	}}
	tr := &sim.Trace{Plan: p, Records: []sim.Record{
		{Kind: sim.RecStep, Step: 0, Resource: "webapps", Namespace: "default", Name: "a"},
		{Kind: sim.RecStep, Step: 1, Resource: "services", Namespace: "default", Name: "a"},
	}}
	got := childTargets(tr)
	if len(got) != 1 || got[stepText(p, 1)] != "services/default/a" {
		t.Errorf("child targets %v, want only the child step, on services/default/a", got)
	}
}
