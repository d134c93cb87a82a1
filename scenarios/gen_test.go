package scenarios

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"

	"github.com/cachelab/cachelab/sim"
)

func TestGeneratedPlansAreValidSmallAndRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := PlanGen("naivecache").Draw(t, "plan")
		if err := p.Validate(); err != nil {
			t.Fatalf("generated plan is invalid: %v", err)
		}
		if len(p.Steps) > 8*6 || len(p.Objects) > 2 { // 8 draws, a compound op makes at most 6 steps
			t.Fatalf("plan too large: %d steps, %d objects", len(p.Steps), len(p.Objects))
		}
		for i := 1; i < len(p.Steps); i++ {
			if p.Steps[i].At < p.Steps[i-1].At {
				t.Fatalf("step %d at %s comes before step %d at %s", i, p.Steps[i].At, i-1, p.Steps[i-1].At)
			}
		}
		crashed := false
		for i, s := range p.Steps {
			switch s.Op {
			case "crash":
				if crashed {
					t.Fatalf("step %d crashes a crashed controller", i)
				}
				crashed = true
			case "restart":
				if !crashed {
					t.Fatalf("step %d restarts a running controller", i)
				}
				crashed = false
			}
		}
		if crashed {
			t.Fatal("the plan ends with the controller down")
		}
		var buf bytes.Buffer
		if err := p.Save(&buf); err != nil {
			t.Fatalf("save: %v", err)
		}
		if _, err := sim.LoadPlan(&buf); err != nil {
			t.Fatalf("a saved generated plan does not load: %v", err)
		}
	})
}

func TestGeneratedPlansForAnUnknownSubjectUseConfigMaps(t *testing.T) {
	p := PlanGen("no-such-subject").Example(1)
	for _, s := range p.Steps {
		if s.Resource == "bellerophons" {
			t.Fatalf("a subject without the Bellerophon CRD got a Bellerophon step: %+v", s)
		}
	}
	if p.Kubelet != nil {
		t.Fatal("a subject without the Bellerophon CRD got the kubelet actor")
	}
}
