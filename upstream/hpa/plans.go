package hpa

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/internal/plangen"
)

// workload is the HPA controller's: HPAs a and b over the Deployments of
// the same names, both on one external metric ("load") with an
// averageValue target of 100, 200 or 500, 1-2 to 4-10 replicas, scale-down
// window 0 or 15 s; changes move the bounds or the target; bursts move
// both at once.
var workload = plangen.Workload{
	Prefix:   "hpa",
	Resource: "horizontalpodautoscalers",
	Object: func(r *rand.Rand, name string) json.RawMessage {
		lo := 1 + r.IntN(2)
		return hpaJSON(name, lo, lo+3+r.IntN(6), []int{100, 200, 500}[r.IntN(3)], []int{0, 0, 15}[r.IntN(3)])
	},
	Change: func(r *rand.Rand) json.RawMessage {
		if r.IntN(2) == 0 {
			return json.RawMessage(fmt.Sprintf(`{"spec":{"maxReplicas":%d}}`, 3+r.IntN(8)))
		}
		return target([]int{100, 200, 500}[r.IntN(3)])
	},
	Burst: func(r *rand.Rand) []json.RawMessage {
		return []json.RawMessage{target([]int{100, 200, 500}[r.IntN(3)]), json.RawMessage(fmt.Sprintf(`{"spec":{"minReplicas":%d}}`, 1+r.IntN(3)))}
	},
	Kubelet: &sim.Kubelet{ReadyAfter: sim.Duration(500 * time.Millisecond)},
}

// Plan returns the random plan of seed for subject: plangen's plan over
// HPAs "a" and "b" (create, change, delete, delete and recreate, each
// wrapped in at most one fault aimed at the controller), over Deployments
// a and b (2 replicas) and the metrics ConfigMap (load: 0-2000)
// that exist from the start, plus one to three load changes drawn from a
// stream of their own (so plangen's draws are untouched) at a whole second
// in 1-60 s. The deadline is 5 min (the HPA syncs every 15 s).
func Plan(seed uint64, subject string) *sim.Plan {
	p := workload.Plan(seed, subject)
	p.Deadline = sim.Duration(5 * time.Minute)
	r := rand.New(rand.NewPCG(seed, 0x4a))
	p.Objects = append(p.Objects, deploymentJSON("a"), deploymentJSON("b"), json.RawMessage(fmt.Sprintf(
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"default"},"data":{"load":"%d"}}`,
		MetricsConfigMap, r.IntN(2001))))
	for range 1 + r.IntN(3) {
		at := sim.Duration(time.Duration(1+r.IntN(60)) * time.Second)
		p.Steps = append(p.Steps, sim.Step{At: at, Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: MetricsConfigMap,
			Patch: json.RawMessage(fmt.Sprintf(`{"data":{"load":"%d"}}`, r.IntN(2001)))})
	}
	sortSteps(p.Steps)
	return p
}

// target is the merge patch setting the metric's averageValue target.
func target(v int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"spec":{"metrics":[{"type":"External","external":{"metric":{"name":"load"},"target":{"type":"AverageValue","averageValue":"%d"}}}]}}`, v))
}

// hpaJSON is an HPA name over Deployment name.
func hpaJSON(name string, lo, hi, avg, window int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":%q,"namespace":"default"},"spec":{`+
		`"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":%q},"minReplicas":%d,"maxReplicas":%d,`+
		`"metrics":[{"type":"External","external":{"metric":{"name":"load"},"target":{"type":"AverageValue","averageValue":"%d"}}}],`+
		`"behavior":{"scaleDown":{"stabilizationWindowSeconds":%d}}}}`, name, name, lo, hi, avg, window))
}

// deploymentJSON is a Deployment name of 2 replicas.
func deploymentJSON(name string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"namespace":"default"},"spec":{"replicas":2,`+
		`"selector":{"matchLabels":{"app":%q}},"template":{"metadata":{"labels":{"app":%q}},"spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}}}}`,
		name, name, name))
}

// sortSteps orders steps by At, keeping list order on ties.
func sortSteps(steps []sim.Step) {
	for i := 1; i < len(steps); i++ {
		for j := i; j > 0 && steps[j].At < steps[j-1].At; j-- {
			steps[j], steps[j-1] = steps[j-1], steps[j]
		}
	}
}
