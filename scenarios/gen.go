package scenarios

import (
	"encoding/json"
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/cachelab/cachelab/sim"
)

// PlanGen returns a rapid generator of small random Plans for subject, for
// the property tests. Every draw is labelled, so a shrunk failure reads as
// a story ("steps", "op", "gap-ms", "name"), and shrinks toward fewer
// steps, op 0 (create), short gaps and no latency.
//
// For a subject that serves the Bellerophon CRD the plan creates, scales,
// re-versions, deletes and recreates Bellerophons (with the kubelet actor
// making Pods Ready); for any other subject it does the same to ConfigMaps.
// Between those writes it draws watch breaks, 410s, compactions and a crash
// followed by a restart (for Bellerophon, possibly with a slow Pod relist).
// Only contract-keeping faults are drawn.
func PlanGen(subject string) *rapid.Generator[sim.Plan] {
	bell := genServesBellerophon(subject)
	return rapid.Custom(func(t *rapid.T) sim.Plan {
		g := &planGen{t: t, bell: bell, subject: subject}
		p := sim.Plan{
			Version:  sim.PlanVersion,
			Name:     "rapid",
			Seed:     rapid.Uint64Range(0, 1<<20).Draw(t, "seed"),
			Subject:  subject,
			Deadline: sim.Duration(2 * time.Minute),
		}
		if bell {
			p.Kubelet = &sim.Kubelet{ReadyAfter: sim.Duration(time.Second)}
		}
		switch rapid.IntRange(0, 2).Draw(t, "latency") {
		case 1:
			p.Faults.Latency = sim.Distribution{Kind: "fixed", Max: g.ms("latency-ms", 1, 2000)}
		case 2:
			p.Faults.Latency = sim.Distribution{Kind: "uniform", Max: g.ms("latency-max-ms", 1, 2000)}
		}
		for i, n := 0, rapid.IntRange(0, 2).Draw(t, "objects"); i < n; i++ {
			p.Objects = append(p.Objects, g.object(g.newName()))
		}
		at := time.Second
		for i, n := 0, rapid.IntRange(0, 8).Draw(t, "steps"); i < n; i++ {
			at += g.ms("gap-ms", 0, 3000).D()
			var steps []sim.Step
			steps, at = g.step(at)
			p.Steps = append(p.Steps, steps...)
		}
		return p
	})
}

// genServesBellerophon reports whether subject needs the Bellerophon CRD.
func genServesBellerophon(subject string) bool {
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

// planGen is the state of one PlanGen draw: which names the plan has made
// live or deleted so far.
type planGen struct {
	t       *rapid.T
	bell    bool
	subject string
	live    []string
	gone    []string
	next    int
}

func (g *planGen) ms(label string, lo, hi int) sim.Duration {
	return sim.Duration(time.Duration(rapid.IntRange(lo, hi).Draw(g.t, label)) * time.Millisecond)
}

func (g *planGen) newName() string {
	g.next++
	name := fmt.Sprintf("obj%d", g.next)
	g.live = append(g.live, name)
	return name
}

func (g *planGen) resource() string {
	if g.bell {
		return "bellerophons"
	}
	return "configmaps"
}

func (g *planGen) object(name string) json.RawMessage {
	var obj map[string]any
	if g.bell {
		obj = map[string]any{
			"apiVersion": "lab.cachelab.dev/v1alpha1", "kind": "Bellerophon",
			"metadata": map[string]any{"name": name, "namespace": "default"},
			"spec": map[string]any{
				"replicas": rapid.IntRange(0, 3).Draw(g.t, "replicas"),
				"version":  fmt.Sprintf("v%d", rapid.IntRange(1, 3).Draw(g.t, "version")),
			},
		}
	} else {
		obj = map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "default"},
			"data":     map[string]any{"n": fmt.Sprint(rapid.IntRange(0, 9).Draw(g.t, "data"))},
		}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		panic(fmt.Sprintf("scenarios: generated object does not marshal: %v", err))
	}
	return b
}

// pick draws one of names.
func (g *planGen) pick(names []string) (string, int) {
	i := rapid.IntRange(0, len(names)-1).Draw(g.t, "name")
	return names[i], i
}

// The ops a step draws, simplest first (rapid shrinks toward 0). The last
// three are compound: a recreation during a watch gap (EDGE 8: hold the
// subject's Pods, break its watches, delete the object, strip its
// finalizers, create it again, compact so the re-watch gets 410), a
// competing writer editing the object or its child (EDGE 25, 26), a create
// followed at once by a delete, and a scale-up followed at once by a delete
// (children of a terminating owner, EDGE 11).
var genOps = []string{"create", "scale", "reversion", "reconfig", "delete", "break", "expire", "compact", "crash",
	"recreate-in-gap", "competitor", "create-delete", "scale-delete"}

// step draws one step at time at (two for a crash: crash, then restart)
// and returns the time of the last one.
func (g *planGen) step(at time.Duration) ([]sim.Step, time.Duration) {
	st := sim.Step{At: sim.Duration(at)}
	op := genOps[rapid.IntRange(0, len(genOps)-1).Draw(g.t, "op")]
	if len(g.live) == 0 && op != "create" && op != "create-delete" && op != "break" && op != "expire" && op != "compact" && op != "crash" {
		// ops on a live object fall back to creating one
		op = "create"
	}
	switch op {
	case "create":
		name := ""
		if len(g.gone) > 0 && rapid.Bool().Draw(g.t, "recreate") {
			var i int
			name, i = g.pick(g.gone)
			g.gone = append(g.gone[:i:i], g.gone[i+1:]...)
			g.live = append(g.live, name)
		} else {
			name = g.newName()
		}
		st.Actor, st.Op, st.Object = "user", "create", g.object(name)
	case "scale", "reversion", "reconfig":
		name, _ := g.pick(g.live)
		var patch map[string]any
		switch {
		case !g.bell:
			patch = map[string]any{"data": map[string]any{"n": fmt.Sprint(rapid.IntRange(0, 9).Draw(g.t, "data"))}}
		case op == "scale":
			patch = map[string]any{"spec": map[string]any{"replicas": rapid.IntRange(0, 4).Draw(g.t, "replicas")}}
		case op == "reversion":
			patch = map[string]any{"spec": map[string]any{"version": fmt.Sprintf("v%d", rapid.IntRange(1, 4).Draw(g.t, "version"))}}
		default:
			patch = map[string]any{"spec": map[string]any{"config": map[string]any{"colour": fmt.Sprintf("c%d", rapid.IntRange(0, 3).Draw(g.t, "colour"))}}}
		}
		st.Actor, st.Op, st.Resource, st.Namespace, st.Name, st.Patch = "user", "patch", g.resource(), "default", name, mustJSON(patch)
	case "recreate-in-gap":
		name, _ := g.pick(g.live)
		var steps []sim.Step
		if g.bell {
			steps = append(steps, sim.Step{At: st.At, Actor: "faults", Op: "hold", Resource: "pods", Target: g.subject, For: g.ms("hold-ms", 100, 5000)}) // For 0 would hold until a release
		}
		steps = append(steps,
			sim.Step{At: st.At, Actor: "faults", Op: "break", Target: g.subject},
			sim.Step{At: st.At, Actor: "user", Op: "delete", Resource: g.resource(), Namespace: "default", Name: name},
			sim.Step{At: st.At, Actor: "user", Op: "patch", Resource: g.resource(), Namespace: "default", Name: name,
				Patch: mustJSON(map[string]any{"metadata": map[string]any{"finalizers": nil}})},
			sim.Step{At: st.At, Actor: "user", Op: "create", Object: g.object(name)},
			sim.Step{At: st.At, Actor: "faults", Op: "compact"})
		return steps, at
	case "competitor":
		name, _ := g.pick(g.live)
		res, target := "configmaps", name+"-mirror"
		if g.bell {
			target = name + "-config"
		}
		if rapid.Bool().Draw(g.t, "on-object") {
			res, target = g.resource(), name
		}
		st.Actor, st.Op, st.Resource, st.Namespace, st.Name = "competitor", "patch", res, "default", target
		st.Patch = mustJSON(map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": fmt.Sprintf("t%d", rapid.IntRange(0, 3).Draw(g.t, "team"))}}})
	case "scale-delete":
		name, i := g.pick(g.live)
		g.live = append(g.live[:i:i], g.live[i+1:]...)
		g.gone = append(g.gone, name)
		patch := map[string]any{"data": map[string]any{"n": fmt.Sprint(rapid.IntRange(0, 9).Draw(g.t, "data"))}}
		if g.bell {
			patch = map[string]any{"spec": map[string]any{"replicas": rapid.IntRange(1, 4).Draw(g.t, "replicas")}}
		}
		st.Actor, st.Op, st.Resource, st.Namespace, st.Name, st.Patch = "user", "patch", g.resource(), "default", name, mustJSON(patch)
		del := sim.Step{At: st.At + g.ms("delete-after-ms", 0, 100), Actor: "user", Op: "delete", Resource: g.resource(), Namespace: "default", Name: name}
		return []sim.Step{st, del}, del.At.D()
	case "create-delete":
		name := g.newName()
		g.live = g.live[:len(g.live)-1]
		g.gone = append(g.gone, name)
		del := sim.Step{At: st.At + g.ms("delete-after-ms", 0, 500), Actor: "user", Op: "delete", Resource: g.resource(), Namespace: "default", Name: name}
		st.Actor, st.Op, st.Object = "user", "create", g.object(name)
		return []sim.Step{st, del}, del.At.D()
	case "delete":
		name, i := g.pick(g.live)
		g.live = append(g.live[:i:i], g.live[i+1:]...)
		g.gone = append(g.gone, name)
		st.Actor, st.Op, st.Resource, st.Namespace, st.Name = "user", "delete", g.resource(), "default", name
	case "break", "expire", "compact":
		st.Actor, st.Op = "faults", op
	case "crash":
		restart := sim.Step{At: sim.Duration(at) + g.ms("down-ms", 0, 3000), Actor: "controller", Op: "restart"}
		st.Actor, st.Op = "controller", "crash"
		steps := []sim.Step{st}
		if g.bell && rapid.Bool().Draw(g.t, "slow-pod-relist") {
			// The restarted process lists its Pods slowly (EDGE 4, 27).
			steps = append(steps, sim.Step{At: restart.At, Actor: "faults", Op: "hold", Resource: "pods", Target: g.subject, For: g.ms("relist-hold-ms", 100, 5000)})
		}
		return append(steps, restart), restart.At.D()
	}
	return []sim.Step{st}, at
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("scenarios: generated JSON does not marshal: %v", err))
	}
	return b
}
