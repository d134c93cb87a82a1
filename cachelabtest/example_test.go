package cachelabtest_test

import (
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/cachelab/cachelab/cachelabtest"
)

// A client-go controller (a ConfigMap copier: shared informer, lister,
// recorded workqueue; clientGo in this package's tests) under one plan: a
// user change, a crash and a restart, a create. Test fails t when an
// invariant of the lab or the controller's Desired fails, with the report
// and the replay command.
func ExampleTest() {
	failed := inATest(func(t *testing.T) {
		copier := clientGo("", false)
		cachelabtest.Test(t, copier, cachelabtest.These(plan("crash-and-restart")))
	})
	fmt.Println("failed:", failed)
	// Output:
	// failed: false
}

// Catch is Test for a controller with a planted bug: it returns the
// failures instead of failing t. This controller-runtime reconciler
// filters out every update event, so a change to a ConfigMap never
// reaches its copy; nothing restarts it, so nothing heals it.
func ExampleCatch() {
	var failures []*cachelabtest.Failure
	inATest(func(t *testing.T) {
		p := plan("change-without-restart")
		p.Steps = p.Steps[:1] // the user's change only
		failures = cachelabtest.Catch(t, ignoresUpdates(), cachelabtest.These(p))
	})
	for _, f := range failures {
		for _, v := range f.Failed {
			fmt.Println(f.Plan.Name, v.Invariant)
		}
	}
	// Output:
	// change-without-restart eventual-convergence
}

// A controller-runtime reconciler (the same copier; controllerRuntime in
// this package's tests): Setup registers it on the manager the lab makes,
// with its real cache, client and workqueue over the fake API server.
func ExampleController_controllerRuntime() {
	failed := inATest(func(t *testing.T) {
		cachelabtest.Test(t, controllerRuntime(""), cachelabtest.These(plan("crash-and-restart")))
	})
	fmt.Println("failed:", failed)
	// Output:
	// failed: false
}

// ignoresUpdates is the copier reconciler of this package's tests with a
// planted bug: its predicate drops every update event.
func ignoresUpdates() cachelabtest.Controller {
	return cachelabtest.Controller{
		Setup: func(mgr ctrl.Manager) error {
			dropUpdates := predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }}
			return ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}, builder.WithPredicates(dropUpdates)).
				Named("copy").Complete(&reconciler{Client: mgr.GetClient()})
		},
		Desired: mirrorDesired,
	}
}

// inATest runs body as a go test of its own, from a scratch folder, and
// reports whether it failed: an example has no *testing.T, and Test and
// Catch need one. What the inner test prints goes nowhere, so that the
// example's output is its own under go test -v too.
func inATest(body func(t *testing.T)) (failed bool) {
	dir, err := os.MkdirTemp("", "cachelabtest-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	stdout := os.Stdout
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		panic(err)
	}
	defer devnull.Close()
	os.Stdout = devnull
	defer func() { os.Stdout = stdout }()
	ok := testing.RunTests(func(string, string) (bool, error) { return true, nil },
		[]testing.InternalTest{{Name: "TestExample", F: func(t *testing.T) {
			t.Chdir(dir)
			body(t)
		}}})
	return !ok
}
