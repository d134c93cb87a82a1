package hpa

import (
	"encoding/json"
	"fmt"
	"time"

	"pgregory.net/rapid"

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
	Object: func(t *rapid.T, name string) json.RawMessage {
		lo := rapid.IntRange(1, 2).Draw(t, "min-replicas")
		return hpaJSON(name, lo, lo+rapid.IntRange(3, 8).Draw(t, "max-above-min"), rapid.SampledFrom(targets).Draw(t, "target"),
			[]int{0, 15}[plangen.Weighted(t, "scale-down-window", 2, 1)])
	},
	Change: func(t *rapid.T) json.RawMessage {
		if rapid.Bool().Draw(t, "change-target") {
			return target(rapid.SampledFrom(targets).Draw(t, "target-to"))
		}
		return json.RawMessage(fmt.Sprintf(`{"spec":{"maxReplicas":%d}}`, rapid.IntRange(3, 10).Draw(t, "max-to")))
	},
	Burst: func(t *rapid.T) []json.RawMessage {
		return []json.RawMessage{target(rapid.SampledFrom(targets).Draw(t, "target-to")),
			json.RawMessage(fmt.Sprintf(`{"spec":{"minReplicas":%d}}`, rapid.IntRange(1, 3).Draw(t, "min-to")))}
	},
	Kubelet: &sim.Kubelet{ReadyAfter: sim.Duration(500 * time.Millisecond)},
	World:   world,
}

// targets are the metric's averageValue targets drawn.
var targets = []int{100, 200, 500}

// Gen returns the rapid generator of random plans for subject: plangen's
// plan over HPAs "a" and "b" (create, change, delete, delete and
// recreate, each wrapped in at most one fault aimed at the controller),
// over Deployments a and b and the metrics ConfigMap (world).
func Gen(subject string) *rapid.Generator[sim.Plan] { return workload.Gen(subject) }

// Plan returns Gen's plan of seed (plangen.Workload.Plan).
func Plan(seed uint64, subject string) *sim.Plan { return workload.Plan(seed, subject) }

// world: Deployments a and b (2 replicas) and the metrics ConfigMap (load
// 0-2000) exist from the start; one to three load changes, each drawn on
// its own, at a whole second in 1-60 s. The deadline is 5 min (the HPA
// syncs every 15 s).
func world(t *rapid.T, p *sim.Plan) {
	p.Deadline = sim.Duration(5 * time.Minute)
	p.Objects = append(p.Objects, deploymentJSON("a"), deploymentJSON("b"), json.RawMessage(fmt.Sprintf(
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"default"},"data":{"load":"%d"}}`,
		MetricsConfigMap, rapid.IntRange(0, 2000).Draw(t, "load"))))
	changes := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) sim.Step {
		return sim.Step{At: sim.Duration(time.Duration(rapid.IntRange(1, 60).Draw(t, "load-at-s")) * time.Second), Actor: "user", Op: "patch",
			Resource: "configmaps", Namespace: "default", Name: MetricsConfigMap,
			Patch: json.RawMessage(fmt.Sprintf(`{"data":{"load":"%d"}}`, rapid.IntRange(0, 2000).Draw(t, "load-to")))}
	}), 1, 3).Draw(t, "load-changes")
	p.Steps = append(p.Steps, changes...)
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
