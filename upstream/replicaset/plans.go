package replicaset

import (
	"encoding/json"
	"fmt"

	"pgregory.net/rapid"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/internal/plangen"
)

// workload is the ReplicaSet controller's: ReplicaSets of 1-5 replicas,
// scaled to 0-6, or up to 3-6 then at once down to 0-1.
var workload = plangen.Workload{
	Prefix:   "rs",
	Resource: "replicasets",
	Object: func(t *rapid.T, name string) json.RawMessage {
		return rsJSON(name, rapid.IntRange(1, 5).Draw(t, "replicas"))
	},
	Change: func(t *rapid.T) json.RawMessage { return scale(rapid.IntRange(0, 6).Draw(t, "scale-to")) },
	Burst: func(t *rapid.T) []json.RawMessage {
		return []json.RawMessage{scale(rapid.IntRange(3, 6).Draw(t, "scale-up-to")), scale(rapid.IntRange(0, 1).Draw(t, "scale-down-to"))}
	},
}

// Gen returns the rapid generator of random plans for subject
// (plangen.Workload.Gen): ReplicaSets "a" and "b", user actions create,
// scale up or down, delete, delete and recreate, scale up then at once
// down, each wrapped in at most one fault aimed at the controller.
func Gen(subject string) *rapid.Generator[sim.Plan] { return workload.Gen(subject) }

// Plan returns Gen's plan of seed (plangen.Workload.Plan).
func Plan(seed uint64, subject string) *sim.Plan { return workload.Plan(seed, subject) }

// scale is the merge patch setting spec.replicas to n.
func scale(n int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"spec":{"replicas":%d}}`, n))
}

// rsJSON is a ReplicaSet name in namespace default with replicas Pods.
func rsJSON(name string, replicas int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":%q,"namespace":"default"},`+
		`"spec":{"replicas":%d,"selector":{"matchLabels":{"app":%q}},`+
		`"template":{"metadata":{"labels":{"app":%q}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`,
		name, replicas, name, name))
}
