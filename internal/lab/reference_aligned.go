package lab

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// AlignedRunBudget bounds the fault-free runs one faulted run's aligned
// search (AlignedPlan) may cost: one run per group of the user's steps
// after 0s, to find when its controller has made what the faulted run's
// had made before that group, and the aligned run itself. A plan with
// more groups than the budget allows is not searched (the verdict says
// so).
const AlignedRunBudget = 6

// alignedCacheSize bounds, per reference plan, the aligned runs and the
// searches' runs a ReferenceCache keeps (rapid's shrinking judges many
// faulted runs of one reference plan).
const alignedCacheSize = 32

// alignStep is one group of a reference plan's steps due at one time
// after 0s: the time the plan gives it and the time the aligned plan
// moves it to.
type alignStep struct {
	at, to sim.Duration
}

// AlignedPlan returns a fault-free plan of refPlan's user actions (ref
// a reference plan, tr the faulted run it is the reference of) whose
// steps come when the controller had acted as it had in tr. For each
// group of steps due at one time after 0s, tr says which creates and
// deletes the subject had made before the group was played (by object,
// counted) and how long after the last of them (or after the group
// before, if that came later) the group came. The aligned plan plays the
// group as long after the write that completes those creates and deletes
// in a fault-free run of the groups before it. Request faults, a held
// watch or a crash make a controller act earlier or later relative to
// the user than it does with no fault; the aligned run asks whether a
// controller that happened to be as fast, or as slow, would have ended
// as tr did.
//
// The search runs refPlan's steps at 0s and the groups already placed
// (one fault-free run per group, with run), then builds the plan with
// every group placed; runs is how many runs it made. err says why there
// is no aligned plan: refPlan waits for quiet, has no step after 0s or
// more groups than budget runs allow, a group was not played in tr, or a
// fault-free run never made what tr's controller had made before a group.
// A step moved later than refPlan's deadline moves the deadline as far.
// Objects are matched by name; a generated name no fault-free write has
// (a random suffix) by its generateName.
func AlignedPlan(tr *sim.Trace, refPlan *sim.Plan, budget int, run func(*sim.Plan) (*sim.Trace, error)) (aligned *sim.Plan, runs int, err error) {
	aligned, _, runs, err = alignedPlan(tr, refPlan, budget, nil, run)
	return aligned, runs, err
}

// alignedPlan is AlignedPlan, and returns where it put each group of
// steps; writes, when not nil, keeps the searches' runs (their subject's
// writes, or why the run is of no use) by plan, for the next faulted run
// of the same reference plan.
func alignedPlan(tr *sim.Trace, refPlan *sim.Plan, budget int, writes map[string]*searchRun, run func(*sim.Plan) (*sim.Trace, error)) (*sim.Plan, []alignStep, int, error) {
	if tr == nil || refPlan == nil {
		return nil, nil, 0, fmt.Errorf("no trace or no plan")
	}
	var groups []alignStep
	for _, s := range refPlan.Steps {
		if s.Op == "wait-quiet" {
			return nil, nil, 0, fmt.Errorf("the plan waits for quiet (its steps' times are not the times they were played)")
		}
		if s.At > 0 && !slices.ContainsFunc(groups, func(g alignStep) bool { return g.at == s.At }) {
			groups = append(groups, alignStep{at: s.At})
		}
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].at < groups[j].at })
	switch {
	case len(groups) == 0:
		return nil, nil, 0, fmt.Errorf("no step after 0s")
	case len(groups)+1 > budget:
		return nil, nil, 0, fmt.Errorf("%d groups of steps after 0s need %d fault-free runs, over the budget of %d", len(groups), len(groups)+1, budget)
	}
	// What the subject had made in tr before each group was played, and
	// how long after its last such write (or the group before, if later)
	// the group came.
	before := make([][]made, len(groups))
	gaps := make([]sim.Duration, len(groups))
	var playedPrev sim.Duration
	for g := range groups {
		pos, ok := playedAt(tr, groups[g].at)
		if !ok {
			return nil, nil, 0, fmt.Errorf("the steps at %s were not played in this run", groups[g].at)
		}
		anchor := playedPrev
		before[g] = subjectMakes(tr, pos)
		for _, k := range before[g] {
			anchor = max(anchor, k.at)
		}
		played := tr.Records[pos].At
		gaps[g] = max(played-anchor, 0)
		playedPrev = played
	}
	runs := 0
	var prev sim.Duration
	for g := range groups {
		p := placed(refPlan, groups[:g], false)
		made, err := searchWrites(p, writes, run, &runs)
		if err != nil {
			return nil, nil, runs, fmt.Errorf("the fault-free run of the steps before %s: %v", groups[g].at, err)
		}
		at, missing := completes(made, before[g])
		if missing != "" {
			return nil, nil, runs, fmt.Errorf("a fault-free run of the steps before %s never made what this run's controller had made before them (%s)", groups[g].at, missing)
		}
		anchor := max(at, prev)
		groups[g].to = anchor + gaps[g]
		if gaps[g] == 0 && anchor == at && at > 0 {
			groups[g].to += sim.Duration(time.Microsecond) // after the write, not beside it
		}
		prev = groups[g].to
	}
	return placed(refPlan, groups, true), groups, runs, nil
}

// searchRun is what the aligned search keeps of one fault-free run: the
// subject's creates and deletes, or why the run is of no use.
type searchRun struct {
	made []made
	err  error
}

// searchWrites runs p (or takes its run from cache) and returns the
// subject's creates and deletes in it.
func searchWrites(p *sim.Plan, cache map[string]*searchRun, run func(*sim.Plan) (*sim.Trace, error), runs *int) ([]made, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	k := string(raw)
	if s, ok := cache[k]; ok {
		return s.made, s.err
	}
	*runs++
	s := &searchRun{}
	switch rtr, err := run(p); {
	case err != nil:
		s.err = fmt.Errorf("the run failed: %v", err)
	case rtr == nil:
		s.err = fmt.Errorf("the run left no trace")
	default:
		if rtr.Plan == nil {
			rtr.Plan = p
		}
		s.made = subjectMakes(rtr, len(rtr.Records))
	}
	if cache != nil && len(cache) < alignedCacheSize {
		cache[k] = s
	}
	return s.made, s.err
}

// placed returns refPlan with its steps at 0s, the steps of groups moved
// to their groups' new times and, when all is true, nothing else left
// out (every group of refPlan is then in groups). A step moved later
// moves the deadline as far.
func placed(refPlan *sim.Plan, groups []alignStep, all bool) *sim.Plan {
	p := refPlan.Clone()
	p.Steps = nil
	var later sim.Duration
	for _, s := range refPlan.Steps {
		if s.At == 0 {
			p.Steps = append(p.Steps, s)
			continue
		}
		i := slices.IndexFunc(groups, func(g alignStep) bool { return g.at == s.At })
		if i < 0 {
			if all {
				p.Steps = append(p.Steps, s)
			}
			continue
		}
		later = max(later, groups[i].to-s.At)
		s.At = groups[i].to
		p.Steps = append(p.Steps, s)
	}
	sort.SliceStable(p.Steps, func(i, j int) bool { return p.Steps[i].At < p.Steps[j].At })
	if later > 0 {
		deadline := p.Deadline
		if deadline == 0 {
			deadline = sim.Duration(sim.DefaultDeadline)
		}
		p.Deadline = deadline + later
	}
	return p
}

// playedAt returns the position of the first record of a step of tr's
// plan due at at, by an actor of the user's actions (not a fault, not
// the controller's crash or restart).
func playedAt(tr *sim.Trace, at sim.Duration) (int, bool) {
	if tr.Plan == nil {
		return 0, false
	}
	for _, r := range tr.Records {
		if r.Kind != sim.RecStep || r.Step < 0 || r.Step >= len(tr.Plan.Steps) {
			continue
		}
		s := tr.Plan.Steps[r.Step]
		if s.At == at && s.Actor != sim.ActorFaults && s.Actor != "controller" {
			return r.Pos, true
		}
	}
	return 0, false
}

// made is one create or delete of the subject: the object, when, and
// for a generated name (generateName and a suffix) the object as
// generateName and "*".
type made struct {
	key, generated string
	at             sim.Duration
}

// subjectMakes returns the subject's creates and deletes among tr's
// records before position end, in order. Events are left out, as the
// end-state comparison leaves them out (their names are made of times).
func subjectMakes(tr *sim.Trace, end int) []made {
	actors := invariants.SubjectActors(tr)
	var out []made
	for _, r := range tr.Records[:min(end, len(tr.Records))] {
		if r.Kind != sim.RecWrite || r.Name == "" || !actors[r.Actor] || (r.Verb != "create" && r.Verb != "delete") {
			continue
		}
		res := r.Resource
		if i := strings.IndexByte(res, '.'); i >= 0 {
			res = res[:i]
		}
		if res == "events" {
			continue
		}
		m := made{key: r.Verb + " " + res + "/" + r.Namespace + "/" + r.Name, at: r.At}
		var obj struct {
			Metadata struct {
				GenerateName string `json:"generateName"`
			} `json:"metadata"`
		}
		if json.Unmarshal(r.Object, &obj) == nil {
			if g := obj.Metadata.GenerateName; g != "" && strings.HasPrefix(r.Name, g) && len(r.Name) > len(g) {
				m.generated = r.Verb + " " + res + "/" + r.Namespace + "/" + g + "*"
			}
		}
		out = append(out, m)
	}
	return out
}

// completes returns the time of the write of writes that completes want
// (each object counted as often as want has it), 0 when want is empty,
// or the objects still missing at the end of writes. An object is
// matched by its name; one whose generated name no write of writes has
// (a random suffix) by its generateName.
func completes(writes, want []made) (sim.Duration, string) {
	if len(want) == 0 {
		return 0, ""
	}
	exact := map[string]bool{}
	for _, w := range writes {
		exact[w.key] = true
	}
	left := map[string]int{}
	for _, w := range want {
		k := w.key
		if !exact[k] && w.generated != "" {
			k = w.generated
		}
		left[k]++
	}
	need := len(want)
	for _, w := range writes {
		k := w.key
		if left[k] == 0 && w.generated != "" {
			k = w.generated
		}
		if left[k] > 0 {
			left[k]--
			if need--; need == 0 {
				return w.at, ""
			}
		}
	}
	var missing []string
	for k, n := range left {
		if n > 0 {
			missing = append(missing, fmt.Sprintf("%s x%d", k, n))
		}
	}
	sort.Strings(missing)
	return 0, strings.Join(missing, ", ")
}

// alignedHow says, for the verdict, where the aligned plan put the user's
// steps.
func alignedHow(groups []alignStep, runs int) string {
	var moves []string
	for _, g := range groups {
		moves = append(moves, fmt.Sprintf("%s at %s", g.at, g.to))
	}
	return fmt.Sprintf("with the user's steps due at %s played instead, each group as long after the controller had made the creates and deletes it had made before it in this run as in this run (no fault; found in %d fault-free runs)",
		strings.Join(moves, ", "), runs)
}
