package scenarios

import (
	"bytes"
	"encoding/json"
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
		// An episode is at most 6 steps (a crash, a 3-step recreate, a
		// slow relist and the restart).
		if len(p.Steps) > genMaxEpisodes*6 || len(p.Objects) > len(genNames) {
			t.Fatalf("plan too large: %d steps, %d objects", len(p.Steps), len(p.Objects))
		}
		for i := 1; i < len(p.Steps); i++ {
			if p.Steps[i].At < p.Steps[i-1].At {
				t.Fatalf("step %d at %s comes before step %d at %s", i, p.Steps[i].At, i-1, p.Steps[i-1].At)
			}
		}
		// Crash episodes may overlap (a crash of a crashed controller does
		// nothing, a restart of a running one restarts it), but every crash
		// has its restart, so the plan never ends with the controller down.
		down := 0
		last := ""
		for _, s := range p.Steps {
			switch s.Op {
			case "crash":
				down++
				last = s.Op
			case "restart":
				down--
				last = s.Op
			}
		}
		if down != 0 || last == "crash" {
			t.Fatalf("crashes and restarts do not pair up (%d unmatched, last controller step %q)", down, last)
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

func TestEpisodesOnlyNameTheFixedObjects(t *testing.T) {
	// Shrinking deletes episodes: the others must keep their meaning, so
	// no step may name an object by a counter or by what earlier episodes
	// made (the old generator's obj1, obj2, ... shifted when one went).
	names := map[string]bool{}
	for _, n := range genNames {
		names[n], names[n+"-config"], names[n+"-mirror"] = true, true, true
	}
	for _, subject := range []string{"bellerophon", "naivecache"} {
		for seed := 0; seed < 200; seed++ {
			p := PlanGen(subject).Example(seed)
			for i, st := range p.Steps {
				name := st.Name
				if len(st.Object) > 0 {
					var o struct {
						Metadata struct{ Name string } `json:"metadata"`
					}
					if err := json.Unmarshal(st.Object, &o); err != nil {
						t.Fatalf("%s seed %d step %d: object does not decode: %v", subject, seed, i, err)
					}
					name = o.Metadata.Name
				}
				if name != "" && !names[name] {
					t.Fatalf("%s seed %d step %d names %q, not one of the fixed objects %v or their children", subject, seed, i, name, genNames)
				}
			}
		}
	}
}
