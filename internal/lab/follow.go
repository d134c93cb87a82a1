package lab

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cachelab/cachelab/sim"
)

// Orders a replay's attempt may meet where it cannot follow the recorded
// run, as HowFollowed names them.
const (
	// OrderController is the subject's own choice of the object it acts
	// on (sim.IsSubjectOrderDivergence).
	OrderController = "the controller's own order"
	// OrderMap is client-go handing a batch out in Go map order
	// (sim.IsMapOrderDivergence).
	OrderMap = "client-go's map order"
	// OrderLab is any other divergence: an order the lab decides and did
	// not decide as in the recorded run.
	OrderLab = "an order the lab should have decided"
)

// DivergenceOrder names the order a divergence of a replay's attempt
// (one of sim.Trace.Divergences) met: OrderController, OrderMap or
// OrderLab.
func DivergenceOrder(d string) string {
	switch {
	case sim.IsSubjectOrderDivergence(d):
		return OrderController
	case sim.IsMapOrderDivergence(d):
		return OrderMap
	}
	return OrderLab
}

// followedLines bounds the distinct divergences HowFollowed lists.
const followedLines = 4

var turnOf = regexp.MustCompile(`\bturn (\d+)\b`)

// HowFollowed says how a replay (a run whose plan names a delivery
// schedule to follow: FollowRecorded's, `cachelab replay`, go test
// -cachelab.plan) followed it, in the words a user reads: its first line
// "followed the recorded run in attempt 3 of at most 100; 2 attempts
// could not: 1 met the controller's own order at turn 42, 1 met
// client-go's map order at turn 10", or, when no attempt could (the last
// went on in the canonical order), "could NOT follow the recorded run
// ...: its verdicts judge another interleaving than the recorded run's";
// then one line per distinct divergence ("  2 attempts: at t=8s, turn 42:
// the schedule names ..."), at most followedLines. "" for a run that
// followed no schedule (tr nil, or its plan names none).
//
// cachelabtest's failure text and -v summary and `cachelab replay` say
// it, so that a replay that could not follow never reads as a plain pass
// or fail.
func HowFollowed(tr *sim.Trace) string {
	if tr == nil || tr.Plan == nil || len(tr.Plan.Schedule) == 0 {
		return ""
	}
	attempts := max(tr.Attempts, 1)
	type seen struct {
		text  string
		order string
		n     int
	}
	var distinct []*seen
	byText := map[string]*seen{}
	perOrder := map[string]int{}
	turns := map[string][]int{}
	for _, d := range tr.Divergences {
		if rest, ok := strings.CutPrefix(d, "attempt "); ok {
			if _, text, ok := strings.Cut(rest, ": "); ok {
				d = text
			}
		}
		order := DivergenceOrder(d)
		perOrder[order]++
		if m := turnOf.FindStringSubmatch(d); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && !slices.Contains(turns[order], n) {
				turns[order] = append(turns[order], n)
			}
		}
		if s := byText[d]; s != nil {
			s.n++
			continue
		}
		s := &seen{text: d, order: order, n: 1}
		byText[d] = s
		distinct = append(distinct, s)
	}
	var met []string
	for _, order := range []string{OrderController, OrderMap, OrderLab} {
		if perOrder[order] == 0 {
			continue
		}
		at := ""
		if ts := turns[order]; len(ts) > 0 {
			slices.Sort(ts)
			words := make([]string, len(ts))
			for i, n := range ts {
				words[i] = strconv.Itoa(n)
			}
			at = " at turn " + strings.Join(words, ", ")
			if len(ts) > 1 {
				at = " at turns " + strings.Join(words, ", ")
			}
		}
		met = append(met, fmt.Sprintf("%d met %s%s", perOrder[order], order, at))
	}
	var b strings.Builder
	if tr.Diverged {
		fmt.Fprintf(&b, "could NOT follow the recorded run: none of its %d attempts did (%s); the last went on in the canonical order from where it left the schedule, so its verdicts judge another interleaving than the recorded run's", attempts, strings.Join(met, ", "))
	} else {
		fmt.Fprintf(&b, "followed the recorded run in attempt %d of at most %d", attempts, max(sim.ReplayAttempts, attempts))
		if len(met) > 0 {
			fmt.Fprintf(&b, "; %d %s before could not: %s", attempts-1, plural(attempts-1, "attempt", "attempts"), strings.Join(met, ", "))
		}
	}
	for i, s := range distinct {
		if i == followedLines {
			fmt.Fprintf(&b, "\n  ... and %d more", len(distinct)-followedLines)
			break
		}
		fmt.Fprintf(&b, "\n  %d %s, %s: %s", s.n, plural(s.n, "attempt", "attempts"), s.order, s.text)
	}
	return b.String()
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// WhyNotFollowed says why FollowRecorded leaves p as it is instead of
// setting it to follow recorded, the run recorded beside it ("" when it
// follows it, or when p names a schedule of its own): a replay that runs
// in the canonical order says so rather than read as the recorded run's.
func WhyNotFollowed(p *sim.Plan, recorded *sim.Trace) string {
	switch {
	case p == nil || len(p.Schedule) > 0:
		return ""
	case recorded == nil:
		return "no recorded run (" + TraceFile + ") beside the plan: it ran in the canonical order, not necessarily the recorded run's"
	case len(recorded.Schedule) == 0 || recorded.Attempts == 0:
		return "the recorded run's " + TraceFile + " holds no delivery schedule to follow (written before runs recorded one): it ran in the canonical order, not necessarily the recorded run's"
	case recorded.Diverged:
		return "the recorded run could not follow a schedule of its own: it ran in the canonical order, not necessarily the recorded run's"
	case recorded.Plan != nil && recorded.Plan.Subject != p.Subject:
		return fmt.Sprintf("the recorded run is of %s, this run of %s: it ran in the canonical order, not the recorded run's", recorded.Plan.Subject, p.Subject)
	case !sameRun(p, recorded.Plan):
		return "the " + TraceFile + " beside the plan is the run of another plan: it ran in the canonical order, not that run's"
	}
	return ""
}
