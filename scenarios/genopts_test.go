package scenarios_test

import (
	"testing"

	"github.com/cachelab/cachelab/scenarios"
)

// PlanGenWith's child resource is what child deletes, competitor writes
// and single-resource faults hit; the ConfigMap "-mirror" children of
// PlanGen's own plans are not drawn.
func TestPlanGenWithDrawsTheSubjectsChildren(t *testing.T) {
	gen := scenarios.PlanGenWith("a-user-controller", scenarios.GenOptions{ChildResource: "secrets", ChildName: func(n string) string { return n }})
	deletes, faults := 0, 0
	for seed := range 300 {
		p := gen.Example(seed)
		for _, s := range p.Steps {
			switch {
			case s.Resource == "configmaps" && len(s.Name) > 7 && s.Name[len(s.Name)-7:] == "-mirror":
				t.Fatalf("seed %d: a step on %s/%s: the default child, not the subject's", seed, s.Resource, s.Name)
			case s.Actor == "user" && s.Op == "delete" && s.Resource == "secrets":
				deletes++
			case s.Actor == "faults" && s.Resource == "secrets":
				faults++
			}
		}
	}
	if deletes == 0 || faults == 0 {
		t.Errorf("in 300 plans: %d deletes of a secret child, %d faults on secrets; want both", deletes, faults)
	}
}
