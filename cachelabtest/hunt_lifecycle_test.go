package cachelabtest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// The lifecycle workload is derived for any controller, here a client-go
// copier written from scratch (mirror: "<name>-copy" owned by each
// ConfigMap): the workload only creates ConfigMap a and changes it; the
// reference shows a owning the copy the controller made, so the derived
// workload deletes the copy, then deletes a and creates it again under
// the same name, and the campaign hides that recreate behind a relist. A
// correct controller passes every plan, the derived workload's included.
func TestHuntDerivesALifecycleWorkloadForAnyController(t *testing.T) {
	at := func(d time.Duration) sim.Duration { return sim.Duration(d) }
	w := &sim.Plan{Version: sim.PlanVersion, Name: "copy-story", Seed: 3,
		Faults: sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: at(20 * time.Millisecond)}},
		Steps: []sim.Step{
			{At: at(time.Second), Actor: "user", Op: "create", Object: json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"n":"1"}}`)},
			{At: at(5 * time.Second), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "a", Patch: json.RawMessage(`{"data":{"n":"2"}}`)},
		}}
	rep := Hunt(t, mirror(false), HuntOptions{DeriveLifecycle: true}, false, w)
	if len(rep.Lifecycle) != 1 || !strings.Contains(rep.Lifecycle[0], "copy-story-lifecycle") ||
		!strings.Contains(rep.Lifecycle[0], "delete configmaps default/a") || !strings.Contains(rep.Lifecycle[0], "delete one of the configmaps") {
		t.Errorf("lifecycle %q: want copy-story-lifecycle, a's copy deleted, a deleted and created again", rep.Lifecycle)
	}
	if len(rep.References) != 2 {
		t.Errorf("%d references, want the workload's and the derived workload's", len(rep.References))
	}
	if !slices.ContainsFunc(rep.Rows, func(r lab.HuntRow) bool {
		return strings.Contains(r.Plan.Name, "copy-story-lifecycle-unobserved-recreate-a") && r.Class == scenarios.ClassUnobserved
	}) {
		t.Errorf("no recreate behind a relist of the derived workload among %d plans", len(rep.Rows))
	}
	t.Logf("%d plans, %d failed; %s", len(rep.Rows), len(rep.Failures()), rep.Lifecycle)
}
