package job

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cachelab/cachelab/sim"
)

// Plan returns the random plan of seed for subject (the same seed gives the
// same plan): Jobs "a" and "b" in namespace default (parallelism 1-5,
// completions 5-20), then one to four episodes, each at a whole second of
// its own: a user action (create, change parallelism, delete, delete and
// recreate, suspend or resume) wrapped in at most one fault aimed at the
// controller, as upstream/replicaset's plans are (held or expired watches,
// unknown-outcome or failed Pod writes, crash and restart, broken or
// expired watches, compaction, a stale replica), with plan-wide watch
// latency, request errors or unknown-outcome writes, and 1 ms per request.
func Plan(seed uint64, subject string) *sim.Plan {
	r := rand.New(rand.NewPCG(seed, 0x5647))
	p := &sim.Plan{
		Version: sim.PlanVersion, Name: fmt.Sprintf("job-%d", seed), Seed: seed, Subject: subject,
		Deadline: sim.Duration(3 * time.Minute), Quiet: sim.Duration(45 * time.Second),
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
		p.Objects = append(p.Objects, jobJSON("a", 1+r.IntN(5), 5+r.IntN(16)))
	}
	if r.IntN(3) == 0 {
		p.Objects = append(p.Objects, jobJSON("b", 1+r.IntN(5), 5+r.IntN(16)))
	}
	used := map[int]bool{}
	for range 1 + r.IntN(4) {
		s := 1 + r.IntN(12)
		for used[s] {
			s = 1 + r.IntN(12)
		}
		used[s] = true
		p.Steps = append(p.Steps, episode(r, time.Duration(s)*time.Second, subject)...)
	}
	for i := 1; i < len(p.Steps); i++ {
		for j := i; j > 0 && p.Steps[j].At < p.Steps[j-1].At; j-- {
			p.Steps[j], p.Steps[j-1] = p.Steps[j-1], p.Steps[j]
		}
	}
	return p
}

func episode(r *rand.Rand, at time.Duration, subject string) []sim.Step {
	name := []string{"a", "a", "a", "b"}[r.IntN(4)]
	fault := func(op string) sim.Step {
		return sim.Step{At: sim.Duration(at), Actor: "faults", Op: op, Target: subject}
	}
	watched := func() string { return []string{"pods", "pods", "jobs"}[r.IntN(3)] }
	var before, after []sim.Step
	switch r.IntN(10) {
	case 0, 1:
	case 2, 3:
		hold := fault("hold")
		hold.Resource = watched()
		hold.For = sim.Duration(time.Duration(1+r.IntN(8)) * time.Second)
		before = append(before, hold)
		if r.IntN(2) == 0 {
			exp := fault("expire")
			exp.Resource, exp.At = hold.Resource, hold.At+hold.For/2
			after = append(after, exp)
		}
	case 4, 5:
		arm := fault("timeout-next-write")
		arm.Resource = "pods"
		arm.Verb = []string{"create", "create", "delete"}[r.IntN(3)]
		if r.IntN(3) == 0 {
			arm.Op = "fail-next"
			arm.Code = []int{500, 503, 429}[r.IntN(3)]
		}
		before = append(before, arm)
	case 6, 7:
		before = append(before, sim.Step{At: sim.Duration(at), Actor: "controller", Op: "crash"})
		restart := sim.Duration(at) + ms(r, 0, 3000)
		if r.IntN(2) == 0 {
			after = append(after, sim.Step{At: restart, Actor: "faults", Op: "hold", Target: subject,
				Resource: watched(), For: sim.Duration(time.Duration(1+r.IntN(5)) * time.Second)})
		}
		after = append(after, sim.Step{At: restart, Actor: "controller", Op: "restart"})
	case 8:
		st := fault([]string{"break", "expire", "compact"}[r.IntN(3)])
		if st.Op == "compact" {
			st.Target = ""
		} else {
			st.Resource = watched()
		}
		after = append(after, st)
	case 9:
		st := fault("stale-replica")
		st.Target = ""
		st.Lag = int64(1 + r.IntN(10))
		st.For = sim.Duration(time.Duration(1+r.IntN(10)) * time.Second)
		before = append(before, st)
	}
	user := func(op string) sim.Step {
		return sim.Step{At: sim.Duration(at), Actor: "user", Op: op, Resource: "jobs", Namespace: "default", Name: name}
	}
	patch := func(body string) sim.Step {
		st := user("patch")
		st.Patch = json.RawMessage(body)
		return st
	}
	create := sim.Step{At: sim.Duration(at), Actor: "user", Op: "create", Object: jobJSON(name, 1+r.IntN(5), 5+r.IntN(16))}
	var action []sim.Step
	switch r.IntN(6) {
	case 0:
		action = []sim.Step{create}
	case 1, 2:
		action = []sim.Step{patch(fmt.Sprintf(`{"spec":{"parallelism":%d}}`, r.IntN(7)))}
	case 3:
		action = []sim.Step{user("delete")}
	case 4:
		action = []sim.Step{user("delete"), create}
	case 5:
		action = []sim.Step{patch(fmt.Sprintf(`{"spec":{"suspend":%t}}`, r.IntN(2) == 0))}
	}
	return append(append(before, action...), after...)
}

// jobJSON is a Job name in namespace default.
func jobJSON(name string, parallelism, completions int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":%q,"namespace":"default"},`+
		`"spec":{"parallelism":%d,"completions":%d,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`,
		name, parallelism, completions))
}

func ms(r *rand.Rand, lo, hi int) sim.Duration {
	return sim.Duration(time.Duration(lo+r.IntN(hi-lo+1)) * time.Millisecond)
}
