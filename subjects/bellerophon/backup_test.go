package bellerophon

import (
	"encoding/json"
	"testing"
	"time"
	"weak"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/subjects/bellerophon/apis/lab/v1alpha1"
)

// A lookup in the backup registry reads no other run's reference: a weak
// pointer's Value, called while the garbage collector marks, marks what it
// points to (runtime.makeStrongFromWeak shades it). The registry used to
// sweep every key with Value on each lookup: every run that started during
// a mark phase kept every finished run whose recorder the collector had not
// yet freed alive for one more cycle, and the next such start again, so a
// 10,000-run campaign's live heap climbed to gigabytes (4.2 GB peak RSS)
// and fell back only after a cycle that no start overlapped. Each run's
// lookup now reads its own reference only (once, to hang the cleanup that
// forgets it on).
func TestTheBackupRegistryReadsNoOtherRunsReference(t *testing.T) {
	var reads []weak.Pointer[sim.RunMarker]
	saved := valueOf
	valueOf = func(k weak.Pointer[sim.RunMarker]) *sim.RunMarker {
		reads = append(reads, k)
		return k.Value()
	}
	defer func() { valueOf = saved }()

	const runs = 3
	for range runs {
		b := v1alpha1.Bellerophon{Spec: v1alpha1.BellerophonSpec{Replicas: 1, Version: "1"}}
		b.APIVersion, b.Kind = v1alpha1.SchemeGroupVersion.String(), v1alpha1.Kind
		b.Namespace, b.Name = "default", "a"
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		p := &sim.Plan{Version: sim.PlanVersion, Seed: 1, Subject: "bellerophon", Objects: []json.RawMessage{raw},
			Steps: []sim.Step{}, Deadline: sim.Duration(time.Minute), Quiet: sim.Duration(5 * time.Second)}
		if _, err := sim.Run(t, p); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[weak.Pointer[sim.RunMarker]]int{}
	for _, k := range reads {
		seen[k]++
	}
	if len(reads) != runs || len(seen) != runs {
		t.Errorf("%d runs read %d references (%d distinct), want each run's own once: a lookup read another run's", runs, len(reads), len(seen))
	}
}
