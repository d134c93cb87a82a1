package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/scenarios"
)

// A controller registered with its own Random plans gets those plans from
// `cachelab run --random` (and every command that draws random plans), not
// the lab's ConfigMap plans; without them it gets the ConfigMap plans.
func TestRegisterGivesTheCommandTheControllersOwnRandomPlans(t *testing.T) {
	c := cachelabtest.Controller{
		Name:  "lab-test/register-random",
		Start: func(context.Context, *cachelabtest.Env) error { return nil },
	}
	t.Cleanup(func() { scenarios.SetPlanGen(c.Name, nil); lab.SetAccepted(c.Name, nil) })
	resources := func(costed bool) map[string]int {
		t.Helper()
		seen := map[string]int{}
		for seed := uint64(1); seed <= 8; seed++ {
			p := scenarios.Random(seed, c.Name)
			for _, s := range p.Steps {
				if s.Op == "create" || s.Op == "update" || s.Op == "patch" {
					seen[s.Resource]++
				}
			}
			if costed && seed == 1 && p.Faults.RequestLatency.Kind == "" {
				t.Errorf("random-1 has no request latency: want Random's request cost")
			}
		}
		return seen
	}

	if err := cachelabtest.Register(c, cachelabtest.Random(cachelabtest.Primary("deployments"))); err != nil {
		t.Fatal(err)
	}
	if got := resources(true); got["deployments.apps"] == 0 || got["configmaps"] > 0 {
		t.Errorf("with Random(Primary(\"deployments\")): the random plans write %v, want deployments.apps and no configmaps", got)
	}
	code, stdout, errs := run(t, "run", "--random", "1", "--seed", "2", "--subject", c.Name, "--out", "")
	if code == ExitUsage || !strings.Contains(stdout, "random-2") {
		t.Errorf("cachelab run --random 1 --subject %s: exit %d\n%s%s", c.Name, code, stdout, errs)
	}

	if err := cachelabtest.Register(c); err != nil {
		t.Fatal(err)
	}
	if got := resources(false); got["configmaps"] == 0 || got["deployments.apps"] > 0 {
		t.Errorf("registered again without Random: the random plans write %v, want the ConfigMap plans", got)
	}

	for name, plans := range map[string][]cachelabtest.Plans{
		"two Random":              {cachelabtest.Random(), cachelabtest.Random()},
		"scenarios, not Random":   {cachelabtest.Scenarios("tombstone-after-410")},
		"an unserved child":       {cachelabtest.Random(cachelabtest.Children("widgets", "%s"))},
		"a negative request cost": {cachelabtest.Random(cachelabtest.RequestCost(-1))},
		"an unknown primary":      {cachelabtest.Random(cachelabtest.Primary("widgets"))},
	} {
		if err := cachelabtest.Register(c, plans...); err == nil {
			t.Errorf("Register with %s: no error", name)
		}
	}
}
