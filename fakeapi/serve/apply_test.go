package serve_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const applyCM = `apiVersion: v1
kind: ConfigMap
metadata: {name: applied, namespace: default}
data: {k: "%s"}
`

// TestKubectlServerSideApplyAgainstServe: `kubectl apply --server-side`
// creates and updates; another field manager changing the same field is a
// conflict kubectl reports with the owner's name, until
// --force-conflicts.
func TestKubectlServerSideApplyAgainstServe(t *testing.T) {
	r := serveCRD(t, crdYAML)
	kc := r.KubeconfigPath
	cm := func(v string) string { return strings.Replace(applyCM, "%s", v, 1) }
	if out, err := kubectl(t, kc, cm("1"), "apply", "--server-side", "-f", "-"); err != nil || !strings.Contains(out, "serverside-applied") {
		t.Fatalf("kubectl apply --server-side (create): %v\n%s", err, out)
	}
	if out, err := kubectl(t, kc, cm("2"), "apply", "--server-side", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply --server-side (update): %v\n%s", err, out)
	}
	out, err := kubectl(t, kc, cm("3"), "apply", "--server-side", "--field-manager", "other", "-f", "-")
	if err == nil || !strings.Contains(out, "conflict") || !strings.Contains(out, `"kubectl"`) {
		t.Errorf("another manager changing data.k: %v\n%s\nwant a conflict naming kubectl", err, out)
	}
	if out, err := kubectl(t, kc, cm("3"), "apply", "--server-side", "--field-manager", "other", "--force-conflicts", "-f", "-"); err != nil {
		t.Fatalf("--force-conflicts: %v\n%s", err, out)
	}
	if out, _ := kubectl(t, kc, "", "get", "configmap", "applied", "-o", "jsonpath={.data.k} {.metadata.managedFields[*].manager}"); !strings.HasPrefix(out, "3 ") || !strings.Contains(out, "other") {
		t.Errorf("after the forced apply: %q, want k=3 managed by other", out)
	}
}

// TestControllerRuntimeApplyAgainstServe: controller-runtime's
// client.Apply (apply configurations) and Patch with client.Apply create
// and update objects on serve, and a conflict is a 409.
func TestControllerRuntimeApplyAgainstServe(t *testing.T) {
	r := serveCRD(t, crdYAML)
	cfg, err := clientcmd.BuildConfigFromFlags("", r.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ac := corev1ac.ConfigMap("cr", "default").WithData(map[string]string{"k": "1"})
	if err := c.Apply(ctx, ac, client.FieldOwner("controller")); err != nil {
		t.Fatalf("client.Apply: %v", err)
	}
	var got corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "cr"}, &got); err != nil || got.Data["k"] != "1" {
		t.Fatalf("after client.Apply: %v, %v", got.Data, err)
	}
	other := corev1ac.ConfigMap("cr", "default").WithData(map[string]string{"k": "2"})
	if err := c.Apply(ctx, other, client.FieldOwner("intruder")); !apierrors.IsConflict(err) {
		t.Errorf("another owner's apply: %v, want 409", err)
	}
	if err := c.Apply(ctx, other, client.FieldOwner("intruder"), client.ForceOwnership); err != nil {
		t.Errorf("forced apply: %v", err)
	}
	dep := appsv1ac.Deployment("web", "default").WithSpec(appsv1ac.DeploymentSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "web"})).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(map[string]string{"app": "web"}).
			WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("c").WithImage("busybox")))))
	if err := c.Apply(ctx, dep, client.FieldOwner("controller")); err != nil {
		t.Fatalf("client.Apply of a Deployment: %v", err)
	}
	legacy := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: "default"}, Data: map[string]string{"k": "v"}}
	if err := c.Patch(ctx, legacy, client.Apply, client.FieldOwner("controller")); err != nil { //nolint:staticcheck // the older form, still used
		t.Errorf("Patch with client.Apply: %v", err)
	}
}
