package http_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/cachelab/cachelab/fakeapi"
)

func init() { ctrllog.SetLogger(logr.Discard()) }

// copier is a reconciler that keeps, for every configmap named src-X, a
// copy named X-copy with the same data.
type copier struct{ c client.Client }

func (r copier) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var src corev1.ConfigMap
	if err := r.c.Get(ctx, req.NamespacedName, &src); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if len(src.Name) < 4 || src.Name[:4] != "src-" {
		return reconcile.Result{}, nil
	}
	dst := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: src.Namespace, Name: src.Name[4:] + "-copy"}}
	_, err := ctrl.CreateOrUpdate(ctx, r.c, dst, func() error {
		dst.Data = src.Data
		return nil
	})
	return reconcile.Result{}, err
}

// TestControllerRuntimeManagerReconcilesOverThePipe: a controller-runtime
// manager (its cache, client, discovery-backed RESTMapper, workqueue) runs
// inside the bubble over the in-memory pipe; its reconciler sees
// configmaps created before and after it started and writes their copies;
// every goroutine ends with the manager.
func TestControllerRuntimeManagerReconcilesOverThePipe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		cs := e.clientset(t, "setup")
		ctx := context.Background()
		mustNamespace(t, cs, "a")
		mustCM(t, cs, "a", "src-early", map[string]string{"k": "1"})

		mgr, err := ctrl.NewManager(e.pipe.RESTConfig("manager"), ctrl.Options{
			Metrics:                metricsserver.Options{BindAddress: "0"},
			HealthProbeBindAddress: "0",
			Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Complete(copier{c: mgr.GetClient()}); err != nil {
			t.Fatal(err)
		}
		mctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- mgr.Start(mctx) }()

		mustCM(t, cs, "a", "src-late", map[string]string{"k": "2"})
		time.Sleep(10 * time.Second)
		synctest.Wait()
		for name, want := range map[string]string{"early-copy": "1", "late-copy": "2"} {
			got, err := cs.CoreV1().ConfigMaps("a").Get(ctx, name, metav1.GetOptions{})
			if err != nil || got.Data["k"] != want {
				t.Errorf("copy %s = %v, %v; want k=%s", name, got, err, want)
			}
		}
		if _, err := cs.CoreV1().ConfigMaps("a").Get(ctx, "unrelated-copy", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("unexpected copy: %v", err)
		}
		var mgrReqs int
		for _, o := range e.log.Requests("") {
			if o.Request.Client == "manager" {
				mgrReqs++
			}
		}
		if mgrReqs == 0 {
			t.Error("no request observed from the manager's client")
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager stopped with %v", err)
		}
	})
}
