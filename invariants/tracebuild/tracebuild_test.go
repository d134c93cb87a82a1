package tracebuild

import (
	"testing"

	"github.com/cachelab/cachelab/sim"
)

func TestRecordsArePositionedAndWritesGetIncreasingRVs(t *testing.T) {
	b := New("ctrl")
	a := b.Create("user", Obj{Resource: "pods", Name: "a"})
	c := b.Create("user", Obj{Resource: "pods", Name: "c"})
	tr := b.Trace("quiet")
	for i, r := range tr.Records {
		if r.Pos != i {
			t.Fatalf("record %d has Pos %d", i, r.Pos)
		}
	}
	if a.RV != 1 || c.RV != 2 || a.UID == c.UID || a.UID == "" {
		t.Fatalf("writes got RVs %d, %d and UIDs %q, %q", a.RV, c.RV, a.UID, c.UID)
	}
}

func TestDeleteWithFinalizersOnlyMarksTheObjectTerminating(t *testing.T) {
	b := New("ctrl")
	b.Create("user", Obj{Resource: "pods", Name: "a", Finalizers: []string{"f"}})
	d := b.Delete("user", "pods", "", "a")
	if !d.Terminating {
		t.Fatal("delete of an object with finalizers did not mark it terminating")
	}
	if _, ok := b.Get("pods", "", "a"); !ok {
		t.Fatal("an object with finalizers was removed by delete")
	}
	d.Finalizers = nil
	b.Update("ctrl", "update", d)
	if _, ok := b.Get("pods", "", "a"); ok {
		t.Fatal("removing the last finalizer of a terminating object did not remove it")
	}
	fin := b.Final()
	if fin.Kind != sim.RecFinal || len(fin.Objects) != 0 {
		t.Fatalf("final = %+v, want an empty server", fin)
	}
}
