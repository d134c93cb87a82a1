package fidelity

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// apply sends a server-side apply patch (YAML) of r/name as manager.
func (e *Env) apply(step string, r Resource, name, manager string, force bool, yaml string, opts ...metav1.PatchOptions) Result {
	o := metav1.PatchOptions{FieldManager: manager}
	if len(opts) > 0 {
		o = opts[0]
		o.FieldManager = manager
	}
	if force {
		o.Force = ptr(true)
	}
	return e.Patch(step, r, name, "", types.ApplyYAMLPatchType, yaml, o)
}

const cmHeader = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"

// applyCases are server-side apply: create, update, conflicts (409 naming
// the managers), force, and managedFields (issue 18).
var applyCases = []Case{
	{Name: "ssa-create-and-managed-fields", Doc: "An apply that creates answers 201; managedFields record the manager's Apply.", Run: func(e *Env) {
		e.ShowManagers()
		e.apply("apply a", ConfigMaps, "a", "alice", false, cmHeader+"data:\n  k: \"1\"\n")
		e.apply("apply a again, unchanged", ConfigMaps, "a", "alice", false, cmHeader+"data:\n  k: \"1\"\n")
		e.Get("get a", ConfigMaps, "a")
	}},
	{Name: "ssa-conflict-and-force", Doc: "A second manager changing a field the first applied is 409 Conflict naming the field and the manager; force takes it over.", Run: func(e *Env) {
		e.ShowManagers()
		e.apply("alice applies k=1", ConfigMaps, "a", "alice", false, cmHeader+"data:\n  k: \"1\"\n  x: \"x\"\n")
		e.apply("bob applies k=2", ConfigMaps, "a", "bob", false, cmHeader+"data:\n  k: \"2\"\n")
		e.apply("bob forces k=2", ConfigMaps, "a", "bob", true, cmHeader+"data:\n  k: \"2\"\n")
		e.apply("alice applies k=1 again", ConfigMaps, "a", "alice", false, cmHeader+"data:\n  k: \"1\"\n  x: \"x\"\n")
		e.Get("get a", ConfigMaps, "a")
	}},
	{Name: "ssa-shared-ownership", Doc: "Two managers applying the same value share the field; neither conflicts.", Run: func(e *Env) {
		e.ShowManagers()
		e.apply("alice applies k=1", ConfigMaps, "a", "alice", false, cmHeader+"data:\n  k: \"1\"\n")
		e.apply("bob applies k=1", ConfigMaps, "a", "bob", false, cmHeader+"data:\n  k: \"1\"\n")
		e.apply("alice drops k", ConfigMaps, "a", "alice", false, cmHeader)
		e.Get("get a", ConfigMaps, "a")
	}},
	{Name: "ssa-removes-unapplied-fields", Doc: "Fields a manager no longer applies (and nobody else owns) are removed.", Run: func(e *Env) {
		e.apply("apply k and x", ConfigMaps, "a", "alice", false, cmHeader+"metadata:\n  labels:\n    l: v\ndata:\n  k: \"1\"\n  x: \"x\"\n")
		e.apply("apply k only", ConfigMaps, "a", "alice", false, cmHeader+"data:\n  k: \"1\"\n")
		e.Get("get a", ConfigMaps, "a")
	}},
	{Name: "ssa-conflict-with-an-update", Doc: "A field set by a create or an update belongs to its writer (the client's user agent): an apply changing it conflicts.", Run: func(e *Env) {
		e.ShowManagers()
		e.Create("create a", ConfigMaps, configMap("a", map[string]string{"k": "1"}))
		e.apply("alice applies k=2", ConfigMaps, "a", "alice", false, cmHeader+"data:\n  k: \"2\"\n")
		e.apply("alice applies n=1", ConfigMaps, "a", "alice", false, cmHeader+"data:\n  n: \"1\"\n")
		e.Patch("merge patch n=2 as editor", ConfigMaps, "a", "", types.MergePatchType, `{"data":{"n":"2"}}`, metav1.PatchOptions{FieldManager: "editor"})
		e.apply("alice applies n=1 again", ConfigMaps, "a", "alice", false, cmHeader+"data:\n  n: \"1\"\n")
	}},
	{Name: "ssa-invalid-requests", Doc: "Apply without fieldManager is 422; without apiVersion/kind, or with another name, is 400; managedFields in the patch are refused.", Run: func(e *Env) {
		e.Patch("apply without fieldManager", ConfigMaps, "a", "", types.ApplyYAMLPatchType, cmHeader+"data:\n  k: \"1\"\n")
		e.apply("apply without kind", ConfigMaps, "a", "alice", false, "metadata:\n  name: a\ndata:\n  k: \"1\"\n")
		e.apply("apply with another name", ConfigMaps, "a", "alice", false, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n")
		e.apply("apply an invalid key", ConfigMaps, "a", "alice", false, cmHeader+"data:\n  bad key: \"1\"\n")
		e.Get("get a", ConfigMaps, "a")
	}},
	{Name: "ssa-dry-run", Doc: "A dry-run apply answers what it would create and stores nothing.", Run: func(e *Env) {
		e.apply("dry-run apply a", ConfigMaps, "a", "alice", false, cmHeader+"data:\n  k: \"1\"\n", metav1.PatchOptions{DryRun: dryRunAll})
		e.Get("get a", ConfigMaps, "a")
	}},
	{Name: "ssa-custom-resource", Doc: "Apply of a custom resource: create, conflict on spec.replicas, schema validation (422).", Run: func(e *Env) {
		e.ShowManagers()
		h := "apiVersion: lab.cachelab.dev/v1alpha1\nkind: Bellerophon\nmetadata:\n  name: b\n"
		e.apply("alice applies b", Bellerophons, "b", "alice", false, h+"spec:\n  replicas: 1\n  version: \"1.0\"\n")
		e.apply("bob applies replicas 2", Bellerophons, "b", "bob", false, h+"spec:\n  replicas: 2\n  version: \"1.0\"\n")
		e.apply("alice applies replicas -1", Bellerophons, "b", "alice", false, h+"spec:\n  replicas: -1\n  version: \"1.0\"\n")
		e.apply("alice applies replicas 3", Bellerophons, "b", "alice", false, h+"spec:\n  replicas: 3\n  version: \"1.0\"\n")
		e.Get("get b", Bellerophons, "b")
	}},
	{Name: "ssa-deployment", Doc: "Apply of a Deployment: defaults fill what the manager did not set; another manager's replicas conflicts; /scale writes are an Update.", Run: func(e *Env) {
		h := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: c\n        image: registry.example/app:1.0\n"
		e.apply("alice applies web", Deployments, "web", "alice", false, h+"  replicas: 2\n")
		e.apply("bob applies replicas 3", Deployments, "web", "bob", false, h+"  replicas: 3\n")
		e.Patch("scale web to 4", Deployments, "web", "scale", types.MergePatchType, `{"spec":{"replicas":4}}`, metav1.PatchOptions{FieldManager: "autoscaler"})
		e.apply("alice applies replicas 2 again", Deployments, "web", "alice", false, h+"  replicas: 2\n")
		e.Get("get web", Deployments, "web")
	}},
}

func init() { Cases = append(Cases, applyCases...) }
