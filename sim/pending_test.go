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
		if r.Kind == sim.RecNote && strings.Contains(r.Detail, "a retry is pending for "+simtest.Name+" default/a") {
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
	}) != 0 {
		t.Errorf("a self-scheduled retry, or one picked up again, counted as pending")
	}
	if n := sim.PendingRetriesForTest([]sim.Record{
		{Kind: sim.RecQueue, Actor: "c", Op: "requeue", Key: "default/a"},
		{Kind: sim.RecReconcile, Actor: "c", Op: "end", Key: "default/b", Result: "conflict"},
	}); n != 2 {
		t.Errorf("%d pending, want 2 (a rate-limited requeue, a failed reconcile)", n)
	}
}
