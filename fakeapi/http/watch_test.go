package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/cachelab/cachelab/fakeapi"
)

// next receives one event, failing the test if none comes within a minute
// of virtual time.
func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed, want an event")
		}
		return ev
	case <-time.After(time.Minute):
		t.Fatal("no event within a minute")
	}
	return watch.Event{}
}

// closedWithin checks the watch's channel closes within d.
func closedWithin(t *testing.T, w watch.Interface, d time.Duration) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Fatalf("got %s event, want the watch closed", ev.Type)
		}
	case <-time.After(d):
		t.Fatalf("watch still open after %v", d)
	}
}

func eventName(ev watch.Event) string {
	if cm, ok := ev.Object.(*corev1.ConfigMap); ok {
		return string(ev.Type) + " " + cm.Name
	}
	return string(ev.Type)
}

// TestWatchOverHTTPStreamsEventsInOrderAndClosesCleanlyAtTimeout: a typed
// watch over the pipe gets ADDED, MODIFIED and DELETED as they happen, and
// the stream ends (channel closed, no error event) when timeoutSeconds
// elapses; the server's watch is gone.
func TestWatchOverHTTPStreamsEventsInOrderAndClosesCleanlyAtTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		cs := e.clientset(t, "watcher")
		ctx := context.Background()
		mustNamespace(t, cs, "a")
		list, err := cs.CoreV1().ConfigMaps("a").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		w, err := cs.CoreV1().ConfigMaps("a").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, TimeoutSeconds: ptr.To[int64](30)})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		c := mustCM(t, cs, "a", "one", nil)
		c.Data = map[string]string{"k": "v"}
		if _, err := cs.CoreV1().ConfigMaps("a").Update(ctx, c, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cs.CoreV1().ConfigMaps("a").Delete(ctx, "one", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		var got []string
		for range 3 {
			got = append(got, eventName(next(t, w)))
		}
		want := []string{"ADDED one", "MODIFIED one", "DELETED one"}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("events = %v, want %v", got, want)
		}
		closedWithin(t, w, time.Minute)
		if d := time.Since(start); d != 30*time.Second {
			t.Errorf("watch closed after %v, want 30s (timeoutSeconds)", d)
		}
		synctest.Wait()
		if n := len(e.srv.Watchers()); n != 0 {
			t.Errorf("%d server watches open after the timeout, want 0", n)
		}
		closes := e.log.Kind(fakeapi.ObsWatchClose)
		if len(closes) != 1 || closes[0].Reason != fakeapi.CloseTimeout {
			t.Errorf("watch closes = %+v, want one with reason %q", closes, fakeapi.CloseTimeout)
		}
	})
}

// TestWatchOverHTTPFromACompactedResourceVersionGetsA410ErrorEvent: as
// kube-apiserver's watch cache does, a watch from a compacted
// resourceVersion is answered 200 with a single ERROR event holding a 410
// Expired Status, then the stream ends.
func TestWatchOverHTTPFromACompactedResourceVersionGetsA410ErrorEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		cs := e.clientset(t, "watcher")
		mustNamespace(t, cs, "a")
		old := mustCM(t, cs, "a", "one", nil)
		mustCM(t, cs, "a", "two", nil)
		if err := e.srv.Compact(e.srv.ResourceVersion()); err != nil {
			t.Fatal(err)
		}
		w, err := cs.CoreV1().ConfigMaps("a").Watch(context.Background(), metav1.ListOptions{ResourceVersion: old.ResourceVersion})
		if err != nil {
			t.Fatalf("watch from a compacted RV: err = %v, want an ERROR event on a 200 stream", err)
		}
		defer w.Stop()
		ev := next(t, w)
		st, ok := ev.Object.(*metav1.Status)
		if ev.Type != watch.Error || !ok || st.Code != 410 || st.Reason != metav1.StatusReasonExpired {
			t.Fatalf("first event = %s %#v, want ERROR with a 410 Expired Status", ev.Type, ev.Object)
		}
		closedWithin(t, w, time.Second)
	})
}

// TestWatchListOverHTTPSendsInitialEventsThenTheEndBookmark: a WatchList
// request (sendInitialEvents, allowWatchBookmarks) gets one ADDED per
// object, then the bookmark annotated k8s.io/initial-events-end, then live
// events, and periodic bookmarks while quiet.
func TestWatchListOverHTTPSendsInitialEventsThenTheEndBookmark(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{BookmarkInterval: 10 * time.Second})
		cs := e.clientset(t, "watcher")
		mustNamespace(t, cs, "a")
		mustCM(t, cs, "a", "one", nil)
		mustCM(t, cs, "a", "two", nil)
		w, err := cs.CoreV1().ConfigMaps("a").Watch(context.Background(), metav1.ListOptions{
			SendInitialEvents:    ptr.To(true),
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
			AllowWatchBookmarks:  true,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		got := []string{eventName(next(t, w)), eventName(next(t, w))}
		if got[0] != "ADDED one" || got[1] != "ADDED two" {
			t.Fatalf("initial events = %v, want ADDED one, ADDED two", got)
		}
		bm := next(t, w)
		cmObj, ok := bm.Object.(*corev1.ConfigMap)
		if bm.Type != watch.Bookmark || !ok || cmObj.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
			t.Fatalf("after the initial events: %s %#v, want the initial-events-end BOOKMARK", bm.Type, bm.Object)
		}
		mustCM(t, cs, "a", "three", nil)
		if ev := next(t, w); eventName(ev) != "ADDED three" {
			t.Fatalf("live event = %s, want ADDED three", eventName(ev))
		}
		before := time.Now()
		if ev := next(t, w); ev.Type != watch.Bookmark {
			t.Fatalf("quiet watch: got %s, want a periodic BOOKMARK", ev.Type)
		}
		if d := time.Since(before); d <= 0 || d > 10*time.Second {
			t.Errorf("periodic bookmark after %v of quiet, want within the 10s interval", d)
		}
	})
}

// TestAbruptWatchCloseBreaksTheHTTPStream: fakeapi's abrupt CloseWatch
// breaks the HTTP response mid-stream (as a reset HTTP/2 stream); the
// client's own decoder reports it as an ERROR event with a 500
// ClientWatchDecoding Status naming the stream error, and the watch ends.
// ExpireWatch, by contrast, is a 410 ERROR event sent on the stream.
func TestAbruptWatchCloseBreaksTheHTTPStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		cs := e.clientset(t, "watcher")
		mustNamespace(t, cs, "a")
		open := func() (watch.Interface, fakeapi.WatcherID) {
			w, err := cs.CoreV1().ConfigMaps("a").Watch(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			ws := e.srv.Watchers()
			if len(ws) != 1 {
				t.Fatalf("%d server watches, want 1", len(ws))
			}
			return w, ws[0].ID
		}

		w, id := open()
		if err := e.srv.CloseWatch(id, true); err != nil {
			t.Fatal(err)
		}
		ev := next(t, w)
		st, ok := ev.Object.(*metav1.Status)
		if ev.Type != watch.Error || !ok || st.Code != 500 || !strings.Contains(st.Message, "INTERNAL_ERROR") ||
			st.Details == nil || !hasCause(st, "ClientWatchDecoding") {
			t.Fatalf("after an abrupt close: %s %#v, want the client's ClientWatchDecoding ERROR for a stream error", ev.Type, ev.Object)
		}
		closedWithin(t, w, time.Second)
		w.Stop()

		w, id = open()
		defer w.Stop()
		if err := e.srv.ExpireWatch(id); err != nil {
			t.Fatal(err)
		}
		ev = next(t, w)
		if st, ok := ev.Object.(*metav1.Status); ev.Type != watch.Error || !ok || st.Code != 410 {
			t.Fatalf("after ExpireWatch: %s %#v, want ERROR 410", ev.Type, ev.Object)
		}
		closedWithin(t, w, time.Second)
	})
}

func hasCause(st *metav1.Status, typ metav1.CauseType) bool {
	for _, c := range st.Details.Causes {
		if c.Type == typ {
			return true
		}
	}
	return false
}

// TestWatchOverHTTPInProtobufAndAsTable: a protobuf clientset's watch
// streams length-prefixed protobuf frames ("...;stream=watch"), and a
// kubectl-style watch asking for tables gets each event's object as a
// one-row Table.
func TestWatchOverHTTPInProtobufAndAsTable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		cs := e.clientset(t, "proto", func(c *rest.Config) {
			c.ContentType = runtime.ContentTypeProtobuf
			c.AcceptContentTypes = runtime.ContentTypeProtobuf
		})
		mustNamespace(t, cs, "a")
		w, err := cs.CoreV1().ConfigMaps("a").Watch(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		mustCM(t, cs, "a", "one", map[string]string{"k": "v"})
		ev := next(t, w)
		if c, ok := ev.Object.(*corev1.ConfigMap); ev.Type != watch.Added || !ok || c.Data["k"] != "v" {
			t.Fatalf("protobuf watch event = %s %#v, want ADDED one with its data", ev.Type, ev.Object)
		}

		tc := e.clientset(t, "kubectl").CoreV1().RESTClient()
		res := tc.Get().AbsPath("/api/v1/namespaces/a/configmaps").Param("watch", "true").Param("timeoutSeconds", "5").
			SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json").Do(context.Background())
		raw, err := res.Raw()
		if err != nil {
			t.Fatal(err)
		}
		var frame struct {
			Type   string
			Object metav1.Table
		}
		if err := json.Unmarshal(bytes.SplitN(raw, []byte("\n"), 2)[0], &frame); err != nil {
			t.Fatalf("first frame of %q: %v", raw, err)
		}
		if frame.Type != "ADDED" || frame.Object.Kind != "Table" || len(frame.Object.Rows) != 1 || frame.Object.Rows[0].Cells[0] != "one" {
			t.Errorf("table watch frame = %+v, want ADDED with a one-row Table for one", frame)
		}
	})
}
