package fakeapi_test

import (
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/fakeapi"
)

// collect reads w's events until it closes or d passes (virtual time).
func collect(w watch.Interface, d time.Duration) []watch.Event {
	var evs []watch.Event
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return evs
			}
			evs = append(evs, ev)
		case <-timer.C:
			w.Stop()
			return evs
		}
	}
}

// TestWatchFromFutureResourceVersionGetsNoOlderEvent: a watch from a
// resourceVersion ahead of the server receives no event at or below it
// (the watch cache's watchers skip them; fidelity case watch-future-rv),
// and the first write past it arrives.
func TestWatchFromFutureResourceVersionGetsNoOlderEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newServer(t, fakeapi.Options{})
		c := s.Client("test")
		mustNamespace(t, c, "a")
		start := s.ResourceVersion() + 3
		w, err := c.Watch(t.Context(), cmGVR, "a", metav1.ListOptions{ResourceVersion: itoa(start), AllowWatchBookmarks: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"b", "c", "d", "e"} { // RVs start-2 .. start+1
			mustCreateCM(t, c, "a", n, nil)
		}
		evs := collect(w, 2*time.Minute)
		var got []string
		for _, ev := range evs {
			if ev.Type != watch.Bookmark {
				got = append(got, string(ev.Type)+" "+metaName(t, ev.Object))
			}
			if rv := metaRV(t, ev.Object); rv <= start && ev.Type != watch.Bookmark || rv < start {
				t.Errorf("event %s at resourceVersion %d, at or below the watch's %d", ev.Type, rv, start)
			}
		}
		if len(got) != 1 || got[0] != "ADDED e" {
			t.Errorf("events = %v, want only ADDED e (the write past the watch's resourceVersion)", got)
		}
	})
}

// TestBookmarkJustBeforeWatchTimeout: a watch with allowWatchBookmarks and
// timeoutSeconds gets a BOOKMARK 2 s before the server closes it, even
// when the periodic bookmark is far off (fidelity case
// watch-bookmark-before-timeout); without allowWatchBookmarks it gets none.
func TestBookmarkJustBeforeWatchTimeout(t *testing.T) {
	for _, bookmarks := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			s, _ := newServer(t, fakeapi.Options{BookmarkInterval: time.Hour})
			c := s.Client("test")
			mustNamespace(t, c, "a")
			timeout := int64(5)
			w, err := c.Watch(t.Context(), cmGVR, "a", metav1.ListOptions{ResourceVersion: itoa(s.ResourceVersion()), AllowWatchBookmarks: bookmarks, TimeoutSeconds: &timeout})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			mustCreateCM(t, c, "a", "x", nil)
			var types []watch.EventType
			var bookmarkAt time.Duration
			for ev := range w.ResultChan() {
				types = append(types, ev.Type)
				if ev.Type == watch.Bookmark {
					bookmarkAt = time.Since(start)
				}
			}
			closedAt := time.Since(start)
			if closedAt != 5*time.Second {
				t.Errorf("the watch closed after %v, want 5s", closedAt)
			}
			switch {
			case bookmarks && (len(types) != 2 || types[1] != watch.Bookmark || bookmarkAt != 3*time.Second):
				t.Errorf("with bookmarks: events %v (bookmark at %v), want ADDED then a BOOKMARK at 3s", types, bookmarkAt)
			case !bookmarks && len(types) != 1:
				t.Errorf("without bookmarks: events %v, want ADDED only", types)
			}
		})
	}
}

func metaName(t *testing.T, obj runtime.Object) string {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return m.GetName()
}

func metaRV(t *testing.T, obj runtime.Object) int64 {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
