package store

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// names lists the names in a list object.
func names(t *testing.T, list runtime.Object) []string {
	t.Helper()
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, it := range items {
		out = append(out, metaOf(t, it).GetName())
	}
	return out
}

// listRV returns a list's metadata.resourceVersion.
func listRV(t *testing.T, list runtime.Object) string {
	t.Helper()
	lm, err := meta.ListAccessor(list)
	if err != nil {
		t.Fatal(err)
	}
	return lm.GetResourceVersion()
}

// threeRevisions creates a (2), b (3), then deletes a (4) and creates c (5).
func threeRevisions(t *testing.T, s *Store) {
	t.Helper()
	mustCreate(t, s, configmapsGVR, "ns", cm("", "a", nil))
	mustCreate(t, s, configmapsGVR, "ns", cm("", "b", nil))
	if _, _, err := s.Delete(configmapsGVR, "ns", "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, configmapsGVR, "ns", cm("", "c", nil))
}

func TestListByResourceVersionSemantics(t *testing.T) {
	s, _ := newTestStore(t, 0)
	threeRevisions(t, s)
	cases := []struct {
		name   string
		opts   metav1.ListOptions
		lag    int64
		want   []string
		wantRV string
	}{
		{"empty is latest and consistent, ignoring replica lag", metav1.ListOptions{}, 3, []string{"b", "c"}, "5"},
		{"0 is any: a stale replica", metav1.ListOptions{ResourceVersion: "0"}, 2, []string{"a", "b"}, "3"},
		{"0 without lag is latest", metav1.ListOptions{ResourceVersion: "0"}, 0, []string{"b", "c"}, "5"},
		{"exact reads history", metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, 0, []string{"a", "b"}, "3"},
		{"exact at 2", metav1.ListOptions{ResourceVersion: "2", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, 0, []string{"a"}, "2"},
		{"not older than serves the replica", metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, 1, []string{"b"}, "4"},
		{"legacy N means not older than", metav1.ListOptions{ResourceVersion: "2"}, 0, []string{"b", "c"}, "5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			list, info, err := s.List(configmapsGVR, "ns", c.opts, c.lag)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, names(t, list)); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			if listRV(t, list) != c.wantRV || fmt.Sprint(info.RV) != c.wantRV || info.Count != len(c.want) {
				t.Errorf("list RV %s, info %+v; want RV %s and count %d", listRV(t, list), info, c.wantRV, len(c.want))
			}
		})
	}
}

func TestListErrorsByResourceVersion(t *testing.T) {
	s, _ := newTestStore(t, 0)
	threeRevisions(t, s)
	if err := s.Compact(3); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		opts   metav1.ListOptions
		lag    int64
		code   int32
		reason metav1.StatusReason
		msg    string
	}{
		{"future exact", metav1.ListOptions{ResourceVersion: "9", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, 0, 504, metav1.StatusReasonTimeout, "Too large resource version: 9, current: 5"},
		{"future not older than", metav1.ListOptions{ResourceVersion: "9"}, 0, 504, metav1.StatusReasonTimeout, "Too large resource version: 9, current: 5"},
		{"replica behind the client", metav1.ListOptions{ResourceVersion: "5", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, 1, 504, metav1.StatusReasonTimeout, "Too large resource version: 5, current: 4"},
		{"compacted exact", metav1.ListOptions{ResourceVersion: "2", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, 0, 410, metav1.StatusReasonExpired, "The resourceVersion for the provided list is too old."},
		{"unparsable", metav1.ListOptions{ResourceVersion: "x"}, 0, 400, metav1.StatusReasonBadRequest, "invalid resource version"},
		{"match without RV", metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchExact}, 0, 422, metav1.StatusReasonInvalid, "resourceVersionMatch is forbidden unless resourceVersion is provided"},
		{"exact at 0", metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, 0, 422, metav1.StatusReasonInvalid, `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`},
		{"sendInitialEvents on a list", metav1.ListOptions{SendInitialEvents: ptr.To(true)}, 0, 422, metav1.StatusReasonInvalid, "sendInitialEvents is forbidden for list"},
		{"bad label selector", metav1.ListOptions{LabelSelector: "a in (b"}, 0, 400, metav1.StatusReasonBadRequest, ""},
		{"bad field selector", metav1.ListOptions{FieldSelector: "a=b=c=="}, 0, 400, metav1.StatusReasonBadRequest, ""},
		{"unsupported field label", metav1.ListOptions{FieldSelector: "spec.nodeName=n"}, 0, 400, metav1.StatusReasonBadRequest, "field label not supported: spec.nodeName"},
		{"garbage continue", metav1.ListOptions{Continue: "!!!"}, 0, 400, metav1.StatusReasonBadRequest, "invalid continue token"},
		{"continue with RV", metav1.ListOptions{Continue: encodeContinue("ns/a\x00", 4), ResourceVersion: "4"}, 0, 400, metav1.StatusReasonBadRequest, "specifying resource version is not allowed when using continue"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := s.List(configmapsGVR, "ns", c.opts, c.lag)
			assertStatus(t, err, c.code, c.reason)
			if err != nil && !strings.Contains(err.Error(), c.msg) {
				t.Errorf("message = %q, want it to contain %q", err.Error(), c.msg)
			}
		})
	}
}

func TestPaginationReadsOneSnapshotDespiteWritesBetweenPages(t *testing.T) {
	s, _ := newTestStore(t, 0)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		mustCreate(t, s, configmapsGVR, "ns", cm("", n, nil))
	}
	mustCreate(t, s, configmapsGVR, "other", cm("", "z", nil))
	page1, _, err := s.List(configmapsGVR, "ns", metav1.ListOptions{Limit: 2}, 0)
	if err != nil {
		t.Fatal(err)
	}
	lm, _ := meta.ListAccessor(page1)
	if diff := cmp.Diff([]string{"a", "b"}, names(t, page1)); diff != "" {
		t.Errorf("page 1 (-want +got):\n%s", diff)
	}
	if lm.GetContinue() == "" || lm.GetRemainingItemCount() == nil || *lm.GetRemainingItemCount() != 3 {
		t.Fatalf("page 1 continue %q remaining %v; want a token and 3", lm.GetContinue(), lm.GetRemainingItemCount())
	}
	// Writes between pages are not seen by the rest of the list.
	if _, _, err := s.Delete(configmapsGVR, "ns", "c", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, configmapsGVR, "ns", cm("", "bb", nil))
	var all []string
	all = append(all, names(t, page1)...)
	token := lm.GetContinue()
	for token != "" {
		page, _, err := s.List(configmapsGVR, "ns", metav1.ListOptions{Limit: 2, Continue: token}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if listRV(t, page) != "7" {
			t.Errorf("page RV = %s, want the snapshot's 7", listRV(t, page))
		}
		all = append(all, names(t, page)...)
		plm, _ := meta.ListAccessor(page)
		token = plm.GetContinue()
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "d", "e"}, all); diff != "" {
		t.Errorf("paginated list (-want +got):\n%s", diff)
	}
}

func TestContinueTokenExpiresAfterCompactionWithAFreshToken(t *testing.T) {
	s, _ := newTestStore(t, 0)
	for _, n := range []string{"a", "b", "c"} {
		mustCreate(t, s, configmapsGVR, "ns", cm("", n, nil))
	}
	page1, _, _ := s.List(configmapsGVR, "ns", metav1.ListOptions{Limit: 1}, 0)
	lm, _ := meta.ListAccessor(page1)
	mustCreate(t, s, configmapsGVR, "ns", cm("", "d", nil))
	if err := s.Compact(s.RV()); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.List(configmapsGVR, "ns", metav1.ListOptions{Limit: 1, Continue: lm.GetContinue()}, 0)
	assertStatus(t, err, 410, metav1.StatusReasonExpired)
	if !strings.Contains(err.Error(), "The provided continue parameter is too old to display a consistent list result.") {
		t.Errorf("message = %q", err.Error())
	}
	// The fresh token continues at the latest revision (inconsistently).
	fresh := err.(interface{ Status() metav1.Status }).Status().ListMeta.Continue
	rest, _, err := s.List(configmapsGVR, "ns", metav1.ListOptions{Continue: fresh}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b", "c", "d"}, names(t, rest)); diff != "" {
		t.Errorf("inconsistent continuation (-want +got):\n%s", diff)
	}
}

func TestSelectorsFilterListsAndWatches(t *testing.T) {
	s, _ := newTestStore(t, 0)
	mustCreate(t, s, configmapsGVR, "ns", cm("", "a", map[string]string{"app": "x"}))
	mustCreate(t, s, configmapsGVR, "ns", cm("", "b", map[string]string{"app": "y"}))
	mustCreate(t, s, configmapsGVR, "other", cm("", "c", map[string]string{"app": "x"}))
	p := pod("", "p")
	p.Spec.NodeName = "n1"
	mustCreate(t, s, podsGVR, "ns", p)
	mustCreate(t, s, podsGVR, "ns", pod("", "q"))
	check := func(gvr, ns string, opts metav1.ListOptions, want ...string) {
		t.Helper()
		res := configmapsGVR
		if gvr == "pods" {
			res = podsGVR
		}
		list, _, err := s.List(res, ns, opts, 0)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, names(t, list)); diff != "" {
			t.Errorf("%s %q %+v (-want +got):\n%s", gvr, ns, opts, diff)
		}
	}
	check("configmaps", "", metav1.ListOptions{LabelSelector: "app=x"}, "a", "c")
	check("configmaps", "ns", metav1.ListOptions{LabelSelector: "app=x"}, "a")
	check("configmaps", "", metav1.ListOptions{LabelSelector: "app in (x,y),app!=y"}, "a", "c")
	check("configmaps", "", metav1.ListOptions{FieldSelector: "metadata.name=b"}, "b")
	check("configmaps", "", metav1.ListOptions{FieldSelector: "metadata.namespace=other"}, "c")
	check("pods", "ns", metav1.ListOptions{FieldSelector: "spec.nodeName=n1"}, "p")
	check("pods", "ns", metav1.ListOptions{FieldSelector: "spec.nodeName="}, "q")
	check("pods", "ns", metav1.ListOptions{FieldSelector: "status.phase=Pending"}, "p", "q")
}

func TestFilterTurnsSelectorTransitionsIntoAddedAndDeleted(t *testing.T) {
	s, _ := newTestStore(t, 0)
	f, err := s.Filter(configmapsGVR, "ns", metav1.ListOptions{LabelSelector: "app=x"})
	if err != nil {
		t.Fatal(err)
	}
	var seen []eventSummary
	see := func(evs []Event, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if out, ok := f(ev); ok {
				seen = append(seen, summarize(t, []Event{out})...)
				if out.Type == watch.Deleted && rvOf(t, out.Object) != out.RV {
					t.Errorf("DELETED object RV %d, want the event's %d", rvOf(t, out.Object), out.RV)
				}
			}
		}
	}
	patch := func(labels string) ([]Event, error) {
		_, evs, err := s.Patch(configmapsGVR, "ns", "a", types.MergePatchType, []byte(`{"metadata":{"labels":`+labels+`}}`), metav1.PatchOptions{}, "")
		return evs, err
	}
	_, evs, err := s.Create(configmapsGVR, "ns", cm("", "a", nil), metav1.CreateOptions{})
	see(evs, err)                     // 2: not matching: nothing
	see(patch(`{"app":"x"}`))         // 3: starts matching: ADDED
	see(patch(`{"app":"x","b":"c"}`)) // 4: still matching: MODIFIED
	see(patch(`{"app":"y"}`))         // 5: stops matching: DELETED
	_, evs, err = s.Create(configmapsGVR, "other", cm("", "a", map[string]string{"app": "x"}), metav1.CreateOptions{})
	see(evs, err) // 6: other namespace: nothing
	bm, _ := s.Bookmark(configmapsGVR, 6, false)
	see([]Event{bm}, nil)
	want := []eventSummary{{watch.Added, "a", 3, false}, {watch.Modified, "a", 4, false}, {watch.Deleted, "a", 5, false}, {watch.Bookmark, "", 6, false}}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("watcher saw (-want +got):\n%s", diff)
	}
}

func TestWatchFromAnyRevisionInTheWindowReplaysTheSuffix(t *testing.T) {
	s, _ := newTestStore(t, 4)
	for i := range 6 {
		mustCreate(t, s, configmapsGVR, "ns", cm("", fmt.Sprintf("o%d", i), nil)) // RVs 2..7
	}
	if s.CompactedRV() != 3 {
		t.Fatalf("window 4 at RV 7: compacted %d, want 3", s.CompactedRV())
	}
	for from := int64(3); from <= 7; from++ {
		evs, start, err := s.WatchStart(configmapsGVR, "ns", metav1.ListOptions{ResourceVersion: fmt.Sprint(from)}, 0)
		if err != nil {
			t.Fatalf("watch from %d: %v", from, err)
		}
		if start != 7 || int64(len(evs)) != 7-from {
			t.Errorf("watch from %d: %d events, start %d; want %d and 7", from, len(evs), start, 7-from)
		}
		for i, ev := range evs {
			if ev.RV != from+1+int64(i) {
				t.Errorf("watch from %d: event %d at RV %d, want %d", from, i, ev.RV, from+1+int64(i))
			}
		}
	}
	_, _, err := s.WatchStart(configmapsGVR, "ns", metav1.ListOptions{ResourceVersion: "2"}, 0)
	assertStatus(t, err, 410, metav1.StatusReasonExpired)
	if err.Error() != "too old resource version: 2 (3)" {
		t.Errorf("message = %q, want the watch cache's", err.Error())
	}
	// A future revision is accepted: the watch waits for it.
	evs, start, err := s.WatchStart(configmapsGVR, "ns", metav1.ListOptions{ResourceVersion: "50"}, 0)
	if err != nil || len(evs) != 0 || start != 50 {
		t.Errorf("future watch: %d events, start %d, %v; want none, 50, nil", len(evs), start, err)
	}
}

func TestWatchListSendsInitialEventsThenTheEndBookmark(t *testing.T) {
	s, _ := newTestStore(t, 0)
	threeRevisions(t, s) // b (3), c (5) at RV 5
	wl := func(rv string, bookmarks bool) metav1.ListOptions {
		return metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, SendInitialEvents: ptr.To(true), AllowWatchBookmarks: bookmarks}
	}
	evs, start, err := s.WatchStart(configmapsGVR, "ns", wl("", true), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []eventSummary{{watch.Added, "b", 3, false}, {watch.Added, "c", 5, false}, {watch.Bookmark, "", 5, false}}
	if diff := cmp.Diff(want, summarize(t, evs)); diff != "" || start != 5 {
		t.Errorf("WatchList at \"\": start %d, events (-want +got):\n%s", start, diff)
	}
	for _, ev := range evs {
		if !ev.Initial {
			t.Errorf("event %v at %d not marked Initial", ev.Type, ev.RV)
		}
	}
	end := evs[2].Object.(*corev1.ConfigMap)
	if end.Annotations[metav1.InitialEventsAnnotationKey] != "true" || end.ResourceVersion != "5" || end.Name != "" {
		t.Errorf("end bookmark = %+v, want an empty ConfigMap with RV 5 and the annotation", end.ObjectMeta)
	}
	// From a stale replica at "0": the state at 3, the end bookmark at 3,
	// then what the replica has not seen yet (a lagging watch cache
	// delivers every later event), and live events after the latest.
	evs, start, served, _ := s.WatchStartServed(configmapsGVR, "ns", wl("0", true), 2)
	want = []eventSummary{{watch.Added, "a", 2, false}, {watch.Added, "b", 3, false}, {watch.Bookmark, "", 3, false}, {watch.Deleted, "a", 4, false}, {watch.Added, "c", 5, false}}
	if diff := cmp.Diff(want, summarize(t, evs)); diff != "" || start != 5 || served != 3 {
		t.Errorf("WatchList at 0 with lag 2: start %d, served %d (-want +got):\n%s", start, served, diff)
	}
	if evs[3].Initial || evs[4].Initial {
		t.Errorf("the replica's catch-up events are marked Initial")
	}
	// Without allowWatchBookmarks there is no end bookmark.
	evs, _, _ = s.WatchStart(configmapsGVR, "ns", wl("", false), 0)
	if len(evs) != 2 {
		t.Errorf("WatchList without bookmarks: %d events, want 2 ADDED", len(evs))
	}
	// A legacy watch at "" is defaulted into WatchList, as the apiserver does.
	evs, _, _ = s.WatchStart(configmapsGVR, "ns", metav1.ListOptions{AllowWatchBookmarks: true}, 0)
	if len(evs) != 3 || evs[2].Type != watch.Bookmark {
		t.Errorf("legacy watch at \"\": %v, want 2 ADDED and the end bookmark", summarize(t, evs))
	}
	// A requested revision the replica has not reached: Too large.
	_, _, err = s.WatchStart(configmapsGVR, "ns", wl("5", true), 1)
	assertStatus(t, err, 504, metav1.StatusReasonTimeout)
	// sendInitialEvents without NotOlderThan is invalid.
	_, _, err = s.WatchStart(configmapsGVR, "ns", metav1.ListOptions{SendInitialEvents: ptr.To(true)}, 0)
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	// An unparsable watch revision: the watch cache's 500 with no reason
	// (recorded from kube-apiserver v1.37.1 by the fidelity corpus).
	_, _, err = s.WatchStart(configmapsGVR, "ns", metav1.ListOptions{ResourceVersion: "abc"}, 0)
	assertStatus(t, err, 500, metav1.StatusReasonUnknown)
	if want := `resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`; err == nil || err.Error() != want {
		t.Errorf("message = %v, want %q", err, want)
	}
}

func TestWatchFromAListsRevisionReplaysADeletionInBetween(t *testing.T) {
	// The fake clientset loses this deletion (k/k#141528); the store must not.
	s, _ := newTestStore(t, 0)
	mustCreate(t, s, configmapsGVR, "ns", cm("", "a", nil))
	list, _, err := s.List(configmapsGVR, "ns", metav1.ListOptions{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Delete(configmapsGVR, "ns", "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	evs, start, err := s.WatchStart(configmapsGVR, "ns", metav1.ListOptions{ResourceVersion: listRV(t, list), AllowWatchBookmarks: true}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]eventSummary{{watch.Deleted, "a", 3, false}}, summarize(t, evs)); diff != "" || start != 3 {
		t.Errorf("watch from the list's RV %s: start %d, events (-want +got):\n%s", listRV(t, list), start, diff)
	}
	if evs[0].Prev == nil || rvOf(t, evs[0].Prev) != 2 {
		t.Errorf("replayed DELETED event lacks its previous state")
	}
}
