package deployment

import (
	"encoding/json"
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/internal/plangen"
)

// images are the container images the plans roll between; a change back
// to an earlier one is a rollback (the controller scales its old
// ReplicaSet up again).
var images = []string{"busybox:1.35", "busybox:1.36", "busybox:1.37"}

// workload is the Deployment controller's: Deployments of 1-5 replicas,
// RollingUpdate with a drawn maxSurge and maxUnavailable (never both 0)
// or Recreate; changes scale (0-6), roll to another image (a rollout, or
// a rollback to an image it had), or both at once; bursts roll twice in a
// row (a rollover of a rollout in progress). The kubelet makes Pods Ready
// 500 ms after it sees them.
var workload = plangen.Workload{
	Prefix:   "deploy",
	Resource: "deployments",
	Object: func(t *rapid.T, name string) json.RawMessage {
		return deploymentJSON(name, rapid.IntRange(1, 5).Draw(t, "replicas"), strategy(t), images[0])
	},
	Change: func(t *rapid.T) json.RawMessage {
		switch rapid.IntRange(0, 2).Draw(t, "change") {
		case 0:
			return json.RawMessage(fmt.Sprintf(`{"spec":{"replicas":%d}}`, rapid.IntRange(0, 6).Draw(t, "scale-to")))
		case 1:
			return image(rapid.SampledFrom(images).Draw(t, "image"))
		}
		return json.RawMessage(fmt.Sprintf(`{"spec":{"replicas":%d,"template":{"spec":{"containers":[{"name":"c","image":%q}]}}}}`,
			rapid.IntRange(1, 6).Draw(t, "scale-to"), rapid.SampledFrom(images).Draw(t, "image")))
	},
	Burst: func(t *rapid.T) []json.RawMessage {
		return []json.RawMessage{image(rapid.SampledFrom(images[1:]).Draw(t, "roll-to")), image(rapid.SampledFrom(images).Draw(t, "then-roll-to"))}
	},
	Kubelet: &sim.Kubelet{ReadyAfter: sim.Duration(500 * time.Millisecond)},
}

// Gen returns the rapid generator of random plans for subject
// (plangen.Workload.Gen): Deployments "a" and "b", user actions create,
// scale, roll out or back, delete, delete and recreate, roll twice at
// once, each wrapped in at most one fault aimed at the controller.
func Gen(subject string) *rapid.Generator[sim.Plan] { return workload.Gen(subject) }

// Plan returns Gen's plan of seed (plangen.Workload.Plan).
func Plan(seed uint64, subject string) *sim.Plan { return workload.Plan(seed, subject) }

// strategy draws a Deployment strategy: RollingUpdate with maxSurge and
// maxUnavailable from 0, 1 and 25% (not both 0), or Recreate.
func strategy(t *rapid.T) string {
	if plangen.Weighted(t, "strategy", 3, 1) == 1 {
		return `{"type":"Recreate"}`
	}
	vals := []string{`0`, `1`, `"25%"`}
	surge, unavail := rapid.SampledFrom(vals).Draw(t, "max-surge"), rapid.SampledFrom(vals).Draw(t, "max-unavailable")
	if surge == `0` && unavail == `0` {
		surge = `1`
	}
	return fmt.Sprintf(`{"type":"RollingUpdate","rollingUpdate":{"maxSurge":%s,"maxUnavailable":%s}}`, surge, unavail)
}

// image is the merge patch setting the Pod template's image.
func image(img string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":%q}]}}}}`, img))
}

// deploymentJSON is a Deployment name in namespace default.
func deploymentJSON(name string, replicas int, strategy, img string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"namespace":"default"},`+
		`"spec":{"replicas":%d,"strategy":%s,"selector":{"matchLabels":{"app":%q}},`+
		`"template":{"metadata":{"labels":{"app":%q}},"spec":{"containers":[{"name":"c","image":%q}]}}}}`,
		name, replicas, strategy, name, name, img))
}
