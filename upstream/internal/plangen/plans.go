// Package plangen generates the upstream subjects' random plans: one
// generator of actions and faults, given each controller's workload.
package plangen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cachelab/cachelab/sim"
)

// Workload is what a plan generator needs to know of one controller's
// workload: its name prefix, the resource the user acts on, and the
// user's object and changes of it. Each func draws from r; their draws,
// in the order Plan makes them, fix a seed's plan, so a change of a
// Workload's draws changes every plan it generates.
type Workload struct {
	// Prefix starts each plan's name: "<Prefix>-<seed>".
	Prefix string
	// Resource is the resource of the user's objects ("jobs").
	Resource string
	// Object is a new object name in namespace default.
	Object func(r *rand.Rand, name string) json.RawMessage
	// Change is one merge patch of the object's spec.
	Change func(r *rand.Rand) json.RawMessage
	// Burst is merge patches applied at once, one after the other.
	Burst func(r *rand.Rand) []json.RawMessage
	// Kubelet, optional, runs the lab's kubelet actor (Pods become Running
	// and Ready): for controllers that wait for ready Pods (Deployment,
	// StatefulSet). It makes no draw.
	Kubelet *sim.Kubelet
}

// Plan returns the random plan of seed for subject (the same seed gives
// the same plan), small and made of the actions and faults a workload
// controller meets: objects "a" and "b" in namespace default may exist at
// the start; then one to four episodes, each at a whole second of its own,
// are one user action (create, change, delete, delete and recreate, a
// burst of changes) wrapped in at most one fault aimed at the controller:
// its watch of pods or of w.Resource held for 1-8 s (a lagging cache),
// such a hold ended by a 410 (relist), its next pod create or delete
// failed or applied-but-timed-out (unknown outcome), a crash and restart
// (possibly with a slow relist), a broken or expired watch, a compaction,
// or a lagging replica serving its lists. Plan-wide, watch latency (fixed
// or uniform, up to 2 s), random request errors or unknown-outcome writes,
// and 1 ms of virtual time per request. The PCG stream is seeded with
// (seed, 0x5647).
func (w Workload) Plan(seed uint64, subject string) *sim.Plan {
	r := rand.New(rand.NewPCG(seed, 0x5647))
	p := &sim.Plan{
		Version:  sim.PlanVersion,
		Name:     fmt.Sprintf("%s-%d", w.Prefix, seed),
		Seed:     seed,
		Subject:  subject,
		Deadline: sim.Duration(3 * time.Minute),
		Quiet:    sim.Duration(45 * time.Second),
		Kubelet:  w.Kubelet,
	}
	p.Faults.RequestLatency = sim.Distribution{Kind: "fixed", Max: sim.Duration(time.Millisecond)}
	switch r.IntN(5) {
	case 1, 2:
		p.Faults.Latency = sim.Distribution{Kind: "fixed", Max: ms(r, 1, 2000)}
	case 3, 4:
		p.Faults.Latency = sim.Distribution{Kind: "uniform", Max: ms(r, 1, 2000)}
	}
	switch r.IntN(5) {
	case 1:
		p.Faults.ErrorRate = float64(5+r.IntN(26)) / 100
	case 2:
		p.Faults.UnknownOutcomeRate = float64(5+r.IntN(26)) / 100
	}
	if r.IntN(4) == 0 {
		p.Faults.ExpireOnRewatch = 0.5
		p.Faults.DisconnectEvery = sim.Duration(time.Duration(2+r.IntN(8)) * time.Second)
	}
	if r.IntN(3) != 0 {
		p.Objects = append(p.Objects, w.Object(r, "a"))
	}
	if r.IntN(3) == 0 {
		p.Objects = append(p.Objects, w.Object(r, "b"))
	}
	used := map[int]bool{}
	for range 1 + r.IntN(4) {
		s := 1 + r.IntN(12)
		for used[s] {
			s = 1 + r.IntN(12)
		}
		used[s] = true
		p.Steps = append(p.Steps, w.episode(r, time.Duration(s)*time.Second, subject)...)
	}
	sortSteps(p.Steps)
	return p
}

// episode returns one action at at, wrapped in at most one fault.
func (w Workload) episode(r *rand.Rand, at time.Duration, subject string) []sim.Step {
	name := []string{"a", "a", "a", "b"}[r.IntN(4)]
	fault := func(op string) sim.Step {
		return sim.Step{At: sim.Duration(at), Actor: "faults", Op: op, Target: subject}
	}
	watched := func() string { return []string{"pods", "pods", w.Resource}[r.IntN(3)] }
	var before, after []sim.Step
	switch r.IntN(10) {
	case 0, 1: // no fault
	case 2, 3: // a lagging cache, maybe ended by a 410
		hold := fault("hold")
		hold.Resource = watched()
		hold.For = sim.Duration(time.Duration(1+r.IntN(8)) * time.Second)
		before = append(before, hold)
		if r.IntN(2) == 0 {
			exp := fault("expire")
			exp.Resource, exp.At = hold.Resource, hold.At+hold.For/2
			after = append(after, exp)
		}
	case 4, 5: // the next pod write times out after it was applied, or fails
		arm := fault("timeout-next-write")
		arm.Resource = "pods"
		arm.Verb = []string{"create", "create", "delete"}[r.IntN(3)]
		if r.IntN(3) == 0 {
			arm.Op = "fail-next"
			arm.Code = []int{500, 503, 429}[r.IntN(3)]
		}
		before = append(before, arm)
	case 6, 7: // crash and restart, maybe with a slow relist
		before = append(before, sim.Step{At: sim.Duration(at), Actor: "controller", Op: "crash"})
		restart := sim.Duration(at) + ms(r, 0, 3000)
		if r.IntN(2) == 0 {
			after = append(after, sim.Step{At: restart, Actor: "faults", Op: "hold", Target: subject,
				Resource: watched(), For: sim.Duration(time.Duration(1+r.IntN(5)) * time.Second)})
		}
		after = append(after, sim.Step{At: restart, Actor: "controller", Op: "restart"})
	case 8: // a broken or expired watch, or a compaction
		st := fault([]string{"break", "expire", "compact"}[r.IntN(3)])
		if st.Op == "compact" {
			st.Target = ""
		} else {
			st.Resource = watched()
		}
		after = append(after, st)
	case 9: // a lagging replica serves the lists at RV 0
		st := fault("stale-replica")
		st.Target = ""
		st.Lag = int64(1 + r.IntN(10))
		st.For = sim.Duration(time.Duration(1+r.IntN(10)) * time.Second)
		before = append(before, st)
	}
	user := func(op string) sim.Step {
		return sim.Step{At: sim.Duration(at), Actor: "user", Op: op, Resource: w.Resource, Namespace: "default", Name: name}
	}
	patch := func(body json.RawMessage) sim.Step {
		st := user("patch")
		st.Patch = body
		return st
	}
	create := sim.Step{At: sim.Duration(at), Actor: "user", Op: "create", Object: w.Object(r, name)}
	var action []sim.Step
	switch r.IntN(6) {
	case 0:
		action = []sim.Step{create}
	case 1, 2:
		action = []sim.Step{patch(w.Change(r))}
	case 3:
		action = []sim.Step{user("delete")}
	case 4:
		action = []sim.Step{user("delete"), create}
	case 5:
		for _, body := range w.Burst(r) {
			action = append(action, patch(body))
		}
	}
	steps := append(before, action...)
	return append(steps, after...)
}

// ms is a whole number of milliseconds drawn from [lo, hi].
func ms(r *rand.Rand, lo, hi int) sim.Duration {
	return sim.Duration(time.Duration(lo+r.IntN(hi-lo+1)) * time.Millisecond)
}

// sortSteps orders steps by At, keeping list order on ties.
func sortSteps(steps []sim.Step) {
	for i := 1; i < len(steps); i++ {
		for j := i; j > 0 && steps[j].At < steps[j-1].At; j-- {
			steps[j], steps[j-1] = steps[j-1], steps[j]
		}
	}
}
