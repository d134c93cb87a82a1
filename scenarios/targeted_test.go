package scenarios_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// bellerophonWorkload is a user story on one Bellerophon: scaled 1 -> 3 ->
// 2, deleted, recreated under the same name, upgraded.
func bellerophonWorkload(subject string) *sim.Plan {
	web := func(replicas int) json.RawMessage {
		return json.RawMessage(`{"apiVersion":"lab.cachelab.dev/v1alpha1","kind":"Bellerophon","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":` + string(rune('0'+replicas)) + `,"version":"v1"}}`)
	}
	at := func(d time.Duration) sim.Duration { return sim.Duration(d) }
	p := &sim.Plan{Version: sim.PlanVersion, Name: "workload", Seed: 7, Subject: subject,
		Objects:  []json.RawMessage{web(1)},
		Kubelet:  &sim.Kubelet{ReadyAfter: at(time.Second)},
		Faults:   sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: at(20 * time.Millisecond)}},
		Deadline: at(2 * time.Minute),
		Steps: []sim.Step{
			{At: at(2 * time.Second), Actor: "user", Op: "patch", Resource: "bellerophons", Namespace: "default", Name: "web", Patch: json.RawMessage(`{"spec":{"replicas":3}}`)},
			{At: at(3 * time.Second), Actor: "user", Op: "patch", Resource: "bellerophons", Namespace: "default", Name: "web", Patch: json.RawMessage(`{"spec":{"replicas":2}}`)},
			{At: at(5 * time.Second), Actor: "user", Op: "delete", Resource: "bellerophons", Namespace: "default", Name: "web"},
			{At: at(8 * time.Second), Actor: "user", Op: "create", Resource: "bellerophons", Object: web(2)},
			{At: at(11 * time.Second), Actor: "user", Op: "patch", Resource: "bellerophons", Namespace: "default", Name: "web", Patch: json.RawMessage(`{"spec":{"version":"v2"}}`)},
		}}
	return p
}

func TestTargetedPlansAimAtTheReferencesReadsAndWrites(t *testing.T) {
	for _, c := range []struct {
		subject    string
		wantStale  bool
		staleWhyIn string
	}{
		{"bellerophon", false, "WatchList"},
		{"bellerophon/lists-stale-replica", true, ""},
	} {
		t.Run(c.subject, func(t *testing.T) {
			base := bellerophonWorkload(c.subject)
			ref := scenarios.ReferencePlan(base)
			tr, err := sim.Run(t, ref)
			if err != nil {
				t.Fatal(err)
			}
			plans, pruned := scenarios.TargetedPlans(base, tr, scenarios.TargetedOptions{})
			count := map[string]int{}
			for _, p := range plans {
				count[p.Class]++
				if err := p.Plan.Validate(); err != nil {
					t.Errorf("%s: invalid plan: %v", p.Perturbation, err)
				}
				if p.Plan.Name == base.Name {
					t.Errorf("%s: plan keeps the base's name", p.Perturbation)
				}
			}
			t.Logf("%d plans %v, %d pruned", len(plans), count, len(pruned))
			for _, p := range plans {
				t.Logf("  %s: %s", p.Class, p.Perturbation)
			}
			for _, p := range pruned {
				t.Logf("  pruned %s: %s: %s", p.Class, p.Perturbation, p.Why)
			}
			if count[scenarios.ClassUnobserved] == 0 || count[scenarios.ClassIntermediate] == 0 || count[scenarios.ClassRequest] == 0 {
				t.Errorf("plans per class %v: want unobserved, intermediate and request-fault plans", count)
			}
			// Each kind of perturbation is there, aimed where the
			// reference shows the controller acting.
			has := func(class, nameIn string, ok func(sim.Plan) bool) {
				t.Helper()
				for _, p := range plans {
					if p.Class == class && strings.Contains(p.Plan.Name, nameIn) && ok(p.Plan) {
						return
					}
				}
				t.Errorf("no %s plan named *%s* of the wanted shape", class, nameIn)
			}
			any := func(sim.Plan) bool { return true }
			has(scenarios.ClassUnobserved, "-unobserved-tombstone-", any)
			has(scenarios.ClassUnobserved, "-unobserved-down-", func(p sim.Plan) bool {
				// Down across the scale to 3 at 2s.
				return slices.ContainsFunc(p.Steps, func(s sim.Step) bool { return s.Op == "crash" && s.At.D() < 2*time.Second }) &&
					slices.ContainsFunc(p.Steps, func(s sim.Step) bool {
						return s.Op == "restart" && s.At.D() > 2*time.Second && s.At.D() < 3*time.Second
					})
			})
			armedAfterWrite := func(op string) func(sim.Plan) bool {
				return func(p sim.Plan) bool {
					return slices.ContainsFunc(p.Steps, func(s sim.Step) bool { return s.Op == op && s.Target == c.subject && s.Verb != "" && s.Resource != "" })
				}
			}
			has(scenarios.ClassRequest, "-request-fail-w", armedAfterWrite("fail-next"))
			has(scenarios.ClassRequest, "-request-timeout-w", armedAfterWrite("timeout-next-write"))
			held := func(p sim.Plan) bool {
				return slices.ContainsFunc(p.Steps, func(s sim.Step) bool { return s.Op == "hold" && s.Target == c.subject && s.For > 0 })
			}
			has(scenarios.ClassRequest, "-request-slowsync-pods", held)
			has(scenarios.ClassOwnWrites, "-ownwrites-lag-w", held)
			has(scenarios.ClassOwnWrites, "-ownwrites-timeout-w", func(p sim.Plan) bool { return held(p) && armedAfterWrite("timeout-next-write")(p) })
			has(scenarios.ClassOwnWrites, "-ownwrites-fail-w", func(p sim.Plan) bool { return held(p) && armedAfterWrite("fail-next")(p) })
			has(scenarios.ClassRequest, "-request-slowresync-pods", held)
			if c.wantStale {
				// A replica held before the delete at 5s, the restart after
				// the recreate at 8s has been acted on: the predecessor
				// next to its successor's children.
				has(scenarios.ClassStale, "-stale-", func(p sim.Plan) bool {
					for _, s := range p.Steps {
						if s.Op != "stale-replica" {
							continue
						}
						kind, n, _ := sim.ParseMoment(s.AsOf)
						before := kind == sim.MomentWrite || (kind == sim.MomentStep && p.Steps[n].At.D() <= 5*time.Second && p.Steps[n].Op == "delete")
						return before && s.At.D() > 8*time.Second
					}
					return false
				})
			}
			if got := count[scenarios.ClassStale] > 0; got != c.wantStale {
				t.Errorf("stale-state plans %d, want some: %v", count[scenarios.ClassStale], c.wantStale)
			}
			if !c.wantStale {
				found := false
				for _, p := range pruned {
					found = found || (p.Class == scenarios.ClassStale && strings.Contains(p.Why, c.staleWhyIn))
				}
				if !found {
					t.Errorf("no stale-state perturbation pruned for %q", c.staleWhyIn)
				}
			}
		})
	}
}

// A controller that writes at 0 (on its initial list, no latency): the
// plans aimed at that write start at 0, never before. Before, the lagging
// watch and the interleaved writer of a write at 0 were placed at -1ms and
// -2ms, and the run refused the plan.
func TestTargetedPlansAimedAtAWriteAtZeroStartAtZero(t *testing.T) {
	base := bellerophonWorkload("bellerophon")
	base.Faults, base.Kubelet, base.Steps = sim.FaultPolicy{}, nil, nil
	tr, err := sim.Run(t, scenarios.ReferencePlan(base))
	if err != nil {
		t.Fatal(err)
	}
	atZero := false
	for _, r := range tr.Records {
		atZero = atZero || (r.Kind == sim.RecRequest && r.Actor == "bellerophon" && sim.IsCountedWrite(true, r.Verb, r.Resource) && r.At.D() == 0)
	}
	if !atZero {
		t.Fatalf("the controller made no write at 0: the test shows nothing")
	}
	plans, _ := scenarios.TargetedPlans(base, tr, scenarios.TargetedOptions{})
	if len(plans) == 0 {
		t.Fatalf("no targeted plan generated")
	}
	for _, p := range plans {
		if err := p.Plan.Validate(); err != nil {
			t.Errorf("%s: %v", p.Perturbation, err)
		}
		for i, s := range p.Plan.Steps {
			if s.At < 0 {
				t.Errorf("%s: step %d at %s", p.Perturbation, i, s.At)
			}
		}
	}
}

// The plans aimed at the controller's repair of a user's change of one of
// its children (the user deletes web-config, the controller makes it
// again: the read-your-writes story) are marked Repair and say so in their
// Target, for HuntOrder to run first; the garbage collector's deletes of
// a deleted owner's children and the user's own objects are no repair (the
// workload above: no plan is marked).
func TestTargetedPlansMarkTheControllersRepairs(t *testing.T) {
	s, err := scenarios.Get("read-your-writes")
	if err != nil {
		t.Fatal(err)
	}
	story := s.PlanFor("bellerophon")
	for _, c := range []struct {
		name  string
		base  *sim.Plan
		kinds []string // the kinds with a repair plan
	}{
		{"read-your-writes", &story, []string{scenarios.KindTombstone, scenarios.KindWriteFails, scenarios.KindWriteTimesOut, scenarios.KindErrorUnseen, scenarios.KindTimeoutUnseen, scenarios.KindWatchLagsOwnWrite}},
		{"workload", bellerophonWorkload("bellerophon"), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := sim.Run(t, scenarios.ReferencePlan(c.base))
			if err != nil {
				t.Fatal(err)
			}
			plans, _ := scenarios.TargetedPlans(c.base, tr, scenarios.TargetedOptions{})
			var got []string
			for _, p := range plans {
				if !p.Repair {
					continue
				}
				got = append(got, p.Kind)
				want := "configmaps deleted by user (the controller replaced it)"
				if p.Kind != scenarios.KindTombstone {
					want = "create configmaps (repairs the user's delete of one it made"
				}
				if !strings.HasPrefix(p.Target, want) {
					t.Errorf("%s: target %q, want it to start with %q", p.Perturbation, p.Target, want)
				}
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(c.kinds))
			if !slices.Equal(got, want) {
				t.Errorf("repair plans of kinds %q, want %q", got, want)
			}
		})
	}
}

// A slow first sync misleads a controller that decides what to create by
// what its cache shows: the plans of the resource it creates most (its
// Pods) come first, though it writes its own Bellerophons more often (its
// status). Before, the most written resource went first, and a mutant
// whose workers start on an empty Pod cache (quiescence-synced) waited for
// the slow syncs of Bellerophons and ConfigMaps.
func TestTargetedSlowSyncOfWhatTheControllerCreatesComesFirst(t *testing.T) {
	base := bellerophonWorkload("bellerophon")
	tr, err := sim.Run(t, scenarios.ReferencePlan(base))
	if err != nil {
		t.Fatal(err)
	}
	writes := map[string]int{}
	for _, r := range tr.Records {
		if r.Kind == sim.RecRequest && r.Actor == "bellerophon" && sim.IsCountedWrite(true, r.Verb, r.Resource) {
			writes[r.Resource]++
		}
	}
	if writes["bellerophons.lab.cachelab.dev"] <= writes["pods"] {
		t.Fatalf("writes per resource %v: want more Bellerophon writes than Pod writes, or the test shows nothing", writes)
	}
	plans, _ := scenarios.TargetedPlans(base, tr, scenarios.TargetedOptions{})
	for _, kind := range []string{scenarios.KindSlowSync, scenarios.KindSlowResync} {
		i := slices.IndexFunc(plans, func(p scenarios.Targeted) bool { return p.Kind == kind })
		if i < 0 {
			t.Fatalf("no %q plan", kind)
		}
		if plans[i].Target != "pods" {
			t.Errorf("first %q plan aims at %q, want pods", kind, plans[i].Target)
		}
	}
}

// Of the deletes of one resource by one deleter, the tombstone plan hides
// the last: after an earlier one, the rest of the workload (a later event
// of the owner) often brings the owner back into the queue, and no end
// state shows a dropped delete (as intermediate-state keeps its last
// crash point). Before, the first was kept.
func TestTargetedTombstoneHidesTheLastDeleteOfItsKind(t *testing.T) {
	// Scaled 3 -> 2 -> 1: the controller deletes a Pod at 2s and one at 4s.
	base := bellerophonWorkload("bellerophon")
	base.Objects = []json.RawMessage{json.RawMessage(`{"apiVersion":"lab.cachelab.dev/v1alpha1","kind":"Bellerophon","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":3,"version":"v1"}}`)}
	scale := func(at time.Duration, n string) sim.Step {
		return sim.Step{At: sim.Duration(at), Actor: "user", Op: "patch", Resource: "bellerophons", Namespace: "default", Name: "web", Patch: json.RawMessage(`{"spec":{"replicas":` + n + `}}`)}
	}
	base.Steps = []sim.Step{scale(2*time.Second, "2"), scale(4*time.Second, "1")}
	tr, err := sim.Run(t, scenarios.ReferencePlan(base))
	if err != nil {
		t.Fatal(err)
	}
	var deletes []time.Duration
	for _, r := range tr.Records {
		if r.Kind == sim.RecWrite && r.Actor == "bellerophon" && r.Resource == "pods" && r.EventType == "DELETED" {
			deletes = append(deletes, r.At.D())
		}
	}
	if len(deletes) < 2 || deletes[0] == deletes[len(deletes)-1] {
		t.Fatalf("the controller's Pod deletes at %v: want two at different times, or the test shows nothing", deletes)
	}
	plans, _ := scenarios.TargetedPlans(base, tr, scenarios.TargetedOptions{})
	i := slices.IndexFunc(plans, func(p scenarios.Targeted) bool {
		return p.Kind == scenarios.KindTombstone && p.Target == "pods deleted by the controller"
	})
	if i < 0 {
		t.Fatal("no tombstone plan of the controller's Pod deletes")
	}
	hold := plans[i].Plan.Steps[slices.IndexFunc(plans[i].Plan.Steps, func(s sim.Step) bool { return s.Op == "hold" })]
	if want := deletes[len(deletes)-1] - time.Millisecond; hold.At.D() != want {
		t.Errorf("the hold starts at %s, want %s (just before the last delete, of %v)", hold.At, sim.Duration(want), deletes)
	}
}

// A lag of the controller's own write wakes the write's key inside the lag
// when another resource's object names the key: the Bellerophon's children
// (ConfigMaps, Pods) lag 2 s while the Bellerophon watch expires 1 ms
// after the write (its relist hands the Bellerophon to the handlers again
// within the reflector's backoff, before the hold ends); the Bellerophon's
// own status write lags 1 s with no expire (a relist of its own watch
// would show the write).
func TestTargetedLagWakesTheWritesKeyByItsPrimarysRelist(t *testing.T) {
	base := bellerophonWorkload("bellerophon")
	tr, err := sim.Run(t, scenarios.ReferencePlan(base))
	if err != nil {
		t.Fatal(err)
	}
	plans, _ := scenarios.TargetedPlans(base, tr, scenarios.TargetedOptions{})
	woken, plain := 0, 0
	for _, p := range plans {
		if p.Kind != scenarios.KindWatchLagsOwnWrite {
			continue
		}
		var hold, expire *sim.Step
		for i, s := range p.Plan.Steps {
			switch {
			case s.Actor == sim.ActorFaults && s.Op == "hold":
				hold = &p.Plan.Steps[i]
			case s.Actor == sim.ActorFaults && s.Op == "expire":
				expire = &p.Plan.Steps[i]
			}
		}
		if hold == nil {
			t.Fatalf("%s: no hold", p.Perturbation)
		}
		if strings.HasPrefix(hold.Resource, "bellerophons") {
			plain++
			if expire != nil || hold.For.D() != time.Second {
				t.Errorf("%s: the primary's own lag: want a 1s hold and no expire, got hold %s, expire %+v", p.Perturbation, hold.For.D(), expire)
			}
			continue
		}
		woken++
		if expire == nil || !strings.HasPrefix(expire.Resource, "bellerophons") || expire.Target != "bellerophon" {
			t.Errorf("%s: want the Bellerophon watch of the subject expired, got %+v", p.Perturbation, expire)
			continue
		}
		if !(expire.At > hold.At && expire.At.D()+1600*time.Millisecond < hold.At.D()+hold.For.D()) {
			t.Errorf("%s: the expire at %s and its relist (up to 1.6s later) are not inside the hold %s..%s", p.Perturbation, expire.At.D(), hold.At.D(), hold.At.D()+hold.For.D())
		}
	}
	if woken == 0 || plain == 0 {
		t.Errorf("lag plans with a wake-up %d, without %d: want both", woken, plain)
	}
}

// A create whose name the server generates (a Pod of the read-your-writes
// story), applied and answered 504, is made again as a second object: its
// request-fault plan is marked Duplicates, says so in its Target, and comes
// first in its kind, before the repair of a ConfigMap created by name
// (whose create made again meets AlreadyExists). Before, the repair went
// first and the Pod create waited a round: timeout-as-failure was found at
// median plan 20.5 over ten seeds (random plans: 15).
func TestTargetedMarksAnUnknownOutcomeCreateOfAGeneratedNameFirst(t *testing.T) {
	s, err := scenarios.Get("read-your-writes")
	if err != nil {
		t.Fatal(err)
	}
	story := s.PlanFor("bellerophon")
	tr, err := sim.Run(t, scenarios.ReferencePlan(&story))
	if err != nil {
		t.Fatal(err)
	}
	plans, _ := scenarios.TargetedPlans(&story, tr, scenarios.TargetedOptions{})
	var timeouts []scenarios.Targeted
	for _, p := range plans {
		if p.Kind == scenarios.KindWriteTimesOut {
			timeouts = append(timeouts, p)
		}
		unknown := p.Kind == scenarios.KindWriteTimesOut || p.Kind == scenarios.KindTimeoutUnseen
		if p.Duplicates != (unknown && strings.HasPrefix(p.Target, "create pods")) {
			t.Errorf("%s (%s): Duplicates %v", p.Perturbation, p.Target, p.Duplicates)
		}
	}
	if len(timeouts) < 2 || !timeouts[0].Duplicates || !strings.Contains(timeouts[0].Target, "a name the server generates") {
		t.Fatalf("the 504 plans: want the Pod create's (marked Duplicates) first, before the ConfigMap's repair; got %d, first %+v", len(timeouts), timeouts[0])
	}
	if !slices.ContainsFunc(timeouts, func(p scenarios.Targeted) bool { return p.Repair && !p.Duplicates }) {
		t.Errorf("no repair among the 504 plans: the story shows nothing")
	}
}
