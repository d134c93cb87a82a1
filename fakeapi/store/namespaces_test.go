package store

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// These tests pin namespace termination as the fidelity corpus recorded it
// from kube-apiserver and kube-controller-manager's namespace controller
// (cases namespace-delete-terminates and
// namespace-terminating-refuses-creates).

func createNamespaceForTest(t *testing.T, s *Store, name string) {
	t.Helper()
	if _, _, err := s.Create(namespacesGVR, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestDeletingAnEmptyNamespaceAnswersItTerminatingAndRemovesIt(t *testing.T) {
	s, _ := newTestStore(t, 0)
	createNamespaceForTest(t, s, "x")
	out, evs, err := s.Delete(namespacesGVR, "", "x", metav1.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns := out.(*corev1.Namespace)
	if ns.DeletionTimestamp == nil || ns.Status.Phase != corev1.NamespaceTerminating || len(ns.Spec.Finalizers) != 1 {
		t.Errorf("answer: deletionTimestamp %v, phase %q, spec.finalizers %v; want set, Terminating, [kubernetes]", ns.DeletionTimestamp, ns.Status.Phase, ns.Spec.Finalizers)
	}
	var types []watch.EventType
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	if len(evs) != 3 || types[0] != watch.Modified || types[1] != watch.Modified || types[2] != watch.Deleted || !evs[1].ByGC || !evs[2].ByGC {
		t.Errorf("events %v, want MODIFIED (marked), MODIFIED (finalized, by the controller), DELETED (by the controller)", types)
	}
	if _, err := s.Get(namespacesGVR, "", "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after: %v, want NotFound", err)
	}
}

func TestATerminatingNamespaceRefusesCreatesAndGoesWhenItsLastObjectGoes(t *testing.T) {
	s, _ := newTestStore(t, 0)
	createNamespaceForTest(t, s, "x")
	for _, c := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: "free"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: "held", Finalizers: []string{"example.com/hold"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "y", Name: "elsewhere"}},
	} {
		if _, _, err := s.Create(configmapsGVR, c.Namespace, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Delete(namespacesGVR, "", "x", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(configmapsGVR, "x", "free", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("free after the namespace delete: %v, want NotFound (deleted by the namespace controller)", err)
	}
	if _, err := s.Get(configmapsGVR, "y", "elsewhere", metav1.GetOptions{}); err != nil {
		t.Errorf("a ConfigMap of another namespace: %v, want it kept", err)
	}
	held, err := s.Get(configmapsGVR, "x", "held", metav1.GetOptions{})
	if err != nil || held.(*corev1.ConfigMap).DeletionTimestamp == nil {
		t.Fatalf("held: %v, %v; want it marked for deletion (its finalizer keeps it)", held, err)
	}
	nsObj, err := s.Get(namespacesGVR, "", "x", metav1.GetOptions{})
	if err != nil || nsObj.(*corev1.Namespace).Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("namespace while held: %v, %v; want it Terminating", nsObj, err)
	}
	_, _, err = s.Create(configmapsGVR, "x", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{})
	st, ok := err.(apierrors.APIStatus)
	if !ok || st.Status().Code != 403 || st.Status().Reason != metav1.StatusReasonForbidden || st.Status().Details == nil ||
		len(st.Status().Details.Causes) != 1 || st.Status().Details.Causes[0].Type != metav1.CauseType(corev1.NamespaceTerminatingCause) ||
		st.Status().Details.Causes[0].Field != "metadata.namespace" {
		t.Errorf("create in the terminating namespace: %v, want 403 Forbidden with cause NamespaceTerminating on metadata.namespace", err)
	}
	release := held.(*corev1.ConfigMap).DeepCopy()
	release.Finalizers = nil
	if _, _, err := s.Update(configmapsGVR, "x", release, metav1.UpdateOptions{}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(namespacesGVR, "", "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace after its last object went: %v, want NotFound", err)
	}
	if _, _, err := s.Create(configmapsGVR, "y", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("create in another namespace: %v", err)
	}
}
