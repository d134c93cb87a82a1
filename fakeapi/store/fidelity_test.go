package store

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
