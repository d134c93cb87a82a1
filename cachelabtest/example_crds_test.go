package cachelabtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/cachelab/cachelab/cachelabtest"
)

// A CRD operator in kubebuilder's layout under the lab: its CRDs as
// envtest reads them, random plans over its own kind drawn from the CRD's
// schema, starting from its sample. (In a test: cachelabtest.Test(t, c,
// plans).)
func ExampleCRDs() {
	dir, _ := os.MkdirTemp("", "operator")
	defer os.RemoveAll(dir)
	_ = os.MkdirAll(filepath.Join(dir, "config/crd/bases"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, "config/crd/bases/widgets.yaml"), []byte(widgetCRD), 0o644)

	c := cachelabtest.Controller{
		CRDs: cachelabtest.CRDs(filepath.Join(dir, "config/crd/bases")),
		Start: func(ctx context.Context, env *cachelabtest.Env) error {
			// Build the controller from env (its clients, its recorded
			// informer factories) and start it.
			return nil
		},
	}
	fmt.Println(c.CRDs.Err())
	fmt.Println(cachelabtest.CRDs(filepath.Join(dir, "config/missing")).Err() != nil)
	// Output:
	// <nil>
	// true
}

// Random plans over a controller's own kind ("widgets", from its CRD)
// with the operator's samples as starting points: objects are created,
// changed (one field, or a burst), scaled, deleted and recreated, and the
// children the controller makes (found by their ownerReferences) are
// deleted and changed by another writer, in faults.
func ExamplePrimary() {
	var t *testing.T // the test's
	var c cachelabtest.Controller
	plans := cachelabtest.Random(cachelabtest.Primary("widgets"), cachelabtest.Examples("config/samples"))
	if t != nil {
		cachelabtest.Test(t, c, plans)
	}
}

// A stand-in for a controller of the cluster, started beside the
// controller under test with clients of its own name: it makes every
// Deployment's status follow its spec, so that an operator waiting for
// available replicas sees them. Its writes are traced as
// "deployment-controller", not as the controller's.
func ExampleEnv_Client() {
	_ = cachelabtest.Controller{
		Start: func(ctx context.Context, env *cachelabtest.Env) error {
			helper, err := env.Client("deployment-controller")
			if err != nil {
				return err
			}
			inf := cache.NewSharedIndexInformer(cache.NewListWatchFromClient(helper.Kube.AppsV1().RESTClient(), "deployments", "", nil),
				&appsv1.Deployment{}, 0, cache.Indexers{})
			_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
				d := obj.(*appsv1.Deployment).DeepCopy()
				if d.Status.AvailableReplicas != ptr.Deref(d.Spec.Replicas, 1) {
					d.Status.Replicas, d.Status.AvailableReplicas = *d.Spec.Replicas, *d.Spec.Replicas
					_, _ = helper.Kube.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
				}
			}})
			go inf.RunWithContext(ctx)
			// ... then build and start the controller under test from env.
			return nil
		},
	}
}
