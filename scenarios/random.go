package scenarios

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cachelab/cachelab/sim"
)

// Random returns a small random Plan for subject, drawn deterministically
// from seed: the same seed gives the same Plan. It is the generator of
// `cachelab run --random`; the property tests use the rapid generators.
//
// For a subject that serves the Bellerophon CRD the plan creates, scales,
// re-versions, deletes and recreates Bellerophons; for any other subject it
// does the same to ConfigMaps (the mirror controller's sources). Around
// those writes it draws watch breaks, 410s, compactions and a crash, and a
// latency distribution. Only contract-keeping faults are drawn.
func Random(seed uint64, subject string) sim.Plan {
	r := rand.New(rand.NewPCG(seed, 0x63616368656c6162)) // "cachelab"
	g := &randomGen{r: r, bellerophon: servesBellerophon(subject)}
	p := sim.Plan{
		Version:  sim.PlanVersion,
		Name:     fmt.Sprintf("random-%d", seed),
		Seed:     seed,
		Subject:  subject,
		Deadline: sim.Duration(3 * time.Minute),
	}
	switch r.IntN(3) {
	case 1:
		p.Faults.Latency = sim.Distribution{Kind: "uniform", Max: sim.Duration(time.Duration(1+r.IntN(1500)) * time.Millisecond)}
	case 2:
		p.Faults.Latency = sim.Distribution{Kind: "exponential", Mean: sim.Duration(time.Duration(50+r.IntN(400)) * time.Millisecond), Max: sim.Duration(2 * time.Second)}
	}
	for i, n := 0, 1+r.IntN(3); i < n; i++ {
		p.Objects = append(p.Objects, g.object(g.newName()))
	}
	at := time.Second
	for i, n := 0, 3+r.IntN(8); i < n; i++ {
		at += time.Duration(r.IntN(3000)) * time.Millisecond
		p.Steps = append(p.Steps, g.step(at))
	}
	if g.crashed {
		p.Steps = append(p.Steps, sim.Step{At: sim.Duration(at + time.Second), Actor: "controller", Op: "restart"})
	}
	return p
}

// servesBellerophon reports whether subject needs the Bellerophon CRD.
func servesBellerophon(subject string) bool {
	info, ok := sim.LookupSubject(subject)
	if !ok {
		return false
	}
	for _, c := range info.CRDs {
		if c.Kind == "Bellerophon" {
			return true
		}
	}
	return false
}

type randomGen struct {
	r           *rand.Rand
	bellerophon bool
	live        []string // names that exist (as far as the plan knows)
	gone        []string // names deleted, candidates for recreation
	next        int
	crashed     bool
}

func (g *randomGen) newName() string {
	g.next++
	name := fmt.Sprintf("obj%d", g.next)
	g.live = append(g.live, name)
	return name
}

func (g *randomGen) resource() string {
	if g.bellerophon {
		return "bellerophons"
	}
	return "configmaps"
}

func (g *randomGen) object(name string) json.RawMessage {
	var obj map[string]any
	if g.bellerophon {
		obj = map[string]any{
			"apiVersion": "lab.cachelab.dev/v1alpha1", "kind": "Bellerophon",
			"metadata": map[string]any{"name": name, "namespace": "default"},
			"spec":     map[string]any{"replicas": g.r.IntN(4), "version": fmt.Sprintf("v%d", 1+g.r.IntN(3))},
		}
	} else {
		obj = map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "default"},
			"data":     map[string]any{"n": fmt.Sprint(g.r.IntN(100))},
		}
	}
	b, _ := json.Marshal(obj)
	return b
}

func (g *randomGen) patch() json.RawMessage {
	var p map[string]any
	if g.bellerophon {
		if g.r.IntN(2) == 0 {
			p = map[string]any{"spec": map[string]any{"replicas": g.r.IntN(5)}}
		} else {
			p = map[string]any{"spec": map[string]any{"version": fmt.Sprintf("v%d", 1+g.r.IntN(5))}}
		}
	} else {
		p = map[string]any{"data": map[string]any{"n": fmt.Sprint(g.r.IntN(100))}}
	}
	b, _ := json.Marshal(p)
	return b
}

func (g *randomGen) step(at time.Duration) sim.Step {
	st := sim.Step{At: sim.Duration(at)}
	switch k := g.r.IntN(10); {
	case k < 2 || len(g.live) == 0 && k < 5:
		// create: a new name, or a deleted one again (a new UID)
		name := ""
		if len(g.gone) > 0 && g.r.IntN(2) == 0 {
			i := g.r.IntN(len(g.gone))
			name = g.gone[i]
			g.gone = append(g.gone[:i], g.gone[i+1:]...)
			g.live = append(g.live, name)
		} else {
			name = g.newName()
		}
		st.Actor, st.Op, st.Object = "user", "create", g.object(name)
	case k < 5 && len(g.live) > 0:
		st.Actor, st.Op, st.Resource, st.Namespace, st.Name, st.Patch = "user", "patch", g.resource(), "default", g.live[g.r.IntN(len(g.live))], g.patch()
	case k < 6 && len(g.live) > 0:
		i := g.r.IntN(len(g.live))
		name := g.live[i]
		g.live = append(g.live[:i], g.live[i+1:]...)
		g.gone = append(g.gone, name)
		st.Actor, st.Op, st.Resource, st.Namespace, st.Name = "user", "delete", g.resource(), "default", name
	case k < 8:
		st.Actor, st.Op = "faults", []string{"break", "disconnect", "expire"}[g.r.IntN(3)]
	case k < 9:
		st.Actor, st.Op = "faults", "compact"
	default:
		if g.crashed {
			st.Actor, st.Op = "controller", "restart"
		} else {
			st.Actor, st.Op = "controller", "crash"
		}
		g.crashed = !g.crashed
	}
	return st
}
