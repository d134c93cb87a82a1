package sim_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/simtest"
)

// cacheRVs returns the subject's last cache snapshot as name -> RV, and the
// server's final state the same way.
func cacheAndFinal(t *testing.T, tr *sim.Trace) (cache, final map[string]int64) {
	t.Helper()
	cache, final = map[string]int64{}, map[string]int64{}
	snaps := find(tr, func(r sim.Record) bool { return r.Kind == sim.RecCache })
	if len(snaps) == 0 {
		t.Fatal("no cache snapshot")
	}
	for _, o := range snaps[len(snaps)-1].Objects {
		cache[o.Name] = o.RV
	}
	for _, r := range find(tr, func(r sim.Record) bool { return r.Kind == sim.RecFinal }) {
		for _, o := range r.Objects {
			if o.Resource == "configmaps" {
				final[o.Name] = o.RV
			}
		}
	}
	return cache, final
}

// The built-in too-large-resource-version scenario with a controller that
// writes (it labels every ConfigMap it sees), and two creates while its
// watch is down. Every write moves the server's revision; a replica "2
// revisions behind" used to move with it, serve the re-watch at the
// controller's last resourceVersion and never deliver what came after: the
// run ended with the cache objects short. A lagging replica is behind in
// time: later writes (the controller's own among them) do not bring it
// closer, and a watch it serves delivers every later event.
func TestLaggingReplicaIsNotDissolvedByTheControllersOwnWrites(t *testing.T) {
	p := plan(
		sim.Step{At: at(2 * time.Second), Actor: "faults", Op: "stale-replica", Lag: 2, NotOlderThan: true, Target: simtest.Name},
		sim.Step{At: at(3 * time.Second), Actor: "faults", Op: "expire", Resource: "configmaps", Target: simtest.Name},
		sim.Step{At: at(3500 * time.Millisecond), Actor: "user", Op: "create", Object: cm("colours")},
		sim.Step{At: at(3600 * time.Millisecond), Actor: "user", Op: "create", Object: cm("shapes")},
	)
	p.SubjectParams = map[string]string{"label": "lab.cachelab.dev/seen"}
	p.Faults.Latency = sim.Distribution{Kind: "fixed", Max: at(20 * time.Millisecond)}
	p.Deadline = at(time.Minute)
	tr := run(t, p)
	cache, final := cacheAndFinal(t, tr)
	for name, rv := range final {
		if cache[name] != rv {
			t.Errorf("cache has %s at rv %d, the server at %d (cache %v, server %v)", name, cache[name], rv, cache, final)
		}
	}
	if !slices.Contains(mapKeys(final), "colours") {
		t.Fatalf("server has no colours: %v", final)
	}
}

// A watch served by a replica held behind the latest revision delivers,
// once the replica catches up, every event after the revision it started
// from, in order: nothing between its start and the moment it opened is
// lost.
func TestWatchFromALaggingReplicaDeliversEveryLaterEventAfterCatchUp(t *testing.T) {
	p := plan(
		sim.Step{At: at(time.Second), Actor: "controller", Op: "crash"},
		sim.Step{At: at(2 * time.Second), Actor: "faults", Op: "stale-replica", Lag: 0, For: at(5 * time.Second), Target: simtest.Name},
		sim.Step{At: at(2500 * time.Millisecond), Actor: "user", Op: "create", Object: cm("b")},
		sim.Step{At: at(2600 * time.Millisecond), Actor: "user", Op: "create", Object: cm("c")},
		sim.Step{At: at(3 * time.Second), Actor: "faults", Op: "fail-next", Code: 500, Verb: "watch", Target: simtest.Name},
		sim.Step{At: at(4 * time.Second), Actor: "controller", Op: "restart"},
		sim.Step{At: at(5 * time.Second), Actor: "user", Op: "create", Object: cm("d")},
	)
	tr := run(t, p)
	// The restarted informer lists at RV "0" from the replica held at 2s:
	// only "a".
	lists := find(tr, func(r sim.Record) bool { return r.Kind == sim.RecList && r.Actor == simtest.Name })
	if len(lists) == 0 || lists[0].Count != 1 || lists[0].Lag != 2 {
		t.Fatalf("lists %+v, want the fallback list held at 2s: 1 object, 2 revisions behind", lists)
	}
	// Its handler sees b, c and d only once the replica caught up (7s).
	for _, name := range []string{"b", "c", "d"} {
		h := find(tr, func(r sim.Record) bool {
			return r.Kind == sim.RecHandler && r.Actor == simtest.Name && r.Name == name && r.At.D() >= 4*time.Second
		})
		if len(h) == 0 {
			t.Errorf("handler never saw %s after the restart", name)
			continue
		}
		if h[0].At.D() < 7*time.Second {
			t.Errorf("handler saw %s at %s, before the replica caught up at 7s", name, h[0].At)
		}
	}
	cache, final := cacheAndFinal(t, tr)
	for name, rv := range final {
		if cache[name] != rv {
			t.Errorf("cache has %s at rv %d, the server at %d", name, cache[name], rv)
		}
	}
}

func mapKeys(m map[string]int64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
