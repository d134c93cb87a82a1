package cluster_test

import (
	"context"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/upstream/cluster"
)

// webReconciler is the operator of cluster_test.go as a controller-runtime
// reconciler: same ConfigMaps, same Deployments, same "ready" write-back.
type webReconciler struct{ client.Client }

func (r *webReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil || cm.Labels["app"] != "web" {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	want, err := strconv.Atoi(cm.Data["replicas"])
	if err != nil || want < 0 {
		return ctrl.Result{}, nil
	}
	var d appsv1.Deployment
	switch err := r.Get(ctx, req.NamespacedName, &d); {
	case apierrors.IsNotFound(err):
		d := deploymentFor(&cm, int32(want))
		d.OwnerReferences = nil
		if err := controllerutil.SetControllerReference(&cm, d, r.Scheme()); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.Create(ctx, d)
	case err != nil:
		return ctrl.Result{}, err
	case d.Spec.Replicas == nil || *d.Spec.Replicas != int32(want):
		d.Spec.Replicas = ptr.To(int32(want))
		return ctrl.Result{}, r.Update(ctx, &d)
	}
	if ready := strconv.Itoa(int(d.Status.ReadyReplicas)); cm.Data["ready"] != ready {
		cm.Data["ready"] = ready
		return ctrl.Result{}, r.Update(ctx, &cm)
	}
	return ctrl.Result{}, nil
}

// Around works for a controller-runtime operator too: the cluster runs as
// a runnable of the manager Setup is given, and the operator's Deployment
// reaches 5 ready replicas; every invariant passes.
func TestControllerRuntimeOperatorUnderTheRealControllers(t *testing.T) {
	c := cluster.Around(cachelabtest.Controller{
		Name: "web-reconciler",
		Setup: func(mgr ctrl.Manager) error {
			return ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Owns(&appsv1.Deployment{}).
				Complete(&webReconciler{mgr.GetClient()})
		},
		Desired: desired,
	})
	cachelabtest.Test(t, c, cachelabtest.These(webPlan(c.Name)))
}
