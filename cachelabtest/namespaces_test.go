package cachelabtest_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
)

// A controller's run starts with the Namespaces kube-apiserver creates at
// start-up (default, kube-system, kube-public, kube-node-lease): an
// operator that reads its objects' Namespace finds it, as in a cluster
// (Kueue's scheduler admitted no Workload in the lab before: "Namespace
// default not found").
func TestAControllersRunStartsWithTheSystemNamespaces(t *testing.T) {
	scratch(t)
	var missing []string
	c := cachelabtest.Controller{
		Start: func(ctx context.Context, env *cachelabtest.Env) error {
			for _, ns := range sim.SystemNamespaces {
				if _, err := env.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
					missing = append(missing, ns)
				}
			}
			return nil
		},
		Desired: func(s *cachelabtest.State) error {
			var names []string
			for _, ns := range cachelabtest.List[corev1.Namespace](s, "") {
				names = append(names, ns.Name)
			}
			for _, want := range sim.SystemNamespaces {
				if !slices.Contains(names, want) {
					return fmt.Errorf("no Namespace %s at the end (namespaces %v)", want, names)
				}
			}
			return nil
		},
	}
	if f := cachelabtest.Catch(t, c, cachelabtest.These(plan("namespaces"))); len(f) != 0 {
		t.Errorf("%d failures:\n%s", len(f), f[0].Report)
	}
	if len(missing) > 0 {
		t.Errorf("the controller's Gets of %v found nothing", missing)
	}
}
