package cachelabtest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/cachelab/cachelab/sim"
)

// labelDefaulter labels every ConfigMap defaulted=yes.
type labelDefaulter struct{}

func (labelDefaulter) Default(_ context.Context, cm *corev1.ConfigMap) error {
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels["defaulted"] = "yes"
	return nil
}

// The call of Setup that learns the webhooks (on a manager never started)
// releases what Setup made for its runnables: Kueue's wiring makes a
// delaying workqueue that only its requeuer's Start shuts down, and before
// every run of such an operator with Webhooks ended "deadlock" (H40's
// reproduction: a fault-free plan that creates one ConfigMap).
func TestTheWebhooksLearningSetupReleasesWhatItsRunnablesHold(t *testing.T) {
	t.Chdir(t.TempDir())
	setup := func(mgr ctrl.Manager) error {
		q := workqueue.NewTypedDelayingQueue[string]() // as Kueue's qcache.NewRequeuer
		if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { <-ctx.Done(); q.ShutDown(); return nil })); err != nil {
			return err
		}
		if err := ctrl.NewWebhookManagedBy(mgr, &corev1.ConfigMap{}).WithDefaulter(labelDefaulter{}).Complete(); err != nil {
			return err
		}
		return ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).
			Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil }))
	}
	p := &sim.Plan{Version: sim.PlanVersion, Name: "cm", Seed: 1,
		Steps: []sim.Step{{At: sim.Duration(time.Second), Actor: "user", Op: "create",
			Object: json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"}}`)}},
		Deadline: sim.Duration(time.Minute), Quiet: sim.Duration(5 * time.Second)}
	for _, hooks := range []bool{false, true} {
		c := Controller{Name: "learn-release", Setup: setup}
		if hooks {
			c.Name, c.Webhooks = "learn-release-webhooks", &Webhooks{}
		}
		if fs := Catch(t, c, These(p)); len(fs) != 0 {
			t.Errorf("webhooks %v: %d failures, want none:\n%s", hooks, len(fs), fs[0].Report)
		}
	}
}
