package lab

import (
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// referenceFlag turns the differential oracle off: no reference run, no
// matches-reference verdict.
var referenceFlag = flag.Bool("cachelab.reference", true, "cachelabtest: run each faulted plan's user actions again without faults and require the same end state (matches-reference)")

// ReferencePlan returns the plan of p's reference run: the same user
// actions at the same times, with no fault. It drops the steps of the
// "faults" actor and the controller's crashes and restarts (a wait-quiet
// of either stays), every random fault of the policy (disconnects, 410s,
// stale replicas, request errors, unknown outcomes, contract-breaking
// faults) and any enforced or shuffled delivery schedule; it keeps the
// seed, the initial objects, the user's, competitor's and kubelet's steps
// and actors, and the timing that is not a fault (watch latency, request
// cost), so that the reference sees what the user did as the faulted run
// did. faulty is false when p has no fault: it is its own reference.
//
// The plan itself is scenarios.ReferencePlan's (the targeted generators
// derive their plans from the same reference run).
func ReferencePlan(p *sim.Plan) (ref *sim.Plan, faulty bool) {
	for _, s := range p.Steps {
		if (s.Actor == sim.ActorFaults || s.Actor == "controller") && s.Op != "wait-quiet" {
			faulty = true
		}
	}
	// Until and ErrorCodes only shape the random faults.
	probe := p.Faults
	probe.Latency, probe.RequestLatency, probe.Until, probe.ErrorCodes = sim.Distribution{}, sim.Distribution{}, 0, nil
	if !isZeroPolicy(probe) || len(p.Schedule) > 0 || p.ShuffleSchedule != 0 {
		faulty = true
	}
	return scenarios.ReferencePlan(p), faulty
}

// ReferencePlanOf returns the plan of the reference run of a faulted run
// whose trace is tr: ReferencePlan of its plan, without the user's,
// competitor's and kubelet's steps that failed in tr with nothing written
// (a request error a fault drew; a create refused because the object was
// still terminating after a crash; a patch of a child a held watch had not
// let the controller create yet): those actions did not happen in the run
// judged, so the reference leaves them out too. A step whose write was
// applied before it failed (a timeout) stays.
func ReferencePlanOf(tr *sim.Trace) (ref *sim.Plan, faulty bool) {
	failed := FailedSteps(tr)
	if len(failed) == 0 {
		return ReferencePlan(tr.Plan)
	}
	p := tr.Plan.Clone()
	p.Steps = nil
	for i, s := range tr.Plan.Steps {
		if _, ok := failed[i]; !ok {
			p.Steps = append(p.Steps, s)
		}
	}
	ref, _ = ReferencePlan(p)
	return ref, true
}

// FailedSteps returns the API steps of tr's plan that failed with no write
// of their actor applied meanwhile, each with its error.
func FailedSteps(tr *sim.Trace) map[int]string {
	out := map[int]string{}
	open := map[int]int{} // step -> position of its RecStep
	for _, r := range tr.Records {
		switch {
		case r.Kind == sim.RecStep && (r.Actor == "user" || r.Actor == "competitor" || r.Actor == "kubelet"):
			open[r.Step] = r.Pos
		case r.Kind == sim.RecNote && strings.HasPrefix(r.Detail, "step failed: "):
			from, ok := open[r.Step]
			if !ok {
				continue
			}
			wrote := false
			for _, w := range tr.Records[from:r.Pos] {
				wrote = wrote || (w.Kind == sim.RecWrite && w.Actor == r.Actor)
			}
			if !wrote {
				out[r.Step] = strings.TrimPrefix(r.Detail, "step failed: ")
			}
		}
	}
	return out
}

// stepText names plan step i of p for a verdict.
func stepText(p *sim.Plan, i int) string {
	if p == nil || i < 0 || i >= len(p.Steps) {
		return fmt.Sprintf("step %d", i)
	}
	return scenarios.FormatStep(p.Steps[i])
}

func isZeroPolicy(f sim.FaultPolicy) bool {
	return f.DisconnectEvery == 0 && f.ExpireOnRewatch == 0 && f.StaleReplicaLag == 0 && f.ErrorRate == 0 &&
		f.UnknownOutcomeRate == 0 && f.ContractBreaking == (sim.ContractBreaking{})
}

// ReferenceCache keeps the end states of the reference runs of one Test
// or Catch, by reference plan: the plans rapid shrinks often keep their
// user actions and lose only faults, and share a reference.
type ReferenceCache struct {
	mu sync.Mutex
	// alignedRuns counts the fault-free runs the aligned searches made
	// (AlignedRuns).
	alignedRuns int
	// moreRuns counts the fault-free runs made beyond each plan's first
	// two (MoreRuns).
	moreRuns int
	states   map[string]*reference
	order    []string
	// lastKey and lastTrace are the plan and trace of the latest reference
	// run (one slot: a failing run's report writes its reference run
	// beside it, and is written right after the verdict).
	lastKey   string
	lastTrace *sim.Trace
}

// Trace returns the trace of the latest reference run if it is of refPlan
// (ok false otherwise: run the plan again, the same run).
func (c *ReferenceCache) Trace(refPlan *sim.Plan) (*sim.Trace, bool) {
	raw, err := json.Marshal(refPlan)
	if err != nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastTrace == nil || c.lastKey != string(raw) {
		return nil, false
	}
	return c.lastTrace, true
}

// ReferenceCacheSize bounds the end states a cache keeps (each a few
// kilobytes).
const ReferenceCacheSize = 256

// reference is what the cache keeps of a reference run: its end state and
// the steps that failed in it (as FormatStep writes them, with the error).
type reference struct {
	// end is the first fault-free run's end state, with what the
	// fault-free runs so far disagree on left out; read and replaced
	// under endMu (endState), as more fault-free runs are made.
	end   *invariants.EndState
	endMu sync.Mutex
	// moreMu serializes the further fault-free runs (moreFaultFree) and
	// guards runs, the fault-free runs made of the plan so far.
	moreMu sync.Mutex
	runs   int
	failed map[string]string
	// unmet is why the reference run failed eventual-convergence, if it
	// did.
	unmet string
	// children maps each step aimed at a child (by its text) to the
	// object it resolved to in the reference run.
	children map[string]string
	// late is the end state of the late-start run (LateStartPlan), run
	// when a faulted run first needs it; guarded by the cache's mutex.
	late *lateStart
	// settled is the end state of the settled run (SettledPlan), run
	// when a faulted run first needs it (after the late-start run did not
	// match); guarded by the cache's mutex.
	settled *lateStart
	// alignMu serializes the aligned searches of faulted runs of this
	// reference plan and guards aligned and searches.
	alignMu sync.Mutex
	// aligned are the aligned runs' end states (AlignedPlan), by plan.
	aligned map[string]*lateStart
	// searches are the aligned searches' runs, by plan.
	searches map[string]*searchRun
}

// lateStart is what the cache keeps of a fault-free run of the
// reference's user actions under other timing (the late-start run, the
// settled run): its end state, or why it is no yardstick.
type lateStart struct {
	end *invariants.EndState
	// how says, for the verdict, how the run differs from the reference
	// ("with the controller started only after the last of them (2s, no
	// fault)").
	how string
	// unusable says why the run is no yardstick (it failed, did not
	// settle, missed its desired state, or could not do a user step), ""
	// when it is one.
	unusable string
	// failed and children are as in reference.
	failed   map[string]string
	children map[string]string
}

// childTargets maps each step of tr aimed at a child (sim.ChildRef), by
// its text, to the object its step record says it resolved to.
func childTargets(tr *sim.Trace) map[string]string {
	out := map[string]string{}
	if tr == nil || tr.Plan == nil {
		return out
	}
	for _, r := range tr.Records {
		if r.Kind != sim.RecStep || r.Step < 0 || r.Step >= len(tr.Plan.Steps) || tr.Plan.Steps[r.Step].Child == (sim.ChildRef{}) || r.Name == "" {
			continue
		}
		out[stepText(tr.Plan, r.Step)] = r.Resource + "/" + r.Namespace + "/" + r.Name
	}
	return out
}

func (c *ReferenceCache) get(k string) (*reference, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	es, ok := c.states[k]
	return es, ok
}

func (c *ReferenceCache) put(k string, es *reference) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.states == nil {
		c.states = map[string]*reference{}
	}
	if _, ok := c.states[k]; ok {
		return
	}
	if len(c.order) >= ReferenceCacheSize {
		delete(c.states, c.order[0])
		c.order = slices.Delete(c.order, 0, 1)
	}
	c.states[k] = es
	c.order = append(c.order, k)
}

// verdict compares tr with the end state of the reference plan ref.
func (c *ReferenceCache) Verdict(tr *sim.Trace, refPlan *sim.Plan, opts invariants.ReferenceOptions, run func(*sim.Plan) (*sim.Trace, error)) invariants.Verdict {
	unknown := func(why string) invariants.Verdict {
		return invariants.Verdict{Invariant: invariants.NameMatchesReference, Status: invariants.Unknown, Reason: why}
	}
	raw, err := json.Marshal(refPlan)
	if err != nil {
		return unknown("the reference plan does not marshal: " + err.Error())
	}
	k := string(raw)
	ref, ok := c.get(k)
	if !ok {
		rtr, err := run(refPlan)
		switch {
		case err != nil:
			return unknown(fmt.Sprintf("the fault-free reference run failed: %v", err))
		case rtr == nil:
			return unknown("the fault-free reference run left no trace")
		}
		if rtr.Plan == nil {
			rtr.Plan = refPlan
		}
		c.mu.Lock()
		c.lastKey, c.lastTrace = k, rtr
		c.mu.Unlock()
		es, err := invariants.EndStateOf(rtr, opts)
		if err != nil {
			return unknown("the fault-free reference run: " + err.Error())
		}
		// A second fault-free run: what differs between the two is the
		// controller's own nondeterminism (a random token, a random name
		// suffix), left out of the comparison. If the second run fails or
		// does not settle, the first is compared whole.
		runs := 2
		if again, err := run(refPlan.Clone()); err == nil && again != nil {
			if again.Plan == nil {
				again.Plan = refPlan
			}
			if es2, err := invariants.EndStateOf(again, opts); err == nil && es.Outcome == "quiet" && es2.Outcome == "quiet" {
				es = invariants.LeaveOutNondeterminism(es, es2)
			}
		}
		ref = &reference{end: es, runs: runs, failed: map[string]string{}, children: childTargets(rtr)}
		for i, why := range FailedSteps(rtr) {
			ref.failed[stepText(rtr.Plan, i)] = why
		}
		// The reference must itself reach the controller's desired state
		// (its Desired, caches equal to the server): a stuck reference is
		// no yardstick for the faulted run.
		if conv, ok := invariants.Lookup(invariants.NameEventualConvergence); ok {
			if v := conv.Check(rtr); v.Status == invariants.Fail {
				ref.unmet = v.Reason
			}
		}
		c.put(k, ref)
	}
	here := childTargets(tr)
	var resolved []string
	for st, target := range ref.children {
		if t, ok := here[st]; ok && t != target {
			resolved = append(resolved, fmt.Sprintf("%q acted on %s in the reference run and on %s in this one", st, target, t))
		}
	}
	if len(resolved) > 0 {
		sort.Strings(resolved)
		return unknown("a step aimed at a child resolved to another object in the two runs (the faults changed which children existed when it ran): " + strings.Join(resolved, "; ") + ": the runs' user actions differ, so their end states cannot be compared")
	}
	if ref.unmet != "" {
		return unknown("the fault-free reference run did not reach the desired state (" + ref.unmet + "): its end state is no yardstick for this run's")
	}
	// A step the reference could not do, which the faulted run did: the
	// two runs did different user actions, and their end states say
	// nothing of the controller.
	failedHere := map[string]bool{}
	for i := range FailedSteps(tr) {
		failedHere[stepText(tr.Plan, i)] = true
	}
	var differ []string
	for st, why := range ref.failed {
		if !failedHere[st] {
			differ = append(differ, fmt.Sprintf("%q (%s)", st, why))
		}
	}
	if len(differ) > 0 {
		sort.Strings(differ)
		return unknown("the fault-free reference run could not do what this run did: " + strings.Join(differ, "; ") + ": the runs' user actions differ, so their end states cannot be compared")
	}
	v := invariants.MatchesReference(tr, ref.endState(), opts)
	if v.Status == invariants.Fail {
		v = c.moreFaultFree(tr, ref, refPlan, opts, run)
	}
	if v.Status != invariants.Fail || !desiredAtEnd(tr) {
		return v
	}
	return c.allowedOtherwise(v, tr, ref, refPlan, opts, run)
}

// MoreReferenceRuns bounds the fault-free runs of a plan made beyond the
// first two, when a faulted run's end state differs from theirs: two runs
// that agree may have drawn alike by chance (a message naming the first
// key met ranging over a 2-entry Go map agrees in half the pairs of runs),
// and each further run halves that chance for such a value.
const MoreReferenceRuns = 2

// endState returns the reference's end state, with what its fault-free
// runs so far disagree on left out.
func (r *reference) endState() *invariants.EndState {
	r.endMu.Lock()
	defer r.endMu.Unlock()
	return r.end
}

// moreFaultFree judges tr, whose end state differs from the reference's,
// after more fault-free runs of refPlan (up to MoreReferenceRuns for the
// plan, whatever the number of faulted runs judged against it): each
// run's disagreements with the first are left out too (LeaveOutNondeterminism),
// and the runs stop once tr matches. A value every fault-free run agreed
// on still fails; a path on which any two of them disagree is left out
// whatever this run holds there, as with the first two runs. The failing
// verdict's detail says how many fault-free runs agree.
func (c *ReferenceCache) moreFaultFree(tr *sim.Trace, ref *reference, refPlan *sim.Plan, opts invariants.ReferenceOptions, run func(*sim.Plan) (*sim.Trace, error)) invariants.Verdict {
	ref.moreMu.Lock()
	defer ref.moreMu.Unlock()
	for {
		end := ref.endState()
		v := invariants.MatchesReference(tr, end, opts)
		if v.Status != invariants.Fail || ref.runs >= 2+MoreReferenceRuns {
			if v.Status == invariants.Fail {
				v.Detail = strings.TrimRight(v.Detail, "\n") + fmt.Sprintf("\n%d fault-free runs of the same user actions were made; what any two of them disagree on is left out\n", ref.runs)
			}
			return v
		}
		ref.runs++
		c.mu.Lock()
		c.moreRuns++
		c.mu.Unlock()
		again, err := run(refPlan.Clone())
		if err != nil || again == nil {
			continue
		}
		if again.Plan == nil {
			again.Plan = refPlan
		}
		es, err := invariants.EndStateOf(again, opts)
		if err != nil || es.Outcome != "quiet" {
			continue
		}
		ref.endMu.Lock()
		ref.end = invariants.LeaveOutNondeterminism(ref.end, es)
		ref.endMu.Unlock()
	}
}

// MoreRuns returns how many fault-free runs beyond each plan's first two
// the verdicts so far made (MoreReferenceRuns per plan at most).
func (c *ReferenceCache) MoreRuns() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.moreRuns
}

// LateStartPlan returns ref (a reference plan) with the controller started
// only after the last of its steps: it crashes at 0s, before any of its
// requests is answered, and restarts after the last step (at that step's
// time, played after it). What such a controller sees is what one
// deployed after its users acted sees: only the result of their actions,
// none of their intermediate states. ok is false when no step comes after
// 0s (there is nothing to miss).
func LateStartPlan(ref *sim.Plan) (late *sim.Plan, ok bool) {
	if ref == nil {
		return nil, false
	}
	var last sim.Duration
	for _, s := range ref.Steps {
		last = max(last, s.At)
	}
	if last == 0 {
		return nil, false
	}
	late = ref.Clone()
	late.Steps = append([]sim.Step{{At: 0, Actor: "controller", Op: "crash"}}, late.Steps...)
	late.Steps = append(late.Steps, sim.Step{At: last, Actor: "controller", Op: "restart"})
	return late, true
}

// SettledPlan returns ref (a reference plan) with the controller given
// time to settle on each of the user's states before the next: a user
// wait-quiet step before each group of steps due at one time after 0s
// (the wait lasts until nothing has changed for the plan's quiet period;
// the steps after it are played when it ends), and a deadline long enough
// for every wait. What such a controller sees is what one sees whose
// users act slowly: every intermediate state, each acted on in full. A
// faulted controller that saw an older state late (a watch held over the
// user's change) may act as it would have, had it been that fast: a
// StatefulSet's Pods created from the template before the change, kept
// by OnDelete or a partition. ok is false when no step comes after 0s.
func SettledPlan(ref *sim.Plan) (settled *sim.Plan, ok bool) {
	if ref == nil {
		return nil, false
	}
	steps := slices.Clone(ref.Steps)
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].At < steps[j].At })
	settled = ref.Clone()
	settled.Steps = nil
	waits := 0
	for i, s := range steps {
		if s.At > 0 && s.Op != "wait-quiet" && (i == 0 || steps[i-1].At != s.At) {
			settled.Steps = append(settled.Steps, sim.Step{At: s.At, Actor: "user", Op: "wait-quiet"})
			waits++
		}
		settled.Steps = append(settled.Steps, s)
	}
	if waits == 0 {
		return nil, false
	}
	deadline := ref.Deadline
	if deadline == 0 {
		deadline = sim.Duration(sim.DefaultDeadline)
	}
	settled.Deadline = deadline * sim.Duration(waits+1)
	return settled, true
}

// desiredAtEnd reports whether tr's subject reports a desired state
// (RecDesired records) and its last one says it held.
func desiredAtEnd(tr *sim.Trace) bool {
	held := false
	for _, r := range tr.Records {
		if r.Kind == sim.RecDesired {
			held = r.Value
		}
	}
	return held
}

// allowedOtherwise judges a faulted run whose end state differs from the
// reference's (v, a failure) and whose subject's desired state held at its
// end. Some controllers' end states depend, with no fault at all, on which
// of the user's states they saw, and when: a StatefulSet's Pod below its
// partition keeps the template it was created from, the scale an HPA set
// stays when the HPA is deleted. The plan then allows several end states.
// Two more fault-free runs of the same user actions stand for the
// extremes: a controller started after the user's last action (it saw
// none of the states on the way: LateStartPlan) and one given time to
// settle on each state before the next (it saw every state and acted on
// it in full: SettledPlan). Between them, a third stands for the faulted
// run's own timing: the user's steps played when the fault-free
// controller had acted as the faulted one had before each (AlignedPlan,
// within AlignedRunBudget runs), which must also fail no invariant. When
// the faulted run's end state equals one of theirs (compared as the
// reference is, leaving out what the two fault-free reference runs left
// out), and that run settled, reached the desired state and did the same
// user actions, the verdict passes and says which run matched and what
// the reference holds otherwise. Otherwise v stands, its detail listing
// the runs tried: a faulted run that differs from all of them still
// fails, and so does one whose subject reports no desired state (its end
// state is then its only contract).
func (c *ReferenceCache) allowedOtherwise(v invariants.Verdict, tr *sim.Trace, ref *reference, refPlan *sim.Plan, opts invariants.ReferenceOptions, run func(*sim.Plan) (*sim.Trace, error)) invariants.Verdict {
	alternatives := []struct {
		slot *(*lateStart)
		plan func(*sim.Plan) (*sim.Plan, bool)
		how  func(p *sim.Plan) string
	}{
		{&ref.late, LateStartPlan, func(p *sim.Plan) string {
			return "with the controller started only after the last of them (" + p.Steps[len(p.Steps)-1].At.String() + ", no fault)"
		}},
		{&ref.settled, SettledPlan, func(*sim.Plan) string {
			return "with the controller given time to settle on each of them before the next (no fault)"
		}},
	}
	var tried []string
	for _, alt := range alternatives {
		c.mu.Lock()
		a := *alt.slot
		c.mu.Unlock()
		if a == nil {
			a = runAlternative(refPlan, alt.plan, alt.how, ref, opts, false, run)
			c.mu.Lock()
			*alt.slot = a
			c.mu.Unlock()
		}
		if pass, ok := matchesAlternative(v, tr, a, opts); ok {
			return pass
		}
		tried = append(tried, triedText(a))
	}
	a := c.alignedRun(tr, ref, refPlan, opts, run)
	if pass, ok := matchesAlternative(v, tr, a, opts); ok {
		return pass
	}
	tried = append(tried, triedText(a))
	v.Detail = strings.TrimRight(v.Detail, "\n") + "\nfault-free runs of the same user actions under other timing, none of which ends so:\n- " + strings.Join(tried, "\n- ") + "\n"
	return v
}

// triedText says, for a failing verdict's detail, which fault-free run a
// was and why it is no match.
func triedText(a *lateStart) string {
	switch {
	case a.how == "":
		return "not run: " + a.unusable
	case a.unusable != "":
		return a.how + ": no yardstick: " + a.unusable
	}
	return a.how + ": ends otherwise"
}

// alignedRun returns the aligned run of tr (AlignedPlan, within
// AlignedRunBudget), from ref's cache or run now, or why there is none.
func (c *ReferenceCache) alignedRun(tr *sim.Trace, ref *reference, refPlan *sim.Plan, opts invariants.ReferenceOptions, run func(*sim.Plan) (*sim.Trace, error)) *lateStart {
	ref.alignMu.Lock()
	defer ref.alignMu.Unlock()
	if ref.searches == nil {
		ref.searches, ref.aligned = map[string]*searchRun{}, map[string]*lateStart{}
	}
	p, groups, runs, err := alignedPlan(tr, refPlan, AlignedRunBudget, ref.searches, run)
	c.countAligned(runs)
	if err != nil {
		return &lateStart{unusable: "no run aligned with this run's timing: " + err.Error()}
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return &lateStart{unusable: "the aligned plan does not marshal: " + err.Error()}
	}
	if a, ok := ref.aligned[string(raw)]; ok {
		return a
	}
	how := alignedHow(groups, len(groups)+1)
	a := runAlternative(refPlan, func(*sim.Plan) (*sim.Plan, bool) { return p, true }, func(*sim.Plan) string { return how }, ref, opts, true, run)
	c.countAligned(1)
	if len(ref.aligned) < alignedCacheSize {
		ref.aligned[string(raw)] = a
	}
	return a
}

func (c *ReferenceCache) countAligned(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.alignedRuns += n
}

// AlignedRuns returns how many fault-free runs the aligned searches of
// the verdicts so far made (runs taken from the cache not counted): the
// cost of judging faulted runs against timings aligned with their own.
func (c *ReferenceCache) AlignedRuns() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.alignedRuns
}

// matchesAlternative returns the passing verdict when tr ends as the
// alternative fault-free run a did, with the same user actions.
func matchesAlternative(v invariants.Verdict, tr *sim.Trace, a *lateStart, opts invariants.ReferenceOptions) (invariants.Verdict, bool) {
	if a.unusable != "" {
		return v, false
	}
	here := childTargets(tr)
	for st, target := range a.children {
		if t, ok := here[st]; ok && t != target {
			return v, false
		}
	}
	failedHere := map[string]bool{}
	for i := range FailedSteps(tr) {
		failedHere[stepText(tr.Plan, i)] = true
	}
	for st := range a.failed {
		if !failedHere[st] {
			return v, false
		}
	}
	lv := invariants.MatchesReference(tr, a.end, opts)
	if lv.Status != invariants.Pass {
		return v, false
	}
	equal := strings.Replace(lv.Reason, "the fault-free reference run's", "that of the same user actions "+a.how+", which the plan allows", 1)
	return invariants.Verdict{Invariant: invariants.NameMatchesReference, Status: invariants.Pass,
		Reason: fmt.Sprintf("%s. Against the fault-free reference run, whose controller saw the user's states on the way: %s. This controller's end state depends on which of the user's states it saw, "+
			"and when, and its desired state holds at the end of all three runs", equal, v.Reason),
		Detail: "how the fault-free reference run ends otherwise:\n" + v.Detail}, true
}

// runAlternative runs the alternative plan that plan derives from
// refPlan (LateStartPlan, SettledPlan) and keeps its end state, with what
// the reference's two fault-free runs left out, or why it is no
// yardstick.
//
// When clean is true the run must also fail no invariant (measurements
// aside): a run whose timing races the controller (the aligned run) may
// reach its end state through a bug of the controller's own, and such an
// end state is no evidence of what the plan allows.
func runAlternative(refPlan *sim.Plan, plan func(*sim.Plan) (*sim.Plan, bool), how func(*sim.Plan) string, ref *reference, opts invariants.ReferenceOptions, clean bool, run func(*sim.Plan) (*sim.Trace, error)) *lateStart {
	p, ok := plan(refPlan)
	if !ok {
		return &lateStart{unusable: "no step after 0s"}
	}
	out := &lateStart{how: how(p), failed: map[string]string{}}
	tr, err := run(p)
	switch {
	case err != nil:
		out.unusable = "the run failed: " + err.Error()
		return out
	case tr == nil:
		out.unusable = "the run left no trace"
		return out
	}
	if tr.Plan == nil {
		tr.Plan = p
	}
	es, err := invariants.EndStateOf(tr, opts)
	if err != nil {
		out.unusable = err.Error()
		return out
	}
	if es.Outcome != "quiet" {
		out.unusable = "the run did not settle"
		return out
	}
	if !desiredAtEnd(tr) {
		out.unusable = "the run did not reach the desired state"
		return out
	}
	if conv, ok := invariants.Lookup(invariants.NameEventualConvergence); ok {
		if cv := conv.Check(tr); cv.Status == invariants.Fail {
			out.unusable = "the run failed eventual-convergence: " + cv.Reason
			return out
		}
	}
	if clean {
		for _, cv := range CheckTrace(tr) {
			if cv.Failed() && !IsMeasurement(cv.Invariant) {
				out.unusable = "the run failed " + cv.Invariant + ": " + cv.Reason
				return out
			}
		}
	}
	es.Nondeterministic = ref.endState().Nondeterministic
	out.end = es
	out.children = childTargets(tr)
	for i, why := range FailedSteps(tr) {
		out.failed[stepText(tr.Plan, i)] = why
	}
	return out
}

// ReferenceOn reports whether the differential oracle is on
// (-cachelab.reference, true unless turned off).
func ReferenceOn() bool { return *referenceFlag }

// JudgeReference adds the matches-reference verdict to r: it runs r's
// plan without faults (with run, in a bubble of the caller's), or takes
// the end state of those reference runs from refs, and compares the end
// states. Nothing is added when the oracle is off (-cachelab.reference=false),
// the plan has no fault, or the run itself failed (its error says why).
// cachelabtest's Test and the command's batches (SetJudgedAsTest) judge
// through it.
func JudgeReference(r *Result, refs *ReferenceCache, opts invariants.ReferenceOptions, run func(*sim.Plan) (*sim.Trace, error)) {
	if !ReferenceOn() || r.Trace == nil || r.Err != nil {
		return
	}
	if r.Trace.Plan == nil {
		r.Trace.Plan = r.Job.Plan
	}
	ref, faulty := ReferencePlanOf(r.Trace)
	if !faulty {
		return
	}
	r.Verdicts = append(r.Verdicts, refs.Verdict(r.Trace, ref, opts, run))
}
