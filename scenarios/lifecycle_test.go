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

// The lifecycle workload is read from the reference alone: the
// Bellerophon the plan creates owns the ConfigMap and Pods the controller
// makes, so it is the main object; the workload deletes one of its
// children a second after the controller first acts on it, then deletes
// it and creates it again under the same name from the user's own JSON
// (a second later: its finalizer must go first).
// The targeted generators then hide that recreate behind a relist. A
// workload whose objects own nothing the controller made has no main
// object, and nothing is derived.
func TestLifecyclePlanDerivesARecreateAndAChildDeleteFromTheReference(t *testing.T) {
	web := `{"apiVersion":"lab.cachelab.dev/v1alpha1","kind":"Bellerophon","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":2,"version":"v1"}}`
	at := func(d time.Duration) sim.Duration { return sim.Duration(d) }
	base := &sim.Plan{Version: sim.PlanVersion, Name: "story", Seed: 7, Subject: "bellerophon",
		Kubelet:  &sim.Kubelet{ReadyAfter: at(time.Second)},
		Faults:   sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: at(20 * time.Millisecond)}},
		Deadline: at(2 * time.Minute),
		Steps: []sim.Step{
			{At: at(time.Second), Actor: "user", Op: "create", Object: json.RawMessage(web)},
			{At: at(9 * time.Second), Actor: "user", Op: "patch", Resource: "bellerophons", Namespace: "default", Name: "web", Patch: json.RawMessage(`{"spec":{"replicas":1}}`)},
		}}
	ref := scenarios.ReferencePlan(base)
	tr, err := sim.Run(t, ref)
	if err != nil {
		t.Fatal(err)
	}
	lo, why := scenarios.LifecyclePlan(ref, tr)
	if lo == nil {
		t.Fatalf("nothing derived: %s", why)
	}
	for _, s := range lo.Steps {
		t.Log(s)
	}
	p := lo.Plan
	if err := p.Validate(); err != nil {
		t.Fatalf("invalid lifecycle plan: %v", err)
	}
	if p.Name != "story-lifecycle" || len(p.Steps) != len(base.Steps)+3 {
		t.Errorf("plan %q with %d steps, want story-lifecycle with the workload's %d and 3 more", p.Name, len(p.Steps), len(base.Steps))
	}
	// The controller's first write on web: its first write after the
	// create at 1s.
	var act time.Duration
	for _, r := range tr.Records {
		if r.Kind == sim.RecWrite && r.Actor == "bellerophon" && r.At.D() >= time.Second {
			act = r.At.D()
			break
		}
	}
	var child, del, create *sim.Step
	for i, s := range p.Steps {
		switch {
		case s.Op == "delete" && s.Child != (sim.ChildRef{}):
			child = &p.Steps[i]
		case s.Op == "delete" && s.Name == "web":
			del = &p.Steps[i]
		case s.Op == "create" && s.At.D() > time.Second:
			create = &p.Steps[i]
		}
	}
	if child == nil || del == nil || create == nil {
		t.Fatalf("want a child delete, a delete of web and its create again; steps %+v", p.Steps)
	}
	if child.Child.Owner != "bellerophons.lab.cachelab.dev" || child.Child.OwnerName != "web" || child.At.D() != act+time.Second {
		t.Errorf("child delete %+v at %s, want one of web's children at %s", child.Child, child.At, act+time.Second)
	}
	// The Bellerophon has a finalizer: its successor comes a second
	// after the delete, once the controller has let it go.
	if del.At.D() != act+2*time.Second || create.At.D() != act+3*time.Second || string(create.Object) != web {
		t.Errorf("delete at %s, create at %s of %s; want them at %s and %s, the user's own object", del.At, create.At, create.Object, act+2*time.Second, act+3*time.Second)
	}
	// Its reference run shows the recreate, and the unobserved-state
	// generator hides it behind a relist.
	tr2, err := sim.Run(t, scenarios.ReferencePlan(p))
	if err != nil {
		t.Fatal(err)
	}
	plans, _ := scenarios.TargetedPlans(p, tr2, scenarios.TargetedOptions{})
	if !slices.ContainsFunc(plans, func(x scenarios.Targeted) bool {
		return x.Kind == scenarios.KindRecreateHidden && strings.Contains(x.Target, "created again under the same name")
	}) {
		t.Errorf("no %q plan of the lifecycle workload", scenarios.KindRecreateHidden)
	}

	// A ConfigMap owns nothing the Bellerophon made: no main object.
	none := &sim.Plan{Version: sim.PlanVersion, Name: "cm", Seed: 1, Subject: "bellerophon", Deadline: at(time.Minute),
		Objects: []json.RawMessage{json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}`)},
		Steps:   []sim.Step{{At: at(time.Second), Actor: "user", Op: "delete", Resource: "configmaps", Namespace: "default", Name: "c"}}}
	tr3, err := sim.Run(t, none)
	if err != nil {
		t.Fatal(err)
	}
	if lo, why := scenarios.LifecyclePlan(none, tr3); lo != nil || !strings.Contains(why, "no main object") {
		t.Errorf("derived %v (%q), want nothing: no main object", lo, why)
	}
}
