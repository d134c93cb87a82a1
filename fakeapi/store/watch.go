package store

import (
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
)

// WatchStart opens a watch of gvr in ns with opts, as kube-apiserver (with
// its WatchList feature on, the default since 1.34) would, and returns the
// events the watch starts with and the revision after which live events
// follow: the wrapper then appends, through Filter, every later event with
// RV > startRV.
//
// Options are defaulted as the apiserver does: a watch at resourceVersion
// "" or "0" without sendInitialEvents becomes sendInitialEvents=true,
// resourceVersionMatch=NotOlderThan. Then:
//
//   - sendInitialEvents=true: synthetic ADDED events (Initial, in key
//     order) for the matching objects at the start revision, then, if
//     allowWatchBookmarks, a BOOKMARK at that revision annotated
//     k8s.io/initial-events-end. The start revision is the latest for RV ""
//     (consistent), the replica's (latest-replicaLag) for "0", and the
//     replica's for N if it is >= N, else 504 Too large resource version.
//   - sendInitialEvents=false: no initial events; starts at the latest
//     revision for "", the replica's for "0", and N for N (as below).
//   - resourceVersion=N without sendInitialEvents: every matching event
//     after N, replayed from history; 410 Expired ("too old resource
//     version") if N < CompactedRV(). A future N is accepted: the watch
//     waits for it (startRV = N), as the watch cache does.
//
// A watch served by the replica behind the latest revision is a watch of a
// lagging watch cache: after its initial state it delivers every matching
// event the replica has not seen yet, in order (they follow the initial
// events, not marked Initial), so nothing between the replica's revision
// and the latest is lost; startRV is then the latest revision. When those
// events reach the client is the caller's business (a lagging cache
// delivers them as it catches up). WatchStartServed also returns the
// revision the replica served.
func (s *Store) WatchStart(gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions, replicaLag int64) (initial []Event, startRV int64, err error) {
	initial, startRV, _, err = s.WatchStartServed(gvr, ns, opts, replicaLag)
	return initial, startRV, err
}

// WatchStartServed is WatchStart that also returns servedRV, the revision
// the watch's initial state was taken at when a replica behind the latest
// revision served it (its events after servedRV follow the initial ones),
// else 0.
func (s *Store) WatchStartServed(gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions, replicaLag int64) (initial []Event, startRV, servedRV int64, err error) {
	if v := s.views[gvr]; v != nil {
		return v.watchStart(s, ns, opts, replicaLag)
	}
	initial, startRV, err = s.watchStart(gvr, ns, opts, replicaLag)
	if err != nil || startRV >= s.rv {
		return initial, startRV, 0, err
	}
	// Served by the replica at startRV < latest: what it has not seen yet
	// follows, in order.
	r, _ := s.resource(gvr)
	filter, ferr := s.Filter(gvr, ns, opts)
	if r == nil || ferr != nil {
		return initial, startRV, 0, err
	}
	servedRV = startRV
	for i := int(startRV - s.compacted); i >= 0 && i < len(s.hist); i++ {
		h := &s.hist[i]
		if h.res != r {
			continue
		}
		if ev, ok := filter(h.event(s.compacted + 1 + int64(i))); ok {
			initial = append(initial, ev)
		}
	}
	return initial, s.rv, servedRV, nil
}

// watchStart is WatchStart without the replica's catch-up events.
func (s *Store) watchStart(gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions, replicaLag int64) (initial []Event, startRV int64, err error) {
	r, err := s.resource(gvr)
	if err != nil {
		return nil, 0, err
	}
	ns = requestNamespace(r, ns)
	in, err := parseListOptions(opts, true)
	if err != nil {
		return nil, 0, err
	}
	match, err := s.compileSelector(r, ns, in.LabelSelector, in.FieldSelector)
	if err != nil {
		return nil, 0, err
	}
	filter := s.filterWith(r, match)
	rv := in.ResourceVersion
	var want int64
	if rv != "" && rv != "0" {
		n, err := strconv.ParseUint(rv, 10, 64)
		if err != nil {
			// The watch cache's storage.InvalidError reaches the client
			// uninterpreted: 500 with no reason, the field error as message.
			return nil, 0, &apierrors.StatusError{ErrStatus: metav1.Status{
				Status: metav1.StatusFailure, Code: 500, Reason: metav1.StatusReasonUnknown,
				Message: field.Invalid(field.NewPath("resourceVersion"), rv, err.Error()).Error(),
			}}
		}
		want = int64(n)
	}
	if in.SendInitialEvents != nil && *in.SendInitialEvents {
		at := s.rv
		if rv != "" {
			at = s.replicaRV(replicaLag)
			if want > at {
				return nil, 0, tooLargeResourceVersion(want, at)
			}
		}
		for _, it := range s.snapshotAt(r, ns, at) {
			if obj := r.decode(it.data); match(obj) {
				initial = append(initial, Event{Type: watch.Added, GVR: r.GVR, Object: obj, RV: objectRV(obj), Initial: true})
			}
		}
		if in.AllowWatchBookmarks {
			initial = append(initial, s.bookmark(r, at, true))
		}
		return initial, at, nil
	}
	if in.SendInitialEvents != nil && rv == "" {
		return nil, s.rv, nil
	}
	if in.SendInitialEvents != nil && rv == "0" {
		return nil, s.replicaRV(replicaLag), nil
	}
	if want < s.compacted {
		return nil, 0, tooOldResourceVersion(want, s.compacted)
	}
	if want >= s.rv {
		return nil, want, nil
	}
	for i := int(want - s.compacted); i < len(s.hist); i++ {
		h := &s.hist[i]
		if h.res != r {
			continue
		}
		if ev, ok := filter(h.event(s.compacted + 1 + int64(i))); ok {
			initial = append(initial, ev)
		}
	}
	return initial, s.rv, nil
}

// Filter returns what a watch of gvr in namespace ns ("" for all) with
// opts' label and field selectors sees of one live store event, as
// kube-apiserver's watch cache does: an object that starts matching is seen
// as ADDED, one that stops matching as DELETED (its previous state, with the
// event's resourceVersion), one that matches before and after as the event
// itself; ok is false when the watcher sees nothing. Events of other
// resources are never seen; bookmarks of gvr always are. Bad selectors get
// 400 BadRequest. The wrapper applies it to every event with RV > startRV.
func (s *Store) Filter(gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (func(Event) (Event, bool), error) {
	if v := s.views[gvr]; v != nil {
		return v.filter(s, ns, opts)
	}
	r, err := s.resource(gvr)
	if err != nil {
		return nil, err
	}
	match, err := s.selector(r, requestNamespace(r, ns), opts.LabelSelector, opts.FieldSelector)
	if err != nil {
		return nil, err
	}
	return s.filterWith(r, match), nil
}

// filterWith is Filter with a compiled selector. The returned function
// reads only the event, so the wrapper may call it without the store.
func (s *Store) filterWith(r *resState, match func(runtime.Object) bool) func(Event) (Event, bool) {
	gvr := r.GVR
	return func(ev Event) (Event, bool) {
		if ev.GVR != gvr {
			return ev, false
		}
		if ev.Type == watch.Bookmark {
			return ev, true
		}
		cur := ev.Type != watch.Deleted && match(ev.Object)
		old := ev.Prev != nil && match(ev.Prev)
		switch {
		case cur && old:
			return ev, true
		case cur:
			ev.Type = watch.Added
			return ev, true
		case old && ev.Type == watch.Deleted:
			return ev, true
		case old:
			last := ev.Prev.DeepCopyObject()
			mustAccessor(last).SetResourceVersion(strconv.FormatInt(ev.RV, 10))
			ev.Type, ev.Object = watch.Deleted, last
			return ev, true
		}
		return ev, false
	}
}

// Matcher is Filter across all namespaces, reduced to "does the watcher see
// anything of this event". Prefer Filter: it also turns selector
// transitions into ADDED/DELETED.
func (s *Store) Matcher(gvr schema.GroupVersionResource, opts metav1.ListOptions) (func(Event) bool, error) {
	return s.MatcherNS(gvr, "", opts)
}

// MatcherNS is Matcher restricted to namespace ns ("" for all). Prefer
// Filter.
func (s *Store) MatcherNS(gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (func(Event) bool, error) {
	f, err := s.Filter(gvr, ns, opts)
	if err != nil {
		return nil, err
	}
	return func(ev Event) bool {
		_, ok := f(ev)
		return ok
	}, nil
}

// Bookmark returns a BOOKMARK event for gvr at revision rv: an empty object
// of the resource's kind carrying only metadata.resourceVersion (and, with
// initialEventsEnd, the k8s.io/initial-events-end annotation; such a
// bookmark is marked Initial).
func (s *Store) Bookmark(gvr schema.GroupVersionResource, rv int64, initialEventsEnd bool) (Event, error) {
	if v := s.views[gvr]; v != nil {
		return v.bookmark(rv, initialEventsEnd)
	}
	r, err := s.resource(gvr)
	if err != nil {
		return Event{}, err
	}
	if rv < 0 {
		return Event{}, fmt.Errorf("store: bookmark at negative revision %d", rv)
	}
	return s.bookmark(r, rv, initialEventsEnd), nil
}

// bookmark builds a bookmark event.
func (s *Store) bookmark(r *resState, rv int64, initialEventsEnd bool) Event {
	obj := r.newObject(s)
	m := mustAccessor(obj)
	m.SetResourceVersion(strconv.FormatInt(rv, 10))
	if initialEventsEnd {
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return Event{Type: watch.Bookmark, GVR: r.GVR, Object: obj, RV: rv, Initial: initialEventsEnd}
}
