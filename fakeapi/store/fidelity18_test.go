package store

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// causes returns the (field, type) pairs of a 422.
func causes(t *testing.T, err error) map[string]metav1.CauseType {
	t.Helper()
	st, ok := err.(apierrors.APIStatus)
	if !ok || st.Status().Details == nil {
		t.Fatalf("err = %v, want a Status with details", err)
	}
	out := map[string]metav1.CauseType{}
	for _, c := range st.Status().Details.Causes {
		out[c.Field] = c.Type
	}
	return out
}

// TestDeletePreconditionConflictNamesTheKind: rest.BeforeDelete answers a
// failed precondition with a 409 whose details.kind is the Kind
// ("ConfigMap"), not the resource (fidelity case status-precondition-details).
func TestDeletePreconditionConflictNamesTheKind(t *testing.T) {
	s, _ := newTestStore(t, 0)
	mustCreate(t, s, configmapsGVR, "ns", cm("", "a", nil))
	wrong := types.UID("someone-else")
	_, _, err := s.Delete(configmapsGVR, "ns", "a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrong}})
	assertStatus(t, err, 409, metav1.StatusReasonConflict)
	if d := err.(apierrors.APIStatus).Status().Details; d == nil || d.Kind != "ConfigMap" || d.Group != "" || d.Name != "a" {
		t.Errorf("details = %+v, want kind ConfigMap, group \"\", name a", d)
	}
	mustCreate(t, s, widgetsGVR, "ns", widget("ns", "w", 1))
	stale := "1"
	_, _, err = s.Delete(widgetsGVR, "ns", "w", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}})
	assertStatus(t, err, 409, metav1.StatusReasonConflict)
	if d := err.(apierrors.APIStatus).Status().Details; d == nil || d.Kind != "Widget" || d.Group != widgetsGVR.Group {
		t.Errorf("details = %+v, want kind Widget, group %s", d, widgetsGVR.Group)
	}
}

// TestImmutableConfigMapRefusesDataChanges: ValidateConfigMapUpdate
// (fidelity case configmap-immutable).
func TestImmutableConfigMapRefusesDataChanges(t *testing.T) {
	s, _ := newTestStore(t, 0)
	c := cm("", "a", nil)
	c.Data = map[string]string{"k": "1"}
	c.Immutable = new(bool)
	*c.Immutable = true
	created := mustCreate(t, s, configmapsGVR, "ns", c).(*corev1.ConfigMap)

	changed := created.DeepCopy()
	changed.Data["k"] = "2"
	_, _, err := s.Update(configmapsGVR, "ns", changed, metav1.UpdateOptions{}, "")
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	if got := causes(t, err); got["data"] != metav1.CauseType(field.ErrorTypeForbidden) || len(got) != 1 {
		t.Errorf("causes = %v, want only data: FieldValueForbidden", got)
	}
	_, _, err = s.Patch(configmapsGVR, "ns", "a", types.MergePatchType, []byte(`{"immutable":false}`), metav1.PatchOptions{}, "")
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	if got := causes(t, err); got["immutable"] != metav1.CauseType(field.ErrorTypeForbidden) {
		t.Errorf("causes = %v, want immutable: FieldValueForbidden", got)
	}
	// Metadata still changes.
	if _, _, err := s.Patch(configmapsGVR, "ns", "a", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{}, ""); err != nil {
		t.Errorf("label an immutable ConfigMap: %v", err)
	}
}

// TestImmutableSecretRefusesDataAndTypeChanges: ValidateSecretUpdate
// (fidelity cases secret-immutable, secret-type-immutable).
func TestImmutableSecretRefusesDataAndTypeChanges(t *testing.T) {
	s, _ := newTestStore(t, 0)
	yes := true
	mustCreate(t, s, secretsGVR, "ns", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Immutable: &yes, Data: map[string][]byte{"k": []byte("v")}})
	_, _, err := s.Patch(secretsGVR, "ns", "s", types.MergePatchType, []byte(`{"stringData":{"k":"w"}}`), metav1.PatchOptions{}, "")
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	if got := causes(t, err); got["data"] != metav1.CauseType(field.ErrorTypeForbidden) {
		t.Errorf("causes = %v, want data: FieldValueForbidden", got)
	}
	mustCreate(t, s, secretsGVR, "ns", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "t"}, Type: "example.com/one"})
	_, _, err = s.Patch(secretsGVR, "ns", "t", types.MergePatchType, []byte(`{"type":"example.com/two"}`), metav1.PatchOptions{}, "")
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	if got := causes(t, err); got["type"] != metav1.CauseType(field.ErrorTypeInvalid) {
		t.Errorf("causes = %v, want type: FieldValueInvalid", got)
	}
}

// TestSecretStringDataIsMergedIntoData: stringData overwrites data and is
// never stored (fidelity case secret-string-data).
func TestSecretStringDataIsMergedIntoData(t *testing.T) {
	s, _ := newTestStore(t, 0)
	out := mustCreate(t, s, secretsGVR, "ns", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"},
		Data: map[string][]byte{"k": []byte("v")}, StringData: map[string]string{"k": "o", "n": "x"}}).(*corev1.Secret)
	if string(out.Data["k"]) != "o" || string(out.Data["n"]) != "x" || out.StringData != nil {
		t.Errorf("data = %q, stringData = %q; want k=o, n=x and no stringData", out.Data, out.StringData)
	}
}

// TestListAtResourceVersionWithLimitIsExact: a list with a resourceVersion,
// a limit and no resourceVersionMatch is served at that revision
// (kube-apiserver's legacy exact match; fidelity case
// list-rv-with-limit-is-exact).
func TestListAtResourceVersionWithLimitIsExact(t *testing.T) {
	s, _ := newTestStore(t, 0)
	a := mustCreate(t, s, configmapsGVR, "ns", cm("", "a", nil))
	mustCreate(t, s, configmapsGVR, "ns", cm("", "b", nil))
	rv := metaOf(t, a).GetResourceVersion()
	list, info, err := s.List(configmapsGVR, "ns", metav1.ListOptions{ResourceVersion: rv, Limit: 10}, 0)
	if err != nil {
		t.Fatal(err)
	}
	items := list.(*corev1.ConfigMapList).Items
	if len(items) != 1 || items[0].Name != "a" || info.RV != rvOf(t, a) {
		t.Errorf("list at %s with limit = %d items at %d, want [a] at %s", rv, len(items), info.RV, rv)
	}
	// Without a limit it is NotOlderThan: the latest state.
	list, _, err = s.List(configmapsGVR, "ns", metav1.ListOptions{ResourceVersion: rv}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(list.(*corev1.ConfigMapList).Items); n != 2 {
		t.Errorf("list at %s without limit = %d items, want 2 (the latest)", rv, n)
	}
}

// TestUpdateWithAnotherUIDIsAConflict: the registry makes a set UID a
// storage precondition: 409 Conflict naming the resource, before the
// resourceVersion is looked at (fidelity case metadata-immutable-fields).
func TestUpdateWithAnotherUIDIsAConflict(t *testing.T) {
	s, _ := newTestStore(t, 0)
	a := mustCreate(t, s, configmapsGVR, "ns", cm("", "a", nil)).(*corev1.ConfigMap)
	a.UID = "someone-else"
	_, _, err := s.Update(configmapsGVR, "ns", a, metav1.UpdateOptions{}, "")
	assertStatus(t, err, 409, metav1.StatusReasonConflict)
	if d := err.(apierrors.APIStatus).Status().Details; d == nil || d.Kind != "configmaps" || len(d.Causes) != 0 {
		t.Errorf("details = %+v, want kind configmaps and no causes", d)
	}
}

// TestBuiltinFinalizerNamesMustBeQualified: core validation refuses a
// built-in's finalizer without a "/" that is not a standard one (cause on
// metadata.finalizers[i]); custom resources only get the generic check
// (fidelity case metadata-finalizer-invalid).
func TestBuiltinFinalizerNamesMustBeQualified(t *testing.T) {
	s, _ := newTestStore(t, 0)
	c := cm("", "a", nil)
	c.Finalizers = []string{"kubernetes", "nodomain"}
	_, _, err := s.Create(configmapsGVR, "ns", c, metav1.CreateOptions{})
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	if got := causes(t, err); got["metadata.finalizers[1]"] != metav1.CauseTypeFieldValueInvalid || len(got) != 1 {
		t.Errorf("causes = %v, want only metadata.finalizers[1]", got)
	}
	w := widget("ns", "w", 1)
	w.SetFinalizers([]string{"nodomain"})
	if _, _, err := s.Create(widgetsGVR, "ns", w, metav1.CreateOptions{}); err != nil {
		t.Errorf("a custom resource with finalizer nodomain: %v, want it created", err)
	}
}
