package fakeapi_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/fakeapi"
)

// delivery is one event a test consumer received, and when.
type delivery struct {
	name string
	typ  watch.EventType
	at   time.Duration
}

// consume reads w until it closes, recording names and times since start.
func consume(w watch.Interface, start time.Time) []delivery {
	var out []delivery
	for ev := range w.ResultChan() {
		d := delivery{typ: ev.Type, at: time.Since(start)}
		if m, err := meta.Accessor(ev.Object); err == nil {
			d.name = m.GetName()
		}
		out = append(out, d)
	}
	return out
}

// TestEventDelayNeverReordersOneStream: per-event delays that would reorder
// events if applied independently only hold later events back: event i is
// delivered at max(delivery of i-1, sent_i + delay_i).
func TestEventDelayNeverReordersOneStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		delays := map[string]time.Duration{"e0": 5 * time.Second, "e1": 1 * time.Second, "e2": 8 * time.Second, "e3": 0}
		hooks := fakeapi.HookFuncs{Delay: func(_ fakeapi.WatcherInfo, ev fakeapi.EventInfo) time.Duration { return delays[ev.Name] }}
		s, _ := newServer(t, fakeapi.Options{Hooks: hooks})
		c := s.Client("test")
		mustNamespace(t, c, "a")
		start := time.Now()
		w, err := c.Watch(t.Context(), cmGVR, "a", metav1.ListOptions{ResourceVersion: itoa(s.ResourceVersion())})
		if err != nil {
			t.Fatal(err)
		}
		var got []delivery
		done := make(chan struct{})
		go func() { got = consume(w, start); close(done) }()
		for i, name := range []string{"e0", "e1", "e2", "e3"} { // sent at 0s, 1s, 2s, 3s
			if i > 0 {
				time.Sleep(time.Second)
			}
			mustCreateCM(t, c, "a", name, nil)
		}
		time.Sleep(time.Minute)
		w.Stop()
		<-done
		want := []delivery{
			{"e0", watch.Added, 5 * time.Second},  // 0s + 5s
			{"e1", watch.Added, 5 * time.Second},  // 1s + 1s = 2s, held behind e0
			{"e2", watch.Added, 10 * time.Second}, // 2s + 8s
			{"e3", watch.Added, 10 * time.Second}, // 3s + 0s, held behind e2
		}
		if !slices.Equal(got, want) {
			t.Errorf("deliveries = %v, want %v", got, want)
		}
	})
}

// TestEventDelayInterleavesWatchersDifferently: two consumers, each with a
// pods watch and a configmaps watch, get different latencies per stream, so
// the same two writes (pod, then configmap) reach them in opposite orders.
func TestEventDelayInterleavesWatchersDifferently(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hooks := fakeapi.HookFuncs{Delay: func(w fakeapi.WatcherInfo, ev fakeapi.EventInfo) time.Duration {
			slowPods := w.Client == "x"
			if (w.Resource == podsGVR) == slowPods {
				return 10 * time.Second
			}
			return 0
		}}
		s, log := newServer(t, fakeapi.Options{Hooks: hooks})
		admin := s.Client("admin")
		mustNamespace(t, admin, "a")
		rv := itoa(s.ResourceVersion())
		var wg sync.WaitGroup
		var watches []watch.Interface
		for _, client := range []string{"x", "y"} {
			for _, gvr := range []schema.GroupVersionResource{podsGVR, cmGVR} {
				w, err := s.Client(client).Watch(t.Context(), gvr, "a", metav1.ListOptions{ResourceVersion: rv})
				if err != nil {
					t.Fatal(err)
				}
				watches = append(watches, w)
				wg.Go(func() { consume(w, time.Now()) })
			}
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
		if _, err := admin.Create(t.Context(), podsGVR, "a", pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		mustCreateCM(t, admin, "a", "c", nil)
		time.Sleep(time.Minute)
		for _, w := range watches {
			w.Stop()
		}
		wg.Wait()

		order := map[string][]string{}
		for _, o := range log.Kind(fakeapi.ObsDelivered) {
			order[o.Watcher.Client] = append(order[o.Watcher.Client], o.Name)
		}
		if got := order["x"]; !slices.Equal(got, []string{"c", "p"}) {
			t.Errorf("client x (slow pods) received %v, want [c p]", got)
		}
		if got := order["y"]; !slices.Equal(got, []string{"p", "c"}) {
			t.Errorf("client y (slow configmaps) received %v, want [p c]", got)
		}
	})
}

// TestCloseWatchCleanlyClosesAndAbruptlySendsInternalError: what a consumer
// of the watch channel sees for each control.
func TestCloseWatchCleanlyClosesAndAbruptlySendsInternalError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, log := newServer(t, fakeapi.Options{})
		c := s.Client("test")
		mustNamespace(t, c, "a")
		open := func() (watch.Interface, fakeapi.WatcherID) {
			w, err := c.Watch(t.Context(), cmGVR, "a", metav1.ListOptions{ResourceVersion: itoa(s.ResourceVersion())})
			if err != nil {
				t.Fatal(err)
			}
			ws := s.Watchers()
			return w, ws[len(ws)-1].ID
		}

		clean, id := open()
		if err := s.CloseWatch(id, false); err != nil {
			t.Fatal(err)
		}
		if evs := consume(clean, time.Now()); len(evs) != 0 {
			t.Errorf("clean close delivered %v, want the channel closed with no event", evs)
		}

		abrupt, id := open()
		if err := s.CloseWatch(id, true); err != nil {
			t.Fatal(err)
		}
		ev, ok := <-abrupt.ResultChan()
		if !ok || ev.Type != watch.Error {
			t.Fatalf("abrupt close delivered %v (open %v), want an ERROR event", ev, ok)
		}
		if err := apierrors.FromObject(ev.Object); !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "INTERNAL_ERROR") {
			t.Errorf("abrupt close error = %v, want a 500 InternalError about the stream", err)
		}
		if _, ok := <-abrupt.ResultChan(); ok {
			t.Errorf("channel still open after the abrupt close's error")
		}

		expired, id := open()
		if err := s.ExpireWatch(id); err != nil {
			t.Fatal(err)
		}
		ev = <-expired.ResultChan()
		if err := apierrors.FromObject(ev.Object); ev.Type != watch.Error || !apierrors.IsResourceExpired(err) {
			t.Errorf("expired watch delivered %v (%v), want a 410 Expired ERROR", ev.Type, err)
		}
		if _, ok := <-expired.ResultChan(); ok {
			t.Errorf("channel still open after the 410")
		}
		synctest.Wait()
		var reasons []string
		for _, o := range log.Kind(fakeapi.ObsWatchClose) {
			reasons = append(reasons, string(o.Reason))
		}
		if want := []string{fakeapi.CloseClean, fakeapi.CloseBroken, fakeapi.CloseExpired}; !slices.Equal(reasons, want) {
			t.Errorf("close reasons = %v, want %v", reasons, want)
		}
		if err := s.CloseWatch(id, false); !errors.Is(err, fakeapi.ErrNoSuchWatch) {
			t.Errorf("closing a closed watch: err = %v, want ErrNoSuchWatch", err)
		}
	})
}

// TestWatchTimeoutSecondsClosesCleanly: timeoutSeconds ends the watch at
// that virtual time with a clean close.
func TestWatchTimeoutSecondsClosesCleanly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, log := newServer(t, fakeapi.Options{})
		c := s.Client("test")
		timeout := int64(300)
		start := time.Now()
		w, err := c.Watch(t.Context(), cmGVR, "", metav1.ListOptions{ResourceVersion: itoa(s.ResourceVersion()), TimeoutSeconds: &timeout})
		if err != nil {
			t.Fatal(err)
		}
		if evs := consume(w, start); len(evs) != 0 {
			t.Errorf("events = %v, want none", evs)
		}
		if got := time.Since(start); got != 300*time.Second {
			t.Errorf("watch closed after %v, want 5m0s", got)
		}
		synctest.Wait()
		if closes := log.Kind(fakeapi.ObsWatchClose); len(closes) != 1 || closes[0].Reason != fakeapi.CloseTimeout {
			t.Errorf("close observations = %+v, want one timeout", closes)
		}
	})
}

// TestBookmarksCarryTheLatestRevisionOfQuietWatch: a watch of a quiet
// namespace that asked for bookmarks receives, every BookmarkInterval, an
// empty ConfigMap carrying the latest revision, advanced by writes elsewhere.
func TestBookmarksCarryTheLatestRevisionOfQuietWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newServer(t, fakeapi.Options{BookmarkInterval: time.Minute})
		c := s.Client("test")
		mustNamespace(t, c, "quiet")
		mustNamespace(t, c, "busy")
		w, err := c.Watch(t.Context(), cmGVR, "quiet", metav1.ListOptions{ResourceVersion: itoa(s.ResourceVersion()), AllowWatchBookmarks: true})
		if err != nil {
			t.Fatal(err)
		}
		var evs []watch.Event
		done := make(chan struct{})
		go func() {
			for ev := range w.ResultChan() {
				evs = append(evs, ev)
			}
			close(done)
		}()
		time.Sleep(30 * time.Second)
		mustCreateCM(t, c, "busy", "x", nil)
		want := itoa(s.ResourceVersion())
		time.Sleep(45 * time.Second)
		w.Stop()
		<-done
		if len(evs) != 1 || evs[0].Type != watch.Bookmark {
			t.Fatalf("events = %v, want one bookmark", evs)
		}
		cm, ok := evs[0].Object.(*corev1.ConfigMap)
		if !ok || cm.ResourceVersion != want || cm.Name != "" {
			t.Errorf("bookmark object = %#v, want an empty *v1.ConfigMap at resourceVersion %s", evs[0].Object, want)
		}
	})
}

// TestWatchStopAndContextEndReleaseTheDeliveryGoroutine: a watch ends (and
// its goroutine exits, or synctest would report it) on Stop and on ctx end,
// even with events still queued behind a long delay.
func TestWatchStopAndContextEndReleaseTheDeliveryGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hooks := fakeapi.HookFuncs{Delay: func(fakeapi.WatcherInfo, fakeapi.EventInfo) time.Duration { return time.Hour }}
		s, log := newServer(t, fakeapi.Options{Hooks: hooks})
		c := s.Client("test")
		mustNamespace(t, c, "a")
		w1, err := c.Watch(t.Context(), cmGVR, "a", metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		if _, err := c.Watch(ctx, cmGVR, "a", metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		mustCreateCM(t, c, "a", "held", nil)
		w1.Stop()
		cancel()
		synctest.Wait()
		if n := len(s.Watchers()); n != 0 {
			t.Errorf("open watches = %d, want 0", n)
		}
		var reasons []string
		for _, o := range log.Kind(fakeapi.ObsWatchClose) {
			reasons = append(reasons, string(o.Reason))
		}
		slices.Sort(reasons)
		if want := []string{fakeapi.CloseContext, fakeapi.CloseStopped}; !slices.Equal(reasons, want) {
			t.Errorf("close reasons = %v, want %v", reasons, want)
		}
	})
}

// TestWatchListSendsInitialEventsThenEndBookmarkThenLiveEvents: the raw
// WatchList stream: one ADDED per object, the BOOKMARK annotated
// k8s.io/initial-events-end at the list's revision, then live events; the
// sent observations flag the initial ones.
func TestWatchListSendsInitialEventsThenEndBookmarkThenLiveEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, log := newServer(t, fakeapi.Options{})
		c := s.Client("test")
		mustNamespace(t, c, "a")
		mustCreateCM(t, c, "a", "one", nil)
		mustCreateCM(t, c, "a", "two", nil)
		listRV := itoa(s.ResourceVersion())
		yes := true
		w, err := c.Watch(t.Context(), cmGVR, "a", metav1.ListOptions{
			SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for range 3 {
			ev := <-w.ResultChan()
			m, _ := meta.Accessor(ev.Object)
			got = append(got, string(ev.Type)+" "+m.GetName()+" "+m.GetResourceVersion()+" "+m.GetAnnotations()[metav1.InitialEventsAnnotationKey])
		}
		mustCreateCM(t, c, "a", "three", nil)
		ev := <-w.ResultChan()
		w.Stop()
		slices.Sort(got[:2]) // initial events come in no promised order
		if got[2] != "BOOKMARK  "+listRV+" true" || !strings.HasPrefix(got[0], "ADDED one ") || !strings.HasPrefix(got[1], "ADDED two ") {
			t.Errorf("initial stream = %q, want ADDED one, ADDED two, BOOKMARK at %s with the initial-events-end annotation", got, listRV)
		}
		if m, _ := meta.Accessor(ev.Object); ev.Type != watch.Added || m.GetName() != "three" {
			t.Errorf("live event = %s %v, want ADDED three", ev.Type, ev.Object)
		}
		var initial []bool
		for _, o := range log.Kind(fakeapi.ObsSent) {
			initial = append(initial, o.Event.InitialEvent)
		}
		if !slices.Equal(initial, []bool{true, true, true, false}) {
			t.Errorf("sent observations flag initial events as %v, want [true true true false]", initial)
		}
	})
}
