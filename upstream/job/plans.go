package job

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/internal/plangen"
)

// workload is the Job controller's: Jobs of parallelism 1-5 and
// completions 5-20, parallelism changed to 0-6, or suspended or resumed.
var workload = plangen.Workload{
	Prefix:   "job",
	Resource: "jobs",
	Object: func(r *rand.Rand, name string) json.RawMessage {
		parallelism := 1 + r.IntN(5)
		return jobJSON(name, parallelism, 5+r.IntN(16))
	},
	Change: func(r *rand.Rand) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"spec":{"parallelism":%d}}`, r.IntN(7)))
	},
	Burst: func(r *rand.Rand) []json.RawMessage {
		return []json.RawMessage{json.RawMessage(fmt.Sprintf(`{"spec":{"suspend":%t}}`, r.IntN(2) == 0))}
	},
}

// Plan returns the random plan of seed for subject (plangen.Workload.Plan):
// Jobs "a" and "b", user actions create, change parallelism, delete, delete
// and recreate, suspend or resume, each wrapped in at most one fault aimed
// at the controller, as upstream/replicaset's plans are.
func Plan(seed uint64, subject string) *sim.Plan { return workload.Plan(seed, subject) }

// jobJSON is a Job name in namespace default.
func jobJSON(name string, parallelism, completions int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":%q,"namespace":"default"},`+
		`"spec":{"parallelism":%d,"completions":%d,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`,
		name, parallelism, completions))
}
