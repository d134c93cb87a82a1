package daemonset

import (
	"encoding/json"
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/internal/plangen"
)

// images3 are the container images the plans roll between.
var images3 = []string{"busybox:1.35", "busybox:1.36", "busybox:1.37"}

// strategies are the update strategies drawn: RollingUpdate with the
// default maxUnavailable 1, with a surge (maxSurge 1, maxUnavailable 0),
// or OnDelete.
var strategies = []string{`{"type":"RollingUpdate"}`, `{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1,"maxUnavailable":0}}`, `{"type":"OnDelete"}`}

// workload is the DaemonSet controller's: sets with one of strategies;
// changes roll to another image or change the strategy; bursts roll twice
// at once. The kubelet makes Pods Ready 500 ms after it sees them. Nodes
// n1 and n2 exist from the start (their not-ready taint removed at 0 s);
// zero to two Nodes are added (world).
var workload = plangen.Workload{
	Prefix:   "ds",
	Resource: "daemonsets",
	Object: func(t *rapid.T, name string) json.RawMessage {
		return setJSON(name, rapid.SampledFrom(strategies).Draw(t, "strategy"), images3[0])
	},
	Change: func(t *rapid.T) json.RawMessage {
		if plangen.Weighted(t, "change", 2, 1) == 1 {
			return json.RawMessage(fmt.Sprintf(`{"spec":{"updateStrategy":%s}}`, rapid.SampledFrom(strategies[:2]).Draw(t, "strategy-to")))
		}
		return image(rapid.SampledFrom(images3).Draw(t, "image"))
	},
	Burst: func(t *rapid.T) []json.RawMessage {
		return []json.RawMessage{image(rapid.SampledFrom(images3[1:]).Draw(t, "roll-to")), image(rapid.SampledFrom(images3).Draw(t, "then-roll-to"))}
	},
	Kubelet: &sim.Kubelet{ReadyAfter: sim.Duration(500 * time.Millisecond)},
	World:   world,
}

// Gen returns the rapid generator of random plans for subject: plangen's
// plan over DaemonSets "a" and "b" (create, roll, change strategy, delete,
// delete and recreate, roll twice at once, each wrapped in at most one
// fault aimed at the controller), on Nodes n1 and n2 that exist from the
// start, plus zero to two Nodes added (world).
func Gen(subject string) *rapid.Generator[sim.Plan] { return workload.Gen(subject) }

// Plan returns Gen's plan of seed (plangen.Workload.Plan).
func Plan(seed uint64, subject string) *sim.Plan { return workload.Plan(seed, subject) }

// world puts Nodes n1 and n2 in the plan (ready at 0 s) and adds zero to
// two Nodes, each drawn on its own: n3 or n4 created at a whole second in
// 1-12 s and ready (its taint removed) at once or 0.5-3 s later.
func world(t *rapid.T, p *sim.Plan) {
	for _, n := range []string{"n1", "n2"} {
		p.Objects = append(p.Objects, nodeJSON(n))
		p.Steps = append(p.Steps, untaint(0, n))
	}
	added := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) [2]sim.Duration {
		at := sim.Duration(time.Duration(rapid.IntRange(1, 12).Draw(t, "node-at-s")) * time.Second)
		ready := at
		if rapid.Bool().Draw(t, "node-ready-later") {
			ready += plangen.MS(t, "node-ready-after-ms", 500, 3000)
		}
		return [2]sim.Duration{at, ready}
	}), 0, 2).Draw(t, "nodes-added")
	for i, times := range added {
		n := fmt.Sprintf("n%d", 3+i)
		p.Steps = append(p.Steps, sim.Step{At: times[0], Actor: "user", Op: "create", Object: nodeJSON(n)}, untaint(times[1], n))
	}
}

// untaint is the user's patch at at removing Node name's taints, the node
// lifecycle controller's work when a Node becomes Ready.
func untaint(at sim.Duration, name string) sim.Step {
	return sim.Step{At: at, Actor: "user", Op: "patch", Resource: "nodes", Name: name, Patch: json.RawMessage(`{"spec":{"taints":null}}`)}
}

// nodeJSON is a Node name.
func nodeJSON(name string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":%q,"labels":{"kubernetes.io/hostname":%q}}}`, name, name))
}

// image is the merge patch setting the Pod template's image.
func image(img string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":%q}]}}}}`, img))
}

// setJSON is a DaemonSet name in namespace default.
func setJSON(name, update, img string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":%q,"namespace":"default"},`+
		`"spec":{"updateStrategy":%s,"selector":{"matchLabels":{"app":%q}},`+
		`"template":{"metadata":{"labels":{"app":%q}},"spec":{"containers":[{"name":"c","image":%q}]}}}}`,
		name, update, name, name, img))
}
