package cachelabtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// mirror is a client-go controller that keeps, for every ConfigMap not
// named "*-copy", a ConfigMap "<name>-copy" owned by it with its data.
// With countUpdates it also writes into the copy how many updates of the
// source this process saw (an edge-triggered counter kept in memory): a
// crash resets it, so a faulted run ends with another count than the
// fault-free one, and no Desired predicate is needed to tell.
func mirror(countUpdates bool) Controller { return mirrorOpts(countUpdates, false) }

// mirrorOpts is mirror; with randomLabel, it also labels each copy it
// creates with a random 5-character value (as KubeRay names a worker
// group replica), kept on later updates: a value two fault-free runs draw
// differently.
func mirrorOpts(countUpdates, randomLabel bool) Controller {
	return Controller{Start: func(ctx context.Context, env *Env) error {
		q := RecordQueue(env, workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()))
		var updates counter
		inf := env.Informers.Core().V1().ConfigMaps()
		enqueue := func(obj any) {
			if k, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				q.Add(k)
			}
		}
		if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: enqueue,
			UpdateFunc: func(old, obj any) {
				if o, n := old.(*corev1.ConfigMap), obj.(*corev1.ConfigMap); o.Data["n"] != n.Data["n"] && !strings.HasSuffix(n.Name, "-copy") {
					updates.add(n.Namespace + "/" + n.Name)
				}
				enqueue(obj)
			},
			DeleteFunc: func(obj any) {
				if k, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
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
		reconcile := func(ctx context.Context, key string) error {
			ns, name, _ := cache.SplitMetaNamespaceKey(key)
			if strings.HasSuffix(name, "-copy") {
				if src, err := lister.ConfigMaps(ns).Get(strings.TrimSuffix(name, "-copy")); err == nil {
					q.Add(ns + "/" + src.Name)
				}
				return nil
			}
			src, err := lister.ConfigMaps(ns).Get(name)
			if apierrors.IsNotFound(err) {
				return nil
			} else if err != nil {
				return err
			}
			want := map[string]string{"n": src.Data["n"]}
			if countUpdates {
				want["updates"] = strconv.Itoa(updates.get(key))
			}
			cur, err := lister.ConfigMaps(ns).Get(name + "-copy")
			if apierrors.IsNotFound(err) {
				cp := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-copy",
					OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(src, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}},
					Data: want}
				if randomLabel {
					cp.Labels = map[string]string{"replica": utilrand.String(5)}
				}
				_, err = env.Kube.CoreV1().ConfigMaps(ns).Create(ctx, cp, metav1.CreateOptions{})
				return err
			} else if err != nil {
				return err
			}
			if fmt.Sprint(cur.Data) == fmt.Sprint(want) {
				return nil
			}
			cp := cur.DeepCopy()
			cp.Data = want
			_, err = env.Kube.CoreV1().ConfigMaps(ns).Update(ctx, cp, metav1.UpdateOptions{})
			return err
		}
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for {
				key, shutdown := q.Get()
				if shutdown {
					return
				}
				if err := reconcile(ctx, key); err != nil {
					q.AddRateLimited(key)
				} else {
					q.Forget(key)
				}
				q.Done(key)
			}
		}, time.Second)
		return nil
	}}
}

// counter counts per key, for handlers and a worker.
type counter struct {
	mu sync.Mutex
	m  map[string]int
}

func (c *counter) add(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]int{}
	}
	c.m[k]++
}

func (c *counter) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

// faultedPlan: "a" exists; the user changes it at 1s and 6s; the
// controller crashes at 3s and restarts at 4s; the watch of ConfigMaps is
// held from 5s for 2s.
func faultedPlan() *sim.Plan {
	s := func(at int) sim.Duration { return sim.Duration(time.Duration(at) * time.Second) }
	patch := func(at int, v string) sim.Step {
		return sim.Step{At: s(at), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "a",
			Patch: json.RawMessage(`{"data":{"n":"` + v + `"}}`)}
	}
	return &sim.Plan{
		Version: sim.PlanVersion, Name: "faulted", Seed: 7,
		Objects: []json.RawMessage{json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"n":"0"}}`)},
		Steps: []sim.Step{
			patch(1, "1"),
			{At: s(3), Actor: "controller", Op: "crash"},
			{At: s(4), Actor: "controller", Op: "restart"},
			{At: s(5), Actor: "faults", Op: "hold", Resource: "configmaps", For: s(2)},
			patch(6, "2"),
		},
		Deadline: sim.Duration(2 * time.Minute), Quiet: sim.Duration(20 * time.Second),
	}
}

func TestReferencePlanDropsFaultsAndKeepsUserActions(t *testing.T) {
	p := faultedPlan()
	p.Faults = sim.FaultPolicy{ErrorRate: 0.2, Latency: sim.Distribution{Kind: "fixed", Max: sim.Duration(time.Millisecond)},
		RequestLatency: sim.Distribution{Kind: "fixed", Max: sim.Duration(time.Millisecond)}}
	p.ShuffleSchedule = 3
	ref, faulty := lab.ReferencePlan(p)
	if !faulty {
		t.Fatal("a plan with a crash, a hold and request errors has faults")
	}
	var ops []string
	for _, s := range ref.Steps {
		ops = append(ops, s.Actor+":"+s.Op)
	}
	if got := strings.Join(ops, " "); got != "user:patch user:patch" {
		t.Errorf("reference steps %q, want the user's two patches", got)
	}
	if ref.Faults.ErrorRate != 0 || ref.ShuffleSchedule != 0 || ref.Faults.Latency != p.Faults.Latency || ref.Faults.RequestLatency != p.Faults.RequestLatency {
		t.Errorf("reference faults %+v (shuffle %d): want no error rate, no shuffle, the same latencies", ref.Faults, ref.ShuffleSchedule)
	}
	if len(p.Steps) != 5 {
		t.Errorf("ReferencePlan changed its input: %d steps", len(p.Steps))
	}
	if _, faulty := lab.ReferencePlan(ref); faulty {
		t.Error("a reference plan has no fault: it is its own reference")
	}
}

// referenceVerdict runs p with c and returns its matches-reference
// verdict, as Test judges it.
func referenceVerdict(t *testing.T, name string, c Controller, p *sim.Plan) invariants.Verdict {
	t.Helper()
	c.Name = name
	if err := sim.ReplaceSubject(sim.SubjectInfo{Name: name, New: func() sim.Subject { return newSubject(c) }}); err != nil {
		t.Fatal(err)
	}
	p = p.Clone()
	p.Subject = name
	r := &lab.Result{Job: lab.NewJob(p, nil)}
	tr, err := lab.RunPlan(t, p)
	lab.Judge(r, tr, err)
	rep := &reporter{}
	rep.judgeReference(r, func(p *sim.Plan) (*sim.Trace, error) { return lab.RunPlan(t, p) })
	for _, v := range r.Verdicts {
		if v.Invariant == invariants.NameMatchesReference {
			return v
		}
	}
	t.Fatalf("no %s verdict (run error: %v)", invariants.NameMatchesReference, r.Err)
	return invariants.Verdict{}
}

func TestMatchesReferencePassesALevelBasedController(t *testing.T) {
	v := referenceVerdict(t, "mirror", mirror(false), faultedPlan())
	if v.Status != invariants.Pass {
		t.Fatalf("%s: %s: %s\n%s", v.Invariant, v.Status, v.Reason, v.Detail)
	}
	if !strings.Contains(v.Reason, "2 objects") {
		t.Errorf("reason %q: want ConfigMap a and its copy judged", v.Reason)
	}
}

func TestMatchesReferenceFailsAControllerWhoseEndStateDependsOnTheFaults(t *testing.T) {
	v := referenceVerdict(t, "mirror-counting", mirror(true), faultedPlan())
	if v.Status != invariants.Fail {
		t.Fatalf("%s: %s: %s, want fail", v.Invariant, v.Status, v.Reason)
	}
	for _, want := range []string{"configmaps/default/a-copy", `"updates"`, `- `, `+ `} {
		if !strings.Contains(v.Reason+v.Detail, want) {
			t.Errorf("verdict lacks %q:\n%s\n%s", want, v.Reason, v.Detail)
		}
	}
	t.Logf("%s\n%s", v.Reason, v.Detail)
}

// A value the controller draws at random differs between two fault-free
// runs: it is left out, and named, not blamed on the faults.
func TestMatchesReferenceLeavesOutWhatDiffersBetweenTwoFaultFreeRuns(t *testing.T) {
	v := referenceVerdict(t, "mirror-random", mirrorOpts(false, true), faultedPlan())
	if v.Status != invariants.Pass {
		t.Fatalf("%s: %s: %s\n%s", v.Invariant, v.Status, v.Reason, v.Detail)
	}
	want := "left out: differs between two fault-free runs: configmaps/default/a-copy metadata.labels.replica"
	if !strings.Contains(v.Reason, want) {
		t.Errorf("reason %q: want %q", v.Reason, want)
	}
}

// Leaving out the random label leaves the rest judged: a count that
// depends on the faults still fails.
func TestMatchesReferenceStillFailsALostUpdateNextToARandomValue(t *testing.T) {
	v := referenceVerdict(t, "mirror-random-counting", mirrorOpts(true, true), faultedPlan())
	if v.Status != invariants.Fail {
		t.Fatalf("%s: %s: %s, want fail", v.Invariant, v.Status, v.Reason)
	}
	if !strings.Contains(v.Detail, `"updates"`) || strings.Contains(v.Detail, `"replica"`) {
		t.Errorf("diff should show updates and not the random label:\n%s", v.Detail)
	}
}

// Through the user's API: Catch reports the verdict with its diff, and a
// controller with no Desired predicate is judged.
func TestCatchReportsMatchesReferenceWithNoDesired(t *testing.T) {
	t.Chdir(t.TempDir())
	failures := Catch(t, mirror(true), These(faultedPlan()))
	if len(failures) != 1 {
		t.Fatalf("%d failures, want 1", len(failures))
	}
	var names []string
	for _, v := range failures[0].Failed {
		names = append(names, v.Invariant)
	}
	if !strings.Contains(strings.Join(names, " "), invariants.NameMatchesReference) {
		t.Errorf("failed %v, want %s among them", names, invariants.NameMatchesReference)
	}
	if f := Catch(t, mirror(false), These(faultedPlan())); len(f) != 0 {
		t.Errorf("the level-based mirror failed: %s", f[0].Report)
	}
}

// A matches-reference failure writes the fault-free reference run beside
// the failing one (its plan, trace and report), and names it: the two runs
// are what a user reads side by side. A failure of anything else writes no
// reference run.
func TestAMatchesReferenceFailureWritesTheReferenceRun(t *testing.T) {
	t.Chdir(t.TempDir())
	failures := Catch(t, mirror(true), These(faultedPlan()))
	if len(failures) != 1 {
		t.Fatalf("%d failures, want 1", len(failures))
	}
	dir := filepath.Join(filepath.Dir(failures[0].ReportPath), ReferenceDir)
	if !strings.Contains(failures[0].Report, "reference run (the same user actions, no fault): "+filepath.Join(dir, lab.ReportFile)) {
		t.Errorf("the failure does not name the reference run's report:\n%s", failures[0].Report)
	}
	plan, err := sim.LoadPlanFile(filepath.Join(dir, lab.PlanFile))
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := lab.ReferencePlan(failures[0].Plan); len(plan.Steps) != len(want.Steps) {
		t.Errorf("reference/plan.json has %d steps, want the reference plan's %d", len(plan.Steps), len(want.Steps))
	}
	for _, f := range []string{lab.TraceFile, lab.ReportFile, lab.VerdictsFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("reference run: %v", err)
		}
	}

	// A failure of another invariant: no reference folder.
	never := mirror(false)
	never.Desired = func(*State) error { return errors.New("never") }
	failures = Catch(t, never, These(faultedPlan()))
	if len(failures) != 1 {
		t.Fatalf("%d failures of a controller whose Desired never holds, want 1", len(failures))
	}
	for _, v := range failures[0].Failed {
		if v.Invariant == invariants.NameMatchesReference {
			t.Fatalf("the level-based mirror failed matches-reference: %s", v.Reason)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(failures[0].ReportPath), ReferenceDir)); err == nil || strings.Contains(failures[0].Report, "reference run (") {
		t.Errorf("a failure without matches-reference wrote a reference run:\n%s", failures[0].Report)
	}
}

// A user's scenario file (no title, edge, expectations or subject) runs
// through Files with the controller under test.
func TestFilesRunsAUsersScenarioFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	src := `scenario mine
# ConfigMap a changes while the controller is down, and again after.
object {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default}, data: {n: "0"}}
at 1s user patch configmaps default/a {data: {n: "1"}}
at 2s controller crash
at 3s user patch configmaps default/a {data: {n: "2"}}
at 4s controller restart
at 5s user patch configmaps default/a {data: {n: "3"}}
`
	if err := os.WriteFile("mine.txt", []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := Catch(t, mirror(false), Files("mine.txt")); len(f) != 0 {
		t.Errorf("the level-based mirror failed the user's scenario: %s", f[0].Report)
	}
	f := Catch(t, mirror(true), Files("mine.txt"))
	if len(f) != 1 || f[0].Plan.Name != "mine" || !strings.Contains(f[0].Report, invariants.NameMatchesReference) {
		t.Fatalf("want the counting mirror to fail the user's scenario on %s, got %d failures", invariants.NameMatchesReference, len(f))
	}
}

// heldPlan: the controller's ConfigMap watch is held from 0.5s for 3s;
// the user creates "a" at 1s; at 2s step is played.
func heldPlan(step sim.Step) *sim.Plan {
	s := func(ms int) sim.Duration { return sim.Duration(time.Duration(ms) * time.Millisecond) }
	step.At = s(2000)
	return &sim.Plan{
		Version: sim.PlanVersion, Name: "held", Seed: 3,
		Steps: []sim.Step{
			{At: s(500), Actor: "faults", Op: "hold", Resource: "configmaps", For: s(3000)},
			{At: s(1000), Actor: "user", Op: "create", Object: json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"n":"1"}}`)},
			step,
		},
		Deadline: sim.Duration(2 * time.Minute), Quiet: sim.Duration(20 * time.Second),
	}
}

// A competitor labels a-copy at 2s: in the faulted run the held watch has
// kept the controller from making it yet, the patch finds nothing, and
// the reference leaves the patch out too.
func TestReferenceLeavesOutTheStepsThatFailedInTheRun(t *testing.T) {
	p := heldPlan(sim.Step{Actor: "competitor", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "a-copy",
		Patch: json.RawMessage(`{"metadata":{"labels":{"owner":"competitor"}}}`)})
	v := referenceVerdict(t, "mirror-held", mirror(false), p)
	if v.Status != invariants.Pass {
		t.Fatalf("%s: %s: %s\n%s", v.Invariant, v.Status, v.Reason, v.Detail)
	}
}

// The user creates a-copy at 2s: the fault-free reference's controller
// made it already (409), the faulted run's had not. The runs did different
// things: Unknown, naming the step, not a failure of the controller.
func TestReferenceIsUnknownWhenItCouldNotDoWhatTheRunDid(t *testing.T) {
	p := heldPlan(sim.Step{Actor: "user", Op: "create",
		Object: json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a-copy","namespace":"default"},"data":{"n":"1"}}`)})
	v := referenceVerdict(t, "mirror-held-create", mirror(false), p)
	if v.Status != invariants.Unknown || !strings.Contains(v.Reason, "user create") || !strings.Contains(v.Reason, "already exists") {
		t.Fatalf("%s: %s: %s, want unknown naming the user's create and its 409", v.Invariant, v.Status, v.Reason)
	}
}

// A reference run that does not reach the controller's own Desired is no
// yardstick: here the controller makes its copies only from its second
// start on, so the fault-free run (no crash, no restart) never converges
// while the faulted one does. matches-reference says it could not judge,
// naming the reference's failure, rather than failing the faulted run
// against a stuck reference.
func TestMatchesReferenceIsUnknownWhenTheReferenceMissesDesired(t *testing.T) {
	var starts sync.Map // starts per run (its recorder), across restarts
	inner := mirror(false)
	c := Controller{
		Start: func(ctx context.Context, env *Env) error {
			n, _ := starts.LoadOrStore(env.Sim.Rec, new(int))
			*n.(*int)++
			if *n.(*int) == 1 {
				return nil // the first process does nothing
			}
			return inner.Start(ctx, env)
		},
		Desired: func(s *State) error {
			for _, cm := range List[corev1.ConfigMap](s, "") {
				if !strings.HasSuffix(cm.Name, "-copy") {
					if _, ok := Get[corev1.ConfigMap](s, cm.Namespace, cm.Name+"-copy"); !ok {
						return fmt.Errorf("%s has no copy", cm.Name)
					}
				}
			}
			return nil
		},
	}
	v := referenceVerdict(t, "mirror-second-start", c, faultedPlan())
	if v.Status != invariants.Unknown || !strings.Contains(v.Reason, "reference run did not reach the desired state") || !strings.Contains(v.Reason, "a has no copy") {
		t.Fatalf("%s: %s: %s, want unknown naming the reference's unmet Desired", v.Invariant, v.Status, v.Reason)
	}
}
