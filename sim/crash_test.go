package sim_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cachelab/cachelab/sim"
)

// slowReconciler is a subject whose one reconcile, at 2s, goes on after
// its start record as a real reconcile may: it sleeps a second (a
// retry-on-conflict backoff, which ignores the context), then records its
// end. Its worker runs in a WaitGroup that Start's own goroutine waits
// for, as sample-controller's Run does.
type slowReconciler struct{}

func (slowReconciler) Start(ctx context.Context, env sim.Env) error {
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-time.After(2 * time.Second):
		case <-ctx.Done():
			return
		}
		env.Rec.Record(sim.Record{Kind: sim.RecReconcile, Op: "start", Key: "default/a"})
		time.Sleep(time.Second)
		env.Rec.Record(sim.Record{Kind: sim.RecReconcile, Op: "end", Key: "default/a", Result: "ok"})
	})
	go func() {
		<-ctx.Done()
		wg.Wait()
	}()
	return nil
}

func init() {
	sim.RegisterSubject(sim.SubjectInfo{Name: "sim-test/slow-reconcile", Summary: "one reconcile that sleeps after its start (sim tests only)",
		New: func() sim.Subject { return slowReconciler{} }})
}

func TestMidReconcileCrashEndsTheFrozenReconcileWithTheRun(t *testing.T) {
	p := plan(sim.Step{At: at(time.Second), Actor: "controller", Op: "crash", MidReconcile: true})
	p.Subject = "sim-test/slow-reconcile"
	var tr *sim.Trace
	var err error
	func() {
		// Before the fix, the frozen reconcile resumed when the run ended,
		// slept after the bubble's main goroutine had returned, and
		// synctest panicked: "deadlock: main bubble goroutine has exited
		// but blocked goroutines remain".
		defer func() {
			if x := recover(); x != nil {
				t.Fatalf("the run's bubble failed: %v", x)
			}
		}()
		synctest.Test(t, func(t *testing.T) { tr, err = sim.RunInBubble(t.Context(), p) })
	}()
	if err != nil {
		t.Fatal(err)
	}
	c := only(t, "crash", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecCrash }))
	if c.At.D() != 2*time.Second {
		t.Errorf("crash at %v, want 2s (the reconcile's start)", c.At)
	}
	if ends := find(tr, func(r sim.Record) bool { return r.Kind == sim.RecReconcile && r.Op == "end" }); len(ends) != 0 {
		t.Errorf("the crashed reconcile recorded its end: %+v", ends)
	}
	if tr.Outcome != "quiet" {
		t.Errorf("outcome %q, want quiet", tr.Outcome)
	}
}
