package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/cluster"
	"github.com/cachelab/cachelab/upstream/daemonset"
	"github.com/cachelab/cachelab/upstream/internal/plangen"
)

// traceOf registers c and plays p once with it, returning the trace.
func traceOf(t *testing.T, c cachelabtest.Controller, p *sim.Plan) *sim.Trace {
	t.Helper()
	if err := cachelabtest.Register(c); err != nil {
		t.Fatal(err)
	}
	p = p.Clone()
	p.Subject = c.Name
	tr, err := sim.Run(t, p)
	if err != nil {
		t.Fatalf("run %s: %v", p.Name, err)
	}
	return tr
}

// idle is a controller that does nothing: the cluster does the work.
func idle(name string) cachelabtest.Controller {
	return cachelabtest.Controller{Name: name, Start: func(context.Context, *cachelabtest.Env) error { return nil }}
}

// finalNames returns the names of resource's objects at the run's end.
func finalNames(tr *sim.Trace, resource string) []string {
	var out []string
	for _, r := range tr.Records {
		if r.Kind == sim.RecFinal {
			for _, o := range r.Objects {
				if o.Resource == resource {
					out = append(out, o.Name)
				}
			}
		}
	}
	return out
}

// deletes returns the records of resource's objects going (the last
// write of a delete: verb delete, or a finalizer removal's) after at.
func deletes(tr *sim.Trace, resource string) []sim.Record {
	var out []sim.Record
	for _, r := range tr.Records {
		if r.Kind == sim.RecWrite && r.Resource == resource && r.Verb == "delete" {
			out = append(out, r)
		}
	}
	return out
}

// deploymentPlan: the user creates Deployment web (2 replicas) at 1 s and
// deletes it at 10 s; the kubelet makes Pods Ready; watch events 100 ms
// late.
func deploymentPlan() *sim.Plan {
	p := plangen.Story("delete-deployment", "", 100*time.Millisecond, true)
	p.Quiet = sim.Duration(30 * time.Second)
	p.Steps = []sim.Step{
		{At: sim.Duration(time.Second), Actor: "user", Op: "create", Object: json.RawMessage(
			`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":2,` +
				`"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}}}}`)},
		{At: sim.Duration(10 * time.Second), Actor: "user", Op: "delete", Resource: "deployments", Namespace: "default", Name: "web"},
	}
	return p
}

// TestTheRealCollectorDeletesADeletedDeploymentsReplicaSetAndPods: with
// cluster.Beside the user's delete of a Deployment leaves its ReplicaSet
// and Pods to kube-controller-manager's garbage collector, which deletes
// them through the API after its own watch saw the delete (later than the
// delete, under the client name generic-garbage-collector); none is left
// at the end. Under cluster.Around (the server's collector) the same
// ReplicaSet goes in the delete's own write, at the same instant: the
// contrast this test checks the lag against.
func TestTheRealCollectorDeletesADeletedDeploymentsReplicaSetAndPods(t *testing.T) {
	const deleted = 10 * time.Second
	tr := traceOf(t, cluster.Beside(idle("gc-real")), deploymentPlan())
	for _, res := range []string{"replicasets.apps", "pods"} {
		if left := finalNames(tr, res); len(left) != 0 {
			t.Errorf("%s left after their Deployment's delete: %v", res, left)
		}
		ds := deletes(tr, res)
		if len(ds) == 0 {
			t.Fatalf("no %s deleted", res)
		}
		for _, d := range ds {
			if d.Actor != cluster.GarbageCollector || d.ByGC || d.At.D() <= deleted {
				t.Errorf("%s %s deleted by %q (byGC %v) at %s; want by %s through the API, after the delete at %s",
					res, d.Name, d.Actor, d.ByGC, d.At, cluster.GarbageCollector, deleted)
			}
		}
		t.Logf("%s: %d delete writes by the real collector, the first %s after the Deployment's", res, len(ds), ds[0].At.D()-deleted)
	}

	tr = traceOf(t, cluster.Around(idle("gc-in-store")), deploymentPlan())
	rs := deletes(tr, "replicasets.apps")
	if len(rs) == 0 || !rs[0].ByGC || rs[0].At.D() != deleted {
		t.Errorf("in-store collector: replicaset deletes %+v; want one by the server's collector at %s", rs, deleted)
	}
}

// looper is an operator with a stale-cache create loop: for every
// ConfigMap it keeps a Secret of the same name owned by it, creating the
// Secret whenever its cache has none, with the owner's UID as its
// ConfigMap cache has it. While its ConfigMap watch is held over a
// delete and re-create of the ConfigMap, the cache's UID is the gone
// one's: each Secret it creates is garbage at once, the collector
// deletes it, the operator sees the delete and creates it again.
func looper(name string) cachelabtest.Controller {
	return cachelabtest.Controller{Name: name, Start: func(ctx context.Context, env *cachelabtest.Env) error {
		cms := env.Informers.Core().V1().ConfigMaps()
		secrets := env.Informers.Core().V1().Secrets()
		q := cachelabtest.RecordQueue(env, workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]()))
		enqueue := func(obj any) {
			if k, err := cache.DeletionHandlingObjectToName(obj); err == nil {
				q.Add(k)
			}
		}
		for _, inf := range []cache.SharedIndexInformer{cms.Informer(), secrets.Informer()} {
			if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, n any) { enqueue(n) }, DeleteFunc: enqueue}); err != nil {
				return err
			}
		}
		env.Informers.Start(ctx.Done())
		go func() {
			defer q.ShutDown()
			if !cache.WaitForCacheSync(ctx.Done(), cms.Informer().HasSynced, secrets.Informer().HasSynced) {
				return
			}
			go func() {
				for {
					key, quit := q.Get()
					if quit {
						return
					}
					err := func() error {
						cm, err := cms.Lister().ConfigMaps(key.Namespace).Get(key.Name)
						if apierrors.IsNotFound(err) {
							return nil
						}
						if _, err := secrets.Lister().Secrets(key.Namespace).Get(key.Name); !apierrors.IsNotFound(err) {
							return err
						}
						s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: cm.Name, Namespace: cm.Namespace,
							OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cm, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}}}
						_, err = env.Kube.CoreV1().Secrets(cm.Namespace).Create(ctx, s, metav1.CreateOptions{})
						if apierrors.IsAlreadyExists(err) {
							return nil
						}
						return err
					}()
					if err != nil {
						q.AddRateLimited(key)
					} else {
						q.Forget(key)
					}
					q.Done(key)
				}
			}()
			<-ctx.Done()
		}()
		return nil
	}}
}

// loopPlan: ConfigMap web exists; at 1 s the looper's ConfigMap watch is
// held for 5 s; at 2 s the user deletes web and re-creates it (a new
// UID). 1 ms per request, watch events latency late.
func loopPlan(subject string, latency time.Duration) *sim.Plan {
	p := plangen.Story("stale-create-loop", subject, latency, false)
	p.Quiet = sim.Duration(10 * time.Second)
	p.Objects = []json.RawMessage{json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"default"}}`)}
	p.Steps = []sim.Step{
		{At: sim.Duration(time.Second), Actor: "faults", Op: "hold", Resource: "configmaps", Target: subject, For: sim.Duration(5 * time.Second)},
		{At: sim.Duration(2 * time.Second), Actor: "user", Op: "delete", Resource: "configmaps", Namespace: "default", Name: "web"},
		{At: sim.Duration(2 * time.Second), Actor: "user", Op: "create", Object: json.RawMessage(
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"default"}}`)},
	}
	return p
}

// loopCount counts, in the 2 virtual seconds after the user's delete at
// 2 s, the looper's Secret creates and the Secrets' deletes.
func loopCount(tr *sim.Trace, subject string) (creates, deletes int) {
	from, to := 2*time.Second, 4*time.Second
	for _, r := range tr.Records {
		if r.Kind != sim.RecWrite || r.Resource != "secrets" || r.At.D() < from || r.At.D() >= to {
			continue
		}
		switch {
		case r.Verb == "create" && r.Actor == subject:
			creates++
		case r.Verb == "delete":
			deletes++
		}
	}
	return creates, deletes
}

// TestAStaleCacheCreateLoopLagsUnderTheRealCollector measures the
// looper's loop in its first 2 virtual seconds, under the server's
// collector (each Secret deleted in its own create's write) and under
// kube-controller-manager's (deleted once its watch has seen the Secret
// and it found the owner's UID gone), with watch events on time, 10 ms and
// 100 ms late: the real collector's lag makes the loop slower, as in a
// cluster. Every run ends with the Secret owned by the new ConfigMap once
// the hold ends.
func TestAStaleCacheCreateLoopLagsUnderTheRealCollector(t *testing.T) {
	for _, latency := range []time.Duration{0, 10 * time.Millisecond, 100 * time.Millisecond} {
		counts := map[string][2]int{}
		for _, mode := range []struct {
			name string
			wrap func(cachelabtest.Controller) cachelabtest.Controller
		}{
			{"in-store", func(c cachelabtest.Controller) cachelabtest.Controller { return c }},
			{"real", func(c cachelabtest.Controller) cachelabtest.Controller {
				return cluster.Beside(c, cluster.GarbageCollector)
			}},
		} {
			name := "looper-" + mode.name
			tr := traceOf(t, mode.wrap(looper(name)), loopPlan(name, latency))
			c, d := loopCount(tr, name)
			counts[mode.name] = [2]int{c, d}
			t.Logf("watch latency %s, %s collector: %d creates and %d deletes of Secret web in the 2 s after the ConfigMap's delete (outcome %s, %d records)",
				latency, mode.name, c, d, tr.Outcome, len(tr.Records))
			if s := finalNames(tr, "secrets"); len(s) != 1 {
				t.Errorf("latency %s, %s collector: secrets at the end %v, want web (owned by the new ConfigMap)", latency, mode.name, s)
			}
		}
		in, real := counts["in-store"], counts["real"]
		if in[0] < 50 {
			t.Errorf("latency %s, in-store collector: %d creates in 2 s; the loop this measures did not happen", latency, in[0])
		}
		if real[0] == 0 || real[0]*2 > in[0] {
			t.Errorf("latency %s, real collector: %d creates in 2 s against %d in-store; want the loop to go on, at most half as fast", latency, real[0], in[0])
		}
	}
}

// TestTheDaemonSetCampaignsCreateLoopUnderTheRealCollector replays the
// DaemonSet campaign's plan 11 (gate on; kept in findings/ as the rapid
// generator drew it at f95e8ad; docs/upstream.md: the user
// deletes DaemonSet a at 11 s while the controller's DaemonSet watch is
// held, and until its cache loses the set the controller creates Pods for
// it) under the server's collector and under kube-controller-manager's,
// and counts the controller's Pod creates: the real collector, which
// deletes each Pod only after its own watch saw it, makes the loop less
// dense.
func TestTheDaemonSetCampaignsCreateLoopUnderTheRealCollector(t *testing.T) {
	creates := map[bool]int{}
	for _, real := range []bool{false, true} {
		c := daemonset.Controller(true)
		if real {
			c = cluster.Beside(c, cluster.GarbageCollector)
		}
		p, err := sim.LoadPlanFile("findings/daemonset-stale-create-loop-11.json")
		if err != nil {
			t.Fatal(err)
		}
		tr := traceOf(t, c, p)
		var first, last time.Duration
		var deletes int
		for _, r := range tr.Records {
			if r.Kind != sim.RecWrite || r.Resource != "pods" {
				continue
			}
			switch {
			case r.Verb == "create" && r.Actor == c.Name && r.At.D() >= 11*time.Second:
				if creates[real] == 0 {
					first = r.At.D()
				}
				creates[real]++
				last = r.At.D()
			case r.Verb == "delete" && r.At.D() >= 11*time.Second:
				deletes++
			}
		}
		t.Logf("real collector %v: %d Pod creates by the controller from 11 s (the first at %s, the last at %s), %d Pod delete writes (%d records)",
			real, creates[real], first, last, deletes, len(tr.Records))
	}
	if creates[false] < 100 || creates[true] >= creates[false] {
		t.Errorf("Pod creates from 11 s: %d in-store, %d under the real collector; want the loop (>= 100 creates) in-store and fewer under the real one", creates[false], creates[true])
	}
}

// crashPlan is webPlan with the operator crashed at 2 s (its Deployment
// made at 1 s) and restarted at 10 s.
func crashPlan(subject string) *sim.Plan {
	p := webPlan(subject)
	p.Name = "web-operator-crash"
	p.Steps = append(p.Steps,
		sim.Step{At: sim.Duration(2 * time.Second), Actor: "controller", Op: "crash"},
		sim.Step{At: sim.Duration(10 * time.Second), Actor: "controller", Op: "restart"})
	return p
}

// clusterWrites counts the writes of the cluster's controllers (and its
// collector) between from and to.
func clusterWrites(tr *sim.Trace, from, to time.Duration) map[string]int {
	out := map[string]int{}
	for _, r := range tr.Records {
		if r.Kind != sim.RecWrite || r.At.D() <= from || r.At.D() >= to {
			continue
		}
		switch r.Actor {
		case cluster.DeploymentController, cluster.ReplicaSetController, cluster.StatefulSetController, cluster.JobController, cluster.GarbageCollector:
			out[r.Actor]++
		}
	}
	return out
}

// TestTheClusterOutlivesTheOperatorsCrash: with cluster.Beside the
// Deployment the operator made before its crash gets its ReplicaSet, Pods
// and status while the operator is down (writes of the Deployment and
// ReplicaSet controllers between the crash and the restart), and the
// operator passes every invariant. With cluster.Around the cluster is
// part of the operator's process: nothing of it writes in that window.
func TestTheClusterOutlivesTheOperatorsCrash(t *testing.T) {
	c := cluster.Beside(webOperator("web-operator-beside"))
	cachelabtest.Test(t, c, cachelabtest.These(crashPlan(c.Name)))

	down := clusterWrites(traceOf(t, c, crashPlan(c.Name)), 2*time.Second, 10*time.Second)
	if down[cluster.DeploymentController] == 0 || down[cluster.ReplicaSetController] == 0 {
		t.Errorf("Beside: cluster writes while the operator was down: %v; want the Deployment and ReplicaSet controllers'", down)
	}
	inProcess := cluster.Around(webOperator("web-operator-around"))
	if w := clusterWrites(traceOf(t, inProcess, crashPlan(inProcess.Name)), 2*time.Second, 10*time.Second); len(w) != 0 {
		t.Errorf("Around: cluster writes while the operator was down: %v; want none (the cluster is part of its process)", w)
	}
	t.Logf("cluster writes while the operator was down (2 s - 10 s): Beside %v", down)
}

// The garbage collector runs only beside the run: asked of Around, every
// run fails at its start with an error saying so, not a panic nor two
// collectors.
func TestTheGarbageCollectorInAProcessIsAClearError(t *testing.T) {
	c := cluster.Around(webOperator("web-operator-gc-around"), cluster.GarbageCollector)
	failures := cachelabtest.Catch(t, c, cachelabtest.These(webPlan(c.Name)))
	want := fmt.Sprintf("cluster: %s runs only beside the run", cluster.GarbageCollector)
	if len(failures) != 1 || !strings.Contains(failures[0].Report, want) {
		t.Fatalf("got %d failures, want 1 saying %q", len(failures), want)
	}
}

// Beside works for a controller-runtime operator too (it does not touch
// Setup): the cluster and the real collector run beside the manager, and
// the operator, crashed at 2 s and restarted at 10 s, passes every
// invariant.
func TestControllerRuntimeOperatorBesideTheCluster(t *testing.T) {
	c := cluster.Beside(cachelabtest.Controller{
		Name: "web-reconciler-beside",
		Setup: func(mgr ctrl.Manager) error {
			return ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Owns(&appsv1.Deployment{}).
				Complete(&webReconciler{mgr.GetClient()})
		},
		Desired: desired,
	})
	if !c.ExternalGC {
		t.Fatal("Beside with its default names did not set ExternalGC")
	}
	cachelabtest.Test(t, c, cachelabtest.These(crashPlan(c.Name)))
}

// TestAForegroundDeleteWaitsForTheRealCollector: a Deployment deleted with
// propagationPolicy Foreground (by a helper beside the run, at 10 s) stays,
// terminating with the foregroundDeletion finalizer, until the real
// collector has deleted its ReplicaSet; then the collector removes the
// finalizer and the Deployment goes, last.
func TestAForegroundDeleteWaitsForTheRealCollector(t *testing.T) {
	const at = 10 * time.Second
	c := idle("gc-foreground")
	c.Beside = func(ctx context.Context, env *cachelabtest.Env) error {
		go func() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(at - env.Sim.Rec.Now()):
			}
			fg := metav1.DeletePropagationForeground
			if err := env.Kube.AppsV1().Deployments("default").Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
				env.Sim.Rec.Record(sim.Record{Kind: sim.RecNote, Detail: "foreground delete: " + err.Error()})
			}
		}()
		return nil
	}
	p := deploymentPlan()
	p.Steps = p.Steps[:1] // the helper deletes, not the user
	tr := traceOf(t, cluster.Beside(c), p)
	var marked, rsGone, gone time.Duration
	for _, r := range tr.Records {
		if r.Kind == sim.RecNote && strings.HasPrefix(r.Detail, "foreground delete: ") {
			t.Fatal(r.Detail)
		}
		if r.Kind != sim.RecWrite {
			continue
		}
		switch {
		case r.Resource == "deployments.apps" && r.Verb == "delete" && marked == 0:
			marked = r.At.D()
			if !strings.Contains(string(r.Object), metav1.FinalizerDeleteDependents) {
				t.Errorf("the Deployment's delete wrote %s, want it marked with %s", r.Object, metav1.FinalizerDeleteDependents)
			}
		case r.Resource == "replicasets.apps" && r.Verb == "delete" && r.Actor == cluster.GarbageCollector:
			rsGone = r.At.D()
		case r.Resource == "deployments.apps" && r.Actor == cluster.GarbageCollector:
			gone = r.At.D() // the finalizer's removal, which deletes it
		}
	}
	if marked < at || rsGone <= marked || gone < rsGone {
		t.Errorf("Deployment marked at %s, ReplicaSet deleted by the collector at %s, Deployment gone by the collector at %s; want %s <= marked < ReplicaSet <= Deployment", marked, rsGone, gone, at)
	}
	if left := finalNames(tr, "deployments.apps"); len(left) != 0 {
		t.Errorf("deployments at the end: %v, want none", left)
	}
	t.Logf("foreground: Deployment marked at %s, ReplicaSet deleted at %s, Deployment gone at %s", marked, rsGone, gone)
}
