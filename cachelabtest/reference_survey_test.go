package cachelabtest

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"

	_ "github.com/cachelab/cachelab/subjects/bellerophon"
)

// TestReferenceSurveyBellerophon counts the matches-reference verdicts of
// the built-in Bellerophon subject (a correct controller) on random plans:
// every Fail is a false alarm of the oracle to triage. It runs only when
// CACHELAB_SURVEY=N is set (N plans, seeds 0..N-1; CACHELAB_SURVEY_FROM
// shifts them); see docs/reference-run.md.
//
//	CACHELAB_SURVEY=200 go test ./cachelabtest -run TestReferenceSurveyBellerophon -v
func TestReferenceSurveyBellerophon(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CACHELAB_SURVEY"))
	if n <= 0 {
		t.Skip("set CACHELAB_SURVEY=N to run N random Bellerophon plans with their reference runs")
	}
	from, _ := strconv.Atoi(os.Getenv("CACHELAB_SURVEY_FROM"))
	gen := scenarios.PlanGen("bellerophon")
	rep := &reporter{}
	tally := map[invariants.Status]int{}
	start := time.Now()
	var failed, dropped []string
	for i := from; i < from+n; i++ {
		p := gen.Example(i)
		p.Name = fmt.Sprintf("survey-%d", i)
		r := &lab.Result{Job: lab.NewJob(&p, nil)}
		tr, err := lab.RunPlan(t, &p)
		lab.Judge(r, tr, err)
		if tr != nil {
			if steps := lab.FailedSteps(tr); len(steps) > 0 {
				dropped = append(dropped, fmt.Sprintf("seed %d: steps %v", i, steps))
			}
		}
		rep.judgeReference(r, func(p *sim.Plan) (*sim.Trace, error) { return lab.RunPlan(t, p) })
		status := invariants.Status("none: the plan has no fault")
		if _, faulty := lab.ReferencePlan(&p); faulty && r.Err != nil {
			status = "none: the run failed"
		} else if faulty {
			status = "none: ?"
		}
		for _, v := range r.Verdicts {
			if v.Invariant != invariants.NameMatchesReference {
				continue
			}
			status = v.Status
			if v.Status != invariants.Pass {
				var other []string
				for _, o := range r.Verdicts {
					if o.Failed() && o.Invariant != v.Invariant {
						other = append(other, o.Invariant)
					}
				}
				var lines []string
				for _, l := range strings.Split(v.Detail, "\n") {
					if t := strings.TrimSpace(l); strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+") || strings.Contains(l, "only in") || strings.Contains(l, "not in") {
						lines = append(lines, l)
					}
				}
				failed = append(failed, fmt.Sprintf("seed %d: %s: %s (other failed verdicts: %v)\n%s", i, v.Status, v.Reason, other, strings.Join(lines, "\n")))
			}
		}
		tally[status]++
	}
	sort.Strings(failed)
	t.Logf("%d plans in %s: matches-reference %v\nreferences without the user steps a fault made fail: %v\n%s",
		n, time.Since(start).Round(time.Second), tally, dropped, strings.Join(failed, "\n"))
}
