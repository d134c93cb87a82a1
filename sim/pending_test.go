package sim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/simtest"
)

// A controller whose reconcile failed waits out its rate limiter's backoff
// (client-go's and controller-runtime's default: 5 ms doubling per failure,
// up to 1000 s) before it retries. Nine failed patches put the retry 1.28 s
// out, past this plan's 1 s quiet period: the run must not end "quiet"
// while the controller has a retry pending, but go on (virtual time is
// free) until the retry labels the object.
func TestARunIsNotQuietWhileARetryIsPending(t *testing.T) {
	p := plan()
	p.SubjectParams = map[string]string{"label": "seen"}
	p.Quiet = sim.Duration(time.Second)
	for range 9 {
		p.Steps = append(p.Steps, sim.Step{At: 0, Actor: "faults", Op: "fail-next", Code: 500, Verb: "patch", Target: simtest.Name})
	}
	tr := run(t, p)
	if tr.Outcome != "quiet" {
		t.Fatalf("outcome %q, want quiet", tr.Outcome)
	}
	var failed, labelled int
	for _, r := range tr.Records {
		switch {
		case r.Kind == sim.RecReconcile && r.Op == "end" && r.Result != "ok":
			failed++
		case r.Kind == sim.RecWrite && r.Actor == simtest.Name && r.Verb == "patch":
			labelled++
		}
	}
	if failed != 9 || labelled != 1 {
		t.Errorf("%d failed reconciles and %d labelling patches, want 9 and 1: the run ended before the retry", failed, labelled)
	}
}

// A retry that never succeeds keeps the run going to its deadline, which
// the trace notes with the key still pending; the run is not quiet.
func TestADeadlineWithARetryPendingIsNoted(t *testing.T) {
	p := plan()
	p.SubjectParams = map[string]string{"label": "seen"}
	p.Quiet = sim.Duration(time.Second)
	p.Deadline = sim.Duration(20 * time.Second)
	for range 30 {
		p.Steps = append(p.Steps, sim.Step{At: 0, Actor: "faults", Op: "fail-next", Code: 500, Verb: "patch", Target: simtest.Name})
	}
	tr := run(t, p)
	if tr.Outcome != "deadline" {
		t.Fatalf("outcome %q, want deadline", tr.Outcome)
	}
	var note string
	for _, r := range tr.Records {
		if r.Kind == sim.RecNote && strings.Contains(r.Detail, "work is under way for "+simtest.Name+" default/a") {
			note = r.Detail
		}
	}
	if note == "" {
		t.Errorf("no note names the pending retry of default/a")
	}
}

// A retry the controller scheduled itself (AddAfter: a resync, "come back
// in a second") does not keep a run from being quiet: only one after a
// failure (AddRateLimited, or a reconcile that returned an error) does.
func TestOnlyARetryAfterAFailureIsPending(t *testing.T) {
	if sim.PendingRetriesForTest([]sim.Record{
		{Kind: sim.RecQueue, Actor: "c", Op: "requeue", Key: "default/a", Detail: sim.RequeueAfterPrefix + "1s"},
		{Kind: sim.RecReconcile, Actor: "c", Op: "end", Key: "default/b", Result: "requeued after 30s"},
		{Kind: sim.RecReconcile, Actor: "c", Op: "end", Key: "default/c", Result: "ok"},
		{Kind: sim.RecQueue, Actor: "c", Op: "requeue", Key: "default/d"},
		{Kind: sim.RecQueue, Actor: "c", Op: "get", Key: "default/d"},
		{Kind: sim.RecReconcile, Actor: "c", Op: "end", Key: "default/e", Result: "boom"},
		{Kind: sim.RecReconcile, Actor: "c", Op: "start", Key: "default/e"},
		{Kind: sim.RecReconcile, Actor: "c", Op: "end", Key: "default/e", Result: "ok"},
		{Kind: sim.RecQueue, Actor: "c", Op: "add", Key: "default/f"},
		{Kind: sim.RecQueue, Actor: "c", Op: "get", Key: "default/f"},
		{Kind: sim.RecReconcile, Actor: "c", Op: "end", Key: "default/g", Result: "boom"},
		{Kind: sim.RecCrash, Actor: "c"},
	}) != 0 {
		t.Errorf("a self-scheduled retry, one picked up again, or one of a crashed process counted as pending")
	}
	// Work under way: a reconcile open, a key queued and not taken.
	if n := sim.PendingRetriesForTest([]sim.Record{
		{Kind: sim.RecReconcile, Actor: "c", Op: "start", Key: "default/a"},
		{Kind: sim.RecQueue, Actor: "c", Op: "add", Key: "default/b"},
	}); n != 2 {
		t.Errorf("%d pending, want 2 (an open reconcile, a queued key)", n)
	}
	if n := sim.PendingRetriesForTest([]sim.Record{
		{Kind: sim.RecQueue, Actor: "c", Op: "requeue", Key: "default/a"},
		{Kind: sim.RecReconcile, Actor: "c", Op: "end", Key: "default/b", Result: "conflict"},
	}); n != 2 {
		t.Errorf("%d pending, want 2 (a rate-limited requeue, a failed reconcile)", n)
	}
}

// A controller with a periodic resync (an informer's resync period: its
// handler is called, and it reconciles, every 2 s) reads and reconciles
// forever and writes nothing once settled: its run ends quiet, as one
// without a resync does, instead of running to its deadline.
func TestAPeriodicResyncDoesNotKeepARunFromBeingQuiet(t *testing.T) {
	p := plan()
	p.SubjectParams = map[string]string{"label": "seen", "resync": "2s"}
	p.Quiet = sim.Duration(5 * time.Second)
	p.Deadline = sim.Duration(time.Minute)
	tr := run(t, p)
	if tr.Outcome != "quiet" {
		t.Fatalf("outcome %q, want quiet", tr.Outcome)
	}
	resyncs := 0
	for _, r := range tr.Records {
		if r.Kind == sim.RecHandler && r.Actor == simtest.Name && r.EventType == "MODIFIED" {
			resyncs++
		}
	}
	if resyncs < 2 {
		t.Errorf("%d MODIFIED handler calls, want the resync's (at least 2): the test does not show a resync", resyncs)
	}
}
