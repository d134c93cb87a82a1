package fakeapi

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The fake server runs no containers: Kubelet writes the status a kubelet
// would. These two helpers say what "Running and Ready" means.

// PodRunningReady reports whether pod is Running with condition Ready true.
func PodRunningReady(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// MarkPodRunningReady returns a copy of pod whose status is Running with
// condition Ready true since now (replacing an earlier Ready condition),
// ready for UpdateStatus.
func MarkPodRunningReady(pod *corev1.Pod, now metav1.Time) *corev1.Pod {
	pod = pod.DeepCopy()
	pod.Status.Phase = corev1.PodRunning
	ready := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}
	for i, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			pod.Status.Conditions[i] = ready
			return pod
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, ready)
	return pod
}
