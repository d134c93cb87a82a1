package daemonset

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

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
// at once. The kubelet makes Pods Ready 500 ms after it sees them.
var workload = plangen.Workload{
	Prefix:   "ds",
	Resource: "daemonsets",
	Object: func(r *rand.Rand, name string) json.RawMessage {
		return setJSON(name, strategies[r.IntN(len(strategies))], images3[0])
	},
	Change: func(r *rand.Rand) json.RawMessage {
		if r.IntN(3) == 0 {
			return json.RawMessage(fmt.Sprintf(`{"spec":{"updateStrategy":%s}}`, strategies[r.IntN(2)]))
		}
		return image(images3[r.IntN(len(images3))])
	},
	Burst: func(r *rand.Rand) []json.RawMessage {
		return []json.RawMessage{image(images3[1+r.IntN(2)]), image(images3[r.IntN(3)])}
	},
	Kubelet: &sim.Kubelet{ReadyAfter: sim.Duration(500 * time.Millisecond)},
}

// Plan returns the random plan of seed for subject: plangen's plan over
// DaemonSets "a" and "b" (create, roll, change strategy, delete, delete
// and recreate, roll twice at once, each wrapped in at most one fault
// aimed at the controller), on Nodes n1 and n2 that exist from the start
// (their not-ready taint removed at 0 s), plus zero to two Nodes added,
// drawn from a stream of their own (so plangen's draws are untouched): n3
// or n4 created at a whole second in 1-12 s and ready (its taint removed)
// at once or 0.5-3 s later.
func Plan(seed uint64, subject string) *sim.Plan {
	p := workload.Plan(seed, subject)
	for _, n := range []string{"n1", "n2"} {
		p.Objects = append(p.Objects, nodeJSON(n))
		p.Steps = append(p.Steps, untaint(0, n))
	}
	r := rand.New(rand.NewPCG(seed, 0xd5))
	for i := range r.IntN(3) {
		n := fmt.Sprintf("n%d", 3+i)
		at := sim.Duration(time.Duration(1+r.IntN(12)) * time.Second)
		ready := at
		if r.IntN(2) == 0 {
			ready += sim.Duration(time.Duration(500+r.IntN(2501)) * time.Millisecond)
		}
		p.Steps = append(p.Steps, sim.Step{At: at, Actor: "user", Op: "create", Object: nodeJSON(n)}, untaint(ready, n))
	}
	sortSteps(p.Steps)
	return p
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

// sortSteps orders steps by At, keeping list order on ties.
func sortSteps(steps []sim.Step) {
	for i := 1; i < len(steps); i++ {
		for j := i; j > 0 && steps[j].At < steps[j-1].At; j-- {
			steps[j], steps[j-1] = steps[j-1], steps[j]
		}
	}
}
