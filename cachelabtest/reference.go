package cachelabtest

import (
	"encoding/json"
	"flag"
	"fmt"
	"slices"
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
// competitor's and kubelet's steps that a fault made fail in tr (a request
// error the policy drew, a fail-next), since those actions did not happen
// in the run judged. A step that failed for another reason (the object did
// not exist), or whose write was applied before a timeout, stays.
func ReferencePlanOf(tr *sim.Trace) (ref *sim.Plan, faulty bool) {
	failed := stepsFailedByFaults(tr)
	if len(failed) == 0 {
		return ReferencePlan(tr.Plan)
	}
	p := tr.Plan.Clone()
	p.Steps = nil
	for i, s := range tr.Plan.Steps {
		if !failed[i] {
			p.Steps = append(p.Steps, s)
		}
	}
	ref, _ = ReferencePlan(p)
	return ref, true
}

// stepsFailedByFaults returns the API steps of tr's plan that failed with
// no write of theirs applied, after a fault hit their actor's request.
func stepsFailedByFaults(tr *sim.Trace) map[int]bool {
	out := map[int]bool{}
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
			faulted, wrote := false, false
			for _, w := range tr.Records[from:r.Pos] {
				faulted = faulted || (w.Kind == sim.RecFault && w.Target == r.Actor)
				wrote = wrote || (w.Kind == sim.RecWrite && w.Actor == r.Actor)
			}
			if faulted && !wrote {
				out[r.Step] = true
			}
		}
	}
	return out
}

func isZeroPolicy(f sim.FaultPolicy) bool {
	return f.DisconnectEvery == 0 && f.ExpireOnRewatch == 0 && f.StaleReplicaLag == 0 && f.ErrorRate == 0 &&
		f.UnknownOutcomeRate == 0 && f.ContractBreaking == (sim.ContractBreaking{})
}

// referenceCache keeps the end states of the reference runs of one Test
// or Catch, by reference plan: the plans rapid shrinks often keep their
// user actions and lose only faults, and share a reference.
type referenceCache struct {
	mu     sync.Mutex
	states map[string]*invariants.EndState
	order  []string
}

// referenceCacheSize bounds the end states a cache keeps (each a few
// kilobytes).
const referenceCacheSize = 256

func (c *referenceCache) get(k string) (*invariants.EndState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	es, ok := c.states[k]
	return es, ok
}

func (c *referenceCache) put(k string, es *invariants.EndState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.states == nil {
		c.states = map[string]*invariants.EndState{}
	}
	if _, ok := c.states[k]; ok {
		return
	}
	if len(c.order) >= referenceCacheSize {
		delete(c.states, c.order[0])
		c.order = slices.Delete(c.order, 0, 1)
	}
	c.states[k] = es
	c.order = append(c.order, k)
}

// referenceOptions are the comparison's options for a Test's controller.
func (rep *reporter) referenceOptions() invariants.ReferenceOptions {
	return invariants.ReferenceOptions{}
}

// judgeReference adds the matches-reference verdict to r: it runs r's plan
// without faults (with run, in a bubble of the caller's), or takes the end
// state of that reference run from the cache, and compares the end states.
// Nothing is added when the oracle is off (-cachelab.reference=false), the
// plan has no fault, or the run itself failed (its error says why).
func (rep *reporter) judgeReference(r *Result, run func(*sim.Plan) (*sim.Trace, error)) {
	if !*referenceFlag || r.Trace == nil || r.Err != nil {
		return
	}
	if r.Trace.Plan == nil {
		r.Trace.Plan = r.Job.Plan
	}
	ref, faulty := ReferencePlanOf(r.Trace)
	if !faulty {
		return
	}
	r.Verdicts = append(r.Verdicts, rep.refs.verdict(r.Trace, ref, rep.referenceOptions(), run))
}

// verdict compares tr with the end state of the reference plan ref.
func (c *referenceCache) verdict(tr *sim.Trace, ref *sim.Plan, opts invariants.ReferenceOptions, run func(*sim.Plan) (*sim.Trace, error)) invariants.Verdict {
	unknown := func(why string) invariants.Verdict {
		return invariants.Verdict{Invariant: invariants.NameMatchesReference, Status: invariants.Unknown, Reason: why}
	}
	raw, err := json.Marshal(ref)
	if err != nil {
		return unknown("the reference plan does not marshal: " + err.Error())
	}
	k := string(raw)
	es, ok := c.get(k)
	if !ok {
		rtr, err := run(ref)
		switch {
		case err != nil:
			return unknown(fmt.Sprintf("the fault-free reference run failed: %v", err))
		case rtr == nil:
			return unknown("the fault-free reference run left no trace")
		}
		if es, err = invariants.EndStateOf(rtr, opts); err != nil {
			return unknown("the fault-free reference run: " + err.Error())
		}
		c.put(k, es)
	}
	return invariants.MatchesReference(tr, es, opts)
}
