package kubestrategies

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/fakeapi/store"
)

var configmaps = corev1.SchemeGroupVersion.WithResource("configmaps")

// benchmarkConfigMapUpdates measures one ConfigMap update through the
// store (as fakeapibench's informer workload writes).
func benchmarkConfigMapUpdates(b *testing.B) {
	s := store.New(store.Options{})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}, Data: map[string]string{"k": "0"}}
	if _, _, err := s.Create(configmaps, "ns", cm, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		cm.Data["k"] = strconv.Itoa(i + 1)
		if _, _, err := s.Update(configmaps, "ns", cm, metav1.UpdateOptions{}, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConfigMapUpdate measures a ConfigMap update with the real
// strategy and with the hand-written rules, in the same run.
func BenchmarkConfigMapUpdate(b *testing.B) {
	b.Run("kube-strategy", benchmarkConfigMapUpdates)
	b.Run("hand-written", func(b *testing.B) {
		Unregister()
		defer Register()
		benchmarkConfigMapUpdates(b)
	})
}
