package store

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
)

// Store is the MVCC store. Build it with New.
type Store struct {
	clock  clock.PassiveClock
	window int64
	scheme *runtime.Scheme

	// rv is the latest revision; compacted the oldest revision whose state
	// is known. hist holds the events of revisions compacted+1 .. rv, in
	// order: hist[i] is revision compacted+1+i.
	rv        int64
	compacted int64
	hist      []histEntry

	res  map[schema.GroupVersionResource]*resState
	byGK map[schema.GroupKind]*resState
	// views are the versions served from another version's storage
	// (views.go).
	views map[schema.GroupVersionResource]*view
	// typeConverter makes the built-in kinds' type converter for
	// server-side apply (RegisterTypeConverter), taken at New.
	typeConverter func() managedfields.TypeConverter

	// uidSeq and nameSeq make UIDs and generated names deterministic.
	uidSeq  int64
	nameSeq int64
	// nsLifecycle is Options.NamespaceLifecycle.
	nsLifecycle bool
	// defaultSAs is Options.DefaultServiceAccounts.
	defaultSAs bool
	// trackAll is Options.TrackManagedFields.
	trackAll bool
	// externalGC is Options.ExternalGC (gc.go).
	externalGC bool
	// manager is the field manager of the write in progress (its
	// options' fieldManager), for managedFields; trackSub, if set, the
	// subresource it is recorded under ("scale").
	manager  string
	trackSub string
	// admission is SetAdmission's (admission.go).
	admission Admission

	// dependents indexes objects by the UIDs of their owners.
	dependents map[types.UID]map[objRef]struct{}

	// terminating holds the names of the namespaces marked for deletion
	// (kept by commit), so that creates and removals need not decode the
	// namespace to know.
	terminating map[string]bool

	// svcAlloc holds the Service cluster IPs and node ports allocated
	// (services.go), kept by commit.
	svcAlloc *serviceAllocations

	// strictJSON decodes patched objects (decodePatched); made once, as
	// building a serializer costs more than a small object's decode.
	strictJSON runtime.Decoder
}

// objRef names one stored object.
type objRef struct {
	res *resState
	key string
}

// histEntry is one revision of history, stored encoded like the objects.
type histEntry struct {
	typ  watch.EventType
	res  *resState
	key  string
	byGC bool
	verb string
	sub  string
	// data is the object after the write (for DELETED: its last state,
	// whose resourceVersion event() replaces by the deletion's); prev the
	// state before (nil for ADDED).
	data, prev []byte
}

// event decodes the history entry of revision rv.
func (h *histEntry) event(rv int64) Event {
	ev := Event{Type: h.typ, GVR: h.res.GVR, RV: rv, ByGC: h.byGC, Verb: h.verb, Subresource: h.sub, Object: h.res.decode(h.data)}
	if h.typ == watch.Deleted {
		mustAccessor(ev.Object).SetResourceVersion(strconv.FormatInt(rv, 10))
	}
	if h.prev != nil {
		ev.Prev = h.res.decode(h.prev)
	}
	return ev
}

// New returns a Store serving the built-in resources: namespaces
// (cluster-scoped), configmaps, secrets, pods and events in core/v1, and
// events in events.k8s.io/v1. Their Go types come from Options.Scheme.
// It panics if the scheme lacks one of them (a programming error).
func New(opts Options) *Store {
	s := &Store{
		clock:       opts.Clock,
		window:      opts.HistoryWindow,
		scheme:      opts.Scheme,
		rv:          1,
		compacted:   1,
		res:         map[schema.GroupVersionResource]*resState{},
		byGK:        map[schema.GroupKind]*resState{},
		dependents:  map[types.UID]map[objRef]struct{}{},
		nsLifecycle: opts.NamespaceLifecycle,
		defaultSAs:  opts.DefaultServiceAccounts,
		trackAll:    opts.TrackManagedFields,
		externalGC:  opts.ExternalGC,

		typeConverter: registeredTypeConverter(),
	}
	if s.clock == nil {
		s.clock = clock.RealClock{}
	}
	if s.window <= 0 {
		s.window = DefaultHistoryWindow
	}
	if s.scheme == nil {
		s.scheme = scheme.Scheme
	}
	for _, b := range builtins {
		proto, err := s.scheme.New(b.gvk)
		if err != nil {
			panic(fmt.Sprintf("store: the scheme does not know %v: %v", b.gvk, err))
		}
		plural, _ := meta.UnsafeGuessKindToResource(b.gvk)
		r := &resState{
			Resource: Resource{
				GVR:        plural,
				Kind:       b.gvk.Kind,
				ListKind:   b.gvk.Kind + "List",
				Namespaced: b.namespaced,
				HasStatus:  b.hasStatus,
			},
			gvk:           b.gvk,
			rules:         b.rules,
			scale:         b.scale,
			typed:         true,
			returnDeleted: b.returnDeleted,
			goType:        reflect.TypeOf(proto),
		}
		if _, err := s.scheme.New(b.gvk.GroupVersion().WithKind(r.ListKind)); err != nil {
			panic(fmt.Sprintf("store: the scheme does not know %s: %v", r.ListKind, err))
		}
		s.add(r)
	}
	s.addCRDs()  // crds.go
	s.addViews() // views.go
	return s
}

// add serves r.
func (s *Store) add(r *resState) {
	r.registryPrefix = registryPrefix(r.GVR)
	r.objects = map[string][]byte{}
	r.fieldLabels = r.supportedFields(s)
	r.strategy = registeredStrategy(r)
	s.res[r.GVR] = r
	if _, ok := s.byGK[r.gvk.GroupKind()]; !ok {
		s.byGK[r.gvk.GroupKind()] = r
	}
}

// Register serves a custom resource; its objects are
// *unstructured.Unstructured, with metadata.generation, and (with
// HasStatus) a status subresource. It fails if the GVR is already served or
// the Resource is incomplete (empty resource name, Kind or version).
func (s *Store) Register(r Resource) error {
	switch {
	case r.GVR.Resource == "" || r.GVR.Version == "" || r.Kind == "":
		return fmt.Errorf("store: register %v: resource, version and kind are required (got resource %q, version %q, kind %q)", r.GVR, r.GVR.Resource, r.GVR.Version, r.Kind)
	case s.res[r.GVR] != nil || s.views[r.GVR] != nil:
		return fmt.Errorf("store: register %v: already served", r.GVR)
	}
	if r.ListKind == "" {
		r.ListKind = r.Kind + "List"
	}
	s.add(&resState{
		Resource: r,
		gvk:      r.GVR.GroupVersion().WithKind(r.Kind),
		rules:    kindRules{nameFn: apivalidation.NameIsDNSSubdomain, generation: true},
	})
	return nil
}

// Resource returns the served resource with this GVR.
func (s *Store) Resource(gvr schema.GroupVersionResource) (Resource, bool) {
	if v := s.views[gvr]; v != nil {
		return v.Resource, true
	}
	r, ok := s.res[gvr]
	if !ok {
		return Resource{}, false
	}
	return r.Resource, true
}

// Typed reports whether gvr is served as its Go type (a built-in), not
// as *unstructured.Unstructured.
func (s *Store) Typed(gvr schema.GroupVersionResource) bool {
	if v := s.views[gvr]; v != nil {
		return true
	}
	r, ok := s.res[gvr]
	return ok && r.typed
}

// Resources returns every served resource, sorted by group, version and
// resource name; a version served from another's storage (autoscaling/v1
// HorizontalPodAutoscalers) comes after the other resources of its group,
// so that a lookup by plural name finds the storage version first.
func (s *Store) Resources() []Resource {
	out := make([]Resource, 0, len(s.res)+len(s.views))
	for _, r := range s.res {
		out = append(out, r.Resource)
	}
	for _, v := range s.views {
		out = append(out, v.Resource)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].GVR, out[j].GVR
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if va, vb := s.views[a] != nil, s.views[b] != nil; va != vb {
			return vb
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Resource < b.Resource
	})
	return out
}

// resource looks a served resource up, answering 404 as kube-apiserver
// does for an unknown one.
func (s *Store) resource(gvr schema.GroupVersionResource) (*resState, error) {
	r, ok := s.res[gvr]
	if !ok {
		return nil, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status:  metav1.StatusFailure,
			Code:    404,
			Reason:  metav1.StatusReasonNotFound,
			Message: fmt.Sprintf("the server could not find the requested resource (resource %s is not served; register it first)", gvr.String()),
			Details: &metav1.StatusDetails{Group: gvr.Group, Kind: gvr.Resource},
		}}
	}
	return r, nil
}

// requestNamespace checks the namespace of a request for r.
func requestNamespace(r *resState, ns string) string {
	if !r.Namespaced {
		return ""
	}
	return ns
}

// RV returns the latest revision (1 for a new store).
func (s *Store) RV() int64 { return s.rv }

// CompactedRV returns the oldest revision whose state is still known: a
// watch from any revision >= CompactedRV() replays every later event. A new
// store starts at revision 1, compacted to 1.
func (s *Store) CompactedRV() int64 { return s.compacted }

// Compact discards the events of revisions up to and including rv, as etcd
// does: the state at rv stays readable, so a watch from rv still works, but
// a watch from an older revision, an Exact list below rv and a continue
// token of an older snapshot get 410 Expired. rv above RV() is a 400
// BadRequest; rv at or below CompactedRV() does nothing.
func (s *Store) Compact(rv int64) error {
	if rv > s.rv {
		return apierrors.NewBadRequest(fmt.Sprintf("cannot compact to revision %d: the latest revision is %d", rv, s.rv))
	}
	s.compactTo(rv)
	return nil
}

// compactTo drops history up to rv.
func (s *Store) compactTo(rv int64) {
	if rv <= s.compacted {
		return
	}
	n := int(rv - s.compacted)
	clear(s.hist[:n]) // release the objects for the collector
	s.hist = s.hist[n:]
	s.compacted = rv
}

// History returns the events kept in the history window, in RV order
// (revisions after CompactedRV()).
func (s *Store) History() []Event {
	out := make([]Event, len(s.hist))
	for i := range s.hist {
		out[i] = s.hist[i].event(s.compacted + 1 + int64(i))
	}
	return out
}

// Objects returns the current state of every object of every resource as
// ADDED events at their objects' revisions, sorted by resource (as
// Resources), namespace and name (for final snapshots).
func (s *Store) Objects() []Event {
	var out []Event
	for _, res := range s.Resources() {
		r := s.res[res.GVR]
		if r == nil {
			continue // a view: its objects are its storage resource's
		}
		for _, it := range r.sortedItems() {
			obj := r.decode(it.data)
			out = append(out, Event{Type: watch.Added, GVR: r.GVR, Object: obj, RV: objectRV(obj)})
		}
	}
	return out
}

// now returns the clock's time as kube-apiserver stores timestamps (whole
// seconds).
func (s *Store) now() metav1.Time {
	return metav1.NewTime(s.clock.Now().Truncate(time.Second))
}

// objectRV returns a stored object's resourceVersion.
func objectRV(obj runtime.Object) int64 {
	m, err := meta.Accessor(obj)
	if err != nil {
		return 0
	}
	rv, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	return rv
}

// mustAccessor returns the metadata of a stored object (which always has
// metadata: convertIn guarantees it).
func mustAccessor(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("store: stored object without metadata: %T: %v", obj, err))
	}
	return m
}

// commit writes one revision: obj becomes the state of key (nil deletes
// it) and the event is recorded. obj must be an object the store owns (it
// becomes the event's, immutable from here on); prev is the current state
// as decoded by the caller (nil for a create). commit sets obj's
// resourceVersion. It returns the event.
func (s *Store) commit(r *resState, key string, obj, prev runtime.Object, verb, sub string, byGC bool) Event {
	s.rv++
	rvs := strconv.FormatInt(s.rv, 10)
	prevData := r.objects[key]
	if prev == nil && prevData != nil {
		prev = r.decode(prevData)
	}
	ev := Event{GVR: r.GVR, RV: s.rv, ByGC: byGC, Verb: verb, Subresource: sub, Prev: prev}
	h := histEntry{res: r, key: key, byGC: byGC, verb: verb, sub: sub, prev: prevData}
	if obj == nil {
		last := prev.DeepCopyObject()
		mustAccessor(last).SetResourceVersion(rvs)
		ev.Type, ev.Object = watch.Deleted, last
		h.typ, h.data = watch.Deleted, prevData
		delete(r.objects, key)
		r.setSorted(key, nil, false)
	} else {
		mustAccessor(obj).SetResourceVersion(rvs)
		ev.Type, ev.Object = watch.Modified, obj
		if prev == nil {
			ev.Type = watch.Added
		}
		h.typ, h.data = ev.Type, r.encode(obj)
		r.objects[key] = h.data
		r.setSorted(key, h.data, prev == nil)
	}
	s.index(r, key, prev, obj)
	if isNamespaces(r) {
		s.trackTerminating(key, obj)
	}
	if r.GVR == coreServices {
		s.trackServiceAllocations(key, prev, obj) // services.go
	}
	s.hist = append(s.hist, h)
	if int64(len(s.hist)) > s.window {
		s.compactTo(s.rv - s.window)
	}
	return ev
}

// index keeps the dependents index up to date for one write.
func (s *Store) index(r *resState, key string, prev, cur runtime.Object) {
	ref := objRef{res: r, key: key}
	if prev != nil {
		for _, o := range mustAccessor(prev).GetOwnerReferences() {
			if set := s.dependents[o.UID]; set != nil {
				delete(set, ref)
				if len(set) == 0 {
					delete(s.dependents, o.UID)
				}
			}
		}
	}
	if cur != nil {
		for _, o := range mustAccessor(cur).GetOwnerReferences() {
			set := s.dependents[o.UID]
			if set == nil {
				set = map[objRef]struct{}{}
				s.dependents[o.UID] = set
			}
			set[ref] = struct{}{}
		}
	}
}
