package kubestrategies_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/kubestrategies"
)

// webReconciler keeps, for each ConfigMap, a Deployment "<name>-web"
// serving on a container port named portName. A port name longer than 15
// characters is not an IANA service name: kube-apiserver refuses the
// Deployment (422 on spec.template.spec.containers[0].ports[0].name); the
// lab's hand-written rules do not validate a template's ports.
type webReconciler struct {
	client.Client
	portName string
}

func (r *webReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if cm.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: cm.Name + "-web", Namespace: cm.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, d, func() error {
		labels := map[string]string{"app": cm.Name + "-web"}
		d.Spec.Replicas = ptr.To[int32](1)
		if d.Spec.Selector == nil {
			d.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
		}
		d.Spec.Template.Labels = labels
		d.Spec.Template.Spec.Containers = []corev1.Container{{
			Name: "web", Image: "nginx",
			Ports: []corev1.ContainerPort{{Name: r.portName, ContainerPort: 8080}},
		}}
		return controllerutil.SetControllerReference(&cm, d, r.Scheme())
	})
	return ctrl.Result{}, err
}

// webController is the reconciler under the lab, wanting a Deployment for
// every live ConfigMap.
func webController(portName string) cachelabtest.Controller {
	return cachelabtest.Controller{
		Name: "web-" + portName,
		Setup: func(mgr ctrl.Manager) error {
			return ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Owns(&appsv1.Deployment{}).
				Complete(&webReconciler{Client: mgr.GetClient(), portName: portName})
		},
		Desired: func(s *cachelabtest.State) error {
			for _, cm := range cachelabtest.List[corev1.ConfigMap](s, "") {
				if cm.DeletionTimestamp != nil || strings.HasPrefix(cm.Name, "kube-root-ca") {
					continue
				}
				if _, ok := cachelabtest.Get[appsv1.Deployment](s, cm.Namespace, cm.Name+"-web"); !ok {
					return fmt.Errorf("configmap %s/%s has no deployment %s-web", cm.Namespace, cm.Name, cm.Name)
				}
			}
			return nil
		},
	}
}

// plans is one scenario of the catalogue, re-aimed at ConfigMaps: a crash
// in the middle of a reconcile, then a restart.
var plans = cachelabtest.Scenarios("crash-mid-reconcile")

// TestTheLabWithKubeStrategiesCatchesADeploymentARealClusterRefuses: a
// user's test that imports kubestrategies (here, this package) sees its
// controller's invalid Deployment refused as kube-apiserver refuses it,
// and the lab fails the run; the same controller with a valid port name
// passes every invariant. The hand-written rules are run too and their
// answer reported (not judged: H29a extends them).
func TestTheLabWithKubeStrategiesCatchesADeploymentARealClusterRefuses(t *testing.T) {
	cachelabtest.Test(t, webController("http"), plans)

	caught := cachelabtest.Catch(t, webController("metrics-endpoint"), plans)
	if len(caught) == 0 {
		t.Fatal("with kube-apiserver's strategies the lab did not catch a Deployment with a 16-character port name")
	}
	failed := map[string]bool{}
	for _, v := range caught[0].Failed {
		failed[v.Invariant] = true
	}
	if !failed["eventual-convergence"] {
		t.Errorf("want eventual-convergence failed (no Deployment ever stored), got %v", caught[0].Failed)
	}

	kubestrategies.Unregister()
	defer kubestrategies.Register()
	byHand := cachelabtest.Catch(t, webController("metrics-endpoint"), plans)
	t.Logf("hand-written rules: %d failure(s) for the same controller (the real strategies: %d)", len(byHand), len(caught))
}

// TestTheRealDeploymentStrategyRefusesTheLongPortName pins the reason of
// the failure above to the real code: the port name is refused by name.
func TestTheRealDeploymentStrategyRefusesTheLongPortName(t *testing.T) {
	cachelabtest.Test(t, cachelabtest.Controller{
		Name: "direct",
		Start: func(ctx context.Context, env *cachelabtest.Env) error {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "default"}, Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}}, Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "web", Image: "nginx", Ports: []corev1.ContainerPort{{Name: "metrics-endpoint", ContainerPort: 8080}}}}}},
			}}
			_, err := env.Kube.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{})
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.template.spec.containers[0].ports[0].name") {
				return fmt.Errorf("create with a 16-character port name: got %v, want 422 on spec.template.spec.containers[0].ports[0].name", err)
			}
			return nil
		},
	}, plans)
}
