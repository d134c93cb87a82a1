// Command secretsync runs the ConfigMap-to-Secret reconciler against the
// cluster of the current kubeconfig, as kubebuilder's cmd/main.go does.
package main

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cachelab/cachelab/examples/secretsync/internal/controller"
)

func main() {
	ctrl.SetLogger(zap.New())
	log := ctrl.Log.WithName("setup")
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{})
	if err != nil {
		log.Error(err, "unable to start manager")
		os.Exit(1)
	}
	r := &controller.ConfigMapReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Scheme: mgr.GetScheme()}
	if err := r.SetupWithManager(mgr); err != nil {
		log.Error(err, "unable to create controller", "controller", "secretsync")
		os.Exit(1)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "problem running manager")
		os.Exit(1)
	}
}
