package cachelabtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// configMapWorkload is a user story on ConfigMap "a": created, changed
// twice, deleted, recreated.
func configMapWorkload() *sim.Plan {
	at := func(d time.Duration) sim.Duration { return sim.Duration(d) }
	cm := func(v string) json.RawMessage {
		return json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"v":"` + v + `"}}`)
	}
	patch := func(v string) json.RawMessage { return json.RawMessage(`{"data":{"v":"` + v + `"}}`) }
	return &sim.Plan{Version: sim.PlanVersion, Name: "configmap-story", Seed: 3,
		Faults: sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: at(20 * time.Millisecond)}},
		Steps: []sim.Step{
			{At: at(time.Second), Actor: "user", Op: "create", Object: cm("1")},
			{At: at(2 * time.Second), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "a", Patch: patch("2")},
			{At: at(3 * time.Second), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "a", Patch: patch("3")},
			{At: at(4 * time.Second), Actor: "user", Op: "delete", Resource: "configmaps", Namespace: "default", Name: "a"},
			{At: at(5 * time.Second), Actor: "user", Op: "create", Object: cm("4")},
		}}
}

// A correct client-go controller passes every targeted plan of a workload:
// the campaign runs, reports its plans and prunes the stale-state restarts
// its WatchList informers cannot be shown.
func TestHuntPassesACorrectControllerOnEveryTargetedPlan(t *testing.T) {
	rep := cachelabtest.Hunt(t, clientGo("", false), cachelabtest.HuntOptions{}, false, configMapWorkload())
	if len(rep.Rows) == 0 {
		t.Fatalf("no targeted plan generated (pruned: %+v)", rep.Pruned)
	}
	classes := map[string]int{}
	for _, r := range rep.Rows {
		classes[r.Class]++
		if r.Verdict != "pass" {
			t.Errorf("%s: %s %v %s", r.Perturbation, r.Verdict, r.Failed, r.Err)
		}
	}
	if classes[scenarios.ClassUnobserved] == 0 {
		t.Errorf("plans per class %v: want unobserved-state plans (the workload changes a twice)", classes)
	}
	var b strings.Builder
	rep.WriteTable(&b)
	if !strings.Contains(b.String(), "WatchList") {
		t.Errorf("the table does not say why stale-state restarts were pruned:\n%s", b.String())
	}
}

// halfDone is a client-go controller with a planted intermediate-state
// bug: for each ConfigMap it creates "<name>-copy" then "<name>-marker",
// but only when the copy is missing, so a crash between the two writes
// leaves the marker missing for good.
func halfDone() cachelabtest.Controller {
	derived := func(name string) bool { return strings.HasSuffix(name, "-copy") || strings.HasSuffix(name, "-marker") }
	return cachelabtest.Controller{
		Start: func(ctx context.Context, env *cachelabtest.Env) error {
			q := cachelabtest.RecordQueue(env, workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()))
			inf := env.Informers.Core().V1().ConfigMaps()
			enqueue := func(obj any) {
				if k, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
					q.Add(k)
				}
			}
			if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }}); err != nil {
				return err
			}
			env.Informers.Start(ctx.Done())
			lister := inf.Lister()
			go func() { <-ctx.Done(); q.ShutDown() }()
			go func() {
				if !cache.WaitFor(ctx, "", inf.Informer().HasSyncedChecker()) {
					return
				}
				for {
					key, shutdown := q.Get()
					if shutdown {
						return
					}
					ns, name, _ := cache.SplitMetaNamespaceKey(key)
					err := func() error {
						if derived(name) {
							return nil
						}
						if _, err := lister.ConfigMaps(ns).Get(name); err != nil {
							return nil
						}
						if _, err := lister.ConfigMaps(ns).Get(name + "-copy"); err == nil {
							return nil // planted: the marker is assumed made with the copy
						}
						for _, suffix := range []string{"-copy", "-marker"} {
							cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + suffix}}
							if _, err := env.Kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
								return err
							}
						}
						return nil
					}()
					if err != nil {
						q.AddRateLimited(key)
					} else {
						q.Forget(key)
					}
					q.Done(key)
				}
			}()
			return nil
		},
		Desired: func(s *cachelabtest.State) error {
			for _, cm := range cachelabtest.List[corev1.ConfigMap](s, "") {
				if derived(cm.Name) {
					continue
				}
				for _, suffix := range []string{"-copy", "-marker"} {
					if _, ok := cachelabtest.Get[corev1.ConfigMap](s, cm.Namespace, cm.Name+suffix); !ok {
						return fmt.Errorf("%s/%s has no %s", cm.Namespace, cm.Name, suffix)
					}
				}
			}
			return nil
		},
	}
}

// The planted intermediate-state bug is found by the intermediate-state
// plans (a crash between the copy and the marker), and by no other class.
func TestHuntFindsAPlantedIntermediateStateBug(t *testing.T) {
	w := configMapWorkload()
	w.Steps = w.Steps[:1] // create a, nothing else
	rep := cachelabtest.Hunt(t, halfDone(), cachelabtest.HuntOptions{}, true, w)
	failed := map[string]int{}
	for _, r := range rep.Rows {
		if r.Verdict != "pass" {
			failed[r.Class]++
			if !slices.Contains(r.Failed, "eventual-convergence") {
				t.Errorf("%s: failed %v, want eventual-convergence (the marker is never made)", r.Perturbation, r.Failed)
			}
		}
	}
	if failed[scenarios.ClassIntermediate] == 0 || len(failed) != 1 {
		var b strings.Builder
		rep.WriteTable(&b)
		t.Errorf("failures per class %v, want intermediate-state only:\n%s", failed, b.String())
	}
}

// A targeted run in which a user step fails only there (the competitor's
// label on a-copy, refused NotFound: a slow first sync kept the copy from
// being made yet) is judged against a reference without that step, as
// Test judges it: the controller did nothing wrong, and the campaign
// passes. Before, hunt compared it with the workload's whole reference
// (the label there), and matches-reference failed.
func TestHuntJudgesAUserStepThatFailedOnlyInTheTargetedRunAsTestDoes(t *testing.T) {
	w := configMapWorkload()
	w.Steps = append(w.Steps[:1], sim.Step{At: sim.Duration(1500 * time.Millisecond), Actor: "competitor", Op: "patch", Resource: "configmaps",
		Namespace: "default", Name: "a-copy", Patch: json.RawMessage(`{"metadata":{"labels":{"team":"t2"}}}`)})
	out := t.TempDir()
	rep := cachelabtest.Hunt(t, clientGo("", false), cachelabtest.HuntOptions{Out: out, Classes: []string{scenarios.ClassRequest}}, false, w)
	// Not vacuous: in the slow-sync plan the competitor's patch failed.
	var slow string
	for _, r := range rep.Rows {
		if strings.Contains(r.Plan.Name, "-request-slowsync-configmaps") {
			slow = r.Dir
		}
	}
	if slow == "" {
		t.Fatalf("no slow-first-sync plan of configmaps generated")
	}
	trace, err := os.ReadFile(filepath.Join(slow, "trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(trace), "step failed") {
		t.Errorf("the competitor's patch did not fail in %s: the test shows nothing", slow)
	}
}

// keepFirst is a client-go controller whose end state depends, with no
// fault, on which of the user's states it saw: for each ConfigMap it makes
// "<name>-copy" from the data the ConfigMap has when the copy is made, and
// never updates the copy (a StatefulSet's Pod below its partition keeps
// its template so). Its contract (Desired) is only that every ConfigMap
// has a copy.
func keepFirst() cachelabtest.Controller {
	return cachelabtest.Controller{
		Start: func(ctx context.Context, env *cachelabtest.Env) error {
			q := cachelabtest.RecordQueue(env, workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()))
			inf := env.Informers.Core().V1().ConfigMaps()
			enqueue := func(obj any) {
				if k, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
					q.Add(k)
				}
			}
			if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }}); err != nil {
				return err
			}
			env.Informers.Start(ctx.Done())
			lister := inf.Lister()
			go func() { <-ctx.Done(); q.ShutDown() }()
			go func() {
				if !cache.WaitFor(ctx, "", inf.Informer().HasSyncedChecker()) {
					return
				}
				for {
					key, shutdown := q.Get()
					if shutdown {
						return
					}
					ns, name, _ := cache.SplitMetaNamespaceKey(key)
					err := func() error {
						if strings.HasSuffix(name, "-copy") {
							return nil
						}
						src, err := lister.ConfigMaps(ns).Get(name)
						if err != nil {
							return nil
						}
						if _, err := lister.ConfigMaps(ns).Get(name + "-copy"); err == nil {
							return nil // the copy keeps the data it was made from
						}
						_, err = env.Kube.CoreV1().ConfigMaps(ns).Create(ctx, copyTo(src, nil), metav1.CreateOptions{})
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
			return nil
		},
		Desired: func(s *cachelabtest.State) error {
			for _, cm := range cachelabtest.List[corev1.ConfigMap](s, "") {
				if strings.HasSuffix(cm.Name, "-copy") {
					continue
				}
				if _, ok := cachelabtest.Get[corev1.ConfigMap](s, cm.Namespace, cm.Name+"-copy"); !ok {
					return fmt.Errorf("%s/%s has no copy", cm.Namespace, cm.Name)
				}
			}
			return nil
		},
	}
}

// A targeted plan that hides a state the controller's end state depends
// on (ConfigMap a's first data, behind a relist) ends as a controller
// started after the user's last step ends: one of the end states the plan
// allows, and matches-reference passes it, as it does in Test (the
// late-start run, internal/lab's allowedOtherwise). Before, hunt served
// the reference cache every run it asked for with the workload's
// reference trace, the late-start run included, so the late start was
// never run and the plan failed matches-reference.
func TestHuntAllowsTheEndStateOfALateStartedController(t *testing.T) {
	at := func(d time.Duration) sim.Duration { return sim.Duration(d) }
	w := &sim.Plan{Version: sim.PlanVersion, Name: "keep-first", Seed: 3,
		Faults: sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: at(20 * time.Millisecond)}},
		Steps: []sim.Step{
			{At: at(time.Second), Actor: "user", Op: "create", Object: json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"n":"1"}}`)},
			{At: at(2 * time.Second), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "a", Patch: json.RawMessage(`{"data":{"n":"2"}}`)},
		}}
	rep := cachelabtest.Hunt(t, keepFirst(), cachelabtest.HuntOptions{Classes: []string{scenarios.ClassUnobserved}}, false, w)
	// Not vacuous: the plan hiding a's first state ran.
	if !slices.ContainsFunc(rep.Rows, func(r lab.HuntRow) bool {
		return strings.Contains(r.Perturbation, "configmaps default/a at rv") && strings.Contains(r.Perturbation, "create added by user")
	}) {
		var b strings.Builder
		rep.WriteTable(&b)
		t.Fatalf("no plan hides a's first state:\n%s", b.String())
	}
}

// rotateTwice is a plain workload for the rotator (ryowclient_test.go):
// ConfigMap a exists; the user changes its data at 5 s and at 15 s. No
// fault: the targeted campaign adds its own.
func rotateTwice() *sim.Plan {
	at := func(d time.Duration) sim.Duration { return sim.Duration(d) }
	patch := func(v string) json.RawMessage { return json.RawMessage(`{"data":{"n":"` + v + `"}}`) }
	return &sim.Plan{
		Version: sim.PlanVersion, Name: "rotate-twice", Seed: 1,
		Objects: []json.RawMessage{json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"n":"0"}}`)},
		Steps: []sim.Step{
			{At: at(5 * time.Second), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "a", Patch: patch("1")},
			{At: at(15 * time.Second), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "a", Patch: patch("2")},
		},
		Deadline: sim.Duration(2 * time.Minute), Quiet: sim.Duration(20 * time.Second),
	}
}

// The rotator's stale own write (it deletes, by name, the Secret it has
// just made, from a cache that still shows the old one) needs a reconcile
// of its ConfigMap while its Secret watch lags its rotation; its own
// lagging events come too late to be that trigger, and the workload's user
// acts only twice, 10 s apart. The read-own-writes class's lag plan wakes
// the key itself: it expires the watch of the resource whose object names
// the key (the ConfigMaps), whose relist hands a to the handlers again
// while the Secret watch is held. With controller-runtime's
// read-your-own-writes client the rotator passes every targeted plan (its
// Get waits for the rotation).
func TestHuntFindsAStaleOwnWriteThatNeedsAnotherWakeUp(t *testing.T) {
	rep := cachelabtest.Hunt(t, rotatorController(false), cachelabtest.HuntOptions{}, true, rotateTwice())
	var b strings.Builder
	rep.WriteTable(&b)
	found := false
	for _, r := range rep.Rows {
		if slices.Contains(r.Failed, "read-your-writes") {
			found = true
			t.Logf("read-your-writes failed: plan %d, %s: %s", r.Index, r.Class, r.Perturbation)
			if r.Class != scenarios.ClassOwnWrites {
				t.Errorf("read-your-writes failed under %s (%s), want the read-own-writes class", r.Class, r.Perturbation)
			}
		}
	}
	if !found {
		t.Fatalf("no targeted plan made the rotator delete its own new Secret (read-your-writes):\n%s", b.String())
	}
	cachelabtest.Hunt(t, rotatorController(true), cachelabtest.HuntOptions{}, false, rotateTwice())
}
