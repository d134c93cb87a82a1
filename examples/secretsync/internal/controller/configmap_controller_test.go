package controller_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/examples/secretsync/internal/controller"
)

// plans are random plans on ConfigMaps, whose children are the Secrets
// of the same name.
var plans = cachelabtest.Random(cachelabtest.Children("secrets", "%s"))

// lab puts the reconciler under the lab: how it is set up, what it wants.
func lab(createOnly bool) cachelabtest.Controller {
	return cachelabtest.Controller{
		Setup: func(mgr ctrl.Manager) error {
			r := &controller.ConfigMapReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Scheme: mgr.GetScheme(), CreateOnly: createOnly}
			return r.SetupWithManager(mgr)
		},
		Desired: func(s *cachelabtest.State) error {
			return controller.Desired(cachelabtest.List[corev1.ConfigMap](s, ""), cachelabtest.Getter[corev1.Secret](s))
		},
	}
}

func TestConfigMapReconciler(t *testing.T) {
	cachelabtest.Test(t, lab(false), plans)
}

// The planted bug (an existing Secret is never updated) is caught: a
// random plan that changes a ConfigMap's data leaves its Secret stale, and
// the lab prints the plan's replay command.
func TestLabCatchesCreateOnly(t *testing.T) {
	failures := cachelabtest.Catch(t, lab(true), plans)
	if len(failures) == 0 {
		t.Fatal("the lab did not catch the planted bug (CreateOnly)")
	}
	first, last := failures[0], failures[len(failures)-1]
	t.Logf("caught after %d plan(s); shrunk to %d step(s) after %d runs:\n%s", first.Runs, len(last.Plan.Steps), last.Runs, last.Report)
}
