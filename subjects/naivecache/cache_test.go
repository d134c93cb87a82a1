package naivecache

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	st "github.com/cachelab/cachelab/subjects/internal/subjecttest"
)

func TestApplyFollowsTheOriginNotesRules(t *testing.T) {
	a1 := st.ConfigMap("ns", "a", "uid-1", 10, map[string]string{"k": "1"})
	a2 := st.ConfigMap("ns", "a", "uid-1", 11, map[string]string{"k": "2"})
	a3 := st.ConfigMap("ns", "a", "uid-2", 13, nil) // recreated: new UID
	b := st.ConfigMap("ns", "b", "uid-b", 12, nil)
	steps := []struct {
		typ      watch.EventType
		obj      *corev1.ConfigMap
		rule     Rule
		note     string
		oldRV    string // "" = no old object
		cachedRV string // "" = not cached after
	}{
		{watch.Deleted, a1, RuleDeleteUnknown, NoteDeleteUnknown, "", ""},
		{watch.Added, a1, RuleCreate, "", "", "10"},
		{watch.Modified, a2, RuleUpdate, "", "10", "11"},
		{watch.Modified, b, RuleUpdateUnknown, NoteUpdateUnknown, "", "12"},
		{watch.Added, a3, RuleCreateKnown, NoteCreateKnown, "11", "13"},
		{watch.Deleted, a3, RuleDelete, "", "13", ""},
		{watch.Deleted, a3, RuleDeleteUnknown, NoteDeleteUnknown, "", ""},
	}
	c := NewCache()
	for i, s := range steps {
		out, err := c.Apply(s.typ, s.obj)
		if err != nil {
			t.Fatalf("step %d (%s %s): %v", i, s.typ, s.obj.Name, err)
		}
		if out.Rule != s.rule || out.Note != s.note || out.Key != "ns/"+s.obj.Name {
			t.Errorf("step %d (%s %s rv %s): got rule %q note %q key %q, want rule %q note %q key %q",
				i, s.typ, s.obj.Name, s.obj.ResourceVersion, out.Rule, out.Note, out.Key, s.rule, s.note, "ns/"+s.obj.Name)
		}
		if got := rvOrEmpty(out.Old); got != s.oldRV {
			t.Errorf("step %d: old object rv %q, want %q", i, got, s.oldRV)
		}
		obj, ok := c.Get("ns/" + s.obj.Name)
		if got := rvOrEmpty(obj); ok != (s.cachedRV != "") || got != s.cachedRV {
			t.Errorf("step %d: cached rv %q (present %v), want %q", i, got, ok, s.cachedRV)
		}
	}
	if got := c.Keys(); len(got) != 1 || got[0] != "ns/b" {
		t.Errorf("keys at the end: %v, want [ns/b]", got)
	}
}

func rvOrEmpty(obj runtime.Object) string {
	if obj == nil {
		return ""
	}
	return obj.(*corev1.ConfigMap).ResourceVersion
}

func TestApplyRejectsEventsItCannotApply(t *testing.T) {
	c := NewCache()
	for _, tc := range []struct {
		name string
		typ  watch.EventType
		obj  runtime.Object
	}{
		{"bookmark", watch.Bookmark, st.ConfigMap("ns", "a", "u", 1, nil)},
		{"error", watch.Error, &metav1.Status{Code: 410}},
		{"nil object", watch.Added, nil},
		{"no name", watch.Added, &corev1.ConfigMap{}},
		{"no metadata", watch.Added, &runtime.Unknown{}},
	} {
		if _, err := c.Apply(tc.typ, tc.obj); !errors.Is(err, ErrBadEvent) {
			t.Errorf("%s: err = %v, want ErrBadEvent", tc.name, err)
		}
	}
	if c.Len() != 0 {
		t.Errorf("rejected events changed the cache: %v", c.Keys())
	}
}

func TestCacheNeverSharesMemoryWithEventsOrReaders(t *testing.T) {
	c := NewCache()
	ev := st.ConfigMap("ns", "a", "u", 1, map[string]string{"k": "v"})
	if _, err := c.Apply(watch.Added, ev); err != nil {
		t.Fatal(err)
	}
	ev.Data["k"] = "changed by the producer"
	got, _ := c.Get("ns/a")
	got.(*corev1.ConfigMap).Data["k"] = "changed by a reader"
	again, _ := c.Get("ns/a")
	if v := again.(*corev1.ConfigMap).Data["k"]; v != "v" {
		t.Errorf("cached data k = %q, want %q: the cache shares memory", v, "v")
	}
}

func TestReadersAndTheWriterRunConcurrentlyWithoutRaces(t *testing.T) {
	// Run with -race: one writer (as the watch loop) and readers of the same
	// entries through the per-entry locks.
	c := NewCache()
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 200 {
			cm := st.ConfigMap("ns", []string{"a", "b"}[i%2], "u", i+1, map[string]string{"i": "x"})
			typ := watch.Modified
			if i%7 == 0 {
				typ = watch.Deleted
			}
			if _, err := c.Apply(typ, cm); err != nil {
				t.Error(err)
			}
		}
	})
	for range 3 {
		wg.Go(func() {
			for range 200 {
				if obj, ok := c.Get("ns/a"); ok {
					obj.(*corev1.ConfigMap).Data["mine"] = "ok"
				}
				for _, o := range c.List() {
					_ = o.(*corev1.ConfigMap).ResourceVersion
				}
			}
		})
	}
	wg.Wait()
}

func TestFIFOHandsOutDuplicateKeysInArrivalOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewFIFO()
		for _, k := range []string{"a", "b", "a"} {
			q.Add(k)
		}
		var got []string
		for range 3 {
			k, ok := q.Get()
			if !ok {
				t.Fatal("queue closed early")
			}
			got = append(got, k)
		}
		if want := []string{"a", "b", "a"}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Errorf("got %v, want %v (no de-duplication)", got, want)
		}
		done := make(chan bool)
		go func() { _, ok := q.Get(); done <- ok }()
		synctest.Wait()
		q.Close()
		if ok := <-done; ok {
			t.Error("Get on a closed queue returned ok")
		}
		q.Add("late")
		if q.Len() != 0 {
			t.Error("Add after Close queued a key")
		}
	})
}
