package sim_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/sim"
)

// turnTaker is a subject whose event handler and worker take turns
// (Env.Turn), as the lab's recording wrappers do: the handler records its
// call, queues the ConfigMap's key and records that; the worker records
// the key it got. A worker woken by the handler's Add and the handler's
// next call are woken by one release: without turns they record in
// whatever order Go's scheduler runs them.
type turnTaker struct{}

func (turnTaker) Start(ctx context.Context, env sim.Env) error {
	turn := func(what, object string) {
		if env.Turn != nil {
			env.Turn(ctx, what, object)
		}
	}
	q := workqueue.NewTyped[string]()
	lw := env.ListerWatcher(corev1.SchemeGroupVersion.WithResource("configmaps"), "").(cache.ListerWatcher)
	inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		key, _ := cache.MetaNamespaceKeyFunc(obj)
		turn("handler configmaps", "ADDED "+key)
		env.Rec.Record(sim.Record{Kind: sim.RecHandler, Handler: "configmaps", EventType: "ADDED", Key: key})
		q.Add(key)
		env.Rec.Record(sim.Record{Kind: sim.RecNote, Key: key, Detail: "queued"})
	}}); err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		q.ShutDown()
	}()
	go inf.RunWithContext(ctx)
	go func() {
		for {
			key, shutdown := q.Get()
			if shutdown {
				return
			}
			turn("get", key)
			env.Rec.Record(sim.Record{Kind: sim.RecQueue, Op: "get", Key: key})
			q.Done(key)
		}
	}()
	return nil
}

var registerTurnTaker = sync.OnceFunc(func() {
	sim.RegisterSubject(sim.SubjectInfo{Name: "test/turns", Summary: "a handler and a worker that take turns", New: func() sim.Subject { return turnTaker{} }})
})

// turnsPlan starts test/turns with three ConfigMaps: its informer's
// WatchList hands them to the handler in client-go's map order.
func turnsPlan() *sim.Plan { return turnsPlanOf("a", "b", "c") }

// turnsPlanOf starts test/turns with ConfigMaps of these names.
func turnsPlanOf(names ...string) *sim.Plan {
	p := &sim.Plan{Version: 1, Seed: 1, Subject: "test/turns", Steps: []sim.Step{}}
	for _, n := range names {
		p.Objects = append(p.Objects, cm(n))
	}
	return p
}

// subjectRecords returns the subject's handler, queue and note records as
// lines, in trace order.
func subjectRecords(tr *sim.Trace) []string {
	var out []string
	for _, r := range tr.Records {
		if r.Actor != "test/turns" {
			continue
		}
		switch r.Kind {
		case sim.RecHandler, sim.RecQueue, sim.RecNote:
			out = append(out, fmt.Sprintf("%s %s %s %s %s", r.At, r.Kind, r.EventType+r.Op, r.Key, r.Detail))
		}
	}
	return out
}

// A worker and a handler woken by one release (the worker by the
// handler's Add, the handler by its next object) take turns: the canonical
// order ("get ..." before "handler ...") lets the worker record first, the
// same in every run, and a schedule that names the handler first makes it
// record first.
func TestAWorkerAndAHandlerWokenByOneReleaseRunInThePlansOrder(t *testing.T) {
	registerTurnTaker()
	first := run(t, turnsPlan())
	recs := subjectRecords(first)
	var turns []string
	for _, k := range first.Schedule {
		if strings.HasPrefix(k, "turn ") {
			turns = append(turns, k)
		}
	}
	if len(turns) != 6 {
		t.Fatalf("the schedule has %d turns of the subject, want 6 (3 handler calls, 3 gets): %q", len(turns), turns)
	}
	if len(recs) != 9 {
		t.Fatalf("%d subject records, want 9: %q", len(recs), recs)
	}
	// The first object's handler call, its note, then the worker's get of
	// it (canonical: "get" sorts before "handler"), then the next call.
	key := func(line string) string { return strings.Fields(line)[3] }
	x := key(recs[0])
	if !strings.Contains(recs[2], " get "+x) || !strings.Contains(recs[3], "ADDED") {
		t.Fatalf("canonical order: want handler %s, queued, get %s, then the next handler call; got %q", x, x, recs)
	}
	// The same records, in the same order, run after run.
	for i := range 4 {
		tr := run(t, turnsPlan())
		if got := subjectRecords(tr); !slices.Equal(got, recs) && key(got[0]) == x {
			t.Fatalf("run %d: records differ with the same first object:\n got %q\nwant %q", i+2, got, recs)
		}
	}
	// Name the second handler call before the first get.
	k := slices.IndexFunc(first.Schedule, func(s string) bool { return strings.HasPrefix(s, "turn test/turns get ") })
	next := slices.IndexFunc(first.Schedule[k:], func(s string) bool { return strings.HasPrefix(s, "turn test/turns handler ") })
	if next < 0 {
		t.Fatalf("no handler turn after the first get: %q", first.Schedule)
	}
	q := turnsPlan()
	q.Schedule = append(slices.Clip(first.Schedule[:k]), first.Schedule[k+next])
	tr := run(t, q)
	if tr.Diverged {
		t.Fatalf("the schedule naming the handler first was not followed (%d attempts): %q", tr.Attempts, tr.Divergences)
	}
	got := subjectRecords(tr)
	if !strings.Contains(got[2], "ADDED") || !strings.Contains(got[4], " get "+x) {
		t.Fatalf("handler named first: want handler %s, queued, then the next handler call before get %s; got %q", x, x, got)
	}
}

// A replay that enforces a recorded schedule is started over when
// client-go hands the WatchList's eight objects to the handler in another
// order than the recorded run's (Go's map order): every replay follows the
// recording to the end, records the same as it, and says how many attempts
// it took. A Go map of up to eight entries is iterated from a random one of
// its eight slots, so a given order of eight recurs in 1 of 8 attempts.
func TestAReplayStartsOverUntilClientGosOrderRecurs(t *testing.T) {
	registerTurnTaker()
	plan := func() *sim.Plan { return turnsPlanOf("a", "b", "c", "d", "e", "f", "g", "h") }
	recorded := run(t, plan())
	q := plan()
	q.Schedule = recorded.Schedule
	restarted := 0
	var attempts []int
	for i := range 10 {
		tr, err := sim.Run(t, q)
		if err != nil {
			t.Fatal(err)
		}
		attempts = append(attempts, tr.Attempts)
		if tr.Diverged {
			t.Fatalf("replay %d could not follow the recording in %d attempts: %q", i+1, tr.Attempts, tr.Divergences)
		}
		if d := sim.DiffDeliverySchedules(recorded.Schedule, tr.Schedule); d != "" {
			t.Fatalf("replay %d: %s", i+1, d)
		}
		if got, want := subjectRecords(tr), subjectRecords(recorded); !slices.Equal(got, want) {
			t.Fatalf("replay %d: records differ:\n got %q\nwant %q", i+1, got, want)
		}
		if len(tr.Divergences) != tr.Attempts-1 {
			t.Fatalf("replay %d: %d attempts but %d divergences reported: %q", i+1, tr.Attempts, len(tr.Divergences), tr.Divergences)
		}
		if tr.Attempts > 1 {
			restarted++
			if !strings.Contains(tr.Divergences[0], "Go's map order") {
				t.Errorf("replay %d: the divergence does not name client-go's order: %q", i+1, tr.Divergences[0])
			}
		}
	}
	// Eight objects: a replay gets the recorded order with chance 1/8.
	if restarted == 0 {
		t.Fatalf("no replay of 10 had to start over (attempts %v): the handler's order is not in the schedule", attempts)
	}
	t.Logf("attempts per replay: %v", attempts)
}

// A schedule that names a turn no run can give is not followed silently:
// after ReplayAttempts attempts the run goes on in the canonical order and
// says where it could not follow, in the trace and in Divergences.
func TestAReplayThatCannotFollowItsScheduleSaysSo(t *testing.T) {
	registerTurnTaker()
	defer func(n int) { sim.ReplayAttempts = n }(sim.ReplayAttempts)
	sim.ReplayAttempts = 3
	recorded := run(t, turnsPlan())
	q := turnsPlan()
	k := slices.IndexFunc(recorded.Schedule, func(s string) bool { return strings.HasPrefix(s, "turn ") })
	q.Schedule = append(slices.Clip(recorded.Schedule[:k]), "turn test/turns handler configmaps #1 @ADDED default/nobody")
	tr := run(t, q)
	if !tr.Diverged || tr.Attempts != 3 || len(tr.Divergences) != 3 {
		t.Fatalf("diverged %v after %d attempts, divergences %q; want diverged after 3", tr.Diverged, tr.Attempts, tr.Divergences)
	}
	if tr.Outcome != "quiet" {
		t.Fatalf("outcome %q: the last attempt should run to its end", tr.Outcome)
	}
	notes := find(tr, func(r sim.Record) bool {
		return r.Kind == sim.RecNote && strings.Contains(r.Detail, "could not follow") && strings.Contains(r.Detail, "default/nobody")
	})
	if len(notes) != 1 {
		t.Fatalf("%d notes say the run could not follow its schedule, want 1", len(notes))
	}
}

// A replay has the server send a WatchList's objects in the order the
// recorded run's handlers got them, so that client-go's map (which hands
// them out in the order they came, rotated to a random start among 8
// slots) gives the recorded order in most attempts. A recording whose
// handler got b before a (1 in 8 of the runs of a plan with a and b) makes
// the replays' server send b first, where a plain run sends a first (by
// key, as kube-apiserver does).
func TestAReplaySendsAWatchListsObjectsInTheRecordedHandlersOrder(t *testing.T) {
	registerTurnTaker()
	plan := func() *sim.Plan { return turnsPlanOf("a", "b") }
	recorded := run(t, plan())
	if got := sentInitial(recorded); !slices.Equal(got, []string{"default/a", "default/b"}) {
		t.Fatalf("a plain run sent the WatchList's objects as %q, want by key", got)
	}
	// A recording whose handler got b first: the subject treats a and b
	// alike, so swapping them throughout an a-first schedule gives one.
	h := slices.IndexFunc(recorded.Schedule, func(e string) bool { return strings.HasPrefix(e, "turn test/turns handler ") })
	if h < 0 {
		t.Fatalf("no handler turn in the schedule: %q", recorded.Schedule)
	}
	q := plan()
	q.Schedule = recorded.Schedule
	if strings.HasSuffix(recorded.Schedule[h], "default/a") {
		swap := strings.NewReplacer("default/a", "default/b", "default/b", "default/a")
		q.Schedule = nil
		for _, e := range recorded.Schedule {
			q.Schedule = append(q.Schedule, swap.Replace(e))
		}
	}
	var attempts []int
	first := 0
	for i := range 10 {
		tr := run(t, q)
		if tr.Diverged {
			t.Fatalf("replay %d could not follow in %d attempts: %q", i+1, tr.Attempts, tr.Divergences)
		}
		if got := sentInitial(tr); !slices.Equal(got, []string{"default/b", "default/a"}) {
			t.Fatalf("replay %d: the server sent the WatchList's objects as %q, want the recorded handler's order b, a", i+1, got)
		}
		if d := sim.DiffDeliverySchedules(q.Schedule, tr.Schedule); d != "" {
			t.Fatalf("replay %d: %s", i+1, d)
		}
		attempts = append(attempts, tr.Attempts)
		if tr.Attempts == 1 {
			first++
		}
	}
	// Two objects sent b, a: the map starts at b in 7 of 8 iterations.
	t.Logf("followed in the first attempt %d/10, attempts %v", first, attempts)
}

// sentInitial returns the objects of the subject's WatchList's initial
// events, as the server sent them.
func sentInitial(tr *sim.Trace) []string {
	var out []string
	for _, r := range tr.Records {
		if r.Kind == sim.RecSent && r.Initial && r.EventType == "ADDED" && r.Actor == "test/turns" {
			out = append(out, r.Namespace+"/"+r.Name)
		}
	}
	return out
}
