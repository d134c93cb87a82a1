package store

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LimitRanges and RuntimeClasses are served, namespaced and cluster-scoped
// as kube-apiserver serves them (they were "no matches for kind" before,
// and Kueue's manager could not start).
func TestLimitRangesAndRuntimeClassesAreServed(t *testing.T) {
	s, _ := newTestStore(t, 0)
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "default"}}
	if _, _, err := s.Create(corev1.SchemeGroupVersion.WithResource("limitranges"), "default", lr, metav1.CreateOptions{}); err != nil {
		t.Errorf("create LimitRange: %v", err)
	}
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc"}
	out, _, err := s.Create(nodev1.SchemeGroupVersion.WithResource("runtimeclasses"), "", rc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create RuntimeClass: %v", err)
	}
	if got := out.(*nodev1.RuntimeClass); got.Namespace != "" || got.ResourceVersion == "" {
		t.Errorf("RuntimeClass namespace %q resourceVersion %q, want cluster-scoped and stored", got.Namespace, got.ResourceVersion)
	}
}
