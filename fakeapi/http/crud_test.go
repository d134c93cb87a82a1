package http_test

import (
	"context"
	"k8s.io/utils/ptr"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/cachelab/cachelab/fakeapi"
)

// typedCRUD runs create/get/list/update/patch/delete through cs and checks
// every answer and every error class.
func typedCRUD(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	mustNamespace(t, cs, "a")
	cms := cs.CoreV1().ConfigMaps("a")

	created := mustCM(t, cs, "a", "one", map[string]string{"k": "v"})
	if created.UID == "" || created.ResourceVersion == "" || created.Namespace != "a" {
		t.Fatalf("created = %+v, want UID, resourceVersion and namespace a", created.ObjectMeta)
	}
	if _, err := cms.Create(ctx, cm("a", "one", nil), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second create: err = %v, want AlreadyExists", err)
	}
	if _, err := cms.Create(ctx, cm("b", "x", nil), metav1.CreateOptions{}); !apierrors.IsBadRequest(err) {
		t.Errorf("create with a namespace other than the URL's: err = %v, want BadRequest", err)
	}
	got, err := cms.Get(ctx, "one", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "v" || got.UID != created.UID {
		t.Fatalf("get = %+v, %v; want the created configmap", got, err)
	}
	if _, err := cms.Get(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get missing: err = %v, want NotFound", err)
	}

	got.Data["k"] = "v2"
	updated, err := cms.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil || updated.Data["k"] != "v2" || updated.ResourceVersion == got.ResourceVersion {
		t.Fatalf("update = %+v, %v; want k=v2 at a new resourceVersion", updated, err)
	}
	got.Data["k"] = "stale"
	if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("update at a stale resourceVersion: err = %v, want Conflict", err)
	}

	for _, p := range []struct {
		pt   types.PatchType
		data string
		want string
	}{
		{types.MergePatchType, `{"data":{"k":"merge"}}`, "merge"},
		{types.StrategicMergePatchType, `{"data":{"k":"strategic"}}`, "strategic"},
		{types.JSONPatchType, `[{"op":"replace","path":"/data/k","value":"json"}]`, "json"},
	} {
		out, err := cms.Patch(ctx, "one", p.pt, []byte(p.data), metav1.PatchOptions{})
		if err != nil || out.Data["k"] != p.want {
			t.Errorf("%s patch = %v, %v; want k=%s", p.pt, out.Data, err, p.want)
		}
	}
	if _, err := cms.Patch(ctx, "one", types.ApplyPatchType, []byte(`{}`), metav1.PatchOptions{FieldManager: "t"}); !apierrors.IsBadRequest(err) {
		t.Errorf("apply patch without apiVersion and kind: err = %v, want BadRequest", err)
	}
	// Server-side apply: k was set before any apply, so changing it
	// conflicts (as with the creator's Update entry on kube-apiserver)
	// until forced.
	applied := []byte(`{"apiVersion":"v1","kind":"ConfigMap","data":{"k":"applied"}}`)
	if _, err := cms.Patch(ctx, "one", types.ApplyPatchType, applied, metav1.PatchOptions{FieldManager: "t"}); !apierrors.IsConflict(err) {
		t.Errorf("server-side apply of a field set before: %v, want 409", err)
	}
	if out, err := cms.Patch(ctx, "one", types.ApplyPatchType, applied, metav1.PatchOptions{FieldManager: "t", Force: ptr.To(true)}); err != nil || out.Data["k"] != "applied" || len(out.ManagedFields) == 0 {
		t.Errorf("forced server-side apply = %v, %v; want k=applied with managedFields", out, err)
	}
	if _, err := cms.Patch(ctx, "one", types.MergePatchType, []byte(`{not json`), metav1.PatchOptions{}); !apierrors.IsBadRequest(err) {
		t.Errorf("malformed merge patch: err = %v, want BadRequest", err)
	}

	mustCM(t, cs, "a", "two", map[string]string{"sel": "yes"})
	two, _ := cms.Get(ctx, "two", metav1.GetOptions{})
	two.Labels = map[string]string{"app": "x"}
	if _, err := cms.Update(ctx, two, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "app=x"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "two" || list.ResourceVersion == "" {
		t.Fatalf("list app=x = %+v, %v; want only two, with a resourceVersion", list, err)
	}
	page, err := cms.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(page.Items) != 1 || page.Continue == "" {
		t.Fatalf("list limit=1 = %d items, continue %q, %v; want 1 item and a continue token", len(page.Items), page.Continue, err)
	}
	rest, err := cms.List(ctx, metav1.ListOptions{Limit: 1, Continue: page.Continue})
	if err != nil || len(rest.Items) != 1 || rest.Items[0].Name == page.Items[0].Name {
		t.Fatalf("second page = %+v, %v; want the other configmap", rest.Items, err)
	}
	if _, err := cms.List(ctx, metav1.ListOptions{FieldSelector: "spec.nope=1"}); !apierrors.IsBadRequest(err) {
		t.Errorf("list with an unsupported field selector: err = %v, want BadRequest", err)
	}

	// Pods: validation (422) and the status subresource.
	pods := cs.CoreV1().Pods("a")
	bad := pod("a", "bad")
	bad.Spec.Containers = nil
	if _, err := pods.Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("create a pod without containers: err = %v, want Invalid", err)
	}
	p, err := pods.Create(ctx, pod("a", "p"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	p.Spec.NodeName = "ignored-by-status"
	ps, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if err != nil || ps.Status.Phase != corev1.PodRunning || ps.Spec.NodeName != "" {
		t.Fatalf("update status = phase %q node %q, %v; want Running and the spec unchanged", ps.Status.Phase, ps.Spec.NodeName, err)
	}

	// Delete with preconditions in the DeleteOptions body.
	wrongUID := types.UID("not-the-uid")
	if err := cms.Delete(ctx, "one", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}}); !apierrors.IsConflict(err) {
		t.Errorf("delete with a wrong UID precondition: err = %v, want Conflict", err)
	}
	if err := cms.Delete(ctx, "one", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &created.UID}}); err != nil {
		t.Errorf("delete: %v", err)
	}
	if err := cms.Delete(ctx, "one", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("second delete: err = %v, want NotFound", err)
	}
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Errorf("delete collection: %v", err)
	}
	if list, err := cms.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Errorf("after delete collection: %d configmaps, %v; want none", len(list.Items), err)
	}
}

// TestTypedClientsetCRUDOverHTTPGetsTheServersAnswersAndErrors: the real
// typed clientset, over the in-memory pipe in JSON, creates, reads, updates,
// patches and deletes, and every failure reaches it as the right apierrors
// class (AlreadyExists, NotFound, Conflict, Invalid, BadRequest, 415).
func TestTypedClientsetCRUDOverHTTPGetsTheServersAnswersAndErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		typedCRUD(t, e.clientset(t, "typed"))
		reqs := e.log.Requests("")
		if len(reqs) == 0 {
			t.Fatal("no request observed")
		}
		for _, o := range reqs {
			if o.Request.Client != "typed" {
				t.Fatalf("request %s %s observed as client %q, want typed (from the pipe's header)", o.Request.Verb, o.Request.Resource, o.Request.Client)
			}
		}
	})
}

// TestTypedClientsetCRUDOverHTTPInProtobuf: the same, with the clientset
// speaking protobuf (as kube-controller-manager does); built-in kinds are
// answered in protobuf.
func TestTypedClientsetCRUDOverHTTPInProtobuf(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		typedCRUD(t, e.clientset(t, "proto", func(c *rest.Config) {
			c.ContentType = runtime.ContentTypeProtobuf
			c.AcceptContentTypes = runtime.ContentTypeProtobuf
		}))
	})
}

// TestDynamicClientCRUDOverHTTPOnBuiltinsAndCustomResources: the dynamic
// client over the pipe, on configmaps (stored typed) and on a CRD (stored
// unstructured), with the right errors.
func TestDynamicClientCRUDOverHTTPOnBuiltinsAndCustomResources(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		ctx := context.Background()
		dc, err := dynamic.NewForConfig(e.pipe.RESTConfig("dyn"))
		if err != nil {
			t.Fatal(err)
		}
		mustNamespace(t, e.clientset(t, "setup"), "a")

		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c"},
			"data":     map[string]any{"k": "v"},
		}}
		out, err := dc.Resource(cmGVR).Namespace("a").Create(ctx, u, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.GetKind() != "ConfigMap" || out.GetNamespace() != "a" || out.GetUID() == "" {
			t.Fatalf("created = %v, want a ConfigMap in a with a UID", out.Object)
		}
		if _, err := dc.Resource(cmGVR).Namespace("a").Create(ctx, u, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
			t.Errorf("second create: err = %v, want AlreadyExists", err)
		}

		foo := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Foo",
			"metadata": map[string]any{"name": "f", "namespace": "a"},
			"spec":     map[string]any{"size": int64(1)},
		}}
		foos := dc.Resource(fooGVR).Namespace("a")
		created, err := foos.Create(ctx, foo, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if g := created.GetGeneration(); g != 1 {
			t.Errorf("generation after create = %d, want 1", g)
		}
		unstructured.SetNestedField(created.Object, int64(2), "spec", "size")
		updated, err := foos.Update(ctx, created, metav1.UpdateOptions{})
		if err != nil || updated.GetGeneration() != 2 {
			t.Fatalf("update spec = generation %d, %v; want 2", updated.GetGeneration(), err)
		}
		unstructured.SetNestedField(updated.Object, "Ready", "status", "phase")
		st, err := foos.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
		if phase, _, _ := unstructured.NestedString(st.Object, "status", "phase"); err != nil || phase != "Ready" || st.GetGeneration() != 2 {
			t.Fatalf("update status = phase %q generation %d, %v; want Ready at generation 2", phase, st.GetGeneration(), err)
		}
		if _, err := foos.Update(ctx, created, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Errorf("stale update: err = %v, want Conflict", err)
		}
		if _, err := foos.Patch(ctx, "f", types.StrategicMergePatchType, []byte(`{"spec":{"size":3}}`), metav1.PatchOptions{}); !apierrors.IsUnsupportedMediaType(err) {
			t.Errorf("strategic merge patch on a custom resource: err = %v, want UnsupportedMediaType", err)
		}
		if p, err := foos.Patch(ctx, "f", types.MergePatchType, []byte(`{"spec":{"size":3}}`), metav1.PatchOptions{}); err != nil {
			t.Errorf("merge patch: %v", err)
		} else if size, _, _ := unstructured.NestedInt64(p.Object, "spec", "size"); size != 3 {
			t.Errorf("merge patch: size = %d, want 3", size)
		}
		list, err := dc.Resource(fooGVR).List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) != 1 || list.GetResourceVersion() == "" {
			t.Fatalf("list foos across namespaces = %v, %v; want one, with a resourceVersion", list, err)
		}
		if err := foos.Delete(ctx, "f", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := foos.Get(ctx, "f", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get after delete: err = %v, want NotFound", err)
		}
		if _, err := dc.Resource(fooGVR.GroupVersion().WithResource("bars")).Namespace("a").Get(ctx, "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get of an unserved resource: err = %v, want NotFound", err)
		}
	})
}
