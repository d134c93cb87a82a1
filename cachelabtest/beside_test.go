package cachelabtest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/sim"
)

// helperLog is what a helper actor saw: when it started, whether its
// write at 2.5 s (between the plan's crash at 2 s and restart at 3 s)
// went through, when its context ended, and that its goroutine returned.
type helperLog struct {
	mu                  sync.Mutex
	calls               int
	writeErr            error
	wrote, ended        time.Duration
	returned, cancelled bool
}

// helper returns a start func for a helper actor that writes ConfigMap
// "helper" at 2.5 s and logs to l.
func helper(l *helperLog) func(ctx context.Context, env *Env) error {
	return func(ctx context.Context, env *Env) error {
		l.mu.Lock()
		l.calls++
		l.mu.Unlock()
		rec := env.Sim.Rec
		go func() {
			defer func() {
				l.mu.Lock()
				l.returned = true
				l.mu.Unlock()
			}()
			select {
			case <-ctx.Done():
				l.mu.Lock()
				l.cancelled, l.ended = true, rec.Now()
				l.mu.Unlock()
				return
			case <-time.After(2500*time.Millisecond - rec.Now()):
			}
			_, err := env.Kube.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "helper"}}, metav1.CreateOptions{})
			l.mu.Lock()
			l.writeErr, l.wrote = err, rec.Now()
			l.mu.Unlock()
			<-ctx.Done()
			l.mu.Lock()
			l.cancelled, l.ended = true, rec.Now()
			l.mu.Unlock()
		}()
		return nil
	}
}

// crashPlan: ConfigMap "a"; the controller crashes at 2 s and restarts at
// 3 s; the user patches "a" at 4 s.
func crashPlan() *sim.Plan {
	s := func(ms int) sim.Duration { return sim.Duration(time.Duration(ms) * time.Millisecond) }
	return &sim.Plan{
		Version: sim.PlanVersion, Name: "crash", Seed: 1,
		Objects: []json.RawMessage{json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"n":"0"}}`)},
		Steps: []sim.Step{
			{At: s(2000), Actor: "controller", Op: "crash"},
			{At: s(3000), Actor: "controller", Op: "restart"},
			{At: s(4000), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "a", Patch: json.RawMessage(`{"data":{"n":"1"}}`)},
		},
		Deadline: sim.Duration(2 * time.Minute), Quiet: sim.Duration(20 * time.Second),
	}
}

// runOnce registers c as subject name and runs p once, judged.
func runOnce(t *testing.T, name string, c Controller, p *sim.Plan) (*lab.Result, *sim.Trace) {
	t.Helper()
	c.Name = name
	if err := sim.ReplaceSubject(c.subjectInfo("a lab test's controller")); err != nil {
		t.Fatal(err)
	}
	p = p.Clone()
	p.Subject = name
	r := &lab.Result{Job: lab.NewJob(p, nil)}
	tr, err := lab.RunPlan(t, p)
	lab.Judge(r, tr, err)
	return r, tr
}

// TestBesideRunsThroughACrashStepAndStopsAtTheRunsEnd: a helper started
// by Controller.Beside is started once for the run, writes between the
// controller's crash and its restart (on a client of its own, which the
// crash does not cut), and its context ends with the run, after the last
// step, its goroutine returned. The same helper started from the
// controller's Start is cut by the crash: its context ends at 2 s and its
// write never happens.
func TestBesideRunsThroughACrashStepAndStopsAtTheRunsEnd(t *testing.T) {
	beside := &helperLog{}
	c := mirror(false)
	c.Beside = helper(beside)
	r, tr := runOnce(t, "beside-crash", c, crashPlan())
	if r.Err != nil {
		t.Fatalf("run: %v", r.Err)
	}
	if beside.calls != 1 {
		t.Errorf("Beside called %d times in a run with a crash and a restart, want once", beside.calls)
	}
	if beside.writeErr != nil || beside.wrote != 2500*time.Millisecond {
		t.Errorf("Beside's write between crash and restart: at %s, %v; want at 2.5s, no error", beside.wrote, beside.writeErr)
	}
	if !beside.cancelled || beside.ended < 4*time.Second || !beside.returned {
		t.Errorf("Beside's context ended (%v) at %s, goroutine returned %v; want ended at the run's end (after the last step at 4s), returned", beside.cancelled, beside.ended, beside.returned)
	}
	if got := writer(tr, "configmaps", "helper"); got != sim.ClientBeside {
		t.Errorf("ConfigMap helper written by %q, want %q", got, sim.ClientBeside)
	}
	for _, v := range r.Verdicts {
		if v.Status == "fail" {
			t.Errorf("%s failed with a helper beside: %s", v.Invariant, v.Reason)
		}
	}

	inside := &helperLog{}
	c = mirror(false)
	start := c.Start
	c.Start = func(ctx context.Context, env *Env) error {
		if inside.calls == 0 {
			if err := helper(inside)(ctx, env); err != nil {
				return err
			}
		}
		return start(ctx, env)
	}
	if r, _ := runOnce(t, "beside-in-process", c, crashPlan()); r.Err != nil {
		t.Fatalf("run: %v", r.Err)
	}
	if !inside.cancelled || inside.ended != 2*time.Second || inside.wrote != 0 {
		t.Errorf("a helper started from Start: context ended (%v) at %s, wrote at %s; want ended by the crash at 2s, no write", inside.cancelled, inside.ended, inside.wrote)
	}
}

// writer returns the actor of the first write to object name of resource
// in tr.
func writer(tr *sim.Trace, resource, name string) string {
	for _, rec := range tr.Records {
		if rec.Kind == sim.RecWrite && rec.Resource == resource && rec.Name == name && rec.Verb == "create" {
			return rec.Actor
		}
	}
	return ""
}

// TestBesideErrorFailsTheRun: a Beside that returns an error is a failed
// run, the error named, never a pass.
func TestBesideErrorFailsTheRun(t *testing.T) {
	c := mirror(false)
	c.Beside = func(context.Context, *Env) error { return errors.New("no cluster today") }
	r, _ := runOnce(t, "beside-error", c, crashPlan())
	if r.Err == nil || !strings.Contains(r.Err.Error(), "Beside: no cluster today") {
		t.Fatalf("run error %v, want Beside's error", r.Err)
	}
}

// TestExternalGCLeavesDependentsToBeside: with Controller.ExternalGC a
// user's delete of an owner leaves its dependent (no collector runs in
// this Beside); without, the server deletes it in the same write. And
// ExternalGC without a Beside is a run error saying what to do.
func TestExternalGCLeavesDependentsToBeside(t *testing.T) {
	owner := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owner","namespace":"default"}}`
	dep := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dep","namespace":"default","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"%s"}]}}`
	p := &sim.Plan{
		Version: sim.PlanVersion, Name: "gc", Seed: 1,
		Objects: []json.RawMessage{json.RawMessage(owner)},
		Steps: []sim.Step{
			{At: sim.Duration(time.Second), Actor: "user", Op: "delete", Resource: "configmaps", Namespace: "default", Name: "owner"},
		},
		Deadline: sim.Duration(time.Minute), Quiet: sim.Duration(5 * time.Second),
	}
	for _, external := range []bool{false, true} {
		c := Controller{Start: func(ctx context.Context, env *Env) error { return nil }, ExternalGC: external}
		c.Beside = func(ctx context.Context, env *Env) error {
			// The dependent names the owner by the UID the server gave it.
			o, err := env.Kube.CoreV1().ConfigMaps("default").Get(ctx, "owner", metav1.GetOptions{})
			if err != nil {
				return err
			}
			var cm corev1.ConfigMap
			if err := json.Unmarshal([]byte(strings.Replace(dep, "%s", string(o.UID), 1)), &cm); err != nil {
				return err
			}
			_, err = env.Kube.CoreV1().ConfigMaps("default").Create(ctx, &cm, metav1.CreateOptions{})
			return err
		}
		r, tr := runOnce(t, "external-gc", c, p)
		if r.Err != nil {
			t.Fatalf("ExternalGC %v: run: %v", external, r.Err)
		}
		kept := false
		for _, rec := range tr.Records {
			if rec.Kind == sim.RecFinal {
				for _, o := range rec.Objects {
					kept = kept || o.Name == "dep"
				}
			}
		}
		if kept != external {
			t.Errorf("ExternalGC %v: dependent kept at the end = %v, want %v", external, kept, external)
		}
	}
	c := Controller{Start: func(ctx context.Context, env *Env) error { return nil }, ExternalGC: true}
	r, _ := runOnce(t, "external-gc-alone", c, p)
	if r.Err == nil || !strings.Contains(r.Err.Error(), "ExternalGC") || !strings.Contains(r.Err.Error(), "Beside is nil") {
		t.Errorf("ExternalGC without Beside: run error %v, want one naming both", r.Err)
	}
}
