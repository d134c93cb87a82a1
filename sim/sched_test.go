package sim_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/sim"
)

// looper is a subject that creates and deletes one ConfigMap in a loop with
// no delay: with requests answered at the instant asked, its loop stops the
// virtual clock.
type looper struct{}

func (looper) Start(ctx context.Context, env sim.Env) error {
	go func() {
		for ctx.Err() == nil {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "default"}}
			_, _ = env.Kube.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
			_ = env.Kube.CoreV1().ConfigMaps("default").Delete(ctx, "x", metav1.DeleteOptions{})
		}
	}()
	return nil
}

// syncingStarter is a subject whose Start waits until its informer has
// synced, as sample-controller's Run does, before it returns.
type syncingStarter struct{}

func (syncingStarter) Start(ctx context.Context, env sim.Env) error {
	lw := env.ListerWatcher(corev1.SchemeGroupVersion.WithResource("configmaps"), "").(cache.ListerWatcher)
	inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
	go inf.RunWithContext(ctx)
	if !cache.WaitFor(ctx, "configmaps", inf.HasSyncedChecker()) {
		return ctx.Err()
	}
	env.Rec.Record(sim.Record{Kind: sim.RecNote, Detail: "synced in Start"})
	return nil
}

var registerTestSubjects = sync.OnceFunc(func() {
	sim.RegisterSubject(sim.SubjectInfo{Name: "test/looper", Summary: "creates and deletes one ConfigMap in a loop", New: func() sim.Subject { return looper{} }})
	sim.RegisterSubject(sim.SubjectInfo{Name: "test/syncing-start", Summary: "waits for sync in Start", New: func() sim.Subject { return syncingStarter{} }})
})

func TestALivelockEndsTheRunWithAVerdictNamingTheLoop(t *testing.T) {
	registerTestSubjects()
	p := &sim.Plan{Version: 1, Seed: 1, Subject: "test/looper", Steps: []sim.Step{}, LivelockAfter: 500}
	tr := run(t, p)
	if !strings.HasPrefix(tr.Outcome, "livelock: ") {
		t.Fatalf("outcome %q, want a livelock", tr.Outcome)
	}
	for _, want := range []string{"at t=0s", "test/looper: create configmaps/default", "test/looper: create configmaps/default/x 500 times"} {
		if !strings.Contains(tr.Outcome, want) {
			t.Errorf("outcome %q does not say %q", tr.Outcome, want)
		}
	}
	if tr.End != 0 {
		t.Errorf("the run ended at %s; a livelock at 0s should end it there", tr.End)
	}
}

// A run whose trace outgrows its record budget (a controller looping on
// requests for minutes: about 6 records per millisecond) stops there with
// a "budget" outcome, and its trace stays within the bound whatever the
// plan would have gone on to do: what keeps a campaign's memory bounded.
func TestARunOverItsRecordBudgetStopsWithABudgetOutcome(t *testing.T) {
	registerTestSubjects()
	p := &sim.Plan{Version: 1, Seed: 1, Subject: "test/looper", Steps: []sim.Step{}, Deadline: at(5 * time.Minute), MaxRecords: 1000,
		Faults: sim.FaultPolicy{RequestLatency: sim.Distribution{Kind: "fixed", Max: at(time.Millisecond)}}}
	tr := run(t, p)
	if !strings.HasPrefix(tr.Outcome, "budget: ") || !strings.Contains(tr.Outcome, "1000 records") {
		t.Fatalf("outcome %q, want a budget outcome naming the 1000 records", tr.Outcome)
	}
	if n := len(tr.Records); n < 1000 || n > 2*1000+10 {
		t.Errorf("%d records, want the budget of 1000 and at most twice it (and the final snapshot)", n)
	}
	if tr.End > at(time.Minute) {
		t.Errorf("the run went on until %s; its budget was spent within a second", tr.End)
	}
	notes := find(tr, func(r sim.Record) bool { return r.Kind == sim.RecNote && strings.HasPrefix(r.Detail, "budget: ") })
	if len(notes) != 1 {
		t.Errorf("%d budget notes in the trace, want 1", len(notes))
	}
}

func TestRequestLatencyMovesTheClockOfALoopingController(t *testing.T) {
	registerTestSubjects()
	p := &sim.Plan{Version: 1, Seed: 1, Subject: "test/looper", Steps: []sim.Step{}, Deadline: at(2 * time.Second),
		Faults: sim.FaultPolicy{RequestLatency: sim.Distribution{Kind: "fixed", Max: at(10 * time.Millisecond)}}}
	tr := run(t, p)
	if tr.Outcome != "deadline" {
		t.Fatalf("outcome %q, want deadline: with 10ms per request the loop is a hot loop in time, not a livelock", tr.Outcome)
	}
	writes := find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWrite })
	// One create and one delete per 20ms for 2s: about 200 writes.
	if len(writes) < 150 || len(writes) > 250 {
		t.Fatalf("%d writes in 2s at 10ms per request, want about 200", len(writes))
	}
}

func TestAStartThatWaitsForSyncDoesNotDeadlock(t *testing.T) {
	registerTestSubjects()
	p := &sim.Plan{Version: 1, Seed: 1, Subject: "test/syncing-start", Objects: plan().Objects, Steps: []sim.Step{}}
	tr := run(t, p)
	if tr.Outcome != "quiet" {
		t.Fatalf("outcome %q", tr.Outcome)
	}
	if len(find(tr, func(r sim.Record) bool { return r.Detail == "synced in Start" })) != 1 {
		t.Fatal("Start never saw its informer synced")
	}
}

func TestSamePlanGivesTheSameDeliveryScheduleAndTrace(t *testing.T) {
	p := determinismPlan()
	first := run(t, p)
	if len(first.Schedule) < 50 {
		t.Fatalf("schedule of %d turns is too thin to test", len(first.Schedule))
	}
	// Run after run, the scheduler releases the same tickets in the same
	// order; the objects of the subject's turns follow client-go's order
	// within a batch (Go's map order), which may differ.
	for i := range 20 {
		tr, err := sim.Run(t, p)
		if err != nil {
			t.Fatal(err)
		}
		if d := sim.DiffDeliverySchedules(sim.ScheduleKeys(first.Schedule), sim.ScheduleKeys(tr.Schedule)); d != "" {
			t.Fatalf("run %d: %s", i+2, d)
		}
		if d := sim.DiffSchedules(first, tr); d != "" {
			t.Fatalf("run %d: %s", i+2, d)
		}
	}
	// A replay cannot wait for the order of this plan's relist: it hands
	// nine objects to the handler, from a Go map of more than eight
	// entries, whose order is one of 9! (TestAReplayStartsOverUntil...
	// shows a replay following a batch of three).
}

func TestAnEnforcedScheduleIsFollowedAndADifferentOneChangesTheRun(t *testing.T) {
	// A plan whose batches client-go hands out from small maps (a replay
	// can wait for their order; determinismPlan's relist of nine cannot).
	registerTurnTaker()
	first := run(t, turnsPlan())
	q := turnsPlan()
	q.Schedule = first.Schedule
	again := run(t, q)
	if d := sim.DiffDeliverySchedules(first.Schedule, again.Schedule); d != "" || again.Diverged {
		t.Fatalf("the enforced schedule was not followed: %s %q", d, again.Divergences)
	}
	p := determinismPlan()
	q = p.Clone()
	// Swap two adjacent deliveries of one event to two watches (the
	// subject's and the competitor's), ready at the same instant:
	// enforcing the swapped schedule must release them in that order.
	q.Competitor = &sim.Competitor{Resource: "configmaps", Patch: []byte(`{"metadata":{"labels":{"owner":"competitor"}}}`)}
	q.Faults = sim.FaultPolicy{} // no latency: both watches get an event at the instant it is written
	q.Schedule = nil
	first = run(t, q)
	// Not every adjacent pair was ready at the same time: try pairs until
	// one is followed; the canonical order would never swap them.
	followed, tried := 0, 0
	for i := 0; i+1 < len(first.Schedule) && tried < 20; i++ {
		a, b := first.Schedule[i], first.Schedule[i+1]
		if !strings.HasPrefix(a, "event ") || !strings.HasPrefix(b, "event ") || watcherOf(a) == watcherOf(b) {
			continue
		}
		tried++
		swapped := append(append([]string(nil), first.Schedule[:i]...), b, a)
		q.Schedule = swapped
		tr := run(t, q)
		if strings.Join(tr.Schedule[:i+2], "\n") == strings.Join(swapped, "\n") {
			followed++
		}
	}
	if tried == 0 {
		t.Fatal("no two adjacent deliveries to different watches to swap")
	}
	if followed == 0 {
		t.Fatalf("none of %d swapped schedules was followed", tried)
	}
	t.Logf("%d of %d swapped pairs followed (the others were not ready at the same turn)", followed, tried)
}

func watcherOf(key string) string { return key[:strings.LastIndex(key, " #")] }

func TestFaultDrawsLandOnTheSameRequestWhateverCameBefore(t *testing.T) {
	// The n-th request of a client to an object draws its fault from its
	// own stream: asking for b first must not change a's draws. (Drawn
	// from streams shared per client and resource, as before, the order
	// of requests moved every fault.)
	p := plan()
	p.Seed = 7
	p.Faults = sim.FaultPolicy{ErrorRate: 0.5, ErrorCodes: []int{500}}
	p.ApplyDefaults()
	cms := corev1.SchemeGroupVersion.WithResource("configmaps")
	draws := func(order []string) map[string][]bool {
		pol := sim.NewPolicy(p, func() time.Duration { return 0 })
		out := map[string][]bool{}
		for _, name := range order {
			f := pol.BeforeRequest(fakeapi.RequestInfo{Client: "c", Verb: "get", Resource: cms, Namespace: "default", Name: name})
			out[name] = append(out[name], f.Err != nil)
		}
		return out
	}
	x := draws([]string{"a", "a", "a", "a", "b", "b", "b", "b"})
	y := draws([]string{"b", "a", "b", "b", "a", "a", "b", "a"})
	for _, name := range []string{"a", "b"} {
		if strings.Join(fmtBools(x[name]), "") != strings.Join(fmtBools(y[name]), "") {
			t.Errorf("%s's faults depend on the order of requests: %v vs %v", name, x[name], y[name])
		}
	}
	if strings.Join(fmtBools(x["a"]), "")+strings.Join(fmtBools(x["b"]), "") == "--------" {
		t.Fatal("no fault drawn at rate 0.5 in 8 requests: the test proves nothing")
	}
}

func fmtBools(v []bool) []string {
	out := make([]string, len(v))
	for i, b := range v {
		out[i] = "-"
		if b {
			out[i] = "x"
		}
	}
	return out
}

func TestClientGoJitterIsAFunctionOfVirtualTime(t *testing.T) {
	var got [2][2]time.Duration
	for i := range got {
		synctest.Test(t, func(t *testing.T) {
			time.Sleep(3 * time.Second)
			got[i][0] = wait.Jitter(time.Second, 1.0)
			time.Sleep(time.Second)
			got[i][1] = wait.Jitter(time.Second, 1.0)
		})
	}
	if got[0] != got[1] {
		t.Fatalf("two bubbles drew different jitter at the same virtual times: %v and %v", got[0], got[1])
	}
	if got[0][0] == got[0][1] {
		t.Fatalf("jitter at 3s and 4s is the same (%v): not a function of time", got[0][0])
	}
	for _, d := range got[0] {
		if d < time.Second || d >= 2*time.Second {
			t.Fatalf("jitter %v out of [1s, 2s)", d)
		}
	}
}

func TestAShuffledScheduleIsItsOwnAndRepeats(t *testing.T) {
	p := determinismPlan()
	p.Competitor = &sim.Competitor{Resource: "configmaps", Patch: []byte(`{"metadata":{"labels":{"owner":"competitor"}}}`)}
	p.Faults = sim.FaultPolicy{}
	// Without the break and the crash: their relists hand the subject a
	// batch in Go's map order, which no schedule decides (a replay starts
	// over until it recurs; see TestAReplayStartsOverUntilClientGosOrderRecurs)
	// and which, with the competitor's patches in between, changes how
	// many turns the subject's queue takes.
	p.Steps = slices.DeleteFunc(p.Steps, func(s sim.Step) bool { return s.Op == "break" || s.Op == "crash" || s.Op == "restart" })
	canonical := run(t, p)
	q := p.Clone()
	q.ShuffleSchedule = 7
	a, b := run(t, q), run(t, q)
	if d := sim.DiffDeliverySchedules(sim.ScheduleKeys(a.Schedule), sim.ScheduleKeys(b.Schedule)); d != "" {
		t.Fatalf("the same shuffle gave two schedules: %s", d)
	}
	if sim.DiffDeliverySchedules(canonical.Schedule, a.Schedule) == "" {
		t.Fatal("the shuffled schedule is the canonical one")
	}
}
