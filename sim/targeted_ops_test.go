package sim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/simtest"
)

// A crash with afterWrite=K lets the subject's K-th write reach the
// server, then cancels the process before it sends anything else.
func TestCrashAfterTheSubjectsKthWriteFallsRightAfterIt(t *testing.T) {
	p := plan(
		sim.Step{At: at(time.Second), Actor: "user", Op: "create", Object: cm("b")},
		sim.Step{At: at(time.Second), Actor: "user", Op: "create", Object: cm("c")},
		sim.Step{At: at(500 * time.Millisecond), Actor: "controller", Op: "crash", AfterWrite: 2},
		sim.Step{At: at(2 * time.Second), Actor: "user", Op: "create", Object: cm("d")},
		sim.Step{At: at(3 * time.Second), Actor: "user", Op: "create", Object: cm("e")},
		sim.Step{At: at(4 * time.Second), Actor: "controller", Op: "restart"},
	)
	p.SubjectParams = map[string]string{"label": "lab.cachelab.dev/seen"}
	tr := run(t, p)
	crash := only(t, "crash", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecCrash }))
	if !strings.Contains(crash.Detail, "write #2") {
		t.Errorf("crash detail %q, want it to name write #2", crash.Detail)
	}
	var writes, requestsAfter int
	for _, r := range tr.Records {
		if r.Actor != simtest.Name {
			continue
		}
		if r.Kind == sim.RecWrite && r.Pos < crash.Pos {
			writes++
		}
		if r.Kind == sim.RecRequest && r.Pos > crash.Pos && r.At.D() < 4*time.Second && r.Code != 0 && r.Code < 300 {
			requestsAfter++
		}
	}
	// Write 1 labels a (at the start), write 2 labels the first of b, c.
	if writes != 2 {
		t.Errorf("%d subject writes before the crash, want 2", writes)
	}
	if requestsAfter != 0 {
		t.Errorf("%d requests of the subject served between the crash and the restart", requestsAfter)
	}
	if crash.At.D() < time.Second || crash.At.D() > 1100*time.Millisecond {
		t.Errorf("crash at %s, want right after the write at 1s", crash.At)
	}
	// After the restart every object is labelled.
	cache, final := cacheAndFinal(t, tr)
	if len(final) != 5 || len(cache) != 5 {
		t.Errorf("cache %v, server %v: want a..e", cache, final)
	}
}

// A stale-replica step with asOf=step:N holds the replica at the state
// just before step N: a restart that lists at RV "0" sees an object that
// step N deleted, whatever was written since.
func TestStaleReplicaAsOfAStepServesTheStateJustBeforeIt(t *testing.T) {
	p := plan(
		sim.Step{At: at(time.Second), Actor: "user", Op: "create", Object: cm("b")},
		sim.Step{At: at(2 * time.Second), Actor: "user", Op: "delete", Resource: "configmaps", Namespace: "default", Name: "b"},
		sim.Step{At: at(2500 * time.Millisecond), Actor: "user", Op: "create", Object: cm("c")},
		sim.Step{At: at(2500 * time.Millisecond), Actor: "user", Op: "create", Object: cm("d")},
		sim.Step{At: at(3 * time.Second), Actor: "controller", Op: "crash"},
		sim.Step{At: at(3 * time.Second), Actor: "faults", Op: "stale-replica", AsOf: "step:1", For: at(2 * time.Second), Target: simtest.Name},
		sim.Step{At: at(3 * time.Second), Actor: "faults", Op: "fail-next", Code: 500, Verb: "watch", Target: simtest.Name},
		sim.Step{At: at(3500 * time.Millisecond), Actor: "controller", Op: "restart"},
	)
	tr := run(t, p)
	on := only(t, "stale-replica-on", faultsNamed(tr, "stale-replica-on"))
	if !strings.Contains(on.Detail, "just before step 1") {
		t.Errorf("fault detail %q", on.Detail)
	}
	lists := find(tr, func(r sim.Record) bool { return r.Kind == sim.RecList && r.Actor == simtest.Name })
	if len(lists) == 0 || lists[0].Count != 2 || lists[0].RV != on.RV {
		t.Fatalf("lists %+v, want the restart's list at the held revision %d with a and b", lists, on.RV)
	}
	sawB := find(tr, func(r sim.Record) bool {
		return r.Kind == sim.RecHandler && r.Actor == simtest.Name && r.Name == "b" && r.At.D() == 3500*time.Millisecond
	})
	if len(sawB) == 0 {
		t.Errorf("the restarted handler never saw the deleted b")
	}
	// At 5s the replica catches up: b is deleted from the cache.
	cache, final := cacheAndFinal(t, tr)
	if _, ok := cache["b"]; ok || len(cache) != len(final) {
		t.Errorf("cache %v, server %v", cache, final)
	}
}

// A fail-next with afterWrite=K waits for the subject's K-th write: the
// first matching request after it fails, the writes before it do not, and
// the K-th write itself is not "after" itself.
func TestFailNextAfterTheSubjectsKthWriteHitsItsNextWrite(t *testing.T) {
	p := plan(
		sim.Step{At: 0, Actor: "faults", Op: "fail-next", Code: 500, Verb: "patch", Resource: "configmaps", Target: simtest.Name, AfterWrite: 2},
		sim.Step{At: at(time.Second), Actor: "user", Op: "create", Object: cm("b")},
		sim.Step{At: at(2 * time.Second), Actor: "user", Op: "create", Object: cm("c")},
		sim.Step{At: at(3 * time.Second), Actor: "user", Op: "create", Object: cm("d")},
	)
	p.SubjectParams = map[string]string{"label": "lab.cachelab.dev/seen"}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	tr := run(t, p)
	var codes []int
	for _, r := range tr.Records {
		if r.Kind == sim.RecRequest && r.Actor == simtest.Name && r.Verb == "patch" {
			codes = append(codes, r.Code)
		}
	}
	// a (at the start), b, then c's patch fails once and is retried; d.
	if len(codes) < 4 || codes[0] >= 300 || codes[1] >= 300 || codes[2] != 500 {
		t.Fatalf("the subject's patches answered %v, want the third (the first after write #2) to fail with 500", codes)
	}
	for _, c := range codes[3:] {
		if c != 200 {
			t.Errorf("the subject's patches answered %v: only one should fail", codes)
		}
	}
	if _, final := cacheAndFinal(t, tr); len(final) != 4 {
		t.Errorf("server %v: want a..d", final)
	}
}
