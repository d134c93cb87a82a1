package store

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
)

func applyCM(t *testing.T, s *Store, manager string, force bool, data string) (*corev1.ConfigMap, error) {
	t.Helper()
	patch := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n" + data
	out, _, err := s.Patch(configmapsGVR, "ns", "a", types.ApplyYAMLPatchType, []byte(patch), metav1.PatchOptions{FieldManager: manager, Force: &force}, "")
	if err != nil {
		return nil, err
	}
	return out.(*corev1.ConfigMap), nil
}

// TestServerSideApply: apply creates, updates its own fields, removes the
// fields it no longer applies, conflicts (409 naming field and manager)
// when another manager owns a field it changes, and takes it over with
// force; an update after an apply is recorded as an Update manager that
// an apply then conflicts with (fidelity cases server-side-apply*).
func TestServerSideApply(t *testing.T) {
	s, _ := newTestStore(t, 0)
	a, err := applyCM(t, s, "alice", false, "  k: \"1\"\n  x: \"x\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if a.Data["k"] != "1" || len(a.ManagedFields) != 1 || a.ManagedFields[0].Manager != "alice" || a.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Fatalf("apply-create: %v %+v", a.Data, a.ManagedFields)
	}
	if a, err = applyCM(t, s, "alice", false, "  k: \"2\"\n"); err != nil || a.Data["k"] != "2" || a.Data["x"] != "" {
		t.Fatalf("re-apply without x: %v, %v; want k=2 and x removed", a, err)
	}
	_, err = applyCM(t, s, "bob", false, "  k: \"3\"\n")
	if !apierrors.IsConflict(err) {
		t.Fatalf("bob applies alice's field: %v, want 409", err)
	}
	st := err.(apierrors.APIStatus).Status()
	if len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != ".data.k" || !strings.Contains(st.Details.Causes[0].Message, `"alice"`) || st.Details.Causes[0].Type != metav1.CauseTypeFieldManagerConflict {
		t.Errorf("conflict causes = %+v, want .data.k owned by alice", st.Details.Causes)
	}
	if a, err = applyCM(t, s, "bob", true, "  k: \"3\"\n"); err != nil || a.Data["k"] != "3" {
		t.Fatalf("forced apply: %v, %v", a, err)
	}
	// An update after the apply: recorded, and conflicting.
	a.Data["k"] = "4"
	if _, _, err := s.Update(configmapsGVR, "ns", a, metav1.UpdateOptions{FieldManager: "editor"}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := applyCM(t, s, "bob", false, "  k: \"5\"\n"); !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "editor") {
		t.Errorf("apply over an update's field: %v, want 409 naming editor", err)
	}
	// Custom resources apply too.
	w := "apiVersion: lab.example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 2\n"
	out, _, err := s.Patch(widgetsGVR, "ns", "w", types.ApplyYAMLPatchType, []byte(w), metav1.PatchOptions{FieldManager: "alice"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(out.(*unstructured.Unstructured).Object, "spec", "size"); size != 2 {
		t.Errorf("custom resource apply: %v", out)
	}
	// No field manager: 422.
	if _, _, err := s.Patch(configmapsGVR, "ns", "a", types.ApplyYAMLPatchType, []byte("apiVersion: v1\nkind: ConfigMap\n"), metav1.PatchOptions{}, ""); !apierrors.IsInvalid(err) {
		t.Errorf("apply without fieldManager: %v, want 422", err)
	}
}

// TestApplyOfAPartialDeploymentKeepsWhatOthersOwn: the applied
// configuration is the manager's intent as sent, not a typed round trip of
// it: a second manager applying the same Deployment shares its fields (no
// conflict on spec.selector), and a manager applying only spec.replicas
// (with force) takes replicas alone and leaves the selector and template
// (before: 422, the partial apply set spec.selector to null; the first
// manager owned strategy and status it never applied). Issue 29, fidelity
// cases ssa-deployment-shared-ownership and ssa-deployment-partial-apply.
func TestApplyOfAPartialDeploymentKeepsWhatOthersOwn(t *testing.T) {
	s, _ := newTestStore(t, 0)
	gvr := appsv1.SchemeGroupVersion.WithResource("deployments")
	const head = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
	const full = head + "spec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: c\n        image: app:1\n"
	apply := func(manager, yaml string, force bool) (*appsv1.Deployment, error) {
		out, _, err := s.Patch(gvr, "ns", "web", types.ApplyYAMLPatchType, []byte(yaml), metav1.PatchOptions{FieldManager: manager, Force: &force}, "")
		if err != nil {
			return nil, err
		}
		return out.(*appsv1.Deployment), nil
	}
	d, err := apply("alice", full, false)
	if err != nil {
		t.Fatal(err)
	}
	if fs := string(d.ManagedFields[0].FieldsV1.Raw); strings.Contains(fs, "f:strategy") || strings.Contains(fs, "f:status") {
		t.Errorf("alice owns fields she did not apply: %s", fs)
	}
	if _, err := apply("bob", full, false); err != nil {
		t.Errorf("bob applies the same Deployment: %v, want shared ownership", err)
	}
	d, err = apply("scaler", head+"spec:\n  replicas: 4\n", true)
	if err != nil {
		t.Fatalf("scaler applies replicas only: %v", err)
	}
	if *d.Spec.Replicas != 4 || d.Spec.Selector == nil || d.Spec.Selector.MatchLabels["app"] != "web" || len(d.Spec.Template.Spec.Containers) != 1 {
		t.Errorf("after the partial apply: replicas %d, selector %v, containers %v", *d.Spec.Replicas, d.Spec.Selector, d.Spec.Template.Spec.Containers)
	}
}

// A registered type converter (kubestrategies registers kube-apiserver's
// models) is what a store created afterwards applies built-in kinds with:
// with client-go's models a Deployment's containers are an associative
// list (owned by name), with a deduced converter registered they are
// atomic. Stores created before keep theirs.
func TestRegisteredTypeConverterServesApplyOfBuiltins(t *testing.T) {
	gvr := appsv1.SchemeGroupVersion.WithResource("deployments")
	const d = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: c\n        image: app:1\n"
	fields := func(s *Store) string {
		t.Helper()
		out, _, err := s.Patch(gvr, "ns", "web", types.ApplyYAMLPatchType, []byte(d), metav1.PatchOptions{FieldManager: "alice"}, "")
		if err != nil {
			t.Fatal(err)
		}
		return string(out.(*appsv1.Deployment).ManagedFields[0].FieldsV1.Raw)
	}
	before, _ := newTestStore(t, 0)
	RegisterTypeConverter(managedfields.NewDeducedTypeConverter)
	t.Cleanup(func() { RegisterTypeConverter(nil) })
	deduced, _ := newTestStore(t, 0)
	if fs := fields(before); !strings.Contains(fs, `k:{\"name\":\"c\"}`) {
		t.Errorf("client-go's models: containers not owned by name: %s", fs)
	}
	if fs := fields(deduced); strings.Contains(fs, `k:{\"name\":\"c\"}`) {
		t.Errorf("a deduced converter registered: containers still owned by name: %s", fs)
	}
}
