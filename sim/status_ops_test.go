package sim_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim"
)

// ownedPod is a Pod with an ownerReference, a label and a finalizer: what
// a status write must leave alone.
const ownedPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default","labels":{"app":"web"},"finalizers":["lab.cachelab.dev/keep"],` +
	`"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"a","uid":"00000000-0000-0000-0000-000000000001","controller":true}]},` +
	`"spec":{"containers":[{"name":"c","image":"busybox"}]}}`

// lastPod returns the object of the last write of Pod p, decoded.
func lastPod(t *testing.T, tr *sim.Trace) map[string]any {
	t.Helper()
	writes := find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWrite && r.Resource == "pods" && r.Name == "p" })
	if len(writes) == 0 {
		t.Fatal("no write of pod p")
	}
	var obj map[string]any
	if err := json.Unmarshal(writes[len(writes)-1].Object, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func stepNotes(tr *sim.Trace) []string {
	var out []string
	for _, r := range find(tr, func(r sim.Record) bool { return r.Kind == sim.RecNote && strings.HasPrefix(r.Detail, "step failed") }) {
		out = append(out, r.Detail)
	}
	return out
}

// wantOnlyStatusChanged checks that pod p kept its metadata and has phase.
func wantOnlyStatusChanged(t *testing.T, tr *sim.Trace, phase string) {
	t.Helper()
	if notes := stepNotes(tr); len(notes) > 0 {
		t.Fatalf("steps failed: %v", notes)
	}
	obj := lastPod(t, tr)
	md := obj["metadata"].(map[string]any)
	if refs, _ := md["ownerReferences"].([]any); len(refs) != 1 {
		t.Errorf("ownerReferences %v: a status write must keep them", md["ownerReferences"])
	}
	if labels, _ := md["labels"].(map[string]any); labels["app"] != "web" || len(labels) != 1 {
		t.Errorf("labels %v: want app=web only", md["labels"])
	}
	if fin, _ := md["finalizers"].([]any); len(fin) != 1 {
		t.Errorf("finalizers %v: a status write must keep them", md["finalizers"])
	}
	if st, _ := obj["status"].(map[string]any); st["phase"] != phase {
		t.Errorf("status %v, want phase %s", obj["status"], phase)
	}
}

func TestUpdateStatusByNameChangesOnlyTheStatus(t *testing.T) {
	p := plan(sim.Step{At: at(time.Second), Actor: "user", Op: "update-status", Resource: "pods", Name: "p",
		Object: json.RawMessage(`{"status":{"phase":"Running"}}`)})
	p.Objects = append(p.Objects, json.RawMessage(ownedPod))
	wantOnlyStatusChanged(t, run(t, p), "Running")
}

// A step in the older form (a whole object, named by its metadata, its
// resource by its kind) still works, and its metadata is not applied.
func TestUpdateStatusWithAWholeObjectChangesOnlyTheStatus(t *testing.T) {
	p := plan(sim.Step{At: at(time.Second), Actor: "competitor", Op: "update-status",
		Object: json.RawMessage(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default","labels":{"other":"x"}},"status":{"phase":"Failed"}}`)})
	p.Objects = append(p.Objects, json.RawMessage(ownedPod))
	wantOnlyStatusChanged(t, run(t, p), "Failed")
}

func TestPatchStatusPatchesTheStatusSubresource(t *testing.T) {
	p := plan(sim.Step{At: at(time.Second), Actor: "user", Op: "patch-status", Resource: "pods", Name: "p",
		Patch: json.RawMessage(`{"status":{"phase":"Succeeded"}}`)})
	p.Objects = append(p.Objects, json.RawMessage(ownedPod))
	tr := run(t, p)
	wantOnlyStatusChanged(t, tr, "Succeeded")
	w := only(t, "status write", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWrite && r.Name == "p" && r.Verb != "create" }))
	if w.Verb != "patch/status" {
		t.Errorf("verb %q, want patch/status", w.Verb)
	}
}

func TestStatusStepsAreValidated(t *testing.T) {
	for _, c := range []struct {
		step sim.Step
		want string
	}{
		{sim.Step{Actor: "user", Op: "update-status", Resource: "pods", Name: "p"}, "steps[0].object: missing"},
		{sim.Step{Actor: "user", Op: "update-status", Resource: "pods", Name: "p", Object: json.RawMessage(`{"spec":{}}`)}, "lacks status"},
		{sim.Step{Actor: "user", Op: "update-status", Object: json.RawMessage(`{"status":{}}`)}, "apiVersion (or the step's resource)"},
		{sim.Step{Actor: "user", Op: "update-status", Resource: "pods", Name: "p", Object: json.RawMessage(`{"metadata":{"name":"q"},"status":{}}`)}, "give one name"},
		{sim.Step{Actor: "user", Op: "patch-status", Resource: "pods", Patch: json.RawMessage(`{}`)}, "steps[0].name: missing"},
		{sim.Step{Actor: "user", Op: "patch-status", Name: "p", Resource: "pods"}, "steps[0].patch: missing"},
	} {
		p := plan(c.step)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: error %v, want %q", c.step.Op, c.step.Object, err, c.want)
		}
	}
}
