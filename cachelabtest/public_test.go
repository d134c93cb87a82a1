package cachelabtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// scratch runs t from a scratch folder: Test and Catch write the files of
// failed plans under testdata/cachelab.
func scratch(t *testing.T) { t.Chdir(t.TempDir()) }

// plan is a small plan on ConfigMaps: "a" exists at the start; at 1s the
// user sets its data, at 2s the controller crashes, at 3s it restarts, at
// 4s the user creates "b".
func plan(name string) *sim.Plan {
	cm := func(n, v string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"default"},"data":{"n":%q}}`, n, v))
	}
	s := func(at int) sim.Duration { return sim.Duration(time.Duration(at) * time.Second) }
	return &sim.Plan{
		Version: sim.PlanVersion, Name: name, Seed: 1,
		Objects: []json.RawMessage{cm("a", "0")},
		Steps: []sim.Step{
			{At: s(1), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "a", Patch: json.RawMessage(`{"data":{"n":"1"}}`)},
			{At: s(2), Actor: "controller", Op: "crash"},
			{At: s(3), Actor: "controller", Op: "restart"},
			{At: s(4), Actor: "user", Op: "create", Object: cm("b", "2")},
		},
		Deadline: sim.Duration(2 * time.Minute), Quiet: sim.Duration(20 * time.Second),
	}
}

// mirrorDesired: every ConfigMap not named "*-copy" has a "<name>-copy"
// ConfigMap with its data.
func mirrorDesired(s *cachelabtest.State) error {
	for _, cm := range cachelabtest.List[corev1.ConfigMap](s, "") {
		if strings.HasSuffix(cm.Name, "-copy") {
			continue
		}
		cp, ok := cachelabtest.Get[corev1.ConfigMap](s, cm.Namespace, cm.Name+"-copy")
		if !ok || cp.Data["n"] != cm.Data["n"] {
			return fmt.Errorf("%s/%s has no up-to-date copy", cm.Namespace, cm.Name)
		}
	}
	return nil
}

// copyCM makes dst (name+"-copy") match src through c (a write function),
// reading from get (a cache).
func copyTo(src *corev1.ConfigMap, cur *corev1.ConfigMap) *corev1.ConfigMap {
	if cur == nil {
		cur = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: src.Namespace, Name: src.Name + "-copy"}}
	} else {
		cur = cur.DeepCopy()
	}
	cur.Data = map[string]string{"n": src.Data["n"]}
	return cur
}

// clientGo is a small client-go controller copying ConfigMaps, with a
// recorded queue; panicOn, if not "", is a ConfigMap name whose add makes
// the handler panic; workerPanic makes the worker panic on its first key.
func clientGo(panicOn string, workerPanic bool) cachelabtest.Controller {
	return cachelabtest.Controller{
		Start: func(ctx context.Context, env *cachelabtest.Env) error {
			q := cachelabtest.RecordQueue(env, workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()))
			inf := env.Informers.Core().V1().ConfigMaps()
			if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc: func(obj any) {
					if cm := obj.(*corev1.ConfigMap); cm.Name == panicOn {
						panic("planted panic on " + cm.Name)
					}
					if k, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
						q.Add(k)
					}
				},
				UpdateFunc: func(_, obj any) {
					if k, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
						q.Add(k)
					}
				},
			}); err != nil {
				return err
			}
			env.Informers.Start(ctx.Done())
			lister := inf.Lister()
			go func() {
				<-ctx.Done()
				q.ShutDown()
			}()
			go wait.UntilWithContext(ctx, func(ctx context.Context) {
				for {
					key, shutdown := q.Get()
					if shutdown {
						return
					}
					if workerPanic {
						q.Done(key)
						panic("planted worker panic on " + key)
					}
					err := func() error {
						ns, name, _ := cache.SplitMetaNamespaceKey(key)
						if strings.HasSuffix(name, "-copy") {
							return nil
						}
						src, err := lister.ConfigMaps(ns).Get(name)
						if err != nil {
							return nil
						}
						cur, err := lister.ConfigMaps(ns).Get(name + "-copy")
						if apierrors.IsNotFound(err) {
							_, err = env.Kube.CoreV1().ConfigMaps(ns).Create(ctx, copyTo(src, nil), metav1.CreateOptions{})
							return err
						}
						if cur.Data["n"] == src.Data["n"] {
							return nil
						}
						_, err = env.Kube.CoreV1().ConfigMaps(ns).Update(ctx, copyTo(src, cur), metav1.UpdateOptions{})
						return err
					}()
					if err != nil {
						q.AddRateLimited(key)
					} else {
						q.Forget(key)
					}
					q.Done(key)
				}
			}, time.Second)
			return nil
		},
		Desired: mirrorDesired,
	}
}

// reconciler is a controller-runtime reconciler copying ConfigMaps;
// panicOn names a ConfigMap whose reconcile panics.
type reconciler struct {
	client.Client
	panicOn string
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.Name == r.panicOn {
		panic("planted reconcile panic on " + req.Name)
	}
	if strings.HasSuffix(req.Name, "-copy") {
		return ctrl.Result{}, nil
	}
	var src corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &src); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var cur corev1.ConfigMap
	err := r.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: req.Name + "-copy"}, &cur)
	if apierrors.IsNotFound(err) {
		return ctrl.Result{}, r.Create(ctx, copyTo(&src, nil))
	}
	if err != nil || cur.Data["n"] == src.Data["n"] {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.Update(ctx, copyTo(&src, &cur))
}

func controllerRuntime(panicOn string) cachelabtest.Controller {
	return cachelabtest.Controller{
		Setup: func(mgr ctrl.Manager) error {
			return ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("copy").
				Complete(&reconciler{Client: mgr.GetClient(), panicOn: panicOn})
		},
		Desired: mirrorDesired,
	}
}

// verdict returns the verdict named name among vs.
func verdict(vs []invariants.Verdict, name string) (invariants.Verdict, bool) {
	i := slices.IndexFunc(vs, func(v invariants.Verdict) bool { return v.Invariant == name })
	if i < 0 {
		return invariants.Verdict{}, false
	}
	return vs[i], true
}

// A client-go controller and a controller-runtime reconciler run under a
// plan with a crash and restart and pass: the recording wrappers wrote
// what the invariants need (handler calls, reconciles, caches), so the
// invariants that read them judge (no Unknown for want of records).
func TestCorrectControllersPassWithEveryRecordWritten(t *testing.T) {
	scratch(t)
	for name, c := range map[string]cachelabtest.Controller{"client-go": clientGo("", false), "controller-runtime": controllerRuntime("")} {
		t.Run(name, func(t *testing.T) {
			failures := cachelabtest.Catch(t, c, cachelabtest.These(plan("crash-restart")))
			for _, f := range failures {
				t.Errorf("a correct controller failed:\n%s", f.Report)
			}
			cachelabtest.Test(t, c, cachelabtest.These(plan("crash-restart")))
		})
	}
}

// A panic in an event handler, in a reconcile, or in a worker goroutine
// recovered by utilruntime.HandleCrash is a failed verdict that says where
// (the stack) and when, with the replay command; the test binary goes on
// to the next plan.
func TestAPanicIsAVerdictNotACrash(t *testing.T) {
	scratch(t)
	for name, tc := range map[string]struct {
		c     cachelabtest.Controller
		where string
	}{
		"handler":   {clientGo("a", false), "event handler OnAdd of configmaps default/a"},
		"worker":    {clientGo("", true), "utilruntime.HandleCrash"},
		"reconcile": {controllerRuntime("a"), "Reconcile of default/a"},
	} {
		t.Run(name, func(t *testing.T) {
			failures := cachelabtest.Catch(t, tc.c, cachelabtest.These(plan("one"), plan("two")))
			if len(failures) != 2 {
				t.Fatalf("%d failed plans, want both: the binary must go on after the first panic", len(failures))
			}
			f := failures[0]
			v, ok := verdict(f.Failed, lab.HealthNoPanics)
			if !ok || v.Status != invariants.Fail || !strings.Contains(v.Reason, tc.where) || !strings.Contains(v.Detail, "goroutine") || len(v.Positions) == 0 {
				t.Fatalf("no-panics verdict %+v, want a failure naming %q with its stack and trace position", v, tc.where)
			}
			if !strings.Contains(f.Report, "replay (from the module's root): go test ./cachelabtest -run") || !strings.Contains(f.Report, "t=") {
				t.Errorf("the report does not say when and how to replay:\n%s", f.Report)
			}
		})
	}
}

// A start that fails, and goroutines left running after the controller's
// context ends, fail the plan with a reason.
func TestAFailedStartAndLeakedGoroutinesAreVerdicts(t *testing.T) {
	scratch(t)
	bad := cachelabtest.Controller{Start: func(context.Context, *cachelabtest.Env) error { return errors.New("no config") }}
	failures := cachelabtest.Catch(t, bad, cachelabtest.These(plan("start")))
	if len(failures) != 1 || !strings.Contains(failures[0].Report, "no config") {
		t.Errorf("a failed start: %d failures, want one saying why", len(failures))
	}
	leaky := cachelabtest.Controller{Start: func(ctx context.Context, env *cachelabtest.Env) error {
		block := make(chan struct{})
		go func() { <-block }() // never returns: ignores ctx
		return nil
	}}
	failures = cachelabtest.Catch(t, leaky, cachelabtest.These(plan("leak")))
	if len(failures) != 1 || !strings.Contains(failures[0].Report, "blocked") {
		t.Errorf("leaked goroutines: %d failures, want one saying goroutines were left blocked", len(failures))
	}
}

// An informer of a resource the server does not serve never syncs: a
// failed verdict naming it, not a hang.
func TestAnInformerThatNeverSyncsIsAVerdict(t *testing.T) {
	scratch(t)
	c := cachelabtest.Controller{Start: func(ctx context.Context, env *cachelabtest.Env) error {
		gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
		if _, err := env.DynamicInformers.ForResource(gvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{}); err != nil {
			return err
		}
		env.DynamicInformers.Start(ctx.Done())
		return nil
	}}
	p := plan("unserved")
	p.Steps = nil
	failures := cachelabtest.Catch(t, c, cachelabtest.These(p))
	if len(failures) != 1 {
		t.Fatalf("%d failures, want 1", len(failures))
	}
	if v, ok := verdict(failures[0].Failed, lab.HealthSynced); !ok || !strings.Contains(v.Reason, "widgets.example.com") || !strings.Contains(v.Reason, "404 NotFound") {
		t.Errorf("informers-synced verdict %+v, want a failure naming widgets.example.com and why (404 NotFound)", v)
	}
}

// The replay command a failure prints runs that plan, and only it: the
// saved plan file through -cachelab.plan.
func TestTheReplayCommandRunsTheSavedPlan(t *testing.T) {
	scratch(t)
	bad := clientGo("a", false)
	failures := cachelabtest.Catch(t, bad, cachelabtest.These(plan("first")))
	if len(failures) != 1 {
		t.Fatalf("%d failures, want 1", len(failures))
	}
	_, path, ok := strings.Cut(failures[0].ReplayCommand, "-cachelab.plan=")
	if !ok || !strings.HasPrefix(failures[0].ReplayCommand, "go test ./cachelabtest -run '^"+t.Name()+"$'") {
		t.Fatalf("replay command %q does not run this test with the saved plan", failures[0].ReplayCommand)
	}
	if err := flag.Set("cachelab.plan", path); err != nil {
		t.Fatal(err)
	}
	defer flag.Set("cachelab.plan", "")
	// Given other plans, the replay runs the saved one only.
	again := cachelabtest.Catch(t, bad, cachelabtest.These(plan("other1"), plan("other2")))
	if len(again) != 1 || again[0].Plan.Name != "first" {
		t.Fatalf("replay: %d failures (%v), want the saved plan's only", len(again), again)
	}
}

// A controller that loops on requests while the clock stands still ends
// with a livelock verdict naming the loop, not a hang.
func TestALivelockIsAVerdict(t *testing.T) {
	scratch(t)
	loop := cachelabtest.Controller{Start: func(ctx context.Context, env *cachelabtest.Env) error {
		go func() {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "spin"}}
			for ctx.Err() == nil {
				_, _ = env.Kube.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
				_ = env.Kube.CoreV1().ConfigMaps("default").Delete(ctx, "spin", metav1.DeleteOptions{})
			}
		}()
		return nil
	}}
	p := plan("spin")
	p.Steps = nil
	failures := cachelabtest.Catch(t, loop, cachelabtest.These(p))
	if len(failures) != 1 || !strings.Contains(failures[0].Report, "livelock") || !strings.Contains(failures[0].Report, "configmaps/default/spin") {
		t.Fatalf("%d failures, want one livelock naming configmaps/default/spin: %v", len(failures), failures)
	}
}

// A crash in the middle of a reconcile (the plan's mid-reconcile crash,
// which freezes the reconciling goroutine at its recorded start) works on
// both kinds of controller: it fires in a reconcile, the run ends, and the
// restarted process reconciles again.
func TestAMidReconcileCrashWorksOnBothKinds(t *testing.T) {
	scratch(t)
	p := plan("mid-reconcile")
	crash := p.Steps[1]
	crash.MidReconcile, crash.At = true, p.Steps[0].At
	p.Steps = []sim.Step{crash, p.Steps[0], p.Steps[2], p.Steps[3]} // armed before the patch's reconcile
	for name, c := range map[string]cachelabtest.Controller{"client-go": clientGo("", false), "controller-runtime": controllerRuntime("")} {
		t.Run(name, func(t *testing.T) {
			// A predicate that never holds makes the plan fail, so that
			// its trace is written and read here.
			c.Desired = func(*cachelabtest.State) error { return errors.New("read the trace") }
			failures := cachelabtest.Catch(t, c, cachelabtest.These(p))
			if len(failures) != 1 {
				t.Fatalf("%d failures, want the one the predicate makes", len(failures))
			}
			tr, err := sim.ReadTraceFile(strings.TrimSuffix(failures[0].ReportPath, lab.ReportFile) + lab.TraceFile)
			if err != nil {
				t.Fatal(err)
			}
			crashed, after := -1, 0
			for _, r := range tr.Records {
				switch {
				case r.Kind == sim.RecCrash && strings.Contains(r.Detail, "mid-reconcile") && !strings.Contains(r.Detail, "no reconcile started"):
					crashed = r.Pos
				case r.Kind == sim.RecReconcile && r.Op == "end" && crashed >= 0:
					after++
				}
			}
			if crashed < 0 || after == 0 {
				t.Errorf("crash in a reconcile at position %d, %d reconciles after it; want a crash and reconciles after the restart", crashed, after)
			}
		})
	}
}
