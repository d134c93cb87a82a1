package store

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The tests in this file each pin one answer the fidelity corpus
// (package fidelity) recorded from a real kube-apiserver and the store
// once gave differently.

func TestSecretWithoutTypeIsStoredAsOpaque(t *testing.T) {
	s, _ := newTestStore(t, 0)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}, Data: map[string][]byte{"k": []byte("v")}}
	out, _, err := s.Create(secretsGVR, "ns", sec, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*corev1.Secret).Type; got != corev1.SecretTypeOpaque {
		t.Errorf("created type = %q, want Opaque", got)
	}
	upd := out.(*corev1.Secret).DeepCopy()
	upd.Type = ""
	upd.Data["k"] = []byte("w")
	out, _, err = s.Update(secretsGVR, "ns", upd, metav1.UpdateOptions{}, "")
	if err != nil {
		t.Fatalf("update without type: %v", err)
	}
	if got := out.(*corev1.Secret).Type; got != corev1.SecretTypeOpaque {
		t.Errorf("updated type = %q, want Opaque", got)
	}
}

func TestRemovingTheLastFinalizerAnswersTheUpdatedStateAtItsResourceVersion(t *testing.T) {
	s, _ := newTestStore(t, 0)
	c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", Finalizers: []string{"example.com/hold"}}}
	if _, _, err := s.Create(configmapsGVR, "ns", c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	marked, _, err := s.Delete(configmapsGVR, "ns", "a", metav1.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	upd := marked.(*corev1.ConfigMap).DeepCopy()
	upd.Finalizers = nil
	out, evs, err := s.Update(configmapsGVR, "ns", upd, metav1.UpdateOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.ConfigMap)
	if len(got.Finalizers) != 0 || got.DeletionTimestamp == nil || got.ResourceVersion != upd.ResourceVersion {
		t.Errorf("answer: finalizers %v, deletionTimestamp %v, resourceVersion %s; want none, set, %s (the updated state)",
			got.Finalizers, got.DeletionTimestamp, got.ResourceVersion, upd.ResourceVersion)
	}
	if len(evs) != 1 || evs[0].Type != "DELETED" || len(evs[0].Object.(*corev1.ConfigMap).Finalizers) != 1 {
		t.Errorf("want one DELETED event with the last stored state (finalizer kept), got %+v", evs)
	}
}

func TestJSONPatchThatDoesNotApplyIsInvalidWithoutCauses(t *testing.T) {
	s, _ := newTestStore(t, 0)
	mustCreate(t, s, configmapsGVR, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "1"}})
	_, _, err := s.Patch(configmapsGVR, "ns", "a", types.JSONPatchType, []byte(`[{"op":"test","path":"/data/k","value":"nope"}]`), metav1.PatchOptions{}, "")
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	if st := err.(apierrors.APIStatus).Status(); st.Details == nil || len(st.Details.Causes) != 0 {
		t.Errorf("details = %+v, want present and without causes", st.Details)
	}
}
