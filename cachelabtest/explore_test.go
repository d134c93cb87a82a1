package cachelabtest_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	lab "github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/invariants"
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

// schedulePlan is a plan under which bellerophon/no-read-your-writes passes
// with the canonical schedule but fails read-your-writes under others
// (found by make explore-table).
func schedulePlan() sim.Plan { return scenarios.Random(2, "bellerophon/no-read-your-writes") }

// TestExploreFindsABugTheCanonicalScheduleHides: exploring one deviation
// of the plan (with the partial-order reduction) finds schedules failing
// read-your-writes, which the canonical schedule passes; each failing
// schedule's saved plan carries its schedule.
func TestExploreFindsABugTheCanonicalScheduleHides(t *testing.T) {
	if testing.Short() {
		t.Skip("runs dozens of schedules")
	}
	p := schedulePlan()
	res, err := lab.ExplorePlan(lab.TestHost(t), &p, lab.ExploreOptions{MaxDeviations: 1, MaxSchedules: 60})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.Summary())
	if m := res.Outcomes["read-your-writes"]; m[invariants.Pass] == 0 {
		t.Fatalf("no schedule passed read-your-writes: the canonical one should: %v", m)
	}
	if len(res.Failing) == 0 {
		t.Fatal("exploration found no failing schedule of a plan known to hide one")
	}
	for _, f := range res.Failing {
		if f.N == 1 {
			t.Fatalf("the canonical schedule failed %v: the plan no longer hides the bug", f.Failed)
		}
		if len(f.Plan.Schedule) == 0 {
			t.Fatalf("failing schedule %d saved without its schedule", f.N)
		}
	}
}

// TestRandomSchedulesBaseline prints how many of CACHELAB_RANDOM_SCHEDULES
// random schedules of the same plan fail (make explore-table).
func TestRandomSchedulesBaseline(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CACHELAB_RANDOM_SCHEDULES"))
	if n <= 0 {
		t.Skip("set CACHELAB_RANDOM_SCHEDULES=n (make explore-table)")
	}
	p := schedulePlan()
	failed, first := 0, -1
	err := sim.ExploreRandom(t, &p, n, func(i int, tr *sim.Trace) {
		if len(lab.FailedInvariants(invariants.Check(tr))) > 0 {
			failed++
			if first < 0 {
				first = i + 1
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s on %s: %d of %d random schedules failed (first at run %d)", p.Subject, p.Name, failed, n, first)
}
