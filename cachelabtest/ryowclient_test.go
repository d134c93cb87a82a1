package cachelabtest_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/invariants"
)

// rotator is a controller-runtime reconciler written for this test: for
// each ConfigMap it keeps a Secret <name>-s made for the ConfigMap's data
// (its "for" key), and when the data changes it rotates the Secret: deletes
// it by name and creates a new one. It reads the Secret from the cache; a
// cache that has not yet seen its own rotation still shows the old Secret,
// and the next reconcile (woken by the new Secret's events) rotates again:
// it deletes, by name, the Secret it has just created. The end state is
// right; the child it deleted was live and its own.
type rotator struct{ client.Client }

func (r *rotator) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cm.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	want := cm.Data["n"]
	child := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name + "-s"}, StringData: map[string]string{"for": want}}
	if err := controllerutil.SetControllerReference(&cm, child, r.Scheme()); err != nil {
		return ctrl.Result{}, err
	}
	var cur corev1.Secret
	switch err := r.Get(ctx, client.ObjectKeyFromObject(child), &cur); {
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, r.Create(ctx, child)
	case err != nil:
		return ctrl.Result{}, err
	case string(cur.Data["for"]) == want:
		return ctrl.Result{}, nil
	}
	old := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cur.Namespace, Name: cur.Name}}
	if err := r.Delete(ctx, old); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.Create(ctx, child)
}

// rotatorController is the rotator under the lab; with ryow, its manager's
// client is controller-runtime's read-your-own-writes client (v0.25,
// experimental: Client.Cache.EnableReadYourWritesConsistency), set through
// Controller.ManagerOptions as a main.go sets it.
func rotatorController(ryow bool) cachelabtest.Controller {
	c := cachelabtest.Controller{
		Setup: func(mgr ctrl.Manager) error {
			return ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Owns(&corev1.Secret{}).Named("rotator").
				Complete(&rotator{Client: mgr.GetClient()})
		},
		Desired: rotatedDesired,
	}
	if ryow {
		c.ManagerOptions = func(o *manager.Options) {
			o.Client.Cache = &client.CacheOptions{EnableReadYourWritesConsistency: ptr.To(true)}
		}
	}
	return c
}

// rotatedDesired: every ConfigMap has its Secret, made for its data.
func rotatedDesired(s *cachelabtest.State) error {
	for _, cm := range cachelabtest.List[corev1.ConfigMap](s, "") {
		sec, ok := cachelabtest.Get[corev1.Secret](s, cm.Namespace, cm.Name+"-s")
		if !ok || string(sec.Data["for"]) != cm.Data["n"] {
			return fmt.Errorf("%s/%s has no Secret made for its data", cm.Namespace, cm.Name)
		}
	}
	return nil
}

// stalePlan: the user changes a's data at 2 s, when every watch of the
// controller expires; the rotator's Secret informer relists while the
// rotation is under way and shows the old Secret to the next reconcile.
func stalePlan(name string) *sim.Plan {
	at := func(d time.Duration) sim.Duration { return sim.Duration(d) }
	return &sim.Plan{
		Version: sim.PlanVersion, Name: name, Seed: 1,
		Objects: []json.RawMessage{json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"n":"1"}}`)},
		Steps: []sim.Step{
			{At: at(2 * time.Second), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "a", Patch: json.RawMessage(`{"data":{"n":"9"}}`)},
			{At: at(2 * time.Second), Actor: "faults", Op: "expire"},
		},
		Faults:   sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: sim.Duration(5 * time.Millisecond)}},
		Deadline: sim.Duration(2 * time.Minute), Quiet: sim.Duration(20 * time.Second),
	}
}

// relistPlan: the Secret watch is held from 5 s to 7 s, the user changes
// a's data at 5.1 s (the rotator deletes a-s and creates it again, unseen),
// the watch expires at 6 s and the informer relists: it sees the new a-s
// in place of the old one, an update from one UID to the other, never the
// old one's delete. At 20 s the user changes the data again.
func relistPlan(name string) *sim.Plan {
	at := func(d time.Duration) sim.Duration { return sim.Duration(d) }
	return &sim.Plan{
		Version: sim.PlanVersion, Name: name, Seed: 1,
		Objects: []json.RawMessage{json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"n":"0"}}`)},
		Steps: []sim.Step{
			{At: at(5 * time.Second), Actor: "faults", Op: "hold", Resource: "secrets", For: at(2 * time.Second)},
			{At: at(5100 * time.Millisecond), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "a", Patch: json.RawMessage(`{"data":{"n":"1"}}`)},
			{At: at(6 * time.Second), Actor: "faults", Op: "expire", Resource: "secrets"},
			{At: at(20 * time.Second), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "a", Patch: json.RawMessage(`{"data":{"n":"2"}}`)},
		},
		Deadline: sim.Duration(2 * time.Minute), Quiet: sim.Duration(20 * time.Second),
	}
}

// failed returns the failed verdict named name of the failures, if any.
func failed(fs []*cachelabtest.Failure, name string) (invariants.Verdict, bool) {
	for _, f := range fs {
		if v, ok := verdict(f.Failed, name); ok {
			return v, true
		}
	}
	return invariants.Verdict{}, false
}

// Controller.ManagerOptions reaches the manager the lab makes: the
// rotator's stale-own-write decision (it deletes, by name, the Secret it
// has just created, from a cache that still shows the old one) fails
// read-your-writes with the default client, and controller-runtime's
// read-your-own-writes client, turned on in ManagerOptions, retires it (its
// Get waits until the cache has seen the rotation).
func TestManagerOptionsReachTheManagerTheLabMakes(t *testing.T) {
	scratch(t)
	fs := cachelabtest.Catch(t, rotatorController(false), cachelabtest.These(stalePlan("stale-rotation")))
	v, ok := failed(fs, invariants.NameReadYourWrites)
	if !ok || !strings.Contains(v.Reason, "delete of secrets/default/a-s") {
		t.Fatalf("the default client's stale rotation did not fail read-your-writes on its delete of a-s: %+v", fs)
	}
	for _, f := range cachelabtest.Catch(t, rotatorController(true), cachelabtest.These(stalePlan("stale-rotation"))) {
		t.Errorf("with the read-your-own-writes client the rotator failed:\n%s", f.Report)
	}
}

// A NewInformer set in ManagerOptions makes the informers, and the lab
// still records them: the same stale decision is judged (its reason names
// the handler call that showed the old Secret).
func TestAControllersNewInformerIsRecorded(t *testing.T) {
	scratch(t)
	c := rotatorController(false)
	made := 0
	c.ManagerOptions = func(o *manager.Options) {
		o.Cache.NewInformer = func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, idx toolscache.Indexers) toolscache.SharedIndexInformer {
			made++
			return toolscache.NewSharedIndexInformer(lw, obj, resync, idx)
		}
	}
	fs := cachelabtest.Catch(t, c, cachelabtest.These(stalePlan("stale-rotation")))
	if made == 0 {
		t.Fatal("the controller's NewInformer was never called")
	}
	if v, ok := failed(fs, invariants.NameReadYourWrites); !ok || !strings.Contains(v.Reason, "handler at position") {
		t.Fatalf("with the controller's NewInformer the stale rotation was not judged from recorded handler calls: %+v", fs)
	}
}

// A finding in controller-runtime v0.25.2's read-your-own-writes client
// (docs/controller-runtime-ryow.md): a delete it made is pending until an
// informer delete event of that UID; when the informer relists after the
// delete and a create under the same name, client-go hands the new object
// over as an update of the old one (another UID), the delete is never
// seen, and every later Get of that name waits for it. The rotator's
// reconcile waits from the relist to the end of the run: reconciles-return
// fails, with the client's error; the user's next change is never acted on
// (eventual-convergence fails too). Without that change the end state is
// right, and reconciles-return alone says the worker hung. The default
// client passes both plans.
func TestReadYourOwnWritesClientWaitsForeverForADeleteARelistHid(t *testing.T) {
	scratch(t)
	quiet := relistPlan("relist-then-nothing")
	quiet.Steps = quiet.Steps[:3]
	for _, p := range []*sim.Plan{relistPlan("relist"), quiet} {
		for _, f := range cachelabtest.Catch(t, rotatorController(false), cachelabtest.These(p)) {
			t.Errorf("the default client failed plan %q:\n%s", p.Name, f.Report)
		}
		fs := cachelabtest.Catch(t, rotatorController(true), cachelabtest.These(p))
		v, ok := failed(fs, lab.HealthReturns)
		if !ok {
			t.Fatalf("plan %q: the read-your-own-writes client's reconcile returned after the relist (has controller-runtime fixed its pending deletes? see docs/controller-runtime-ryow.md): %+v", p.Name, fs)
		}
		if !strings.Contains(v.Reason, "of default/a, started at t=7.") || !strings.Contains(v.Reason, "failed waiting to observe deletes for uids") {
			t.Errorf("plan %q: reconciles-return does not name the hung reconcile and the client's wait: %s", p.Name, v.Reason)
		}
		_, diverged := failed(fs, invariants.NameEventualConvergence)
		if want := len(p.Steps) == 4; diverged != want {
			t.Errorf("plan %q: eventual-convergence failed %v, want %v (the user's change at 20 s is never acted on)", p.Name, diverged, want)
		}
	}
}

// The campaign behind docs/controller-runtime-ryow.md's table (slow: set
// CACHELAB_RYOW_CAMPAIGN=1; with -rapid.checks=N -rapid.seed=S): the same
// random plans over ConfigMaps for the rotator with each client, every
// failing plan counted (-cachelab.keepgoing). The default client's stale
// rotation fails read-your-writes; the read-your-own-writes client's never
// does.
func TestReadYourOwnWritesClientCampaign(t *testing.T) {
	if os.Getenv("CACHELAB_RYOW_CAMPAIGN") == "" {
		t.Skip("slow: set CACHELAB_RYOW_CAMPAIGN=1")
	}
	scratch(t)
	if err := flag.Set("cachelab.keepgoing", "true"); err != nil {
		t.Fatal(err)
	}
	count := map[bool]map[string]int{}
	for _, ryow := range []bool{false, true} {
		count[ryow] = map[string]int{}
		for _, f := range cachelabtest.Catch(t, rotatorController(ryow), cachelabtest.Random(cachelabtest.Primary("configmaps"))) {
			for _, v := range f.Failed {
				count[ryow][v.Invariant]++
			}
		}
		t.Logf("read-your-own-writes client %v: failing plans per invariant %v", ryow, count[ryow])
	}
	if count[false][invariants.NameReadYourWrites] == 0 {
		t.Errorf("the default client's stale rotation never failed read-your-writes")
	}
	if n := count[true][invariants.NameReadYourWrites]; n > 0 {
		t.Errorf("the read-your-own-writes client failed read-your-writes in %d plans", n)
	}
}
