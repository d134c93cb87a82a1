package naivecache

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"pgregory.net/rapid"

	st "github.com/cachelab/cachelab/subjects/internal/subjecttest"
)

// model is a tiny server: live objects by name, one global resourceVersion,
// and the watch events its writes produce.
type model struct {
	rv   int
	uids int
	live map[string]*corev1.ConfigMap
}

func newModel() *model { return &model{live: map[string]*corev1.ConfigMap{}} }

// step performs one drawn write on name and returns its watch event.
func (m *model) step(t *rapid.T, name string) watch.Event {
	m.rv++
	cur, exists := m.live[name]
	switch {
	case !exists:
		m.uids++
		cm := st.ConfigMap("ns", name, fmt.Sprintf("uid-%d", m.uids), m.rv, nil)
		m.live[name] = cm
		return watch.Event{Type: watch.Added, Object: cm.DeepCopy()}
	case rapid.Bool().Draw(t, "delete "+name):
		delete(m.live, name)
		gone := cur.DeepCopy()
		gone.ResourceVersion = fmt.Sprint(m.rv)
		return watch.Event{Type: watch.Deleted, Object: gone}
	default:
		up := cur.DeepCopy()
		up.ResourceVersion = fmt.Sprint(m.rv)
		m.live[name] = up
		return watch.Event{Type: watch.Modified, Object: up.DeepCopy()}
	}
}

// state is what a cache or the model holds: key -> uid@rv.
func state(objs map[string]*corev1.ConfigMap) map[string]string {
	out := map[string]string{}
	for n, cm := range objs {
		out["ns/"+n] = fmt.Sprintf("%s@%s", cm.UID, cm.ResourceVersion)
	}
	return out
}

func cacheState(c *Cache) map[string]string {
	out := map[string]string{}
	for _, o := range c.List() {
		cm := o.(*corev1.ConfigMap)
		out["ns/"+cm.Name] = fmt.Sprintf("%s@%s", cm.UID, cm.ResourceVersion)
	}
	return out
}

var names = []string{"a", "b", "c"}

// TestCacheFedEveryEventInOrderEqualsTheServerAndNeverLogs: when no event is
// lost or reordered, the notes' rules are enough: the map equals the server
// after every event and none of the "should not happen" notes is written.
func TestCacheFedEveryEventInOrderEqualsTheServerAndNeverLogs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m, c := newModel(), NewCache()
		for i := range rapid.IntRange(1, 40).Draw(t, "writes") {
			ev := m.step(t, rapid.SampledFrom(names).Draw(t, fmt.Sprintf("object %d", i)))
			out, err := c.Apply(ev.Type, ev.Object)
			if err != nil {
				t.Fatal(err)
			}
			if out.Note != "" {
				t.Fatalf("write %d (%s): note %q on an in-order, gap-free stream", i, ev.Type, out.Note)
			}
			if got, want := cacheState(c), state(m.live); !maps.Equal(got, want) {
				t.Fatalf("after write %d: cache %v, server %v", i, got, want)
			}
		}
	})
}

// TestNaiveRelistLeaksExactlyTheObjectsDeletedDuringTheGap characterises the
// naive relist: after a gap of lost events and a relist replayed as create
// events, every live object is cached in its current state, and the only
// extra keys are those cached before the gap whose object is gone now, each
// frozen in its pre-gap state.
func TestNaiveRelistLeaksExactlyTheObjectsDeletedDuringTheGap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m, c := newModel(), NewCache()
		for i := range rapid.IntRange(0, 15).Draw(t, "writes before the gap") {
			ev := m.step(t, rapid.SampledFrom(names).Draw(t, fmt.Sprintf("object %d", i)))
			if _, err := c.Apply(ev.Type, ev.Object); err != nil {
				t.Fatal(err)
			}
		}
		before := cacheState(c)
		for i := range rapid.IntRange(1, 15).Draw(t, "writes lost in the gap") {
			m.step(t, rapid.SampledFrom(names).Draw(t, fmt.Sprintf("lost object %d", i)))
		}
		for _, n := range slices.Sorted(maps.Keys(m.live)) {
			if _, err := c.Apply(watch.Added, m.live[n].DeepCopy()); err != nil {
				t.Fatal(err)
			}
		}
		want := state(m.live)
		for k, v := range before {
			if _, live := want[k]; !live {
				want[k] = v // deleted during the gap: leaked as it was
			}
		}
		if got := cacheState(c); !maps.Equal(got, want) {
			t.Fatalf("cache after the relist %v, want %v (server %v, cached before the gap %v)", got, want, state(m.live), before)
		}
	})
}
