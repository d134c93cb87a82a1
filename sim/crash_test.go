package sim_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/simtest"
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

func TestSameInstantStepsSeeTheSubjectsImmediateReactionsToEarlierOnes(t *testing.T) {
	// A clean close makes the reflector re-watch at once (no virtual time
	// passes). The fail-next step at the same instant comes after the
	// disconnect in the list, so it is armed after the re-watch, as it
	// would be one nanosecond later: it must not hit the re-watch. Before
	// the fix, the main goroutine played both steps back to back and the
	// re-watch raced the arming.
	for range 20 {
		tr := run(t, plan(
			sim.Step{At: at(2 * time.Second), Actor: "faults", Op: "disconnect", Resource: "configmaps"},
			sim.Step{At: at(2 * time.Second), Actor: "faults", Op: "fail-next", Code: 500, Verb: "watch", Target: simtest.Name},
		))
		opens := find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWatchOpen && r.Actor == simtest.Name })
		if len(opens) != 2 || opens[1].At.D() != 2*time.Second {
			t.Fatalf("watch opens %+v, want the first and a re-watch at 2s", opens)
		}
		armed := only(t, "fail-next step", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecStep && r.Op == "fail-next" }))
		if opens[1].Pos > armed.Pos {
			t.Fatalf("the re-watch (#%d) came after the fail-next step (#%d) played at the same instant", opens[1].Pos, armed.Pos)
		}
		if f := faultsNamed(tr, "fail-next-500"); len(f) != 0 {
			t.Fatalf("fail-next hit %+v, want no later watch to hit", f)
		}
	}
}
