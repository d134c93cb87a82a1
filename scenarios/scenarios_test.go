package scenarios_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"

	// The subjects register themselves with sim.
	_ "github.com/cachelab/cachelab/subjects/bellerophon"
	_ "github.com/cachelab/cachelab/subjects/legacy"
	_ "github.com/cachelab/cachelab/subjects/naivecache"
)

// TestMain removes client-go's error backoff, which sleeps for centuries of
// virtual time inside a synctest bubble (see sim.PrepareClientGo; sim.Run
// does it too, but tests here may touch client-go before their first run).
func TestMain(m *testing.M) {
	sim.PrepareClientGo()
	os.Exit(m.Run())
}

func registered() []string {
	var out []string
	for _, s := range sim.Subjects() {
		out = append(out, s.Name)
	}
	return out
}

func invariantNames() []string {
	var out []string
	for _, inv := range invariants.All() {
		out = append(out, inv.Name)
	}
	return out
}

func TestEveryScenarioNamesRegisteredSubjectsAndInvariantsAndAValidPlan(t *testing.T) {
	all, err := scenarios.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if err := s.Validate(registered(), invariantNames()); err != nil {
			t.Errorf("%v", err)
		}
		for _, subj := range s.Subjects() {
			p := s.PlanFor(subj)
			if err := p.Validate(); err != nil {
				t.Errorf("%s: the plan for %s is not valid: %v", s.File, subj, err)
			}
		}
	}
}

// TestEveryScenarioFailsTheWayItsNarrativeSays runs every built-in scenario
// against every subject its expectations name and compares the verdicts
// with the expectations, and checks the story's claims against the run: a mutant that stops failing the way the narrative
// says, or a real controller that starts failing, is a failing test.
func TestEveryScenarioFailsTheWayItsNarrativeSays(t *testing.T) {
	all, err := scenarios.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		for _, subj := range s.Subjects() {
			t.Run(s.Name+"/"+subj, func(t *testing.T) {
				t.Parallel()
				p := s.PlanFor(subj)
				tr, err := sim.Run(t, &p)
				if err != nil {
					t.Fatalf("%s: the run failed: %v", s.File, err)
				}
				vs := invariants.Check(tr)
				for _, m := range append(s.Compare(subj, vs), s.CheckClaims(subj, tr)...) {
					t.Errorf("%s:%d: %s\n  see: go run ./cmd/cachelab run %s --subject %s", s.File, m.Line, m, s.Name, subj)
				}
			})
		}
	}
}

func TestRandomPlansAreDeterministicValidAndVaried(t *testing.T) {
	for _, subj := range registered() {
		seen := map[string]bool{}
		for seed := uint64(0); seed < 50; seed++ {
			a, b := scenarios.Random(seed, subj), scenarios.Random(seed, subj)
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if string(ja) != string(jb) {
				t.Fatalf("%s seed %d: two draws differ:\n%s\n%s", subj, seed, ja, jb)
			}
			if err := a.Validate(); err != nil {
				t.Errorf("%s seed %d: invalid plan: %v\n%s", subj, seed, err, ja)
			}
			if a.Name != fmt.Sprintf("random-%d", seed) || a.Subject != subj {
				t.Errorf("%s seed %d: name/subject = %q/%q", subj, seed, a.Name, a.Subject)
			}
			seen[string(ja)] = true
		}
		if len(seen) < 30 {
			t.Errorf("%s: only %d distinct plans from 50 seeds", subj, len(seen))
		}
	}
}

func TestRandomPlansNeverEndWithTheControllerDown(t *testing.T) {
	for seed := uint64(0); seed < 100; seed++ {
		p := scenarios.Random(seed, "bellerophon")
		down := false
		for _, st := range p.Steps {
			if st.Actor == "controller" {
				down = st.Op == "crash"
			}
		}
		if down {
			var ops []string
			for _, st := range p.Steps {
				ops = append(ops, st.Actor+" "+st.Op)
			}
			t.Errorf("seed %d ends with the controller crashed: %s", seed, strings.Join(ops, ", "))
		}
	}
}
