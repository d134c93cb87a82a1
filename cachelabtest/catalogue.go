package cachelabtest

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/scenarios"
)

// With applies options to p: Primary and Examples name the primary kind
// Scenarios re-aims the catalogue at (as they do for Random), and the
// other RandomOptions adapt Random's plans.
func (p Plans) With(opts ...RandomOption) Plans {
	for _, o := range opts {
		o(&p)
	}
	return p
}

// scenarioJobs returns the jobs of ps's scenarios for c, each re-aimed at
// c's primary kind; the scenarios that cannot be are skipped subtests of
// t saying why, and one line sums up.
func scenarioJobs(t *testing.T, c Controller, ps Plans) []lab.Job {
	t.Helper()
	if len(ps.scenarios) == 0 {
		return nil
	}
	primary, perr := scenarioPrimary(c, ps)
	served := func(apiVersion, kind string) bool {
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return false
		}
		for _, crd := range c.CRDs.served() {
			if crd.Kind == kind && crd.GVR.GroupVersion() == gv {
				return true
			}
		}
		return scheme.Scheme.Recognizes(gv.WithKind(kind))
	}
	var jobs []lab.Job
	var skipped, aimed []string
	for _, n := range ps.scenarios {
		s, err := scenarios.Get(n)
		if err != nil {
			t.Errorf("cachelabtest: %v", err)
			continue
		}
		p, skip := s.Retarget(c.Name, served, primary)
		if skip != "" {
			if primary == nil && perr != nil {
				skip += " (" + perr.Error() + ")"
			}
			skipped = append(skipped, n)
			t.Run(n, func(t *testing.T) { t.Skipf("cachelab: scenario %s skipped: %s (it needs %s)", n, skip, s.Needs()) })
			continue
		}
		for _, k := range s.Needs().Kinds {
			if !servedName(k, served) {
				aimed = append(aimed, n)
				break
			}
		}
		jobs = append(jobs, lab.NewJob(&p, nil))
	}
	kind := "no primary kind"
	if primary != nil {
		kind = primary.Kind
	}
	msg := fmt.Sprintf("cachelab: %d of %d scenarios run with %s (%d re-aimed at %s)", len(jobs), len(ps.scenarios), c.Name, len(aimed), kind)
	if len(skipped) > 0 {
		msg += fmt.Sprintf("; %d skipped: %s (run with -v to see why)", len(skipped), strings.Join(skipped, ", "))
	}
	t.Log(msg)
	return jobs
}

// servedName reports whether a kind named as Needs names it ("Foo
// (example.com/v1)") is served.
func servedName(k string, served func(apiVersion, kind string) bool) bool {
	kind, av, ok := strings.Cut(strings.TrimSuffix(k, ")"), " (")
	return ok && served(av, kind)
}

// scenarioPrimary is the kind Scenarios re-aims the catalogue at: the
// first of ps's Primary kinds (resolved by checkSetup), else c's only CRD,
// else ConfigMaps.
func scenarioPrimary(c Controller, ps Plans) (*scenarios.Kind, error) {
	if ps.schema != nil && len(ps.schema.kinds) > 0 {
		k := ps.schema.kinds[0]
		return &k, nil
	}
	name := "configmaps"
	switch crds := c.CRDs.served(); {
	case len(c.CRDs.kinds) == 1:
		name = crds[0].GVR.Resource
	case len(c.CRDs.kinds) > 1:
		return nil, fmt.Errorf("the controller serves %d custom kinds: name the primary one with Scenarios().With(Primary(\"...\"))", len(c.CRDs.kinds))
	}
	sp := &schemaPlans{primaries: []string{name}}
	if err := sp.resolve(c.CRDs); err != nil {
		return nil, err
	}
	k := sp.kinds[0]
	return &k, nil
}
