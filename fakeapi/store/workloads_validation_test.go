package store

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestStatefulSetUpdateKeepsItsClaimTemplatesImmutable: a StatefulSet read
// back (its claim templates without the apiVersion and kind the store's
// protobuf encoding drops) takes a change of replicas; a change of its
// claim templates or serviceName is 422 on that field (fidelity case
// statefulset-service-name-change). The replicas update failed before
// (an operator's CreateOrUpdate of a StatefulSet never converged).
func TestStatefulSetUpdateKeepsItsClaimTemplatesImmutable(t *testing.T) {
	s, _ := newTestStore(t, 0)
	gvr := appsv1.SchemeGroupVersion.WithResource("statefulsets")
	l := map[string]string{"app": "db"}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db"}, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2), ServiceName: "db",
		Selector: &metav1.LabelSelector{MatchLabels: l}, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}},
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}}}
	mustCreate(t, s, gvr, "ns", sts)
	read := func() *appsv1.StatefulSet {
		obj, err := s.Get(gvr, "ns", "db", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return obj.(*appsv1.StatefulSet)
	}
	got := read()
	got.Spec.Replicas = ptr.To[int32](3)
	if _, _, err := s.Update(gvr, "ns", got, metav1.UpdateOptions{}, ""); err != nil {
		t.Fatalf("scale a StatefulSet read back: %v", err)
	}
	got = read()
	got.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
	_, _, err := s.Update(gvr, "ns", got, metav1.UpdateOptions{}, "")
	assertCause(t, err, "spec.volumeClaimTemplates")
	got = read()
	got.Spec.ServiceName = "other"
	_, _, err = s.Update(gvr, "ns", got, metav1.UpdateOptions{}, "")
	assertCause(t, err, "spec.serviceName")
}
