package hpa_test

import (
	"testing"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/upstream/hpa"
)

// The campaign's matches-reference false alarm of seed 9 (docs/upstream.md,
// HPA, class H3) stays fixed, gate on and off: the user deleted HPA a
// while its controller, crashed, had not yet seen it; the reference's HPA
// had scaled Deployment a from 2 to 6 before the delete, and that scale
// stays. The faulted end state (a at 2) is that of a controller started
// after the user's last action, which the oracle passes.
func TestCampaignReferenceFalseAlarmStaysFixed(t *testing.T) {
	const file = "findings/false-alarm-reference-deleted-hpa-unseen-9.json"
	for _, gate := range []bool{true, false} {
		for _, f := range cachelabtest.Catch(t, hpa.Controller(gate), cachelabtest.Files(file)) {
			for _, v := range f.Failed {
				if v.Invariant == "matches-reference" {
					t.Errorf("%s, gate %v: matches-reference failed again: %s", file, gate, v.Reason)
				}
			}
		}
	}
}
