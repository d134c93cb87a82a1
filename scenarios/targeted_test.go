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
