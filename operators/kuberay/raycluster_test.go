package kuberay_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/cachelab/cachelab/cachelabtest"
)

// TestRayCluster puts KubeRay's RayCluster reconciler under random plans
// drawn from the RayCluster CRD's schema, starting from KubeRay's samples.
func TestRayCluster(t *testing.T) {
	dir := moduleDir(t, "github.com/ray-project/kuberay/ray-operator")
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = rayv1.AddToScheme(scheme)
	cachelabtest.Test(t, cachelabtest.Controller{
		Name:   "kuberay",
		Scheme: scheme,
		CRDs:   cachelabtest.CRDs(filepath.Join(dir, "config/crd/bases")),
		Setup: func(mgr ctrl.Manager) error {
			return ray.NewReconciler(context.Background(), mgr, ray.RayClusterReconcilerOptions{}).SetupWithManager(mgr, 1)
		},
	}, cachelabtest.Random(cachelabtest.Primary("rayclusters"), cachelabtest.Examples(filepath.Join(dir, "config/samples"))))
}

// moduleDir is where the go command keeps module mod (its CRDs and
// samples), as `go list -m` finds it.
func moduleDir(t *testing.T, mod string) string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", mod, err)
	}
	return strings.TrimSpace(string(out))
}
