package kueue_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/webhooks"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/invariants"
)

// TestKueueWithItsWebhooks runs TestKueue's random plans with Kueue's own
// admission webhooks (pkg/webhooks, registered as cmd/kueue/main.go does)
// served by the lab: every write of a Workload, ClusterQueue,
// ResourceFlavor or Cohort, the plans' included, passes Kueue's defaulters
// and validators. See docs/real-operators.md for the comparison with
// TestKueue on the same seeds.
func TestKueueWithItsWebhooks(t *testing.T) {
	cachelabtest.Test(t, withWebhooks(t, controller(t)), cachelabtest.Random(cachelabtest.Primary("workloads", "localqueues", "clusterqueues", "resourceflavors"), cachelabtest.Examples("testdata/queues.yaml")))
}

// TestKueuesWebhooksDefaultAndRefuseInTheLab: with its webhooks served, a
// ResourceFlavor is stored with Kueue's resource-in-use finalizer by its
// create (the defaulter; without the webhook only the reconciler's later
// update adds it), and one with an invalid node label key is refused with
// Kueue's own message (without the webhook it is stored: the CRD's schema
// does not check label keys). Both writes are made by a helper beside
// Kueue, in a fault-free plan holding the queues of testdata/queues.yaml
// and the Namespace default (which the lab does not create, and without
// which Kueue admits no Workload); every invariant must pass either way.
func TestKueuesWebhooksDefaultAndRefuseInTheLab(t *testing.T) {
	const denied = `admission webhook "vresourceflavor.kb.io" denied the request: spec.nodeLabels: Invalid value: "bad key!": name part must consist of alphanumeric characters`
	for _, served := range []bool{true, false} {
		t.Run(fmt.Sprintf("webhooks=%v", served), func(t *testing.T) {
			c := controller(t)
			if served {
				c = withWebhooks(t, c)
			}
			var (
				mu         sync.Mutex
				finalizers []string
				badErr     error
				calls      int
			)
			c.Beside = func(ctx context.Context, env *cachelabtest.Env) error {
				cl, err := client.New(env.RESTConfig, client.Options{Scheme: c.Scheme})
				if err != nil {
					return err
				}
				b := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "b"}}
				if err := cl.Create(ctx, b); err != nil {
					return fmt.Errorf("create ResourceFlavor b: %w", err)
				}
				bad := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"bad key!": "x"}}}
				err = cl.Create(ctx, bad)
				mu.Lock()
				defer mu.Unlock()
				calls++
				finalizers, badErr = b.Finalizers, err
				return nil
			}
			cachelabtest.Test(t, c, cachelabtest.Files("samples/queues-plan.json"))
			mu.Lock()
			defer mu.Unlock()
			if calls == 0 {
				t.Fatal("the helper beside Kueue never ran")
			}
			if got := slices.Contains(finalizers, kueue.ResourceInUseFinalizerName); got != served {
				t.Errorf("ResourceFlavor b as its create stored it: finalizers %v; want %s: %v", finalizers, kueue.ResourceInUseFinalizerName, served)
			}
			switch {
			case served && (badErr == nil || !strings.HasPrefix(badErr.Error(), denied)):
				t.Errorf("ResourceFlavor bad: error %v, want %q...", badErr, denied)
			case !served && badErr != nil:
				t.Errorf("without webhooks ResourceFlavor bad should be stored: %v", badErr)
			}
		})
	}
}

// TestKueuesManifestsNotThePathConventionLetAnUnusedFlavorGo: the user
// deletes ResourceFlavor a, which nothing uses. With the webhooks
// configured as Kueue's manifests configure them (defaulters on create
// only) Kueue removes its resource-in-use finalizer and the flavor goes.
// Configured by controller-runtime's path convention instead
// (&cachelabtest.Webhooks{}: defaulters on create and update), Kueue's own
// defaulter puts the finalizer back on Kueue's update that removes it, and
// the flavor stays terminating for ever: the lab calls the webhooks on the
// writes their configuration names, so which one matters.
func TestKueuesManifestsNotThePathConventionLetAnUnusedFlavorGo(t *testing.T) {
	plan, err := filepath.Abs("samples/flavor-delete-plan.json")
	if err != nil {
		t.Fatal(err)
	}
	gone := func(c cachelabtest.Controller) cachelabtest.Controller {
		c.Desired = func(s *cachelabtest.State) error {
			for _, rf := range s.Objects(kueue.GroupVersion.WithResource("resourceflavors"), "") {
				return fmt.Errorf("ResourceFlavor %s is still there (finalizers %v)", rf.GetName(), rf.GetFinalizers())
			}
			return nil
		}
		return c
	}
	manifests := gone(withWebhooks(t, controller(t)))
	convention := manifests
	convention.Name, convention.Webhooks = "kueue-convention", &cachelabtest.Webhooks{}
	t.Chdir(t.TempDir()) // the convention's failure writes its files under testdata/
	if fs := cachelabtest.Catch(t, manifests, cachelabtest.Files(plan)); len(fs) != 0 {
		t.Errorf("with Kueue's manifests the unused flavor should go:\n%s", fs[0].Report)
	}
	fs := cachelabtest.Catch(t, convention, cachelabtest.Files(plan))
	if len(fs) != 1 || !slices.ContainsFunc(fs[0].Failed, func(v invariants.Verdict) bool {
		return v.Invariant == "eventual-convergence" && strings.Contains(v.Reason, "ResourceFlavor a is still there (finalizers [kueue.x-k8s.io/resource-in-use])")
	}) {
		t.Errorf("with the path convention the flavor should stay, its finalizer put back: %d failures %v", len(fs), fs)
	}
}

// withWebhooks is c with Kueue's own webhooks: webhooks.Setup on the
// manager, as cmd/kueue/main.go calls it, served at the paths and for the
// writes the module's manifests configure.
func withWebhooks(t *testing.T, c cachelabtest.Controller) cachelabtest.Controller {
	setup := c.Setup
	c.Name += "-webhooks"
	c.Setup = func(mgr ctrl.Manager) error {
		if name, err := webhooks.Setup(mgr, nil); err != nil {
			return fmt.Errorf("kueue: webhook for %s: %w", name, err)
		}
		return setup(mgr)
	}
	c.Webhooks = kueueWebhooks(t)
	return c
}

// kueueWebhooks are the configurations of Kueue's core webhooks, those of
// its own API group (kueue.x-k8s.io), read from the module's
// config/components/webhook/manifests.yaml: the file also configures the
// webhooks of Kueue's job integrations (batch Jobs, Pods, Deployments,
// JobSets, Ray and Kubeflow jobs...), which webhooks.Setup does not
// register (they come with the integrations, not run here), and the lab
// refuses a configured path nobody serves. The manifests, not
// controller-runtime's path convention (&cachelabtest.Webhooks{}, which
// the paths follow), say which writes each webhook sees: Kueue's
// defaulters run on create only (the convention: create and update), and
// its Workload validator also on workloads/status.
func kueueWebhooks(t *testing.T) *cachelabtest.Webhooks {
	path := filepath.Join(moduleDir(t, "sigs.k8s.io/kueue"), "config/components/webhook/manifests.yaml")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	own := func(rules []admissionregistrationv1.RuleWithOperations) bool {
		return len(rules) > 0 && !slices.ContainsFunc(rules, func(r admissionregistrationv1.RuleWithOperations) bool {
			return !slices.Equal(r.APIGroups, []string{kueue.GroupVersion.Group})
		})
	}
	w := &cachelabtest.Webhooks{}
	for dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096); ; {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch u.GetKind() {
		case "MutatingWebhookConfiguration":
			var m admissionregistrationv1.MutatingWebhookConfiguration
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &m); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			m.Webhooks = slices.DeleteFunc(m.Webhooks, func(h admissionregistrationv1.MutatingWebhook) bool { return !own(h.Rules) })
			w.Mutating = append(w.Mutating, m)
		case "ValidatingWebhookConfiguration":
			var v admissionregistrationv1.ValidatingWebhookConfiguration
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &v); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			v.Webhooks = slices.DeleteFunc(v.Webhooks, func(h admissionregistrationv1.ValidatingWebhook) bool { return !own(h.Rules) })
			w.Validating = append(w.Validating, v)
		}
	}
	if len(w.Mutating) != 1 || len(w.Validating) != 1 {
		t.Fatalf("%s: %d mutating and %d validating configurations, want 1 each", path, len(w.Mutating), len(w.Validating))
	}
	return w
}
