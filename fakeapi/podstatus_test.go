package fakeapi_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/fakeapi"
)

func TestMarkPodRunningReadyReplacesAnOldReadyConditionAndLeavesTheInputAlone(t *testing.T) {
	pending := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse},
	}}}
	if fakeapi.PodRunningReady(pending) {
		t.Fatal("a Pending pod with Ready=False counts as running and ready")
	}
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ready := fakeapi.MarkPodRunningReady(pending, now)
	if !fakeapi.PodRunningReady(ready) {
		t.Fatalf("marked pod is not running and ready: %+v", ready.Status)
	}
	if n := len(ready.Status.Conditions); n != 2 || !ready.Status.Conditions[1].LastTransitionTime.Equal(&now) {
		t.Errorf("conditions %+v: want the Ready condition replaced in place, since %v", ready.Status.Conditions, now)
	}
	if pending.Status.Phase != corev1.PodPending || pending.Status.Conditions[1].Status != corev1.ConditionFalse {
		t.Errorf("the input pod was modified: %+v", pending.Status)
	}
	running := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if fakeapi.PodRunningReady(running) {
		t.Error("a Running pod without a Ready condition counts as ready")
	}
	if got := fakeapi.MarkPodRunningReady(running, now); len(got.Status.Conditions) != 1 || !fakeapi.PodRunningReady(got) {
		t.Errorf("a pod without a Ready condition gets one: %+v", got.Status)
	}
}
