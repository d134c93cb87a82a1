package invariants_test

import (
	"testing"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/invariants/tracebuild"
	"github.com/cachelab/cachelab/sim"
)

// A reconcile of default/a that read a from the cache, got its Secret
// (404), created it and updated a's status: its reads and its k-th writes.
// Then a second worker overlaps a reconcile of b with one of a: each write
// goes to the reconcile of its object, or of its owner. A crash cuts the
// last reconcile.
func TestReconcilesPlaceReadsAndKthWritesInTheirReconcile(t *testing.T) {
	b := tracebuild.New("ctrl")
	a := b.Create("user", tracebuild.Obj{Resource: "foos", Namespace: "default", Name: "a"})
	bb := b.Create("user", tracebuild.Obj{Resource: "foos", Namespace: "default", Name: "b"})
	seen := b.Handle("ctrl", "foos", "ADDED", a)
	b.Handle("ctrl", "foos", "ADDED", bb)
	b.Add(sim.Record{Kind: sim.RecReconcile, Actor: "ctrl", Op: "start", Key: "default/a"})
	get := b.Request("ctrl", "get", "secrets", "default", "a", 404)
	secret := b.Create("ctrl", tracebuild.Obj{Resource: "secrets", Namespace: "default", Name: "a", Owner: a.UID})
	status := b.Update("ctrl", "update/status", a)
	b.Add(sim.Record{Kind: sim.RecReconcile, Actor: "ctrl", Op: "end", Key: "default/a", Result: "ok"})

	b.Add(sim.Record{Kind: sim.RecReconcile, Actor: "ctrl", Op: "start", Key: "default/b"})
	b.Add(sim.Record{Kind: sim.RecReconcile, Actor: "ctrl", Op: "start", Key: "default/a"})
	childOfB := b.Create("ctrl", tracebuild.Obj{Resource: "secrets", Namespace: "default", Name: "b-extra", Owner: bb.UID})
	secret.Spec = map[string]any{"n": "2"}
	updA := b.Update("ctrl", "update", secret)
	b.Add(sim.Record{Kind: sim.RecReconcile, Actor: "ctrl", Op: "end", Key: "default/b", Result: "ok"})
	b.Crash("ctrl")

	rs, unattributed := invariants.Reconciles(b.Trace("quiet"))
	if len(rs) != 3 || unattributed != 0 {
		t.Fatalf("%d reconciles, %d unattributed: want 3, 0: %+v", len(rs), unattributed, rs)
	}
	first := rs[0]
	if first.Key != "default/a" || first.Result != "ok" || first.Crashed {
		t.Errorf("first reconcile %+v", first)
	}
	if len(first.Reads) != 2 || first.Reads[0].Via != "cache" || first.Reads[0].Pos != seen.Pos || first.Reads[0].RV != a.RV ||
		first.Reads[1].Via != "get" || first.Reads[1].Pos != get.Pos || first.Reads[1].Code != 404 || first.Reads[1].RV != 0 {
		t.Errorf("first reconcile's reads %+v: want a from the cache at RV %d, then the Secret's 404", first.Reads, a.RV)
	}
	if len(first.Writes) != 2 || first.Writes[0].K != 1 || first.Writes[0].Verb != "create" || first.Writes[0].Resource != "secrets" ||
		first.Writes[1].K != 2 || first.Writes[1].Verb != "update/status" || first.Writes[1].RV != status.RV {
		t.Errorf("first reconcile's writes %+v: want 1 create of the Secret, 2 a's status", first.Writes)
	}
	ofB, ofA := rs[1], rs[2]
	if len(ofB.Writes) != 1 || ofB.Writes[0].Name != childOfB.Name {
		t.Errorf("b's reconcile wrote %+v, want its owned Secret b-extra", ofB.Writes)
	}
	if len(ofA.Writes) != 1 || ofA.Writes[0].RV != updA.RV || !ofA.Crashed || ofA.End < 0 {
		t.Errorf("a's second reconcile %+v: want the Secret's update, cut by the crash", ofA)
	}
}
