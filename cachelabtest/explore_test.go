package cachelabtest_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	lab "github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// TestExploreTable prints, per Bellerophon mutant, the first random plan
// (seeds 1..CACHELAB_EXPLORE) whose canonical schedule passes but whose
// schedule space within one deviation holds a failing schedule: bugs that
// only another interleaving at the API boundary shows (make explore-table).
func TestExploreTable(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CACHELAB_EXPLORE"))
	if n <= 0 {
		t.Skip("set CACHELAB_EXPLORE=plans (make explore-table)")
	}
	host := lab.TestHost(t)
	var b strings.Builder
	fmt.Fprintf(&b, "| subject | plans tried | first plan passing canonically with a failing schedule | its steps | schedules run | failing | failed invariants |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, s := range sim.Subjects() {
		if !strings.HasPrefix(s.Name, "bellerophon") {
			continue
		}
		found := false
		tried := 0
		for seed := uint64(1); seed <= uint64(n) && !found; seed++ {
			p := scenarios.Random(seed, s.Name)
			tried++
			res, err := lab.ExplorePlan(host, &p, lab.ExploreOptions{MaxDeviations: 1, MaxSchedules: 60})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Failing) == 0 || res.Failing[0].N == 1 {
				continue // nothing fails, or the canonical schedule already fails
			}
			found = true
			fails := map[string]bool{}
			for _, f := range res.Failing {
				for _, inv := range f.Failed {
					fails[inv] = true
				}
			}
			var invs []string
			for inv := range fails {
				invs = append(invs, inv)
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %d | %d | %d | %s |\n", s.Name, tried, p.Name, len(p.Steps), res.Schedules, len(res.Failing), strings.Join(invs, ", "))
		}
		if !found {
			fmt.Fprintf(&b, "| %s | %d | none | | | | |\n", s.Name, tried)
		}
	}
	t.Log("\n" + b.String())
}
