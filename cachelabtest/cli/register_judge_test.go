package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/invariants"
)

// copyOnAdd keeps a ConfigMap "<name>-copy" with each ConfigMap's data;
// with onUpdate false it acts only when an informer hands it a ConfigMap
// as added (a real bug: a change after the add is never copied, unless a
// restart lists the object again).
func copyOnAdd(onUpdate bool) func(context.Context, *cachelabtest.Env) error {
	return func(ctx context.Context, env *cachelabtest.Env) error {
		copyOf := func(obj any) {
			cm, ok := obj.(*corev1.ConfigMap)
			if !ok || strings.HasSuffix(cm.Name, "-copy") {
				return
			}
			cms := env.Kube.CoreV1().ConfigMaps(cm.Namespace)
			want := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name + "-copy"}, Data: cm.Data}
			if _, err := cms.Create(ctx, want, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
				if cur, err := cms.Get(ctx, want.Name, metav1.GetOptions{}); err == nil {
					cur.Data = cm.Data
					_, _ = cms.Update(ctx, cur, metav1.UpdateOptions{})
				}
			}
		}
		h := cache.ResourceEventHandlerFuncs{AddFunc: copyOf}
		if onUpdate {
			h.UpdateFunc = func(_, obj any) { copyOf(obj) }
		}
		if _, err := env.Informers.Core().V1().ConfigMaps().Informer().AddEventHandler(h); err != nil {
			return err
		}
		env.Informers.Start(ctx.Done())
		return nil
	}
}

// A controller registered for the command is judged by `cachelab run` as
// Test judges it: the differential oracle (matches-reference, its end
// state against fault-free runs of the same plan) and the health verdicts
// (informers-synced, no-panics, reconciles-return) join the invariants.
// Before, the command judged it with the invariants alone: a controller
// that ignores updates, or never starts its informers, passed.
func TestTheCommandJudgesARegisteredControllerAsTestDoes(t *testing.T) {
	planFile := filepath.Join(t.TempDir(), "plan.json")
	// a exists; the user changes it at 1 s; the controller crashes at 2 s
	// and restarts at 3 s (a fault: the reference runs leave it out).
	if err := os.WriteFile(planFile, []byte(`{"version":1,"name":"change-then-restart","seed":1,"subject":"bellerophon",
 "objects":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"n":"0"}}],
 "steps":[{"at":"1s","actor":"user","op":"patch","resource":"configmaps","namespace":"default","name":"a","patch":{"data":{"n":"1"}}},
  {"at":"2s","actor":"controller","op":"crash"},{"at":"3s","actor":"controller","op":"restart"}],
 "deadline":"2m","quiet":"20s"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	runAs := func(name string, start func(context.Context, *cachelabtest.Env) error) (int, string) {
		t.Helper()
		t.Cleanup(func() { lab.SetAccepted(name, nil) })
		if err := cachelabtest.Register(cachelabtest.Controller{Name: name, Start: start}); err != nil {
			t.Fatal(err)
		}
		code, stdout, errs := run(t, "run", planFile, "--subject", name, "--out", "")
		return code, stdout + errs
	}

	code, out := runAs("lab-test/copy-on-add", copyOnAdd(false))
	t.Log(out)
	if code != ExitUnexpected || !strings.Contains(out, "unexpected: "+invariants.NameMatchesReference) {
		t.Errorf("a controller that ignores updates: exit %d, want %d and matches-reference unexpected:\n%s", code, ExitUnexpected, out)
	}
	code, out = runAs("lab-test/copy-on-change", copyOnAdd(true))
	if code != ExitOK {
		t.Errorf("a controller that copies every change: exit %d, want %d:\n%s", code, ExitOK, out)
	}
	code, out = runAs("lab-test/never-starts", func(ctx context.Context, env *cachelabtest.Env) error {
		_, err := env.Informers.Core().V1().ConfigMaps().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{})
		return err
	})
	if code != ExitUnexpected || !strings.Contains(out, "unexpected: "+lab.HealthSynced) {
		t.Errorf("a controller that never starts its informers: exit %d, want %d and %s unexpected:\n%s", code, ExitUnexpected, lab.HealthSynced, out)
	}
}
