package replicaset

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/internal/plangen"
)

// workload is the ReplicaSet controller's: ReplicaSets of 1-5 replicas,
// scaled to 0-6, or up to 3-6 then at once down to 0-1.
var workload = plangen.Workload{
	Prefix:   "rs",
	Resource: "replicasets",
	Object:   func(r *rand.Rand, name string) json.RawMessage { return rsJSON(name, 1+r.IntN(5)) },
	Change:   func(r *rand.Rand) json.RawMessage { return scale(r.IntN(7)) },
	Burst: func(r *rand.Rand) []json.RawMessage {
		return []json.RawMessage{scale(3 + r.IntN(4)), scale(r.IntN(2))}
	},
}

// Plan returns the random plan of seed for subject (plangen.Workload.Plan):
// ReplicaSets "a" and "b", user actions create, scale up or down, delete,
// delete and recreate, scale up then at once down, each wrapped in at most
// one fault aimed at the controller.
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
