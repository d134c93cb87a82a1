package cachelabtest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// planKinds lists the kinds of p's objects and created objects.
func planKinds(p *sim.Plan) string {
	var out []string
	for _, o := range p.Objects {
		if h, ok := scenariosHead(o); ok {
			out = append(out, h)
		}
	}
	for _, s := range p.Steps {
		if h, ok := scenariosHead(s.Object); ok {
			out = append(out, h)
		}
	}
	return strings.Join(out, " ")
}

func scenariosHead(raw []byte) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	i := strings.Index(string(raw), `"kind":"`)
	if i < 0 {
		return "", false
	}
	rest := string(raw)[i+8:]
	return rest[:strings.IndexByte(rest, '"')], true
}

// catalogueJobs builds the jobs Scenarios() gives c, in a subtest whose
// skipped subtests are the skipped scenarios; it returns the jobs and the
// skip messages by scenario.
func catalogueJobs(t *testing.T, c Controller, ps Plans) ([]lab.Job, map[string]string) {
	t.Helper()
	if err := checkSetup(c, []Plans{ps}); err != nil {
		t.Fatal(err)
	}
	var jobs []lab.Job
	skips := map[string]string{}
	t.Run("catalogue", func(t *testing.T) {
		jobs = scenarioJobs(t, c, ps)
	})
	// The skipped subtests' messages: rebuild them through Retarget, as
	// scenarioJobs does, to assert on them.
	primary, _ := scenarioPrimary(c, ps)
	for _, n := range ps.scenarios {
		s, _ := scenarios.Get(n)
		if _, why := s.Retarget(c.Name, func(av, k string) bool { return k != "Bellerophon" }, primary); why != "" {
			skips[n] = why
		}
	}
	return jobs, skips
}

func TestScenariosReaimTheCatalogueAtAConfigMapController(t *testing.T) {
	c := mirror(false)
	c.Name = "mirror"
	jobs, skips := catalogueJobs(t, c, Scenarios())
	all := len(scenarios.Names())
	if len(jobs)+len(skips) != all {
		t.Fatalf("%d jobs + %d skipped != %d scenarios", len(jobs), len(skips), all)
	}
	reaimed := 0
	for _, j := range jobs {
		kinds := planKinds(j.Plan)
		if strings.Contains(kinds, "Bellerophon") {
			t.Errorf("%s still creates a Bellerophon: %s", j.Plan.Name, kinds)
		}
		s, _ := scenarios.Get(j.Plan.Name)
		if strings.Contains(s.Needs().String(), "Bellerophon") {
			reaimed++
		}
		for _, st := range j.Plan.Steps {
			if strings.HasPrefix(st.Resource, "bellerophons") {
				t.Errorf("%s: a step still acts on %s", j.Plan.Name, st.Resource)
			}
		}
	}
	if reaimed == 0 {
		t.Error("no Bellerophon scenario was re-aimed at ConfigMaps")
	}
	// cross-object-order changes the Bellerophons' spec: no ConfigMap
	// equivalent.
	if why := skips["cross-object-order"]; !strings.Contains(why, "patches Bellerophon's spec.") {
		t.Errorf("cross-object-order: skip reason %q, want it to name the spec field", why)
	}
	t.Logf("%d run (%d re-aimed from Bellerophon), %d skipped: %v", len(jobs), reaimed, len(skips), skips)

	// The re-aimed scenarios run: none fails for a kind the server does not
	// serve (11 did before).
	t.Chdir(t.TempDir())
	var plans []*sim.Plan
	for _, j := range jobs {
		plans = append(plans, j.Plan)
	}
	failures := Catch(t, c, These(plans...))
	for _, f := range failures {
		for _, v := range f.Failed {
			if v.Invariant == "run" {
				t.Errorf("%s: the run failed: %s", f.Plan.Name, v.Reason)
			}
		}
	}
	t.Logf("%d plans run, %d failed", len(plans), len(failures))
}

func TestScenariosReaimTheCatalogueAtACRDController(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"crd/foo.yaml": fooCRD, "samples/foo.yaml": fooSample})
	c := Controller{Name: "foo-controller", CRDs: CRDs(filepath.Join(dir, "crd")),
		Start: func(ctx context.Context, env *Env) error { return nil }}

	// Without an example, the smallest Foo its schema allows (its
	// required spec.deploymentName empty) is not valid: the scenario is
	// skipped, saying so.
	_, skips := catalogueJobs(t, c, Scenarios("delete-recreate-during-gap"))
	if why := skips["delete-recreate-during-gap"]; !strings.Contains(why, "no valid Foo") || !strings.Contains(why, "Examples") {
		t.Errorf("skip reason %q: want it to ask for Examples", why)
	}

	jobs, skips := catalogueJobs(t, c, Scenarios().With(Primary("foos"), Examples(filepath.Join(dir, "samples"))))
	var gap *sim.Plan
	for _, j := range jobs {
		if j.Plan.Name == "delete-recreate-during-gap" {
			gap = j.Plan
		}
	}
	if gap == nil {
		t.Fatalf("delete-recreate-during-gap not run: %v", skips["delete-recreate-during-gap"])
	}
	if kinds := planKinds(gap); !strings.Contains(kinds, "Foo") || strings.Contains(kinds, "Bellerophon") || !strings.Contains(string(gap.Objects[0]), `"deploymentName":"sample"`) {
		t.Errorf("delete-recreate-during-gap objects %q: want Foos", kinds)
	}
	// Its scale-ups of spec.replicas fit Foo's scale subresource.
	scaled := false
	for _, st := range gap.Steps {
		scaled = scaled || (st.Op == "patch" && st.Resource == "foos.example.cachelab.dev" && strings.Contains(string(st.Patch), "replicas"))
	}
	if !scaled {
		t.Errorf("delete-recreate-during-gap's patch of spec.replicas was not re-aimed at foos: %+v", gap.Steps)
	}
	if why := skips["competing-writer"]; !strings.Contains(why, "status") {
		t.Errorf("competing-writer: skip reason %q, want it to name the status write", why)
	}
	t.Chdir(t.TempDir())
	for _, f := range Catch(t, c, These(gap)) {
		for _, v := range f.Failed {
			if v.Invariant == "run" {
				t.Errorf("the re-aimed scenario's run failed: %s", v.Reason)
			}
		}
	}
}
