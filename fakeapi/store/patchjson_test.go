package store

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The object and scale patch paths (and a version view's, by the same
// patchJSON) apply a JSON patch through one patcher, with kube-apiserver's limit of
// 10,000 operations (413 past it) and its merge patch.
func TestEveryPatchPathSharesTheJSONPatcher(t *testing.T) {
	s, _ := newTestStore(t, 0)
	gvr := appsv1.SchemeGroupVersion.WithResource("deployments")
	const yaml = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: c\n        image: app:1\n"
	if _, _, err := s.Patch(gvr, "ns", "web", types.ApplyYAMLPatchType, []byte(yaml), metav1.PatchOptions{FieldManager: "t"}, ""); err != nil {
		t.Fatal(err)
	}
	ops := make([]string, maxJSONPatchOperations+1)
	for i := range ops {
		ops[i] = `{"op":"test","path":"/metadata/name","value":"web"}`
	}
	tooMany := []byte("[" + strings.Join(ops, ",") + "]")
	if _, _, err := s.Patch(gvr, "ns", "web", types.JSONPatchType, tooMany, metav1.PatchOptions{}, ""); !apierrors.IsRequestEntityTooLargeError(err) {
		t.Errorf("object: %v, want 413", err)
	}
	if _, _, err := s.PatchScale(gvr, "ns", "web", types.JSONPatchType, tooMany, metav1.PatchOptions{}); !apierrors.IsRequestEntityTooLargeError(err) {
		t.Errorf("scale: %v, want 413", err)
	}
	for _, c := range []struct {
		pt    types.PatchType
		patch string
		want  int32
	}{
		{types.MergePatchType, `{"spec":{"replicas":3}}`, 3},
		{types.StrategicMergePatchType, `{"spec":{"replicas":4}}`, 4},
		{types.JSONPatchType, `[{"op":"replace","path":"/spec/replicas","value":5}]`, 5},
	} {
		sc, _, err := s.PatchScale(gvr, "ns", "web", c.pt, []byte(c.patch), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.pt, err)
		}
		if sc.Spec.Replicas != c.want {
			t.Errorf("%s: replicas %d, want %d", c.pt, sc.Spec.Replicas, c.want)
		}
	}
}
