package statefulset

import (
	"encoding/json"
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/internal/plangen"
)

// images are the container images the plans roll between.
var images = []string{"busybox:1.35", "busybox:1.36", "busybox:1.37"}

// workload is the StatefulSet controller's: sets of 1-4 replicas,
// OrderedReady or Parallel, RollingUpdate (sometimes with a partition that
// is later lifted) or OnDelete; changes scale (0-5) or roll to another
// image; bursts roll and scale at once. The kubelet makes Pods Ready
// 500 ms after it sees them.
var workload = plangen.Workload{
	Prefix:   "sts",
	Resource: "statefulsets",
	Object: func(t *rapid.T, name string) json.RawMessage {
		policy := []string{"OrderedReady", "Parallel"}[plangen.Weighted(t, "policy", 2, 1)]
		update := []string{`{"type":"RollingUpdate"}`, `{"type":"RollingUpdate","rollingUpdate":{"partition":1}}`, `{"type":"OnDelete"}`}[plangen.Weighted(t, "update", 2, 1, 1)]
		return setJSON(name, rapid.IntRange(1, 4).Draw(t, "replicas"), policy, update, images[0])
	},
	Change: func(t *rapid.T) json.RawMessage {
		switch rapid.IntRange(0, 2).Draw(t, "change") {
		case 0:
			return json.RawMessage(fmt.Sprintf(`{"spec":{"replicas":%d}}`, rapid.IntRange(0, 5).Draw(t, "scale-to")))
		case 1:
			return image(rapid.SampledFrom(images).Draw(t, "image"))
		}
		return json.RawMessage(`{"spec":{"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":0}}}}`)
	},
	Burst: func(t *rapid.T) []json.RawMessage {
		return []json.RawMessage{image(rapid.SampledFrom(images[1:]).Draw(t, "roll-to")),
			json.RawMessage(fmt.Sprintf(`{"spec":{"replicas":%d}}`, rapid.IntRange(1, 5).Draw(t, "scale-to")))}
	},
	Kubelet: &sim.Kubelet{ReadyAfter: sim.Duration(500 * time.Millisecond)},
}

// Gen returns the rapid generator of random plans for subject
// (plangen.Workload.Gen): StatefulSets "a" and "b", user actions create,
// scale, roll to another image, lift a partition, delete, delete and
// recreate, roll and scale at once, each wrapped in at most one fault
// aimed at the controller.
func Gen(subject string) *rapid.Generator[sim.Plan] { return workload.Gen(subject) }

// Plan returns Gen's plan of seed (plangen.Workload.Plan).
func Plan(seed uint64, subject string) *sim.Plan { return workload.Plan(seed, subject) }

// image is the merge patch setting the Pod template's image.
func image(img string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":%q}]}}}}`, img))
}

// setJSON is a StatefulSet name in namespace default.
func setJSON(name string, replicas int, policy, update, img string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":%q,"namespace":"default"},`+
		`"spec":{"replicas":%d,"serviceName":%q,"podManagementPolicy":%q,"updateStrategy":%s,"selector":{"matchLabels":{"app":%q}},`+
		`"template":{"metadata":{"labels":{"app":%q}},"spec":{"containers":[{"name":"c","image":%q}]}}}}`,
		name, replicas, name, policy, update, name, name, img))
}
