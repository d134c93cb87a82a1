package statefulset

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

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
	Object: func(r *rand.Rand, name string) json.RawMessage {
		policy := []string{"OrderedReady", "OrderedReady", "Parallel"}[r.IntN(3)]
		update := []string{`{"type":"RollingUpdate"}`, `{"type":"RollingUpdate"}`, `{"type":"RollingUpdate","rollingUpdate":{"partition":1}}`, `{"type":"OnDelete"}`}[r.IntN(4)]
		return setJSON(name, 1+r.IntN(4), policy, update, images[0])
	},
	Change: func(r *rand.Rand) json.RawMessage {
		switch r.IntN(3) {
		case 0:
			return json.RawMessage(fmt.Sprintf(`{"spec":{"replicas":%d}}`, r.IntN(6)))
		case 1:
			return image(images[r.IntN(len(images))])
		}
		return json.RawMessage(`{"spec":{"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":0}}}}`)
	},
	Burst: func(r *rand.Rand) []json.RawMessage {
		return []json.RawMessage{image(images[1+r.IntN(2)]), json.RawMessage(fmt.Sprintf(`{"spec":{"replicas":%d}}`, 1+r.IntN(5)))}
	},
	Kubelet: &sim.Kubelet{ReadyAfter: sim.Duration(500 * time.Millisecond)},
}

// Plan returns the random plan of seed for subject (plangen.Workload.Plan):
// StatefulSets "a" and "b", user actions create, scale, roll to another
// image, lift a partition, delete, delete and recreate, roll and scale at
// once, each wrapped in at most one fault aimed at the controller.
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
