package store

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"pgregory.net/rapid"
)

// propState drives a store with random operations and remembers every
// event the store returned, in the order it returned them.
type propState struct {
	s      *Store
	events []Event
}

// record appends the events of one operation.
func (p *propState) record(t *rapid.T, evs []Event, err error) {
	if err != nil {
		t.Logf("  -> %v", err)
		return
	}
	p.events = append(p.events, evs...)
}

// objKey identifies an object across resources.
type objKey struct {
	gvr      schema.GroupVersionResource
	ns, name string
}

// stateAt rebuilds the state at revision r from the recorded events: the
// resourceVersion of every object alive at r.
func (p *propState) stateAt(r int64, gvr schema.GroupVersionResource) map[objKey]string {
	state := map[objKey]string{}
	for _, ev := range p.events {
		if ev.RV > r {
			break
		}
		if ev.GVR != gvr {
			continue
		}
		m, _ := meta.Accessor(ev.Object)
		k := objKey{ev.GVR, m.GetNamespace(), m.GetName()}
		if ev.Type == watch.Deleted {
			delete(state, k)
		} else {
			state[k] = m.GetResourceVersion()
		}
	}
	return state
}

var propGVRs = []schema.GroupVersionResource{configmapsGVR, podsGVR, widgetsGVR}

// TestWatchGuaranteesHoldOverRandomOperations checks etcd's watch
// guarantees on the store's history under random operation sequences:
// ordered, unique and atomic (every write is exactly one revision, in
// order), reliable (the history has no gaps), resumable (a watch from any
// revision in the window replays exactly the later events), bookmarkable
// (WatchList's end bookmark carries the state's revision), and that a list
// at revision r equals the state rebuilt from the watch history up to r.
func TestWatchGuaranteesHoldOverRandomOperations(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		window := rapid.Int64Range(3, 40).Draw(t, "window")
		s, clk := newTestStore(t, window)
		p := &propState{s: s}
		nsGen := rapid.SampledFrom([]string{"a", "b"})
		nameGen := rapid.SampledFrom([]string{"x", "y", "z", "w"})
		gvrGen := rapid.SampledFrom(propGVRs)
		newObj := func(gvr schema.GroupVersionResource, ns, name string) runtime.Object {
			switch gvr {
			case podsGVR:
				return pod(ns, name)
			case widgetsGVR:
				return widget(ns, name, 1)
			}
			return cm(ns, name, nil)
		}
		t.Repeat(map[string]func(*rapid.T){
			"create": func(t *rapid.T) {
				gvr, ns, name := gvrGen.Draw(t, "gvr"), nsGen.Draw(t, "ns"), nameGen.Draw(t, "name")
				obj := newObj(gvr, ns, name)
				o, _ := meta.Accessor(obj)
				if rapid.Bool().Draw(t, "finalizer") {
					o.SetFinalizers([]string{"lab.example.com/f"})
				}
				if rapid.Bool().Draw(t, "labelled") {
					o.SetLabels(map[string]string{"app": rapid.SampledFrom([]string{"p", "q"}).Draw(t, "app")})
				}
				if rapid.Bool().Draw(t, "owned") {
					og, oname := gvrGen.Draw(t, "ownerGVR"), nameGen.Draw(t, "owner")
					if owner, err := s.Get(og, ns, oname, metav1.GetOptions{}); err == nil {
						o.SetOwnerReferences([]metav1.OwnerReference{ownerRef(owner, rapid.Bool().Draw(t, "block"))})
					}
				}
				_, evs, err := s.Create(gvr, ns, obj, metav1.CreateOptions{})
				p.record(t, evs, err)
			},
			"patch": func(t *rapid.T) {
				gvr, ns, name := gvrGen.Draw(t, "gvr"), nsGen.Draw(t, "ns"), nameGen.Draw(t, "name")
				body := rapid.SampledFrom([]string{
					`{"metadata":{"labels":{"app":"p"}}}`,
					`{"metadata":{"labels":{"app":"q"}}}`,
					`{"metadata":{"finalizers":null}}`,
					`{"metadata":{"annotations":{"n":"` + strconv.Itoa(rapid.IntRange(0, 3).Draw(t, "n")) + `"}}}`,
				}).Draw(t, "body")
				_, evs, err := s.Patch(gvr, ns, name, types.MergePatchType, []byte(body), metav1.PatchOptions{}, "")
				p.record(t, evs, err)
			},
			"status": func(t *rapid.T) {
				ns, name := nsGen.Draw(t, "ns"), nameGen.Draw(t, "name")
				phase := rapid.SampledFrom([]string{"A", "B"}).Draw(t, "phase")
				_, evs, err := s.Patch(widgetsGVR, ns, name, types.MergePatchType, []byte(`{"status":{"phase":"`+phase+`"}}`), metav1.PatchOptions{}, "status")
				p.record(t, evs, err)
			},
			"delete": func(t *rapid.T) {
				gvr, ns, name := gvrGen.Draw(t, "gvr"), nsGen.Draw(t, "ns"), nameGen.Draw(t, "name")
				policy := rapid.SampledFrom([]metav1.DeletionPropagation{metav1.DeletePropagationBackground, metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan}).Draw(t, "policy")
				_, evs, err := s.Delete(gvr, ns, name, metav1.DeleteOptions{PropagationPolicy: &policy})
				p.record(t, evs, err)
			},
			"deletecollection": func(t *rapid.T) {
				gvr, ns := gvrGen.Draw(t, "gvr"), nsGen.Draw(t, "ns")
				evs, err := s.DeleteCollection(gvr, ns, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=p"})
				p.record(t, evs, err)
			},
			"compact": func(t *rapid.T) {
				rv := rapid.Int64Range(s.CompactedRV(), s.RV()).Draw(t, "compactTo")
				if err := s.Compact(rv); err != nil {
					t.Fatalf("Compact(%d) within [%d, %d]: %v", rv, s.CompactedRV(), s.RV(), err)
				}
			},
			"tick": func(t *rapid.T) {
				clk.Step(1e9)
			},
			"": func(t *rapid.T) { p.check(t) },
		})
	})
}

// check verifies the guarantees after every action.
func (p *propState) check(t *rapid.T) {
	s := p.s
	// Ordered, unique, atomic: every write is one revision, consecutive.
	for i, ev := range p.events {
		if want := int64(2 + i); ev.RV != want {
			t.Fatalf("event %d (%s %s) at RV %d, want %d: revisions must be consecutive, one per write", i, ev.Type, ev.GVR.Resource, ev.RV, want)
		}
		if ev.Type != watch.Added && ev.Type != watch.Modified && ev.Type != watch.Deleted {
			t.Fatalf("event %d has type %s", i, ev.Type)
		}
		if got := objectRV(ev.Object); got != ev.RV {
			t.Fatalf("event %d: object RV %d, event RV %d", i, got, ev.RV)
		}
	}
	if s.RV() != int64(len(p.events))+1 {
		t.Fatalf("store RV %d after %d writes, want %d", s.RV(), len(p.events), len(p.events)+1)
	}
	// Reliable: the history is exactly the recorded events after the
	// compacted revision.
	hist := s.History()
	if int64(len(hist)) != s.RV()-s.CompactedRV() {
		t.Fatalf("history holds %d events for revisions (%d, %d]", len(hist), s.CompactedRV(), s.RV())
	}
	for i, ev := range hist {
		want := p.events[ev.RV-2]
		if ev.RV != s.CompactedRV()+1+int64(i) || ev.Type != want.Type || ev.ByGC != want.ByGC || ev.Verb != want.Verb ||
			!apiequality.Semantic.DeepEqual(ev.Object, want.Object) || !apiequality.Semantic.DeepEqual(ev.Prev, want.Prev) {
			t.Fatalf("history[%d] = %s at %d: %v (prev %v), want the recorded %s at %d: %v (prev %v)", i, ev.Type, ev.RV, ev.Object, ev.Prev, want.Type, want.RV, want.Object, want.Prev)
		}
	}
	if int64(len(hist)) > s.window {
		t.Fatalf("history holds %d events, window is %d", len(hist), s.window)
	}
	from := rapid.Int64Range(s.CompactedRV(), s.RV()).Draw(t, "from")
	for _, gvr := range propGVRs {
		// Resumable: the suffix after any revision in the window.
		replay, start, err := s.WatchStart(gvr, "", metav1.ListOptions{ResourceVersion: strconv.FormatInt(from, 10)}, 0)
		if err != nil {
			t.Fatalf("watch %s from %d (window [%d, %d]): %v", gvr.Resource, from, s.CompactedRV(), s.RV(), err)
		}
		var want []string
		for _, ev := range p.events {
			if ev.RV > from && ev.GVR == gvr {
				want = append(want, fmt.Sprintf("%s@%d", ev.Type, ev.RV))
			}
		}
		var got []string
		for _, ev := range replay {
			got = append(got, fmt.Sprintf("%s@%d", ev.Type, ev.RV))
		}
		if !slices.Equal(want, got) || start != max(from, s.RV()) {
			t.Fatalf("watch %s from %d: start %d, replay %v, want start %d and %v", gvr.Resource, from, start, got, s.RV(), want)
		}
		// List at Exact r == state rebuilt from history up to r.
		list, _, err := s.List(gvr, "", metav1.ListOptions{ResourceVersion: strconv.FormatInt(from, 10), ResourceVersionMatch: metav1.ResourceVersionMatchExact}, 0)
		if err != nil {
			t.Fatalf("list %s at exact %d: %v", gvr.Resource, from, err)
		}
		items, _ := meta.ExtractList(list)
		got2 := map[objKey]string{}
		for _, it := range items {
			m, _ := meta.Accessor(it)
			got2[objKey{gvr, m.GetNamespace(), m.GetName()}] = m.GetResourceVersion()
		}
		if want := p.stateAt(from, gvr); !mapsEqual(want, got2) {
			t.Fatalf("list %s at exact %d = %v, state rebuilt from history = %v", gvr.Resource, from, got2, want)
		}
		// Bookmarkable: WatchList ends with a bookmark at the state's
		// revision, after exactly the current objects.
		initial, start, err := s.WatchStart(gvr, "", metav1.ListOptions{SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}, 0)
		if err != nil {
			t.Fatal(err)
		}
		last := initial[len(initial)-1]
		if last.Type != watch.Bookmark || last.RV != s.RV() || start != s.RV() {
			t.Fatalf("WatchList %s: last event %s at %d, start %d; want a bookmark at %d", gvr.Resource, last.Type, last.RV, start, s.RV())
		}
		got3 := map[objKey]string{}
		for _, ev := range initial[:len(initial)-1] {
			m, _ := meta.Accessor(ev.Object)
			got3[objKey{gvr, m.GetNamespace(), m.GetName()}] = m.GetResourceVersion()
		}
		if want := p.stateAt(s.RV(), gvr); !mapsEqual(want, got3) {
			t.Fatalf("WatchList %s initial state %v, rebuilt %v", gvr.Resource, got3, want)
		}
	}
}

// mapsEqual compares two states.
func mapsEqual(a, b map[objKey]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
