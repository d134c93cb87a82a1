package job

import (
	"encoding/json"
	"fmt"

	"pgregory.net/rapid"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/internal/plangen"
)

// workload is the Job controller's: Jobs of parallelism 1-5 and
// completions 5-20, parallelism changed to 0-6, or suspended or resumed.
var workload = plangen.Workload{
	Prefix:   "job",
	Resource: "jobs",
	Object: func(t *rapid.T, name string) json.RawMessage {
		return jobJSON(name, rapid.IntRange(1, 5).Draw(t, "parallelism"), rapid.IntRange(5, 20).Draw(t, "completions"))
	},
	Change: func(t *rapid.T) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"spec":{"parallelism":%d}}`, rapid.IntRange(0, 6).Draw(t, "parallelism-to")))
	},
	Burst: func(t *rapid.T) []json.RawMessage {
		return []json.RawMessage{json.RawMessage(fmt.Sprintf(`{"spec":{"suspend":%t}}`, rapid.Bool().Draw(t, "suspend")))}
	},
}

// Gen returns the rapid generator of random plans for subject
// (plangen.Workload.Gen): Jobs "a" and "b", user actions create, change
// parallelism, delete, delete and recreate, suspend or resume, each
// wrapped in at most one fault aimed at the controller, as
// upstream/replicaset's plans are.
func Gen(subject string) *rapid.Generator[sim.Plan] { return workload.Gen(subject) }

// Plan returns Gen's plan of seed (plangen.Workload.Plan).
func Plan(seed uint64, subject string) *sim.Plan { return workload.Plan(seed, subject) }

// jobJSON is a Job name in namespace default.
func jobJSON(name string, parallelism, completions int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":%q,"namespace":"default"},`+
		`"spec":{"parallelism":%d,"completions":%d,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`,
		name, parallelism, completions))
}
