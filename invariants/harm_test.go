package invariants_test

import (
	"strings"
	"testing"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/invariants/tracebuild"
	"github.com/cachelab/cachelab/sim"
)

// predecessorRun: the user creates p (with ctrl's finalizer), ctrl creates
// its child p-child; the user deletes p, ctrl finalizes it; the user
// creates p again (a new UID), ctrl creates the new p's p-child. Then ctrl
// crashes and restarts. It returns the builder, the two incarnations of p
// as last written, and the live child.
func predecessorRun() (b *tracebuild.Builder, old, cur, child tracebuild.Obj) {
	b = tracebuild.New(ctrl)
	rec := func(key string, do func()) {
		b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "start", Key: key})
		do()
		b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "end", Key: key, Result: "ok"})
	}
	b.At(1 * sec)
	old = b.Create("user", tracebuild.Obj{Resource: "bellerophons", Namespace: "ns", Name: "p", Finalizers: []string{"ctrl/cleanup"}})
	b.Handle(ctrl, "bellerophons", "ADDED", old)
	rec("ns/p", func() {
		b.Create(ctrl, tracebuild.Obj{Resource: "configmaps", Namespace: "ns", Name: "p-child", Owner: old.UID})
	})
	b.At(2 * sec)
	old = b.Delete("user", "bellerophons", "ns", "p") // terminating
	terminating := old
	b.Handle(ctrl, "bellerophons", "MODIFIED", old)
	rec("ns/p", func() {
		b.Delete("gc", "configmaps", "ns", "p-child")
		gone := old
		gone.Finalizers = nil
		b.Update(ctrl, "update", gone)
	})
	b.Handle(ctrl, "bellerophons", "DELETED", old)
	b.At(3 * sec)
	cur = b.Create("user", tracebuild.Obj{Resource: "bellerophons", Namespace: "ns", Name: "p", Finalizers: []string{"ctrl/cleanup"}})
	b.Handle(ctrl, "bellerophons", "ADDED", cur)
	rec("ns/p", func() {
		child = b.Create(ctrl, tracebuild.Obj{Resource: "configmaps", Namespace: "ns", Name: "p-child", Owner: cur.UID})
	})
	b.Handle(ctrl, "configmaps", "ADDED", child)
	b.At(4 * sec)
	b.Crash(ctrl)
	b.Restart(ctrl)
	return b, terminating, cur, child
}

// Issue 28 item 5, written from scratch: after a restart onto a stale list
// that still shows the deleted predecessor terminating, the controller
// runs its cleanup by name and deletes the live owner's child; it
// recreates it later (the end state is fine). It fails, naming the stale
// read and the delete.
func TestDeletingALiveOwnersChildFromAViewOfItsDeletedPredecessorFailsNoStaleHarm(t *testing.T) {
	b, old, cur, _ := predecessorRun()
	stale := b.HandleInitial(ctrl, "bellerophons", old)
	var del int
	b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "start", Key: "ns/p"})
	b.Delete(ctrl, "configmaps", "ns", "p-child")
	del = b.Last()
	b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "end", Key: "ns/p", Result: "ok"})
	b.At(5 * sec)
	b.HandleUpdate(ctrl, "bellerophons", old, cur)
	b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "start", Key: "ns/p"})
	b.Create(ctrl, tracebuild.Obj{Resource: "configmaps", Namespace: "ns", Name: "p-child", Owner: cur.UID})
	b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "end", Key: "ns/p", Result: "ok"})
	b.Final()
	v := invariants.NoStaleHarm(b.Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, del, stale.Pos)
	for _, want := range []string{"delete of configmaps/ns/p-child", "predecessor", "terminating", cur.UID} {
		if !strings.Contains(v.Reason, want) {
			t.Errorf("reason lacks %q: %s", want, v.Reason)
		}
	}
}

// The idiomatic controller: after the restart its list shows the live
// owner, and it updates the live owner's child from that view. Passes.
func TestUpdatingALiveOwnersChildFromAViewOfThatOwnerPassesNoStaleHarm(t *testing.T) {
	b, _, cur, child := predecessorRun()
	b.HandleInitial(ctrl, "bellerophons", cur)
	b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "start", Key: "ns/p"})
	child.Spec = map[string]any{"data": "v2"}
	b.Update(ctrl, "update", child)
	b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "end", Key: "ns/p", Result: "ok"})
	b.Final()
	wantStatus(t, invariants.NoStaleHarm(b.Trace("quiet")), invariants.Pass)
}

// Time travel: after the restart a stale list shows the live owner at a
// version older than one the earlier process had been shown (the user's
// spec change missing), and the controller rolls the child back from it.
func TestOverwritingAChildFromAnOwnerOlderThanTheSubjectHadSeenFailsNoStaleHarm(t *testing.T) {
	b := tracebuild.New(ctrl)
	p := b.Create("user", tracebuild.Obj{Resource: "bellerophons", Namespace: "ns", Name: "p", Spec: map[string]any{"version": "1"}})
	b.Handle(ctrl, "bellerophons", "ADDED", p)
	child := b.Create(ctrl, tracebuild.Obj{Resource: "configmaps", Namespace: "ns", Name: "p-child", Owner: p.UID, Spec: map[string]any{"version": "1"}})
	p2 := p
	p2.Spec = map[string]any{"version": "2"}
	p2 = b.Update("user", "update", p2)
	b.HandleUpdate(ctrl, "bellerophons", p, p2)
	child.Spec = map[string]any{"version": "2"}
	child = b.Update(ctrl, "update", child)
	b.Crash(ctrl)
	b.Restart(ctrl)
	stale := b.HandleInitial(ctrl, "bellerophons", p)
	b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "start", Key: "ns/p"})
	child.Spec = map[string]any{"version": "1"}
	b.Update(ctrl, "update", child)
	back := b.Last()
	v := invariants.NoStaleHarm(b.Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, back, stale.Pos)
	if !strings.Contains(v.Reason, "spec.version") {
		t.Errorf("reason should name the field that went back: %s", v.Reason)
	}
}

// H4a's WebApp (stale-delete, 12:20): the children share the owner's name
// (services/a, deployments/a): the view of the owner's key is the owner's
// resource's, not the latest handler call of any object named a.
func TestAStaleOwnerViewCountsWhenChildrenShareItsName(t *testing.T) {
	b, old, _, _ := predecessorRun()
	svc, _ := b.Get("configmaps", "ns", "p-child")
	b.HandleInitial(ctrl, "bellerophons", old)
	same := b.Create(ctrl, tracebuild.Obj{Resource: "services", Namespace: "ns", Name: "p", Owner: svc.Owner})
	b.Handle(ctrl, "services", "ADDED", same)
	b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "start", Key: "ns/p"})
	b.Delete(ctrl, "services", "ns", "p")
	wantStatus(t, invariants.NoStaleHarm(b.Trace("quiet")), invariants.Fail)
}
