package lab

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// LifecycleWorkloads returns the catalogue's lifecycle stories for subject,
// as hunt workloads: the plans (PlanFor subject) of the scenarios that
// name subject, or the subject it is a mutant of ("bellerophon" for
// "bellerophon/stale-status"), in their expectations and whose user
// deletes something (a delete, a delete and recreate, a child deleted).
// Random workloads seldom take these actions that way (an owner deleted
// and left to its finalizer); a campaign perturbs only what its workloads
// do. The plans keep their faults: HuntPlans runs their user actions
// alone (scenarios.ReferencePlan). None for a subject no scenario names.
func LifecycleWorkloads(subject string) ([]*sim.Plan, error) {
	all, err := scenarios.All()
	if err != nil {
		return nil, fmt.Errorf("hunt: the scenario catalogue: %w", err)
	}
	base, _, _ := strings.Cut(subject, "/")
	var out []*sim.Plan
	for _, s := range all {
		subs := s.Subjects()
		if !slices.Contains(subs, subject) && !slices.Contains(subs, base) {
			continue
		}
		p := s.PlanFor(subject)
		if !slices.ContainsFunc(p.Steps, func(st sim.Step) bool { return st.Actor == "user" && st.Op == "delete" }) {
			continue
		}
		if p.Name == "" {
			p.Name = s.Name
		}
		out = append(out, &p)
	}
	return out, nil
}
