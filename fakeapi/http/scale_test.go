package http_test

import (
	"context"
	"testing"
	"testing/synctest"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cachelab/cachelab/fakeapi"
)

// TestScaleSubresourceOfDeployments: GetScale, UpdateScale and a merge
// patch of /scale through client-go over HTTP, as kube-apiserver serves
// them: an autoscaling/v1 Scale over spec.replicas with the selector as a
// string; a stale resourceVersion is 409; a Scale of a ConfigMap is 404.
func TestScaleSubresourceOfDeployments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		cs := e.clientset(t, "test")
		ctx := context.Background()
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "a"}, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
		if _, err := cs.AppsV1().Deployments("a").Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		sc, err := cs.AppsV1().Deployments("a").GetScale(ctx, "web", metav1.GetOptions{})
		if err != nil || sc.Spec.Replicas != 1 || sc.Status.Selector != "app=web" || sc.Name != "web" {
			t.Fatalf("GetScale = %+v, %v; want replicas 1, selector app=web", sc, err)
		}
		stale := sc.DeepCopy()
		sc.Spec.Replicas = 3
		out, err := cs.AppsV1().Deployments("a").UpdateScale(ctx, "web", sc, metav1.UpdateOptions{})
		if err != nil || out.Spec.Replicas != 3 {
			t.Fatalf("UpdateScale = %+v, %v", out, err)
		}
		got, err := cs.AppsV1().Deployments("a").Get(ctx, "web", metav1.GetOptions{})
		if err != nil || *got.Spec.Replicas != 3 || got.Generation != 2 {
			t.Errorf("after UpdateScale: replicas %d, generation %d, %v; want 3, 2", *got.Spec.Replicas, got.Generation, err)
		}
		stale.Spec.Replicas = 7
		if _, err := cs.AppsV1().Deployments("a").UpdateScale(ctx, "web", stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Errorf("stale UpdateScale: %v, want 409", err)
		}
		if _, err := cs.AppsV1().Deployments("a").Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{}, "scale"); err != nil {
			t.Errorf("merge patch of /scale: %v", err)
		}
		if got, _ := cs.AppsV1().Deployments("a").Get(ctx, "web", metav1.GetOptions{}); *got.Spec.Replicas != 5 {
			t.Errorf("after the /scale patch: replicas %d, want 5", *got.Spec.Replicas)
		}
		neg := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "a"}, Spec: autoscalingv1.ScaleSpec{Replicas: -1}}
		if _, err := cs.AppsV1().Deployments("a").UpdateScale(ctx, "web", neg, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("negative replicas: %v, want 422", err)
		}
		mustCM(t, cs, "a", "cm", nil)
		if err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/a/configmaps/cm/scale").Do(ctx).Error(); !apierrors.IsNotFound(err) {
			t.Errorf("scale of a ConfigMap: %v, want 404", err)
		}
	})
}
