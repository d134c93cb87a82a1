package fidelity

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// statusCases are the exact Status bodies of every verb (success and
// error, every details field), immutable objects, and the list and watch
// resourceVersion edge cases that an independent corpus found blind
// (issue 18).
var statusCases = []Case{
	// --- the body of every verb's Status ---
	{Name: "status-delete-success", Doc: "A successful delete answers a Success Status: details name, kind (the resource), uid; no code.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Delete("delete a", ConfigMaps, "a", metav1.DeleteOptions{})
		e.Delete("delete a again", ConfigMaps, "a", metav1.DeleteOptions{})
	}},
	{Name: "status-delete-success-custom-resource", Doc: "A custom resource's delete Status: details group, kind (the resource), name, uid.", Run: func(e *Env) {
		e.Create("create b", Bellerophons, bellerophon("b", 1, "1.0"))
		e.Delete("delete b", Bellerophons, "b", metav1.DeleteOptions{})
		e.Get("get b", Bellerophons, "b")
	}},
	{Name: "status-delete-dry-run", Doc: "A dry-run delete answers the same Success Status and deletes nothing.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Delete("dry-run delete a", ConfigMaps, "a", metav1.DeleteOptions{DryRun: dryRunAll})
		e.Get("get a", ConfigMaps, "a")
	}},
	{Name: "status-delete-secret", Doc: "A Secret's delete Status.", Run: func(e *Env) {
		e.Create("create s", Secrets, secret("s", "", map[string]string{"k": "v"}))
		e.Delete("delete s", Secrets, "s", metav1.DeleteOptions{})
	}},
	{Name: "status-precondition-details", Doc: "A 409 from a delete precondition names the Kind (ConfigMap), not the resource.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Delete("delete with a wrong uid", ConfigMaps, "a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr(types.UID("00000000-0000-0000-0000-00000000beef"))}})
		e.Delete("delete with a wrong resourceVersion", ConfigMaps, "a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr(future(a.RV()))}})
	}},
	{Name: "status-precondition-details-custom-resource", Doc: "A custom resource's delete precondition 409.", Run: func(e *Env) {
		b := e.Create("create b", Bellerophons, bellerophon("b", 1, "1.0"))
		e.Delete("delete with a wrong uid", Bellerophons, "b", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr(types.UID("00000000-0000-0000-0000-00000000beef"))}})
		e.Delete("delete with a wrong resourceVersion", Bellerophons, "b", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr(future(b.RV()))}})
	}},
	{Name: "status-not-found-details", Doc: "404 details: name, group and kind (the resource) on get, update, patch and delete.", Run: func(e *Env) {
		e.Get("get missing configmap", ConfigMaps, "missing")
		e.Get("get missing custom resource", Bellerophons, "missing")
		e.Update("update missing custom resource", Bellerophons, "missing", bellerophon("missing", 1, "1.0"))
		e.Patch("patch missing custom resource", Bellerophons, "missing", "", types.MergePatchType, `{"spec":{"replicas":2}}`)
		e.Delete("delete missing custom resource", Bellerophons, "missing", metav1.DeleteOptions{})
	}},
	{Name: "status-already-exists-details", Doc: "409 AlreadyExists details for a built-in and a custom resource.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Create("create a again", ConfigMaps, configMap("a", nil))
		e.Create("create b", Bellerophons, bellerophon("b", 1, "1.0"))
		e.Create("create b again", Bellerophons, bellerophon("b", 1, "1.0"))
	}},
	{Name: "status-conflict-details", Doc: "409 Conflict details of a stale update, for a built-in and a custom resource.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", map[string]string{"k": "1"}))
		e.Update("update a", ConfigMaps, "a", with(a.Body, "2", "data", "k"))
		e.Update("stale update a", ConfigMaps, "a", with(a.Body, "3", "data", "k"))
		b := e.Create("create b", Bellerophons, bellerophon("b", 1, "1.0"))
		e.Update("update b", Bellerophons, "b", with(b.Body, int64(2), "spec", "replicas"))
		e.Update("stale update b", Bellerophons, "b", with(b.Body, int64(3), "spec", "replicas"))
	}},
	{Name: "status-invalid-details", Doc: "422 Invalid details: name, group, kind (the Kind) and the causes.", Run: func(e *Env) {
		e.Create("create a bad key", ConfigMaps, configMap("a", map[string]string{"bad key": "v"}))
		e.Create("create a custom resource below minimum", Bellerophons, bellerophon("b", -1, "1.0"))
	}},
	{Name: "status-bad-request-and-method", Doc: "400 BadRequest and 405 MethodNotAllowed bodies.", Run: func(e *Env) {
		cm := configMap("a", nil)
		cm.Namespace = "elsewhere"
		e.Create("create in another namespace", ConfigMaps, cm)
		e.Create("create a with a body that is not an object", ConfigMaps, []byte(`[1,2]`))
		e.DeleteCollection("deletecollection of namespaces", Namespaces, metav1.ListOptions{LabelSelector: "fidelity=none"})
	}},
	{Name: "status-delete-collection", Doc: "deletecollection answers the list of what it deleted.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Create("create b", ConfigMaps, configMap("b", nil))
		e.DeleteCollection("delete all", ConfigMaps, metav1.ListOptions{})
		e.DeleteCollection("delete all again", ConfigMaps, metav1.ListOptions{})
	}},
	{Name: "status-delete-with-finalizer", Doc: "A delete of an object with a finalizer answers the object (200), not a Status.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, held(configMap("a", nil), hold))
		e.Delete("delete a", ConfigMaps, "a", metav1.DeleteOptions{})
		e.Patch("release a", ConfigMaps, "a", "", types.MergePatchType, `{"metadata":{"finalizers":null}}`)
	}},
	{Name: "status-delete-foreground", Doc: "A foreground delete answers the marked object (200).", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Delete("delete a in the foreground", ConfigMaps, "a", metav1.DeleteOptions{PropagationPolicy: &foreground})
		e.WaitGone(ConfigMaps, "a")
		e.Get("get a", ConfigMaps, "a")
	}},
	{Name: "status-delete-namespace", Doc: "Deleting a namespace answers the Terminating namespace.", Run: func(e *Env) {
		ns := e.Namespace + "-x"
		e.Create("create namespace", Namespaces, &corev1.Namespace{TypeMeta: metav1.TypeMeta{Kind: "Namespace", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: ns}})
		e.Delete("delete namespace", Namespaces, ns, metav1.DeleteOptions{})
		e.WaitGone(Namespaces, ns)
		e.Delete("delete namespace again", Namespaces, ns, metav1.DeleteOptions{})
	}},

	// --- immutable objects and fields ---
	{Name: "configmap-immutable", Doc: "An immutable ConfigMap refuses data changes (422 FieldValueForbidden data) and un-freezing; metadata still changes; it can be deleted.", Run: func(e *Env) {
		cm := configMap("a", map[string]string{"k": "1"})
		cm.Immutable = ptr(true)
		a := e.Create("create immutable a", ConfigMaps, cm)
		e.Update("update a's data", ConfigMaps, "a", with(a.Body, "2", "data", "k"))
		e.Patch("patch a's data", ConfigMaps, "a", "", types.MergePatchType, `{"data":{"k":"3"}}`)
		e.Patch("add binaryData", ConfigMaps, "a", "", types.MergePatchType, `{"binaryData":{"b":"AQI="}}`)
		e.Patch("un-freeze a", ConfigMaps, "a", "", types.MergePatchType, `{"immutable":false}`)
		e.Patch("drop immutable", ConfigMaps, "a", "", types.MergePatchType, `{"immutable":null}`)
		e.Patch("label a", ConfigMaps, "a", "", types.MergePatchType, `{"metadata":{"labels":{"x":"y"}}}`)
		e.Get("get a", ConfigMaps, "a")
		e.Delete("delete a", ConfigMaps, "a", metav1.DeleteOptions{})
	}},
	{Name: "configmap-becomes-immutable", Doc: "A mutable ConfigMap can be made immutable (with a data change in the same write); then it is frozen.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", map[string]string{"k": "1"}))
		e.Patch("freeze a and change k", ConfigMaps, "a", "", types.MergePatchType, `{"immutable":true,"data":{"k":"2"}}`)
		e.Patch("change k", ConfigMaps, "a", "", types.MergePatchType, `{"data":{"k":"3"}}`)
		e.Get("get a", ConfigMaps, "a")
	}},
	{Name: "secret-immutable", Doc: "An immutable Secret refuses data changes (422 FieldValueForbidden data) and un-freezing.", Run: func(e *Env) {
		s := secret("s", "", map[string]string{"k": "v"})
		s.Immutable = ptr(true)
		e.Create("create immutable s", Secrets, s)
		e.Patch("patch s's data", Secrets, "s", "", types.MergePatchType, `{"data":{"k":"dzI="}}`)
		e.Patch("patch s's stringData", Secrets, "s", "", types.MergePatchType, `{"stringData":{"k":"w3"}}`)
		e.Patch("un-freeze s", Secrets, "s", "", types.MergePatchType, `{"immutable":false}`)
		e.Patch("label s", Secrets, "s", "", types.MergePatchType, `{"metadata":{"labels":{"x":"y"}}}`)
		e.Get("get s", Secrets, "s")
	}},
	{Name: "secret-type-immutable", Doc: "A Secret's type cannot change (422 on type).", Run: func(e *Env) {
		e.Create("create s", Secrets, secret("s", "example.com/one", map[string]string{"k": "v"}))
		e.Patch("change the type", Secrets, "s", "", types.MergePatchType, `{"type":"example.com/two"}`)
	}},
	{Name: "secret-string-data", Doc: "stringData is merged into data (base64) and not stored.", Run: func(e *Env) {
		s := secret("s", "", map[string]string{"k": "v"})
		s.StringData = map[string]string{"k": "override", "n": "new"}
		e.Create("create s with stringData", Secrets, s)
		e.Get("get s", Secrets, "s")
	}},
	{Name: "metadata-immutable-fields", Doc: "uid and creationTimestamp changes are ignored or refused; name and namespace mismatches are refused.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Update("update with another uid", ConfigMaps, "a", with(a.Body, "00000000-0000-0000-0000-00000000beef", "metadata", "uid"))
		e.Update("update with another name in the body", ConfigMaps, "a", with(a.Body, "b", "metadata", "name"))
		e.Patch("patch the name", ConfigMaps, "a", "", types.MergePatchType, `{"metadata":{"name":"b"}}`)
		e.Get("get a", ConfigMaps, "a")
	}},
	{Name: "metadata-labels-and-annotations-invalid", Doc: "Bad label keys/values and annotation keys are 422 with one cause each.", Run: func(e *Env) {
		cm := configMap("a", nil)
		cm.Labels = map[string]string{"bad key": "v", "ok": "bad value!"}
		cm.Annotations = map[string]string{"bad/annotation/key": "v"}
		e.Create("create with bad labels and annotations", ConfigMaps, cm)
	}},
	{Name: "metadata-finalizer-invalid", Doc: "A finalizer that is not a qualified name is 422.", Run: func(e *Env) {
		e.Create("create with a bad finalizer", ConfigMaps, held(configMap("a", nil), "bad finalizer"))
	}},
	{Name: "metadata-owner-reference-invalid", Doc: "An ownerReference without a uid or apiVersion is 422.", Run: func(e *Env) {
		cm := configMap("a", nil)
		cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner"}}
		e.Create("create with an ownerReference without uid", ConfigMaps, cm)
		cm.OwnerReferences = []metav1.OwnerReference{{Kind: "ConfigMap", Name: "owner", UID: "00000000-0000-0000-0000-00000000dead"}}
		e.Create("create with an ownerReference without apiVersion", ConfigMaps, cm)
		cm.OwnerReferences = []metav1.OwnerReference{
			{APIVersion: "v1", Kind: "ConfigMap", Name: "o1", UID: "00000000-0000-0000-0000-00000000dea1", Controller: ptr(true)},
			{APIVersion: "v1", Kind: "ConfigMap", Name: "o2", UID: "00000000-0000-0000-0000-00000000dea2", Controller: ptr(true)},
		}
		e.Create("create with two controllers", ConfigMaps, cm)
	}},

	// --- lists by resourceVersion: exact, future, zero, with and without limit and match ---
	{Name: "list-rv-with-limit-is-exact", Doc: "A list at resourceVersion N with a limit and no resourceVersionMatch is served at N exactly (from etcd).", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", map[string]string{"k": "1"}))
		e.Update("update a", ConfigMaps, "a", with(a.Body, "2", "data", "k"))
		e.Create("create b", ConfigMaps, configMap("b", nil))
		e.List("list at a's create, limit 10", ConfigMaps, metav1.ListOptions{ResourceVersion: a.RV(), Limit: 10})
		p := e.List("list at a's create, limit 1", ConfigMaps, metav1.ListOptions{ResourceVersion: a.RV(), Limit: 1})
		e.List("page 2", ConfigMaps, metav1.ListOptions{Limit: 1, Continue: p.Continue()})
		e.List("list at a's create, no limit", ConfigMaps, metav1.ListOptions{ResourceVersion: a.RV()})
	}},
	{Name: "list-rv-with-limit-and-not-older-than", Doc: "A list at resourceVersion N with a limit and resourceVersionMatch=NotOlderThan serves the latest state.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", map[string]string{"k": "1"}))
		e.Update("update a", ConfigMaps, "a", with(a.Body, "2", "data", "k"))
		e.Create("create b", ConfigMaps, configMap("b", nil))
		e.List("list not older than a's create, limit 10", ConfigMaps, metav1.ListOptions{ResourceVersion: a.RV(), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Limit: 10})
		e.List("list exact at a's create, limit 1", ConfigMaps, metav1.ListOptions{ResourceVersion: a.RV(), ResourceVersionMatch: metav1.ResourceVersionMatchExact, Limit: 1})
	}},
	{Name: "list-future-rv-with-limit", Doc: "A future resourceVersion with a limit (no match): too large.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", nil))
		e.List("list at the future, limit 1", ConfigMaps, metav1.ListOptions{ResourceVersion: future(a.RV()), Limit: 1})
	}},
	{Name: "list-future-rv-no-match", Doc: "A future resourceVersion without limit or match: too large.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", nil))
		e.List("list at the future", ConfigMaps, metav1.ListOptions{ResourceVersion: future(a.RV())})
	}},
	{Name: "list-rv-zero-with-match", Doc: "resourceVersion 0 with NotOlderThan is any state; with Exact it is refused.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.List("list at 0, not older than", ConfigMaps, metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
		e.List("list at 0, exact", ConfigMaps, metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	}},
	{Name: "list-exact-with-selector-and-limit", Doc: "An Exact list with a label selector and a limit pages the old state by selector.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, labelled(configMap("a", nil), map[string]string{"s": "x"}))
		e.Create("create b", ConfigMaps, labelled(configMap("b", nil), map[string]string{"s": "x"}))
		c := e.Create("create c", ConfigMaps, labelled(configMap("c", nil), map[string]string{"s": "x"}))
		e.Delete("delete a", ConfigMaps, "a", metav1.DeleteOptions{})
		e.List("exact at c's create, s=x, limit 2", ConfigMaps, metav1.ListOptions{ResourceVersion: c.RV(), ResourceVersionMatch: metav1.ResourceVersionMatchExact, LabelSelector: "s=x", Limit: 2})
		e.List("exact at a's create, s=x", ConfigMaps, metav1.ListOptions{ResourceVersion: a.RV(), ResourceVersionMatch: metav1.ResourceVersionMatchExact, LabelSelector: "s=x"})
	}},
	{Name: "list-custom-resource-exact", Doc: "Exact and limit lists of a custom resource.", Run: func(e *Env) {
		a := e.Create("create a", Bellerophons, bellerophon("a", 1, "1.0"))
		e.Patch("scale a", Bellerophons, "a", "", types.MergePatchType, `{"spec":{"replicas":2}}`)
		e.Create("create b", Bellerophons, bellerophon("b", 1, "1.0"))
		e.List("exact at a's create", Bellerophons, metav1.ListOptions{ResourceVersion: a.RV(), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		e.List("at a's create, limit 5", Bellerophons, metav1.ListOptions{ResourceVersion: a.RV(), Limit: 5})
	}},
	{Name: "list-limit-remaining", Doc: "Pagination with remainingItemCount, without a selector and with one.", Run: func(e *Env) {
		for _, n := range []string{"a", "b", "c", "d"} {
			e.Create("create "+n, ConfigMaps, labelled(configMap(n, nil), map[string]string{"s": "x"}))
		}
		p := e.List("limit 3", ConfigMaps, metav1.ListOptions{Limit: 3})
		e.List("limit 3, page 2", ConfigMaps, metav1.ListOptions{Limit: 3, Continue: p.Continue()})
		e.List("limit 3, s=x", ConfigMaps, metav1.ListOptions{Limit: 3, LabelSelector: "s=x"})
		e.List("limit 4", ConfigMaps, metav1.ListOptions{Limit: 4})
	}},

	// --- watches by resourceVersion ---
	{Name: "watch-future-rv", Doc: "A watch from a future resourceVersion receives no event with a smaller resourceVersion.", Run: func(e *Env) {
		a := e.Create("create a", ConfigMaps, configMap("a", nil))
		w := e.Watch("watch from the future", ConfigMaps, metav1.ListOptions{ResourceVersion: future(a.RV())})
		e.Create("create b", ConfigMaps, configMap("b", nil))
		e.Patch("change a", ConfigMaps, "a", "", types.MergePatchType, `{"data":{"k":"v"}}`)
		e.CollectFor("events", w, 1, 5*time.Second)
	}},
	{Name: "watch-current-rv", Doc: "A watch from the latest resourceVersion sees only later writes.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", nil))
		b := e.Create("create b", ConfigMaps, configMap("b", nil))
		w := e.Watch("watch from b", ConfigMaps, metav1.ListOptions{ResourceVersion: b.RV()})
		e.Create("create c", ConfigMaps, configMap("c", nil))
		e.Collect("events", w, 1)
	}},
	{Name: "watch-bookmark-before-timeout", Doc: "A watch with allowWatchBookmarks and timeoutSeconds gets a BOOKMARK just before the server closes it.", Run: func(e *Env) {
		l := e.List("list", ConfigMaps, metav1.ListOptions{})
		w := e.Watch("watch for 5 s with bookmarks", ConfigMaps, metav1.ListOptions{ResourceVersion: l.RV(), AllowWatchBookmarks: true, TimeoutSeconds: ptr(int64(5))})
		e.Create("create a", ConfigMaps, configMap("a", nil))
		// How many bookmarks the watch cache sends in 5 s depends on its
		// one-second bookmark ticks; what holds is that the last event
		// before the close is one.
		saved := e.wait
		e.wait = 15 * time.Second
		evs := e.next(w, 0, nil)
		e.wait = saved
		var objects []string
		for _, ev := range evs {
			if ev.Type != "BOOKMARK" {
				objects = append(objects, ev.Type+" "+str(meta(ev.Object), "name"))
			}
		}
		last := len(evs) > 0 && evs[len(evs)-1].Type == "BOOKMARK"
		e.Note("events until the end", fmt.Sprintf("objects: %v; the last event before the close is a BOOKMARK: %v", objects, last))
	}},
	{Name: "watch-timeout-without-bookmarks", Doc: "A watch with timeoutSeconds and no bookmarks just ends.", Run: func(e *Env) {
		l := e.List("list", ConfigMaps, metav1.ListOptions{})
		w := e.Watch("watch for 3 s", ConfigMaps, metav1.ListOptions{ResourceVersion: l.RV(), TimeoutSeconds: ptr(int64(3))})
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.CollectFor("events until the end", w, 0, 15*time.Second)
	}},
	{Name: "watch-rv-zero-no-initial", Doc: "sendInitialEvents=false at resourceVersion 0 starts from now, without initial events.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", nil))
		w := e.Watch("watch at 0 without initial events", ConfigMaps, metav1.ListOptions{ResourceVersion: "0", SendInitialEvents: ptr(false), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
		e.Create("create b", ConfigMaps, configMap("b", nil))
		e.Collect("events", w, 1)
	}},
	{Name: "watch-rv-empty", Doc: "A watch at resourceVersion \"\" starts with the current objects, then live events.", Run: func(e *Env) {
		e.Create("create a", ConfigMaps, configMap("a", nil))
		w := e.Watch("watch at \"\"", ConfigMaps, metav1.ListOptions{})
		e.Collect("initial events", w, 1)
		e.Create("create b", ConfigMaps, configMap("b", nil))
		e.Collect("live events", w, 1)
	}},
	{Name: "watch-field-selector", Doc: "A metadata.name field-selector watch sees only that object.", Run: func(e *Env) {
		l := e.List("list", ConfigMaps, metav1.ListOptions{})
		w := e.Watch("watch name=b", ConfigMaps, metav1.ListOptions{ResourceVersion: l.RV(), FieldSelector: "metadata.name=b"})
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.Create("create b", ConfigMaps, configMap("b", nil))
		e.Patch("change b", ConfigMaps, "b", "", types.MergePatchType, `{"data":{"k":"v"}}`)
		e.Delete("delete b", ConfigMaps, "b", metav1.DeleteOptions{})
		e.Collect("events", w, 3)
	}},
	{Name: "watch-custom-resource-from-rv", Doc: "A custom resource watch from a resourceVersion replays later events, status writes included.", Run: func(e *Env) {
		b := e.Create("create b", Bellerophons, bellerophon("b", 1, "1.0"))
		w := e.Watch("watch from b", Bellerophons, metav1.ListOptions{ResourceVersion: b.RV()})
		e.Patch("scale b", Bellerophons, "b", "", types.MergePatchType, `{"spec":{"replicas":2}}`)
		e.Patch("status of b", Bellerophons, "b", "status", types.MergePatchType, `{"status":{"readyReplicas":2}}`)
		e.Delete("delete b", Bellerophons, "b", metav1.DeleteOptions{})
		e.Collect("events", w, 3)
	}},
	{Name: "watch-invalid-selector", Doc: "A watch with an invalid label selector is refused.", Run: func(e *Env) {
		e.Watch("watch with a bad selector", ConfigMaps, metav1.ListOptions{LabelSelector: "a in b"})
		e.Watch("watch with an unsupported field", ConfigMaps, metav1.ListOptions{FieldSelector: "data.k=v"})
	}},
	{Name: "watch-negative-timeout", Doc: "A watch with a negative timeoutSeconds.", Run: func(e *Env) {
		l := e.List("list", ConfigMaps, metav1.ListOptions{})
		w := e.Watch("watch with timeoutSeconds -1", ConfigMaps, metav1.ListOptions{ResourceVersion: l.RV(), TimeoutSeconds: ptr(int64(-1))})
		e.Create("create a", ConfigMaps, configMap("a", nil))
		e.CollectFor("events", w, 1, 5*time.Second)
	}},
}

func init() { Cases = append(Cases, statusCases...) }
