package store

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
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
