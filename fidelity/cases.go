package fidelity

import (
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Case is one named operation sequence of the corpus, run in a fresh
// namespace named after it.
type Case struct {
	// Name is a DNS label; the case's namespace is "fid-" + Name.
	Name string
	// Doc says what the case shows.
	Doc string
	// Run sends the case's requests through e.
	Run func(e *Env)
}

// Namespace is the namespace a case runs in.
func (c Case) Namespace() string { return "fid-" + c.Name }

// hold is the finalizer cases use to keep an object terminating.
const hold = "example.com/hold"

var (
	background = metav1.DeletePropagationBackground
	foreground = metav1.DeletePropagationForeground
	orphan     = metav1.DeletePropagationOrphan
	dryRunAll  = []string{metav1.DryRunAll}
)

func ptr[T any](v T) *T { return &v }

// Cases is the corpus.
var Cases = []Case{
	// --- creates ---
	{Name: "create-and-get", Doc: "A create answers 201 with the stored object; a get answers it again.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", map[string]string{"k": "v"}))
		e.Get("get a", ConfigMaps, "a")
	}},
	{Name: "create-already-exists", Doc: "Creating a name that exists is 409 AlreadyExists.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Create("create a again", ConfigMaps, configMap("a", map[string]string{"x": "y"}))
		e.Get("get a", ConfigMaps, "a")
	}},
	{Name: "create-generate-name", Doc: "generateName gets a 5-character suffix.", Run: func(e *Env) {
		cm := configMap("", nil)
		cm.GenerateName = "gen-"
		e.Create("create with generateName", ConfigMaps, cm)
	}},
	{Name: "create-with-resource-version", Doc: "A create that sets resourceVersion is refused.", Run: func(e *Env) {
		cm := configMap("a", nil)
		cm.ResourceVersion = "5"
		e.Create("create with resourceVersion", ConfigMaps, cm)
		e.Get("get a", ConfigMaps, "a")
	}},
	{Name: "create-invalid-name", Doc: "A name that is not a DNS subdomain is 422 Invalid on metadata.name.", Run: func(e *Env) {
		e.Create("create Bad_Name", ConfigMaps, configMap("Bad_Name", nil))
	}},
	{Name: "create-invalid-data-key", Doc: "A ConfigMap data key with a space is 422 Invalid on data[key].", Run: func(e *Env) {
		e.Create("create bad key", ConfigMaps, configMap("a", map[string]string{"bad key": "v"}))
	}},
	{Name: "create-namespace-mismatch", Doc: "A body namespace other than the URL's is 400 BadRequest.", Run: func(e *Env) {
		cm := configMap("a", nil)
		cm.Namespace = "some-other-namespace"
		e.Create("create in another namespace", ConfigMaps, cm)
	}},
	{Name: "get-missing", Doc: "Getting a name that does not exist is 404 NotFound.", Run: func(e *Env) {
		e.Get("get missing", ConfigMaps, "missing")
	}},
	{Name: "secret-type-defaults-to-opaque", Doc: "A Secret created without a type is Opaque.", Run: func(e *Env) {
		e.Create("create secret", Secrets, secret("s", "", map[string]string{"k": "v"}))
	}},

	// --- updates and conflicts ---
	{Name: "update-stale-resource-version", Doc: "An update carrying a stale resourceVersion is 409 Conflict and changes nothing.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", map[string]string{"k": "1"}))
		e.Update("update a", ConfigMaps, "a", with(a.Body, "2", "data", "k"))
		e.Update("update a with the first resourceVersion", ConfigMaps, "a", with(a.Body, "3", "data", "k"))
		e.Get("get a", ConfigMaps, "a")
	}},
	{Name: "update-without-resource-version", Doc: "A built-in update without resourceVersion is unconditional.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", map[string]string{"k": "1"}))
		e.Update("update a without resourceVersion", ConfigMaps, "a", with(with(a.Body, nil, "metadata", "resourceVersion"), "2", "data", "k"))
	}},
	{Name: "update-no-op-writes-nothing", Doc: "An update that changes nothing keeps the resourceVersion and sends no event.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", map[string]string{"k": "1"}))
		w := e.Watch("watch from a", ConfigMaps, metav1.ListOptions{ResourceVersion: a.RV()})
		e.Update("update a with the same content", ConfigMaps, "a", a.Body)
		e.Patch("label a", ConfigMaps, "a", "", types.MergePatchType, `{"metadata":{"labels":{"x":"y"}}}`)
		e.Collect("events after a", w, 1)
	}},
	{Name: "update-missing", Doc: "Updating a ConfigMap that does not exist is 404 (no create on update).", Run: func(e *Env) {
		e.Update("update missing", ConfigMaps, "missing", configMap("missing", nil))
	}},
	{Name: "update-custom-resource-without-resource-version", Doc: "A custom resource update must carry a resourceVersion: 422.", Run: func(e *Env) {
		b := e.Create("create b", Bellerophons, bellerophon("b", 1, "1.0"))
		e.Update("update b without resourceVersion", Bellerophons, "b", with(with(b.Body, nil, "metadata", "resourceVersion"), int64(2), "spec", "replicas"))
	}},
	{Name: "typed-client-update-conflict", Doc: "Through the typed clientset: a stale update is a Conflict error.", Run: func(e *Env) {
		cms := e.Typed().CoreV1().ConfigMaps(e.Namespace)
		a, err := cms.Create(e.Context(), configMap("a", map[string]string{"k": "1"}), metav1.CreateOptions{})
		e.RecordTyped("typed create a", a, err)
		if err != nil {
			return
		}
		b := a.DeepCopy()
		b.Data["k"] = "2"
		out, err := cms.Update(e.Context(), b, metav1.UpdateOptions{})
		e.RecordTyped("typed update a", out, err)
		c := a.DeepCopy()
		c.Data["k"] = "3"
		out, err = cms.Update(e.Context(), c, metav1.UpdateOptions{})
		e.RecordTyped("typed stale update a", out, err)
	}},

	// --- preconditions ---
	{Name: "delete-precondition-uid", Doc: "A delete whose UID precondition differs is 409; with the right UID it deletes.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Delete("delete a with a wrong uid", ConfigMaps, "a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr(types.UID("00000000-0000-0000-0000-00000000beef"))}})
		e.Delete("delete a with its uid", ConfigMaps, "a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr(types.UID(a.UID()))}})
		e.Get("get a", ConfigMaps, "a")
	}},
	{Name: "delete-precondition-resource-version", Doc: "A delete whose resourceVersion precondition is stale is 409; with the current one it deletes.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", map[string]string{"k": "1"}))
		b := e.Update("update a", ConfigMaps, "a", with(a.Body, "2", "data", "k"))
		e.Delete("delete a with the first resourceVersion", ConfigMaps, "a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr(a.RV())}})
		e.Delete("delete a with the current resourceVersion", ConfigMaps, "a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr(b.RV())}})
	}},
	{Name: "delete-missing", Doc: "Deleting a name that does not exist is 404.", Run: func(e *Env) {
		e.Delete("delete missing", ConfigMaps, "missing", metav1.DeleteOptions{})
	}},
	{Name: "delete-recreate-new-uid", Doc: "Delete and create again under the same name: a new UID; a watch sees ADDED, DELETED, ADDED.", Run: func(e *Env) {
		l := e.List("list", ConfigMaps, metav1.ListOptions{})
		w := e.Watch("watch", ConfigMaps, metav1.ListOptions{ResourceVersion: l.RV()})
		e.Create("create a", ConfigMaps, configMap("a", map[string]string{"incarnation": "1"}))
		e.Delete("delete a", ConfigMaps, "a", metav1.DeleteOptions{})
		e.Create("create a again", ConfigMaps, configMap("a", map[string]string{"incarnation": "2"}))
		e.Collect("events", w, 3)
	}},
	{Name: "delete-collection-by-label", Doc: "deletecollection with a label selector deletes only the matching objects.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, labelled(configMap("a", nil), map[string]string{"set": "x"}))
		e.Create("create b", ConfigMaps, labelled(configMap("b", nil), map[string]string{"set": "x"}))
		e.Create("create c", ConfigMaps, labelled(configMap("c", nil), map[string]string{"set": "y"}))
		e.DeleteCollection("delete set=x", ConfigMaps, metav1.ListOptions{LabelSelector: "set=x"})
		e.List("list", ConfigMaps, metav1.ListOptions{})
	}},

	// --- finalizers and deletionTimestamp ---
	{Name: "finalizer-holds-deletion", Doc: "A delete of an object with a finalizer only marks it; removing the finalizer deletes it.", Run: func(e *Env) {
		a := e.Create("create a with a finalizer", ConfigMaps, held(configMap("a", nil), hold))
		w := e.Watch("watch from a", ConfigMaps, metav1.ListOptions{ResourceVersion: a.RV()})
		e.Delete("delete a", ConfigMaps, "a", metav1.DeleteOptions{})
		g := e.Get("get a", ConfigMaps, "a")
		e.Update("remove the finalizer", ConfigMaps, "a", with(g.Body, nil, "metadata", "finalizers"))
		e.Get("get a after", ConfigMaps, "a")
		e.Collect("events", w, 2)
	}},
	{Name: "finalizer-delete-again-while-terminating", Doc: "Deleting a terminating object again writes nothing.", Run: func(e *Env) {
		e.Create("create a with a finalizer", ConfigMaps, held(configMap("a", nil), hold))
		e.Delete("delete a", ConfigMaps, "a", metav1.DeleteOptions{})
		e.Delete("delete a again", ConfigMaps, "a", metav1.DeleteOptions{})
		e.Patch("remove the finalizer", ConfigMaps, "a", "", types.MergePatchType, `{"metadata":{"finalizers":null}}`)
	}},
	{Name: "finalizer-terminating-object-still-updates", Doc: "A terminating object still takes updates; deletionTimestamp stays.", Run: func(e *Env) {
		e.Create("create a with a finalizer", ConfigMaps, held(configMap("a", map[string]string{"k": "1"}), hold))
		d := e.Delete("delete a", ConfigMaps, "a", metav1.DeleteOptions{})
		if d.Body != nil {
			e.Update("update a's data", ConfigMaps, "a", with(d.Body, "2", "data", "k"))
		}
		e.Patch("remove the finalizer", ConfigMaps, "a", "", types.MergePatchType, `{"metadata":{"finalizers":null}}`)
		e.Get("get a", ConfigMaps, "a")
	}},
	{Name: "finalizer-none-added-while-terminating", Doc: "No new finalizer may be added to a terminating object.", Run: func(e *Env) {
		e.Create("create a with a finalizer", ConfigMaps, held(configMap("a", nil), hold))
		e.Delete("delete a", ConfigMaps, "a", metav1.DeleteOptions{})
		e.Patch("add a second finalizer", ConfigMaps, "a", "", types.MergePatchType, `{"metadata":{"finalizers":["example.com/hold","example.com/more"]}}`)
		e.Patch("remove the finalizers", ConfigMaps, "a", "", types.MergePatchType, `{"metadata":{"finalizers":null}}`)
		e.Get("get a", ConfigMaps, "a")
	}},

	// --- ownerReference garbage collection ---
	{Name: "gc-background", Doc: "Background deletion: the owner goes at once, then the collector deletes the dependent.", Run: func(e *Env) {
		o := e.Create("create owner", ConfigMaps, configMap("owner", nil))
		c := e.Create("create child", ConfigMaps, ownedBy(configMap("child", nil), "owner", o.UID(), false))
		w := e.Watch("watch", ConfigMaps, metav1.ListOptions{ResourceVersion: c.RV()})
		e.Delete("delete owner", ConfigMaps, "owner", metav1.DeleteOptions{PropagationPolicy: &background})
		e.WaitGone(ConfigMaps, "child")
		e.Get("get child", ConfigMaps, "child")
		e.Collect("events", w, 2)
	}},
	{Name: "gc-foreground", Doc: "Foreground deletion: the owner is marked (foregroundDeletion), its blocking dependent goes, then the owner.", Run: func(e *Env) {
		o := e.Create("create owner", ConfigMaps, configMap("owner", nil))
		c := e.Create("create child", ConfigMaps, ownedBy(configMap("child", nil), "owner", o.UID(), true))
		w := e.Watch("watch", ConfigMaps, metav1.ListOptions{ResourceVersion: c.RV()})
		e.Delete("delete owner in the foreground", ConfigMaps, "owner", metav1.DeleteOptions{PropagationPolicy: &foreground})
		e.WaitGone(ConfigMaps, "owner")
		e.Get("get child", ConfigMaps, "child")
		e.Get("get owner", ConfigMaps, "owner")
		e.Collect("events", w, 3)
	}},
	{Name: "gc-orphan", Doc: "Orphan deletion: the owner is marked (orphan), the dependent loses its ownerReference, then the owner goes.", Run: func(e *Env) {
		o := e.Create("create owner", ConfigMaps, configMap("owner", nil))
		c := e.Create("create child", ConfigMaps, ownedBy(configMap("child", nil), "owner", o.UID(), false))
		w := e.Watch("watch", ConfigMaps, metav1.ListOptions{ResourceVersion: c.RV()})
		e.Delete("delete owner, orphaning", ConfigMaps, "owner", metav1.DeleteOptions{PropagationPolicy: &orphan})
		e.WaitGone(ConfigMaps, "owner")
		e.Get("get child", ConfigMaps, "child")
		e.Collect("events", w, 3)
	}},
	{Name: "gc-dangling-owner", Doc: "A dependent whose owner does not exist is collected.", Run: func(e *Env) {
		l := e.List("list", ConfigMaps, metav1.ListOptions{})
		w := e.Watch("watch", ConfigMaps, metav1.ListOptions{ResourceVersion: l.RV()})
		e.Create("create child of a missing owner", ConfigMaps, ownedBy(configMap("child", nil), "ghost", "00000000-0000-0000-0000-00000000dead", false))
		e.WaitGone(ConfigMaps, "child")
		e.Get("get child", ConfigMaps, "child")
		e.Collect("events", w, 2)
	}},
	{Name: "gc-one-of-two-owners-gone", Doc: "A dependent keeps living while one of its owners remains.", Run: func(e *Env) {
		o1 := e.Create("create owner1", ConfigMaps, configMap("owner1", nil))
		o2 := e.Create("create owner2", ConfigMaps, configMap("owner2", nil))
		e.Create("create child", ConfigMaps, ownedBy(ownedBy(configMap("child", nil), "owner1", o1.UID(), false), "owner2", o2.UID(), false))
		e.Delete("delete owner1", ConfigMaps, "owner1", metav1.DeleteOptions{})
		e.WaitUntil(ConfigMaps, "child", func(obj map[string]any) bool { return len(slice(meta(obj), "ownerReferences")) == 1 })
		e.Get("get child", ConfigMaps, "child")
		e.Delete("delete owner2", ConfigMaps, "owner2", metav1.DeleteOptions{})
		e.WaitGone(ConfigMaps, "child")
		e.Get("get child after", ConfigMaps, "child")
	}},

	{Name: "gc-foreground-chain", Doc: "Foreground deletion down a chain owner -> child -> grandchild: the grandchild goes first, the owner last.", Run: func(e *Env) {
		o := e.Create("create owner", ConfigMaps, configMap("owner", nil))
		c := e.Create("create child", ConfigMaps, ownedBy(configMap("child", nil), "owner", o.UID(), true))
		g := e.Create("create grandchild", ConfigMaps, ownedBy(configMap("grandchild", nil), "child", c.UID(), true))
		w := e.Watch("watch", ConfigMaps, metav1.ListOptions{ResourceVersion: g.RV()})
		e.Delete("delete owner in the foreground", ConfigMaps, "owner", metav1.DeleteOptions{PropagationPolicy: &foreground})
		e.WaitGone(ConfigMaps, "owner")
		e.List("list", ConfigMaps, metav1.ListOptions{})
		e.CollectUntil("events", w, func(ev RawEvent) bool { return ev.Type == "DELETED" && str(meta(ev.Object), "name") == "owner" })
	}},

	// --- custom resources: generation, status, validation ---
	{Name: "crd-generation-on-spec-change", Doc: "generation starts at 1 and grows on spec changes only.", Run: func(e *Env) {
		b := e.Create("create b", Bellerophons, bellerophon("b", 1, "1.0"))
		b = e.Update("scale b", Bellerophons, "b", with(b.Body, int64(2), "spec", "replicas"))
		b = e.Update("label b", Bellerophons, "b", with(b.Body, map[string]any{"x": "y"}, "metadata", "labels"))
		e.Update("update b unchanged", Bellerophons, "b", b.Body)
		e.Get("get b", Bellerophons, "b")
	}},
	{Name: "crd-status-update-ignores-spec", Doc: "An update of /status changes only status; generation stays.", Run: func(e *Env) {
		b := e.Create("create b", Bellerophons, bellerophon("b", 1, "1.0"))
		st := with(with(b.Body, int64(5), "spec", "replicas"), map[string]any{"readyReplicas": int64(1), "observedGeneration": int64(1)}, "status")
		e.UpdateStatus("update status (and spec)", Bellerophons, "b", st)
		e.Get("get b", Bellerophons, "b")
	}},
	{Name: "crd-update-ignores-status", Doc: "An update of the main resource ignores status.", Run: func(e *Env) {
		b := e.Create("create b", Bellerophons, bellerophon("b", 1, "1.0"))
		e.Update("update with status", Bellerophons, "b", with(b.Body, map[string]any{"readyReplicas": int64(3)}, "status"))
	}},
	{Name: "crd-create-drops-status", Doc: "A create with status stores none.", Run: func(e *Env) {
		e.Create("create b with status", Bellerophons, with(bellerophon("b", 1, "1.0"), map[string]any{"readyReplicas": int64(3)}, "status"))
	}},
	{Name: "crd-status-merge-patch", Doc: "A merge patch of /status sets status; generation stays.", Run: func(e *Env) {
		e.Create("create b", Bellerophons, bellerophon("b", 1, "1.0"))
		e.Patch("patch status", Bellerophons, "b", "status", types.MergePatchType, `{"status":{"readyReplicas":1}}`)
		e.Patch("patch spec through status", Bellerophons, "b", "status", types.MergePatchType, `{"spec":{"replicas":9}}`)
		e.Get("get b", Bellerophons, "b")
	}},
	{Name: "crd-validation-minimum", Doc: "The schema's minimum: replicas -1 is 422 Invalid on spec.replicas.", Run: func(e *Env) {
		e.Create("create replicas -1", Bellerophons, bellerophon("b", -1, "1.0"))
	}},
	{Name: "crd-validation-required-and-type", Doc: "Missing required fields and wrong types are 422 Invalid with one cause each.", Run: func(e *Env) {
		e.Create("create without spec", Bellerophons, with(bellerophon("a", 1, "1.0"), nil, "spec"))
		e.Create("create without version", Bellerophons, with(bellerophon("b", 1, "1.0"), nil, "spec", "version"))
		e.Create("create replicas as a string", Bellerophons, with(bellerophon("c", 1, "1.0"), "three", "spec", "replicas"))
		e.List("list", Bellerophons, metav1.ListOptions{})
	}},
	{Name: "crd-validation-on-update", Doc: "Validation also runs on update and patch.", Run: func(e *Env) {
		b := e.Create("create b", Bellerophons, bellerophon("b", 1, "1.0"))
		e.Update("update version to empty", Bellerophons, "b", with(b.Body, "", "spec", "version"))
		e.Patch("patch replicas to -2", Bellerophons, "b", "", types.MergePatchType, `{"spec":{"replicas":-2}}`)
		e.Get("get b", Bellerophons, "b")
	}},
	{Name: "crd-strategic-merge-patch-unsupported", Doc: "A strategic merge patch of a custom resource is 415.", Run: func(e *Env) {
		e.Create("create b", Bellerophons, bellerophon("b", 1, "1.0"))
		e.Patch("strategic merge patch", Bellerophons, "b", "", types.StrategicMergePatchType, `{"spec":{"replicas":2}}`)
	}},

	// --- patches ---
	{Name: "patch-merge", Doc: "A JSON merge patch adds, replaces and (with null) removes keys.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", map[string]string{"keep": "1", "drop": "2"}))
		e.Patch("merge patch", ConfigMaps, "a", "", types.MergePatchType, `{"metadata":{"labels":{"l":"v"}},"data":{"drop":null,"new":"3"}}`)
	}},
	{Name: "patch-json", Doc: "A JSON patch applies in order; a failing test operation is 422 and changes nothing.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", map[string]string{"k": "1"}))
		e.Patch("json patch", ConfigMaps, "a", "", types.JSONPatchType, `[{"op":"replace","path":"/data/k","value":"2"},{"op":"add","path":"/data/n","value":"3"}]`)
		e.Patch("json patch with a failing test", ConfigMaps, "a", "", types.JSONPatchType, `[{"op":"test","path":"/data/k","value":"nope"},{"op":"remove","path":"/data/k"}]`)
		e.Get("get a", ConfigMaps, "a")
	}},
	{Name: "patch-strategic-merge", Doc: "A strategic merge patch of a ConfigMap, through the typed clientset.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, labelled(configMap("a", map[string]string{"k": "1"}), map[string]string{"a": "1"}))
		out, err := e.Typed().CoreV1().ConfigMaps(e.Namespace).Patch(e.Context(), "a", types.StrategicMergePatchType,
			[]byte(`{"metadata":{"labels":{"b":"2"}},"data":{"k":null,"m":"2"}}`), metav1.PatchOptions{})
		e.RecordTyped("typed strategic merge patch", out, err)
	}},
	{Name: "patch-stale-resource-version", Doc: "A patch that carries a stale resourceVersion is 409 Conflict.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", map[string]string{"k": "1"}))
		e.Patch("patch k", ConfigMaps, "a", "", types.MergePatchType, `{"data":{"k":"2"}}`)
		e.Patch("patch with the first resourceVersion", ConfigMaps, "a", "", types.MergePatchType, `{"metadata":{"resourceVersion":"`+a.RV()+`"},"data":{"k":"3"}}`)
	}},
	{Name: "patch-missing-and-malformed", Doc: "Patching a missing object is 404; a malformed patch is 400.", Run: func(e *Env) {
		e.Patch("patch missing", ConfigMaps, "missing", "", types.MergePatchType, `{"data":{"k":"v"}}`)
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Patch("malformed merge patch", ConfigMaps, "a", "", types.MergePatchType, `{"data":`)
		e.Patch("malformed json patch", ConfigMaps, "a", "", types.JSONPatchType, `{"op":"add"}`)
	}},

	{Name: "patch-merge-field-names-case-sensitive", Doc: "Field names are case-sensitive: a merge, strategic or JSON patch of \"Data\" is an unknown field, dropped (422 with fieldValidation=Strict); \"data\" is not touched.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", map[string]string{"k": "1"}))
		e.Patch("merge patch Data", ConfigMaps, "a", "", types.MergePatchType, `{"Data":{"k":"2","n":"3"}}`)
		e.Patch("merge patch Data strict", ConfigMaps, "a", "", types.MergePatchType, `{"Data":{"k":"4"}}`, metav1.PatchOptions{FieldValidation: metav1.FieldValidationStrict})
		e.Patch("strategic merge patch Data", ConfigMaps, "a", "", types.StrategicMergePatchType, `{"Data":{"k":"5"}}`)
		e.Patch("strategic merge patch Data strict", ConfigMaps, "a", "", types.StrategicMergePatchType, `{"Data":{"k":"6"}}`, metav1.PatchOptions{FieldValidation: metav1.FieldValidationStrict})
		e.Patch("json patch add /Data", ConfigMaps, "a", "", types.JSONPatchType, `[{"op":"add","path":"/Data","value":{"k":"7"}}]`)
		e.Get("get a", ConfigMaps, "a")
		e.Create("create b", Bellerophons, bellerophon("b", 1, "1.0"))
		e.Patch("merge patch Spec", Bellerophons, "b", "", types.MergePatchType, `{"Spec":{"replicas":2}}`)
		e.Get("get b", Bellerophons, "b")
	}},
	{Name: "create-unknown-field", Doc: "An unknown (or wrongly cased) field: dropped by default (with a warning), 400 with fieldValidation=Strict, dropped silently with Ignore.", Run: func(e *Env) {
		body := func(name string) map[string]any {
			return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}, "Data": map[string]any{"k": "v"}, "extra": "x"}
		}
		e.Create("create a with unknown fields", ConfigMaps, body("a"))
		e.Create("create b with unknown fields, strict", ConfigMaps, body("b"), metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
		e.Create("create c with unknown fields, ignore", ConfigMaps, body("c"), metav1.CreateOptions{FieldValidation: metav1.FieldValidationIgnore})
		e.Get("get b", ConfigMaps, "b")
		cr := func(name string) map[string]any {
			b := bellerophon(name, 1, "1.0")
			b["spec"].(map[string]any)["unknown"] = "x"
			b["Spec"] = map[string]any{"replicas": 2}
			return b
		}
		e.Create("create custom resource with unknown fields", Bellerophons, cr("x"))
		e.Create("create custom resource with unknown fields, strict", Bellerophons, cr("y"), metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
		e.Update("update a with unknown fields, strict", ConfigMaps, "a", body("a"), metav1.UpdateOptions{FieldValidation: metav1.FieldValidationStrict})
		x := e.Get("get x", Bellerophons, "x")
		e.Update("update custom resource with unknown fields, strict", Bellerophons, "x", with(x.Body, "x", "spec", "unknown"), metav1.UpdateOptions{FieldValidation: metav1.FieldValidationStrict})
		e.Update("update custom resource with unknown fields", Bellerophons, "x", with(x.Body, "x", "spec", "unknown"))
	}},

	// --- dry run ---
	{Name: "dry-run-create", Doc: "A dry-run create answers the object it would store and stores nothing.", Run: func(e *Env) {
		e.Create("dry-run create a", ConfigMaps, configMap("a", map[string]string{"k": "v"}), metav1.CreateOptions{DryRun: dryRunAll})
		e.Get("get a", ConfigMaps, "a")
	}},
	{Name: "dry-run-update-and-delete", Doc: "Dry-run update and delete answer as if done and change nothing.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", map[string]string{"k": "1"}))
		e.Update("dry-run update a", ConfigMaps, "a", with(a.Body, "2", "data", "k"), metav1.UpdateOptions{DryRun: dryRunAll})
		e.Patch("dry-run patch a", ConfigMaps, "a", "", types.MergePatchType, `{"data":{"k":"3"}}`, metav1.PatchOptions{DryRun: dryRunAll})
		e.Delete("dry-run delete a", ConfigMaps, "a", metav1.DeleteOptions{DryRun: dryRunAll})
		e.Get("get a", ConfigMaps, "a")
	}},

	// --- lists by resourceVersion ---
	{Name: "list-consistent", Doc: "A list with resourceVersion \"\" is consistent: it sees every write so far.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Create("create b", ConfigMaps, configMap("b", nil))
		e.List("list", ConfigMaps, metav1.ListOptions{})
	}},
	{Name: "list-rv-zero", Doc: "A list at resourceVersion \"0\" may be served from any revision (here: the cache, up to date).", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Create("create b", ConfigMaps, configMap("b", nil))
		e.List("list", ConfigMaps, metav1.ListOptions{})
		e.List("list at 0", ConfigMaps, metav1.ListOptions{ResourceVersion: "0"})
	}},
	{Name: "list-rv-zero-with-limit", Doc: "A list at resourceVersion \"0\" with a limit.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Create("create b", ConfigMaps, configMap("b", nil))
		e.Create("create c", ConfigMaps, configMap("c", nil))
		e.List("list", ConfigMaps, metav1.ListOptions{})
		e.List("list at 0, limit 1", ConfigMaps, metav1.ListOptions{ResourceVersion: "0", Limit: 1})
	}},
	{Name: "list-exact", Doc: "resourceVersionMatch=Exact lists the state at that revision.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", map[string]string{"k": "1"}))
		e.Update("update a", ConfigMaps, "a", with(a.Body, "2", "data", "k"))
		b := e.Create("create b", ConfigMaps, configMap("b", nil))
		e.List("list exact at a's create", ConfigMaps, metav1.ListOptions{ResourceVersion: a.RV(), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		e.List("list exact at b's create", ConfigMaps, metav1.ListOptions{ResourceVersion: b.RV(), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	}},
	{Name: "list-not-older-than", Doc: "resourceVersionMatch=NotOlderThan serves a revision at least that new.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Create("create b", ConfigMaps, configMap("b", nil))
		e.List("list not older than a's create", ConfigMaps, metav1.ListOptions{ResourceVersion: a.RV(), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
		e.List("list at a's create, no match", ConfigMaps, metav1.ListOptions{ResourceVersion: a.RV()})
	}},
	{Name: "list-future-rv", Doc: "A resourceVersion ahead of the server is 504 Too large resource version (after a wait on a real server).", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", nil))
		e.List("list not older than the future", ConfigMaps, metav1.ListOptions{ResourceVersion: future(a.RV()), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
		e.List("list exact at the future", ConfigMaps, metav1.ListOptions{ResourceVersion: future(a.RV()), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		e.Get("get at the future", ConfigMaps, "a", metav1.GetOptions{ResourceVersion: future(a.RV())})
	}},
	{Name: "list-invalid-options", Doc: "resourceVersionMatch without resourceVersion, or a non-numeric resourceVersion, is refused.", Run: func(e *Env) {
		e.List("exact without resourceVersion", ConfigMaps, metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		e.List("non-numeric resourceVersion", ConfigMaps, metav1.ListOptions{ResourceVersion: "abc"})
		e.List("unknown match", ConfigMaps, metav1.ListOptions{ResourceVersion: "1", ResourceVersionMatch: "Newest"})
	}},
	{Name: "list-exact-after-compaction", Doc: "An Exact list below the compacted revision: 410 Expired from etcd; a real server's watch cache still serves revisions it holds.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", map[string]string{"k": "1"}))
		e.Update("update a", ConfigMaps, "a", with(a.Body, "2", "data", "k"))
		e.Compact()
		e.List("list exact at a's create", ConfigMaps, metav1.ListOptions{ResourceVersion: a.RV(), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		e.List("list exact at 1", ConfigMaps, metav1.ListOptions{ResourceVersion: "1", ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	}},

	// --- pagination ---
	{Name: "paginate", Doc: "limit pages through a list; continue carries on; remainingItemCount counts the rest.", Run: func(e *Env) {
		for _, n := range []string{"a", "b", "c"} {
			e.Create("create "+n, ConfigMaps, configMap(n, nil))
		}
		p := e.List("page 1", ConfigMaps, metav1.ListOptions{Limit: 2})
		e.List("page 2", ConfigMaps, metav1.ListOptions{Limit: 2, Continue: p.Continue()})
	}},
	{Name: "paginate-write-between-pages", Doc: "Later pages show the snapshot of the first: writes between pages are not seen.", Run: func(e *Env) {
		for _, n := range []string{"a", "b", "d"} {
			e.Create("create "+n, ConfigMaps, configMap(n, nil))
		}
		p := e.List("page 1", ConfigMaps, metav1.ListOptions{Limit: 2})
		e.Create("create c", ConfigMaps, configMap("c", nil))
		e.Delete("delete d", ConfigMaps, "d", metav1.DeleteOptions{})
		e.List("page 2", ConfigMaps, metav1.ListOptions{Limit: 2, Continue: p.Continue()})
		e.List("fresh list", ConfigMaps, metav1.ListOptions{})
	}},
	{Name: "paginate-invalid-continue", Doc: "A continue token that does not decode is 400; resourceVersion with continue is 400.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Create("create b", ConfigMaps, configMap("b", nil))
		p := e.List("page 1", ConfigMaps, metav1.ListOptions{Limit: 1})
		e.List("garbage continue", ConfigMaps, metav1.ListOptions{Limit: 1, Continue: "not-a-token"})
		e.List("continue with a resourceVersion", ConfigMaps, metav1.ListOptions{Limit: 1, Continue: p.Continue(), ResourceVersion: p.RV()})
	}},
	{Name: "paginate-expired-continue", Doc: "A continue token older than the compacted revision is 410 Expired, offering a fresh token.", Run: func(e *Env) {
		for _, n := range []string{"a", "b", "c"} {
			e.Create("create "+n, ConfigMaps, configMap(n, nil))
		}
		p := e.List("page 1", ConfigMaps, metav1.ListOptions{Limit: 1})
		e.Patch("change a", ConfigMaps, "a", "", types.MergePatchType, `{"data":{"k":"v"}}`)
		e.Compact()
		e.List("page 2 after compaction", ConfigMaps, metav1.ListOptions{Limit: 1, Continue: p.Continue()})
	}},

	// --- selectors ---
	{Name: "label-selectors", Doc: "Equality, set-based, existence and inequality label selectors.", Run: func(e *Env) {
		e.Create("create web", ConfigMaps, labelled(configMap("web", nil), map[string]string{"app": "web", "tier": "front"}))
		e.Create("create db", ConfigMaps, labelled(configMap("db", nil), map[string]string{"app": "db"}))
		e.Create("create plain", ConfigMaps, configMap("plain", nil))
		e.List("app=web", ConfigMaps, metav1.ListOptions{LabelSelector: "app=web"})
		e.List("app in (web,db)", ConfigMaps, metav1.ListOptions{LabelSelector: "app in (web,db)"})
		e.List("!tier", ConfigMaps, metav1.ListOptions{LabelSelector: "!tier"})
		e.List("app!=web", ConfigMaps, metav1.ListOptions{LabelSelector: "app!=web"})
		e.List("invalid selector", ConfigMaps, metav1.ListOptions{LabelSelector: "app in web"})
	}},
	{Name: "field-selectors", Doc: "metadata.name field selectors; an unsupported field is 400.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Create("create b", ConfigMaps, configMap("b", nil))
		e.List("metadata.name=b", ConfigMaps, metav1.ListOptions{FieldSelector: "metadata.name=b"})
		e.List("metadata.name!=b", ConfigMaps, metav1.ListOptions{FieldSelector: "metadata.name!=b"})
		e.List("unsupported field", ConfigMaps, metav1.ListOptions{FieldSelector: "data.k=v"})
	}},
	{Name: "field-selector-secret-type", Doc: "Secrets can be selected by type.", Run: func(e *Env) {
		e.Create("create opaque", Secrets, secret("opaque", corev1.SecretTypeOpaque, map[string]string{"k": "v"}))
		e.Create("create custom", Secrets, secret("custom", "example.com/custom", map[string]string{"k": "v"}))
		e.List("type=example.com/custom", Secrets, metav1.ListOptions{FieldSelector: "type=example.com/custom"})
	}},
	{Name: "field-selector-custom-resource", Doc: "A custom resource can be selected by metadata.name.", Run: func(e *Env) {
		e.Create("create a", Bellerophons, bellerophon("a", 1, "1.0"))
		e.Create("create b", Bellerophons, bellerophon("b", 1, "1.0"))
		e.List("metadata.name=a", Bellerophons, metav1.ListOptions{FieldSelector: "metadata.name=a"})
		e.List("spec.replicas=1", Bellerophons, metav1.ListOptions{FieldSelector: "spec.replicas=1"})
	}},

	// --- discovery ---
	{Name: "discovery-names", Doc: "Aggregated discovery: the short names, categories, verbs and subresources kubectl resolves names with, for the built-ins the lab serves and Bellerophon's CRD.", Run: func(e *Env) {
		e.Discovery("core resources", "/api", "", "configmaps", "events", "secrets")
		e.Discovery("namespaces", "/api", "", "namespaces")
		e.Discovery("pods", "/api", "", "pods")
		e.Discovery("events.k8s.io resources", "/apis", "events.k8s.io", "events")
		e.Discovery("custom resources", "/apis", "lab.cachelab.dev", "bellerophons")
	}},

	// --- namespaces ---
	{Name: "namespace-delete-collection-not-allowed", Doc: "Namespaces have no deletecollection: 405 MethodNotAllowed.", Run: func(e *Env) {
		e.DeleteCollection("delete namespaces labelled fidelity=none", Namespaces, metav1.ListOptions{LabelSelector: "fidelity=none"})
	}},
	{Name: "namespace-delete-terminates", Doc: "Deleting a namespace: kube-apiserver marks it Terminating and the namespace controller removes it later.", Run: func(e *Env) {
		ns := e.Namespace + "-x"
		e.Create("create namespace", Namespaces, &corev1.Namespace{TypeMeta: metav1.TypeMeta{Kind: "Namespace", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: ns}})
		e.Delete("delete namespace", Namespaces, ns, metav1.DeleteOptions{})
		e.WaitGone(Namespaces, ns)
		e.Get("get namespace after", Namespaces, ns)
	}},
	{Name: "namespace-delete-watch", Doc: "A watch of a namespace being deleted: MODIFIED (Terminating), the namespace controller's writes, DELETED.", Run: func(e *Env) {
		ns := e.Namespace + "-x"
		created := e.Create("create namespace", Namespaces, &corev1.Namespace{TypeMeta: metav1.TypeMeta{Kind: "Namespace", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: ns}})
		w := e.Watch("watch the namespace", Namespaces, metav1.ListOptions{FieldSelector: "metadata.name=" + ns, ResourceVersion: created.RV()})
		e.Delete("delete namespace", Namespaces, ns, metav1.DeleteOptions{})
		e.CollectUntil("events", w, func(ev RawEvent) bool { return ev.Type == "DELETED" })
	}},
	{Name: "namespace-delete-again-while-terminating", Doc: "Deleting a namespace that is already terminating (held by a finalizer on its content).", Run: func(e *Env) {
		ns := e.Namespace + "-x"
		e.Create("create namespace", Namespaces, &corev1.Namespace{TypeMeta: metav1.TypeMeta{Kind: "Namespace", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: ns}})
		home := e.Namespace
		e.Namespace = ns
		e.Create("create held", ConfigMaps, held(configMap("held", nil), hold))
		e.Namespace = home
		e.Delete("delete namespace", Namespaces, ns, metav1.DeleteOptions{})
		e.Namespace = ns
		e.WaitUntil(ConfigMaps, "held", func(obj map[string]any) bool { return meta(obj)["deletionTimestamp"] != nil })
		e.Namespace = home
		e.Delete("delete namespace again", Namespaces, ns, metav1.DeleteOptions{})
		e.Namespace = ns
		e.Patch("release held", ConfigMaps, "held", "", types.JSONPatchType, `[{"op":"remove","path":"/metadata/finalizers"}]`)
		e.Namespace = home
		e.WaitGone(Namespaces, ns)
		e.Get("get namespace after", Namespaces, ns)
	}},
	{Name: "namespace-terminating-refuses-creates", Doc: "While a namespace terminates (held by a finalizer on its content), creates in it are 403 Forbidden; it goes once the finalizer is removed.", Run: func(e *Env) {
		ns := e.Namespace + "-x"
		e.Create("create namespace", Namespaces, &corev1.Namespace{TypeMeta: metav1.TypeMeta{Kind: "Namespace", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: ns}})
		home := e.Namespace
		e.Namespace = ns
		e.Create("create held", ConfigMaps, held(configMap("held", nil), hold))
		e.Namespace = home
		e.Delete("delete namespace", Namespaces, ns, metav1.DeleteOptions{})
		e.Namespace = ns
		e.WaitUntil(ConfigMaps, "held", func(obj map[string]any) bool { return meta(obj)["deletionTimestamp"] != nil })
		e.Get("get held", ConfigMaps, "held")
		e.Create("create in the terminating namespace", ConfigMaps, configMap("late", nil))
		e.Patch("release held", ConfigMaps, "held", "", types.JSONPatchType, `[{"op":"remove","path":"/metadata/finalizers"}]`)
		e.Namespace = home
		e.WaitGone(Namespaces, ns)
		e.Get("get namespace after", Namespaces, ns)
	}},
	// --- admission, shared Events, server-side apply ---
	{Name: "create-in-missing-namespace", Doc: "A create in a namespace that does not exist is 404 NotFound (NamespaceLifecycle admission).", Run: func(e *Env) {
		home := e.Namespace
		e.Namespace = home + "-missing"
		e.Create("create in a missing namespace", ConfigMaps, configMap("a", nil))
		e.Namespace = home
	}},
	{Name: "events-shared-between-apis", Doc: "A core/v1 Event is also an events.k8s.io/v1 Event on kube-apiserver (one storage).", Run: func(e *Env) {
		ev := &corev1.Event{
			TypeMeta:       metav1.TypeMeta{Kind: "Event", APIVersion: "v1"},
			ObjectMeta:     metav1.ObjectMeta{Name: "e1"},
			InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: e.Namespace, Name: "a", APIVersion: "v1"},
			Reason:         "Tested", Message: "fidelity", Type: corev1.EventTypeNormal,
			Source: corev1.EventSource{Component: "fidelity"},
		}
		a := e.send("create core event", http.MethodPost, Events.path(e.Namespace, "", ""), nil, "", ev)
		e.Note("create core event", fmt.Sprintf("code %d", a.Code))
		e.ListNames("list core events", Events, metav1.ListOptions{})
		e.ListNames("list events.k8s.io events", EventsV1, metav1.ListOptions{})
	}},
	{Name: "server-side-apply", Doc: "Server-side apply creates and then updates an object.", Run: func(e *Env) {
		e.Patch("apply a", ConfigMaps, "a", "", types.ApplyYAMLPatchType, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: \"1\"\n", metav1.PatchOptions{FieldManager: "fidelity"})
		e.Patch("apply a again", ConfigMaps, "a", "", types.ApplyYAMLPatchType, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: \"2\"\n", metav1.PatchOptions{FieldManager: "fidelity"})
		e.Get("get a", ConfigMaps, "a")
	}},

	// --- watches ---
	{Name: "watch-from-old-rv", Doc: "A watch from an old resourceVersion replays every later event in order.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", map[string]string{"k": "1"}))
		e.Update("update a", ConfigMaps, "a", with(a.Body, "2", "data", "k"))
		e.Create("create b", ConfigMaps, configMap("b", nil))
		e.Delete("delete a", ConfigMaps, "a", metav1.DeleteOptions{})
		w := e.Watch("watch from a's create", ConfigMaps, metav1.ListOptions{ResourceVersion: a.RV()})
		e.Collect("events", w, 3)
	}},
	{Name: "watch-label-selector-transitions", Doc: "A selector watch sees an object that stops matching as DELETED and one that starts as ADDED.", Run: func(e *Env) {
		l := e.List("list", ConfigMaps, metav1.ListOptions{})
		w := e.Watch("watch app=web", ConfigMaps, metav1.ListOptions{ResourceVersion: l.RV(), LabelSelector: "app=web"})
		e.Create("create a app=web", ConfigMaps, labelled(configMap("a", nil), map[string]string{"app": "web"}))
		e.Patch("a to app=db", ConfigMaps, "a", "", types.MergePatchType, `{"metadata":{"labels":{"app":"db"}}}`)
		e.Create("create b app=db", ConfigMaps, labelled(configMap("b", nil), map[string]string{"app": "db"}))
		e.Patch("a back to app=web", ConfigMaps, "a", "", types.MergePatchType, `{"metadata":{"labels":{"app":"web"}}}`)
		e.Delete("delete a", ConfigMaps, "a", metav1.DeleteOptions{})
		e.Collect("events", w, 4)
	}},
	{Name: "watch-after-compaction", Doc: "A watch from a resourceVersion older than the compacted revision.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", map[string]string{"k": "1"}))
		b := e.Update("update a", ConfigMaps, "a", with(a.Body, "2", "data", "k"))
		e.Update("update a again", ConfigMaps, "a", with(b.Body, "3", "data", "k"))
		e.Compact()
		w := e.Watch("watch from a's create", ConfigMaps, metav1.ListOptions{ResourceVersion: a.RV()})
		e.Collect("events", w, 2)
	}},
	{Name: "watch-too-old-rv", Doc: "After a compaction, a watch from resourceVersion 1 (older than any server keeps) is a 410 ERROR event.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Compact()
		w := e.Watch("watch from 1", ConfigMaps, metav1.ListOptions{ResourceVersion: "1"})
		e.Collect("events", w, 1)
	}},
	{Name: "watch-bookmarks", Doc: "allowWatchBookmarks: the server sends a BOOKMARK within about a minute.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", nil))
		w := e.Watch("watch with bookmarks", ConfigMaps, metav1.ListOptions{ResourceVersion: a.RV(), AllowWatchBookmarks: true})
		e.Create("create b", ConfigMaps, configMap("b", nil))
		e.CollectFor("events", w, 2, 90*time.Second)
	}},
	{Name: "watch-rv-zero", Doc: "A watch at resourceVersion \"0\" starts with the current objects as ADDED, then live events.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Create("create b", ConfigMaps, configMap("b", nil))
		w := e.Watch("watch at 0", ConfigMaps, metav1.ListOptions{ResourceVersion: "0"})
		e.Collect("initial events", w, 2)
		e.Create("create c", ConfigMaps, configMap("c", nil))
		e.Collect("live events", w, 1)
	}},
	{Name: "watch-invalid-rv", Doc: "A watch at a non-numeric resourceVersion is refused.", Run: func(e *Env) {
		w := e.Watch("watch at abc", ConfigMaps, metav1.ListOptions{ResourceVersion: "abc"})
		e.Collect("events", w, 1)
	}},
	{Name: "watchlist-initial-events", Doc: "WatchList: sendInitialEvents sends the objects as ADDED, then a BOOKMARK annotated k8s.io/initial-events-end, then live events.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Create("create b", ConfigMaps, configMap("b", nil))
		w := e.Watch("watchlist", ConfigMaps, metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
		e.CollectUntil("initial events", w, func(ev RawEvent) bool { return ev.Type == "BOOKMARK" })
		e.Create("create c", ConfigMaps, configMap("c", nil))
		e.Collect("live events", w, 1)
	}},
	{Name: "watchlist-label-selector", Doc: "WatchList with a label selector sends only matching objects before the end bookmark.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, labelled(configMap("a", nil), map[string]string{"app": "web"}))
		e.Create("create b", ConfigMaps, labelled(configMap("b", nil), map[string]string{"app": "db"}))
		w := e.Watch("watchlist app=web", ConfigMaps, metav1.ListOptions{LabelSelector: "app=web", SendInitialEvents: ptr(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
		e.CollectUntil("initial events", w, func(ev RawEvent) bool { return ev.Type == "BOOKMARK" })
	}},
	{Name: "watchlist-custom-resource", Doc: "WatchList of a custom resource.", Run: func(e *Env) {
		e.Create("create a", Bellerophons, bellerophon("a", 1, "1.0"))
		w := e.Watch("watchlist", Bellerophons, metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
		e.CollectUntil("initial events", w, func(ev RawEvent) bool { return ev.Type == "BOOKMARK" })
		e.Patch("scale a", Bellerophons, "a", "", types.MergePatchType, `{"spec":{"replicas":3}}`)
		e.Collect("live events", w, 1)
	}},
	{Name: "watchlist-invalid-options", Doc: "sendInitialEvents needs allowWatchBookmarks and resourceVersionMatch=NotOlderThan: 422 otherwise.", Run: func(e *Env) {
		e.Watch("without bookmarks", ConfigMaps, metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
		e.Watch("without match", ConfigMaps, metav1.ListOptions{SendInitialEvents: ptr(true), AllowWatchBookmarks: true})
		e.List("on a list", ConfigMaps, metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	}},
}
