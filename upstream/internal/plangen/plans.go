// Package plangen generates the upstream subjects' random plans: one rapid
// generator of actions and faults, given each controller's workload, so
// that a failing plan shrinks by itself (internal/campaign's Shrink).
package plangen

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"pgregory.net/rapid"

	"github.com/cachelab/cachelab/sim"
)

// Workload is what the plan generator needs to know of one controller's
// workload: its name prefix, the resource the user acts on, and the
// user's object and changes of it. Each func draws from t with labelled
// draws that shrink toward the simplest value (rapid shrinks a draw
// toward 0, a slice toward fewer elements).
type Workload struct {
	// Prefix starts each plan's name: "<Prefix>-<seed>".
	Prefix string
	// Resource is the resource of the user's objects ("jobs").
	Resource string
	// Object is a new object name in namespace default.
	Object func(t *rapid.T, name string) json.RawMessage
	// Change is one merge patch of the object's spec.
	Change func(t *rapid.T) json.RawMessage
	// Burst is merge patches applied at once, one after the other.
	Burst func(t *rapid.T) []json.RawMessage
	// Kubelet, optional, runs the lab's kubelet actor (Pods become Running
	// and Ready): for controllers that wait for ready Pods (Deployment,
	// StatefulSet). It makes no draw.
	Kubelet *sim.Kubelet
	// World, optional, adds what the controller's world needs besides the
	// user's objects (Nodes and their arrivals, a metrics source and its
	// changes), drawn after everything else; its steps are sorted with the
	// episodes'. Draw independent arrivals as a slice (rapid.SliceOfN), so
	// that each shrinks away on its own.
	World func(t *rapid.T, p *sim.Plan)
}

// Gen returns the rapid generator of the workload's random plans for
// subject: small, made of the actions and faults a workload controller
// meets. Objects "a" and "b" in namespace default may exist at the start;
// then one to four episodes, each at a whole second in 1-12 s, are one
// user action (create, change, delete, delete and recreate, a burst of
// changes) wrapped in at most one fault aimed at the controller: its watch
// of pods or of w.Resource held for 1-8 s (a lagging cache), such a hold
// ended by a 410 (relist), its next pod create or delete failed or
// applied-but-timed-out (unknown outcome), a crash and restart (possibly
// with a slow relist), a broken or expired watch, a compaction, or a
// lagging replica serving its lists. Plan-wide, watch latency (fixed or
// uniform, up to 2 s), random request errors or unknown-outcome writes, a
// watch broken every few seconds, and 1 ms of virtual time per request.
//
// Episodes neither read nor change one another: removing one leaves the
// others' times and meaning unchanged, so rapid shrinks a failure to the
// episodes that cause it. Every draw is labelled ("fault", "action",
// "at-s", "hold-s", ...) and shrinks toward the simpler plan: no latency,
// no plan-wide fault, no object at the start, fewer episodes, no fault,
// action create, the earliest second, the shortest hold.
func (w Workload) Gen(subject string) *rapid.Generator[sim.Plan] {
	return rapid.Custom(func(t *rapid.T) sim.Plan {
		p := sim.Plan{
			Version:  sim.PlanVersion,
			Name:     w.Prefix,
			Seed:     1,
			Subject:  subject,
			Deadline: sim.Duration(3 * time.Minute),
			Quiet:    sim.Duration(45 * time.Second),
			Kubelet:  w.Kubelet,
		}
		// Every draw is made whatever the choices before it (a value that
		// is not used is still drawn): a choice shrunk to a simpler one
		// then leaves the draws after it, and the plan's other parts,
		// as they were.
		p.Faults.RequestLatency = sim.Distribution{Kind: "fixed", Max: sim.Duration(time.Millisecond)}
		latency, latencyMS := Weighted(t, "latency", 1, 2, 2), MS(t, "latency-ms", 1, 2000)
		switch latency {
		case 1:
			p.Faults.Latency = sim.Distribution{Kind: "fixed", Max: latencyMS}
		case 2:
			p.Faults.Latency = sim.Distribution{Kind: "uniform", Max: latencyMS}
		}
		requests, percent := Weighted(t, "request-faults", 3, 1, 1), rapid.IntRange(5, 30).Draw(t, "request-fault-percent")
		switch requests {
		case 1:
			p.Faults.ErrorRate = float64(percent) / 100
		case 2:
			p.Faults.UnknownOutcomeRate = float64(percent) / 100
		}
		disconnects, every := Weighted(t, "disconnects", 3, 1), rapid.IntRange(2, 9).Draw(t, "disconnect-every-s")
		if disconnects == 1 {
			p.Faults.ExpireOnRewatch = 0.5
			p.Faults.DisconnectEvery = sim.Duration(time.Duration(every) * time.Second)
		}
		seed := rapid.Uint64Range(1, 1<<20).Draw(t, "seed")
		if p.Faults.Latency.Kind == "uniform" || p.Faults.ErrorRate > 0 || p.Faults.UnknownOutcomeRate > 0 || p.Faults.ExpireOnRewatch > 0 {
			// The seed of the fault policy's random choices matters only
			// to these faults; without them it stays 1, so that plans that
			// differ only in it are one plan.
			p.Seed = seed
		}
		for _, o := range []struct {
			name    string
			weights []int
		}{{"a", []int{1, 2}}, {"b", []int{2, 1}}} {
			exists, obj := Weighted(t, o.name+"-at-start", o.weights...), w.Object(t, o.name)
			if exists == 1 {
				p.Objects = append(p.Objects, obj)
			}
		}
		episodes := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) []sim.Step { return w.episode(t, subject) }), 1, 4).Draw(t, "episodes")
		for _, e := range episodes {
			p.Steps = append(p.Steps, e...)
		}
		if w.World != nil {
			w.World(t, &p)
		}
		SortSteps(p.Steps)
		return p
	})
}

// Plan returns the plan of seed for subject: the plan Gen draws from
// rapid's random bitstream of seed, which is also the first plan rapid.Check
// draws with -rapid.seed=seed (what internal/campaign's Shrink starts
// from). Its name is "<Prefix>-<seed>".
func (w Workload) Plan(seed uint64, subject string) *sim.Plan {
	p := w.Gen(subject).Example(int(seed))
	p.Name = fmt.Sprintf("%s-%d", w.Prefix, seed)
	return &p
}

// faults are an episode's faults, simplest first, with their weights:
// none, a held watch, a held watch ended by a 410, the next pod write
// applied but answered 504 or failed, a crash and restart, a broken or
// expired watch, a compaction, a lagging replica.
var (
	faults       = []string{"none", "hold", "hold-expire", "pod-write", "crash", "break", "expire", "compact", "stale-replica"}
	faultWeights = []int{2, 1, 1, 2, 2, 1, 1, 1, 1}
)

// actions are an episode's user actions, simplest first.
var (
	actions       = []string{"create", "change", "delete", "recreate", "burst"}
	actionWeights = []int{1, 2, 1, 1, 1}
)

// episode draws one action at a whole second, wrapped in at most one
// fault. Every parameter of every fault and action is drawn, used or not,
// so that a fault or action shrunk to a simpler one leaves the draws after
// it as they were.
func (w Workload) episode(t *rapid.T, subject string) []sim.Step {
	at := sim.Duration(time.Duration(rapid.IntRange(1, 12).Draw(t, "at-s")) * time.Second)
	name := []string{"a", "b"}[Weighted(t, "name", 3, 1)]
	fault := faults[Weighted(t, "fault", faultWeights...)]
	watched := func(label string) string { return []string{"pods", w.Resource}[Weighted(t, label, 2, 1)] }
	var (
		holdResource = watched("hold-resource")
		holdFor      = sim.Duration(time.Duration(rapid.IntRange(1, 8).Draw(t, "hold-s")) * time.Second)
		writeVerb    = []string{"create", "delete"}[Weighted(t, "write-verb", 2, 1)]
		writeFails   = Weighted(t, "write-fails", 2, 1) == 1
		code         = rapid.SampledFrom([]int{500, 503, 429}).Draw(t, "code")
		down         = MS(t, "down-ms", 0, 3000)
		slowRelist   = rapid.Bool().Draw(t, "slow-relist")
		relistFor    = sim.Duration(time.Duration(rapid.IntRange(1, 5).Draw(t, "relist-hold-s")) * time.Second)
		lag          = int64(rapid.IntRange(1, 10).Draw(t, "lag"))
		staleFor     = sim.Duration(time.Duration(rapid.IntRange(1, 10).Draw(t, "stale-s")) * time.Second)
	)
	action := actions[Weighted(t, "action", actionWeights...)]
	obj, change, burst := w.Object(t, name), w.Change(t), w.Burst(t)

	step := func(op string) sim.Step {
		return sim.Step{At: at, Actor: "faults", Op: op, Target: subject}
	}
	var before, after []sim.Step
	switch fault {
	case "hold", "hold-expire": // a lagging cache, maybe ended by a 410
		hold := step("hold")
		hold.Resource, hold.For = holdResource, holdFor
		before = append(before, hold)
		if fault == "hold-expire" {
			exp := step("expire")
			exp.Resource, exp.At = hold.Resource, hold.At+hold.For/2
			after = append(after, exp)
		}
	case "pod-write": // the next pod write times out after it was applied, or fails
		arm := step("timeout-next-write")
		arm.Resource, arm.Verb = "pods", writeVerb
		if writeFails {
			arm.Op, arm.Code = "fail-next", code
		}
		before = append(before, arm)
	case "crash": // crash and restart, maybe with a slow relist
		before = append(before, sim.Step{At: at, Actor: "controller", Op: "crash"})
		if slowRelist {
			after = append(after, sim.Step{At: at + down, Actor: "faults", Op: "hold", Target: subject, Resource: holdResource, For: relistFor})
		}
		after = append(after, sim.Step{At: at + down, Actor: "controller", Op: "restart"})
	case "break", "expire":
		st := step(fault)
		st.Resource = holdResource
		after = append(after, st)
	case "compact":
		st := step(fault)
		st.Target = ""
		after = append(after, st)
	case "stale-replica": // a lagging replica serves the lists at RV 0
		st := step(fault)
		st.Target, st.Lag, st.For = "", lag, staleFor
		before = append(before, st)
	}
	user := func(op string) sim.Step {
		return sim.Step{At: at, Actor: "user", Op: op, Resource: w.Resource, Namespace: "default", Name: name}
	}
	patch := func(body json.RawMessage) sim.Step {
		st := user("patch")
		st.Patch = body
		return st
	}
	create := sim.Step{At: at, Actor: "user", Op: "create", Object: obj}
	var steps []sim.Step
	switch action {
	case "create":
		steps = []sim.Step{create}
	case "change":
		steps = []sim.Step{patch(change)}
	case "delete":
		steps = []sim.Step{user("delete")}
	case "recreate":
		steps = []sim.Step{user("delete"), create}
	case "burst":
		for _, body := range burst {
			steps = append(steps, patch(body))
		}
	}
	steps = append(before, steps...)
	return append(steps, after...)
}

// Weighted draws an index of weights, each as likely as its weight,
// labelled label; it shrinks toward index 0.
func Weighted(t *rapid.T, label string, weights ...int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	x := rapid.IntRange(0, total-1).Draw(t, label)
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}

// MS is a whole number of milliseconds in [lo, hi], labelled label.
func MS(t *rapid.T, label string, lo, hi int) sim.Duration {
	return sim.Duration(time.Duration(rapid.IntRange(lo, hi).Draw(t, label)) * time.Millisecond)
}

// SortSteps orders steps by At, keeping list order on ties (steps play in
// that order; sorting makes the plan file read in time order).
func SortSteps(steps []sim.Step) {
	slices.SortStableFunc(steps, func(a, b sim.Step) int {
		switch {
		case a.At < b.At:
			return -1
		case a.At > b.At:
			return 1
		}
		return 0
	})
}

// Story returns the frame of a hand-written plan for subject, the stories
// and findings of each subject's tests: seed 1, a 3-minute deadline, 45 s
// of quiet, 1 ms of virtual time per request, every watch event latency
// late (none when 0), and the kubelet actor making Pods Ready 500 ms after
// it sees them when kubelet is set. The caller adds objects and steps.
func Story(name, subject string, latency time.Duration, kubelet bool) *sim.Plan {
	p := &sim.Plan{
		Version: sim.PlanVersion, Name: name, Seed: 1, Subject: subject,
		Deadline: sim.Duration(3 * time.Minute), Quiet: sim.Duration(45 * time.Second),
		Faults: sim.FaultPolicy{RequestLatency: sim.Distribution{Kind: "fixed", Max: sim.Duration(time.Millisecond)}},
	}
	if latency > 0 {
		p.Faults.Latency = sim.Distribution{Kind: "fixed", Max: sim.Duration(latency)}
	}
	if kubelet {
		p.Kubelet = &sim.Kubelet{ReadyAfter: sim.Duration(500 * time.Millisecond)}
	}
	return p
}
