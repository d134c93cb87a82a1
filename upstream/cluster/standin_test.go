package cluster_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"

	"github.com/cachelab/cachelab/cachelabtest"
)

// startDeploymentStandIn is the alternative to package cluster for a test
// that does not want k8s.io/kubernetes in its build (docs/cluster.md): a
// helper actor on a client of its own name that says every Deployment is
// rolled out, its status at spec.replicas, the instant it sees it. No
// ReplicaSet, no Pod, no rollout: only the status the operator reads. It
// uses nothing but client-go and cachelabtest.
func startDeploymentStandIn(ctx context.Context, env *cachelabtest.Env) error {
	c, err := env.Client("deployment-status-stand-in")
	if err != nil {
		return err
	}
	f := informers.NewSharedInformerFactory(c.Kube, 0)
	setStatus := func(obj any) {
		d, ok := obj.(*appsv1.Deployment)
		if !ok {
			return
		}
		n := int32(1)
		if d.Spec.Replicas != nil {
			n = *d.Spec.Replicas
		}
		st := d.Status
		if st.ObservedGeneration == d.Generation && st.Replicas == n && st.UpdatedReplicas == n && st.ReadyReplicas == n && st.AvailableReplicas == n {
			return
		}
		d = d.DeepCopy()
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
		// A conflict is retried by the update event of the newer copy, a
		// Deployment gone needs nothing; any other error (the lab's request
		// faults reach this client too: a 500, a 429, a timeout) is retried
		// here, or the status would never be written.
		_ = retry.OnError(retry.DefaultBackoff, func(err error) bool {
			return !apierrors.IsConflict(err) && !apierrors.IsNotFound(err)
		}, func() error {
			_, err := c.Kube.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
			return err
		})
	}
	if _, err := f.Apps().V1().Deployments().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: setStatus, UpdateFunc: func(_, n any) { setStatus(n) }}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	return nil
}

// The operator passes with the stand-in instead of the real controllers:
// its Deployment's status says 3, then 5 ready replicas.
func TestOperatorWithAStatusStandIn(t *testing.T) {
	c := webOperator("web-operator-stand-in")
	start := c.Start
	c.Start = func(ctx context.Context, env *cachelabtest.Env) error {
		if err := startDeploymentStandIn(ctx, env); err != nil {
			return err
		}
		return start(ctx, env)
	}
	cachelabtest.Test(t, c, cachelabtest.These(webPlan(c.Name)))
}
