package fakeapi

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/fakeapi/store"
)

// Observer receives every observation the server makes, in order. Observe is
// called with the server's lock held, so observations of writes arrive in
// resourceVersion order; it must not call back into the Server.
type Observer interface {
	Observe(o Observation)
}

// ObservationKind names what an Observation reports.
type ObservationKind string

// The kinds of observation.
const (
	ObsRequest    ObservationKind = "request"     // a request was answered (Code, Reason)
	ObsWrite      ObservationKind = "write"       // the store applied a write (one RV)
	ObsList       ObservationKind = "list"        // a list was served (RV, Lag, Count)
	ObsWatchOpen  ObservationKind = "watch-open"  // a watch opened (Watcher)
	ObsWatchClose ObservationKind = "watch-close" // a watch closed (Watcher, Reason)
	ObsSent       ObservationKind = "sent"        // an event was queued for a watcher
	ObsDelivered  ObservationKind = "delivered"   // an event left the watcher's ResultChan
	ObsFault      ObservationKind = "fault"       // a hook or control injected a fault
	ObsCompact    ObservationKind = "compact"     // history compacted up to RV
)

// Observation is one thing the server did. Fields not meaningful for Kind are
// zero.
type Observation struct {
	Kind ObservationKind
	At   time.Time

	// Request is set for request, list and write observations made on behalf
	// of a client request (nil for writes by the garbage collector).
	Request *RequestInfo
	// Code and Reason are the HTTP status code and metav1.StatusReason of the
	// answer (request observations).
	Code   int
	Reason metav1.StatusReason

	// Write fields: the verb as applied ("create", "update", "delete", ...),
	// the object after the write (before, for a delete), its RV and UID.
	Verb      string
	Resource  schema.GroupVersionResource
	Namespace string
	Name      string
	UID       types.UID
	RV        int64
	// Object is the object's JSON as stored by this write (for delete: the
	// last state). Observers must not modify it.
	Object []byte
	// ByGC is true for writes made by the store's garbage collector.
	ByGC bool

	// List fields: Lag is how many revisions behind the latest the list was
	// served (0 for consistent reads); Count is the number of items.
	Lag   int64
	Count int

	// Watch fields. They point at the server's own descriptions (a
	// watch's, an event's, shared by its sent and delivered
	// observations): observers must not modify them.
	Watcher *WatcherInfo
	Event   *EventInfo

	// Fault names an injected fault; ContractBreaking labels faults that
	// break the API's promises.
	Fault            string
	ContractBreaking bool
}

// Options configures a Server. The zero value is usable.
type Options struct {
	// Clock is the server's clock. Optional; default clock.RealClock{}
	// (virtual inside a synctest bubble).
	Clock clock.WithTicker
	// Hooks decides faults. Optional; default NoHooks.
	Hooks Hooks
	// Observer receives observations. Optional; default none.
	Observer Observer
	// HistoryWindow is how many revisions of history watches can resume
	// from; older revisions are compacted. Optional; default 10000.
	HistoryWindow int64
	// BookmarkInterval is how often watches that asked for bookmarks get
	// one. Optional; default 1m (kube-apiserver sends them about every
	// minute). Such watches with a timeout also get one 2 s before it, as
	// kube-apiserver sends. Negative: no bookmarks at all.
	BookmarkInterval time.Duration
	// NamespaceLifecycle refuses creates in namespaces that do not exist
	// (404), as kube-apiserver's admission does. Off by default: the lab's
	// plans and subjects use namespaces without creating them; `cachelab
	// serve` turns it on.
	NamespaceLifecycle bool
	// DefaultServiceAccounts creates the ServiceAccount "default" in every
	// new namespace, as kube-controller-manager's serviceaccount controller
	// does (see store.Options.DefaultServiceAccounts); `cachelab serve`
	// turns it on.
	DefaultServiceAccounts bool
	// TrackManagedFields records metadata.managedFields on every write, as
	// kube-apiserver does (see store.Options.TrackManagedFields); `cachelab
	// serve` turns it on. Off, server-side apply tracks fields from an
	// object's first apply on.
	TrackManagedFields bool
	// ExternalGC leaves ownerReference garbage collection to a collector
	// running as a client, kube-controller-manager's garbagecollector (see
	// store.Options.ExternalGC): deletes still set the orphan /
	// foregroundDeletion finalizer and deletionTimestamp, but the server
	// deletes no dependent and removes neither finalizer itself. Off by
	// default: dependents go in the same write as their owner.
	ExternalGC bool
}

// DefaultBookmarkInterval is the period of bookmarks when
// Options.BookmarkInterval is zero.
const DefaultBookmarkInterval = time.Minute

// Server is the in-memory API server: a store, watch fan-out, hooks and
// observers. It is safe for concurrent use.
//
// One mutex serialises every store call, every fan-out and every
// Observer.Observe call, so observations of writes arrive in resourceVersion
// order and a watch opened at revision r misses no event after r.
//
// Each watch has an unbounded queue, filled under that mutex (ObsSent), and
// one delivery goroutine that holds each event until
// max(previous delivery, sent + Hooks.EventDelay), deep-copies it and sends it
// on the unbuffered result channel; ObsDelivered is recorded right after the
// consumer has received it (so the consumer may already be acting on it).
// Hooks are called without the mutex; Observer.Observe with it, so an
// Observer must not call back into the Server.
type Server struct {
	clock            clock.WithTicker
	hooks            Hooks
	sched            Scheduler // hooks, when they schedule; nil otherwise
	obs              Observer
	bookmarkInterval time.Duration
	scheme           *runtime.Scheme
	encoder          runtime.Encoder

	mu sync.Mutex
	st *store.Store
	// admitCtx and admitClient are the context and client of the write
	// in progress, for admission webhooks (admission.go); set with mu held.
	admitCtx    context.Context
	admitClient string
	// admitting, while a webhook is being called, is closed when the call
	// ends: writes wait for it (admission.go). admitRV is the store's
	// revision when the write in progress began: reads are served during
	// the call while the store is still at it.
	admitting chan struct{}
	admitRV   int64
	nextID    WatcherID
	watchers  []*watcher // open watches, in ID order
}

// NewServer returns a Server serving the built-in resources (namespaces,
// configmaps, secrets, pods, events in core/v1 and events.k8s.io/v1).
func NewServer(opts Options) *Server {
	PrepareClientGo()
	s := &Server{
		clock:            opts.Clock,
		hooks:            opts.Hooks,
		obs:              opts.Observer,
		bookmarkInterval: opts.BookmarkInterval,
		scheme:           scheme.Scheme,
	}
	if s.clock == nil {
		s.clock = clock.RealClock{}
	}
	if s.hooks == nil {
		s.hooks = NoHooks{}
	}
	s.sched, _ = s.hooks.(Scheduler)
	if s.bookmarkInterval == 0 {
		s.bookmarkInterval = DefaultBookmarkInterval
	}
	s.encoder = json.NewSerializerWithOptions(json.DefaultMetaFactory, s.scheme, s.scheme, json.SerializerOptions{})
	s.st = store.New(store.Options{Clock: s.clock, HistoryWindow: opts.HistoryWindow, Scheme: s.scheme, NamespaceLifecycle: opts.NamespaceLifecycle, DefaultServiceAccounts: opts.DefaultServiceAccounts, TrackManagedFields: opts.TrackManagedFields, ExternalGC: opts.ExternalGC})
	return s
}

// before waits for req's turn (when the hooks schedule) and asks the hooks
// for its fate. It is called with no lock held.
func (s *Server) before(ctx context.Context, req RequestInfo) (RequestFault, error) {
	if s.sched != nil {
		if ctx == nil {
			ctx = context.Background()
		}
		// A request from client-go's fake clientset comes with the fake's
		// lock held (testing.Fake.Invokes holds it around its reactors):
		// waiting with it would block every other caller of the fake on a
		// mutex, which synctest does not count as durably blocked, so the
		// scheduler would never see the bubble idle. Let go of it while
		// waiting for the turn.
		if held, ok := ctx.Value(heldLockKey{}).(sync.Locker); ok {
			held.Unlock()
			defer held.Lock()
		}
		if err := s.sched.AwaitRequest(ctx, req); err != nil {
			return RequestFault{}, err
		}
	}
	return s.hooks.BeforeRequest(req), nil
}

// heldLockKey marks a request context with a lock its caller holds and that
// may be released while the request waits for its turn (see before).
type heldLockKey struct{}

// withHeldLock returns ctx marked with l (see before).
func withHeldLock(ctx context.Context, l sync.Locker) context.Context {
	return context.WithValue(ctx, heldLockKey{}, l)
}

// ResourceInfo describes a served resource.
type ResourceInfo struct {
	GVR        schema.GroupVersionResource
	Kind       string
	ListKind   string
	Namespaced bool
	// HasStatus is true when the resource has a status subresource: updates
	// then ignore status, UpdateStatus ignores everything else, and spec
	// changes bump metadata.generation.
	HasStatus bool
	// Validate, optional, checks an object before create and update (a CRD's
	// OpenAPI schema in spirit) and returns 422 Invalid causes.
	Validate func(obj *unstructured.Unstructured) field.ErrorList
	// Prune, optional, drops the fields a CRD's structural schema does not
	// know from an object, in place, and returns their paths, as
	// kube-apiserver prunes custom resources (with fieldValidation=Strict
	// unknown fields are refused instead). Without it nothing is pruned.
	Prune func(obj *unstructured.Unstructured) (unknown []string)
	// OpenAPIV3Schema, optional, is the CRD version's
	// schema.openAPIV3Schema (a JSON-compatible map, as read from the
	// manifest). RegisterCRD compiles it with apiextensions-apiserver's
	// structural-schema code: objects are then pruned (unless Prune is
	// set), defaulted and validated (422 with kube-apiserver's causes) as
	// kube-apiserver does. It must be structural.
	OpenAPIV3Schema map[string]any
	// ShortNames and Categories, optional, are a CRD's spec.names.shortNames
	// and spec.names.categories, listed in discovery (`kubectl get bph`,
	// `kubectl get all`). Built-ins get kube-apiserver's from fakeapi/http.
	ShortNames []string
	Categories []string
	// Scale, optional, is a CRD version's scale subresource: the server
	// serves /scale for the resource, read from and written to its paths.
	Scale *store.ScaleSubresource
}

// RegisterCRD serves a custom resource as unstructured objects.
func (s *Server) RegisterCRD(info ResourceInfo) error {
	var compiled *store.Schema
	if info.OpenAPIV3Schema != nil {
		var err error
		if compiled, err = store.CompileSchema(info.OpenAPIV3Schema); err != nil {
			return fmt.Errorf("fakeapi: CRD %s: %w", info.GVR, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Register(store.Resource{
		Schema:     compiled,
		GVR:        info.GVR,
		Kind:       info.Kind,
		ListKind:   info.ListKind,
		Namespaced: info.Namespaced,
		HasStatus:  info.HasStatus,
		Validate:   info.Validate,
		Prune:      info.Prune,
		ShortNames: info.ShortNames,
		Categories: info.Categories,
		Scale:      info.Scale,
	})
}

// Resources returns every served resource, sorted by group, version and
// resource name.
func (s *Server) Resources() []ResourceInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ResourceInfo
	for _, r := range s.st.Resources() {
		info := ResourceInfo{GVR: r.GVR, Kind: r.Kind, ListKind: r.ListKind,
			Namespaced: r.Namespaced, HasStatus: r.HasStatus, Validate: r.Validate, Prune: r.Prune,
			ShortNames: r.ShortNames, Categories: r.Categories, Scale: r.Scale}
		if r.Schema != nil {
			info.OpenAPIV3Schema = r.Schema.Source()
		}
		out = append(out, info)
	}
	return out
}

// Client returns a named client of the server: every request it makes is
// labelled with name for the hooks and observers.
func (s *Server) Client(name string) *Client { return &Client{s: s, name: name} }

// Compact discards history up to and including rv: watches and lists below it
// get 410 Expired.
func (s *Server) Compact(rv int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.st.Compact(rv); err != nil {
		return err
	}
	s.observeLocked(Observation{Kind: ObsCompact, RV: s.st.CompactedRV()})
	return nil
}

// ResourceVersion returns the latest revision.
func (s *Server) ResourceVersion() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.RV()
}

// CompactedResourceVersion returns the revision history is compacted to (0
// if never).
func (s *Server) CompactedResourceVersion() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.CompactedRV()
}

// Objects returns a snapshot of every stored object (deep copies), sorted by
// resource, namespace and name.
func (s *Server) Objects() []runtime.Object {
	s.mu.Lock()
	evs := s.st.Objects()
	s.mu.Unlock()
	out := make([]runtime.Object, 0, len(evs))
	for _, ev := range evs {
		out = append(out, ev.Object.DeepCopyObject())
	}
	return out
}

// Watchers lists the open watches, in ID order.
func (s *Server) Watchers() []WatcherInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]WatcherInfo, 0, len(s.watchers))
	for _, w := range s.watchers {
		out = append(out, w.info)
	}
	return out
}

// ErrNoSuchWatch is returned by the watch controls for an ID that is not an
// open watch (never opened, or already closed).
var ErrNoSuchWatch = fmt.Errorf("fakeapi: no such open watch")

// CloseWatch ends one watch: cleanly (the result channel closes) or, with
// abrupt, as a broken connection (an error event, then close).
//
// A clean close is what a client sees when the server ends a watch (its
// timeout, a graceful shutdown): the result channel closes and the reflector
// re-watches from its last resourceVersion without relisting (unless the
// watch lasted under a second with no event: client-go's
// VeryShortWatchError, then it relists).
//
// An abrupt close models an HTTP/2 stream reset (kube-apiserver and
// client-go speak HTTP/2): client-go's StreamWatcher surfaces the decoder
// error "stream error: stream ID n; INTERNAL_ERROR" as an ERROR event holding
// a 500 InternalError Status with cause ClientWatchDecoding, exactly what
// apierrors.NewClientErrorReporter(500, "GET", "ClientWatchDecoding") makes.
// The reflector then logs "watch ended with error" and, with the informer's
// default MaxInternalErrorRetryDuration of 0, relists. (A TCP reset or an EOF
// mid-stream, by contrast, is indistinguishable from a clean close for
// client-go: StreamWatcher swallows "probable EOF" errors.)
//
// Events queued for the watch but not yet delivered are dropped: they were
// in flight on the connection that ended.
func (s *Server) CloseWatch(id WatcherID, abrupt bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.watcherLocked(id)
	if w == nil {
		return fmt.Errorf("%w: watch %d (open watches: %v)", ErrNoSuchWatch, id, s.watcherIDsLocked())
	}
	req := closeRequest{reason: "closed"}
	fault := "watch-close"
	if abrupt {
		status := apierrors.NewClientErrorReporter(500, "GET", "ClientWatchDecoding").AsObject(
			fmt.Errorf("unable to decode an event from the watch stream: stream error: stream ID %d; INTERNAL_ERROR; received from peer", 2*int64(id)+1))
		req = closeRequest{reason: "broken", errEvent: &watch.Event{Type: watch.Error, Object: status}}
		fault = "watch-break"
	}
	s.terminateLocked(w, req)
	info := w.info
	s.observeLocked(Observation{Kind: ObsFault, Fault: fault, Watcher: &info})
	return nil
}

// ExpireWatch sends a 410 Expired ERROR event on one watch, then closes it,
// as kube-apiserver does when a watcher falls out of its watch cache's
// window. Events queued but not yet delivered are dropped. The reflector
// relists (at its last resourceVersion, "not older than").
func (s *Server) ExpireWatch(id WatcherID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.watcherLocked(id)
	if w == nil {
		return fmt.Errorf("%w: watch %d (open watches: %v)", ErrNoSuchWatch, id, s.watcherIDsLocked())
	}
	last := w.lastQueuedRV
	status := apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", last, s.st.RV())).Status()
	s.terminateLocked(w, closeRequest{reason: "expired", errEvent: &watch.Event{Type: watch.Error, Object: &status}})
	info := w.info
	s.observeLocked(Observation{Kind: ObsFault, Fault: "watch-expire", Watcher: &info})
	return nil
}

// Close ends every open watch cleanly. The server stays usable.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range slices.Clone(s.watchers) {
		s.terminateLocked(w, closeRequest{reason: "server closed"})
	}
}

func (s *Server) watcherLocked(id WatcherID) *watcher {
	for _, w := range s.watchers {
		if w.info.ID == id {
			return w
		}
	}
	return nil
}

func (s *Server) watcherIDsLocked() []WatcherID {
	ids := make([]WatcherID, 0, len(s.watchers))
	for _, w := range s.watchers {
		ids = append(ids, w.info.ID)
	}
	return ids
}

// terminateLocked asks w's delivery goroutine to end and removes w from the
// fan-out at once, so it gets no further event.
func (s *Server) terminateLocked(w *watcher, req closeRequest) {
	s.removeWatcherLocked(w)
	w.terminate(req)
}

func (s *Server) removeWatcherLocked(w *watcher) {
	if i := slices.Index(s.watchers, w); i >= 0 {
		s.watchers = slices.Delete(s.watchers, i, i+1)
	}
}

// observeLocked hands o to the observer, stamped with the time.
func (s *Server) observeLocked(o Observation) {
	if s.obs == nil {
		return
	}
	o.At = s.clock.Now()
	s.obs.Observe(o)
}

// publishLocked records the store's events as writes and fans them out to
// every open watch that matches them. With handOver, evs is one event whose
// object nothing reads once it is queued (the caller got its own copy): the
// last watch queued that object gets it to deliver as it is, without the
// copy each other watch makes.
func (s *Server) publishLocked(req *RequestInfo, evs []store.Event, handOver bool) {
	handOver = handOver && len(evs) == 1
	for i := range evs {
		ev := &evs[i]
		info := eventInfo(ev)
		if s.obs != nil {
			o := Observation{
				Kind:      ObsWrite,
				Request:   req,
				Verb:      ev.Verb,
				Resource:  ev.GVR,
				Namespace: info.Namespace,
				Name:      info.Name,
				UID:       types.UID(info.UID),
				RV:        ev.RV,
				Object:    s.encode(ev.Object),
				ByGC:      ev.ByGC,
				// The watch event the write produced: an update that empties
				// a terminating object's finalizers is a DELETED event
				// whose object still lists them.
				Event: &info,
			}
			if ev.ByGC {
				o.Request = nil
			}
			s.observeLocked(o)
		}
		// What each watch sees, all found before any is queued: once
		// queued, the handed-over object may be its consumer's.
		type send struct {
			w     *watcher
			seen  store.Event
			obj   runtime.Object
			owned bool
		}
		var buf [4]send
		sends := buf[:0]
		owner := -1
		for _, w := range s.watchers {
			if w.source != ev.GVR || ev.RV <= w.startRV {
				continue
			}
			seen, ok := w.filter(*ev)
			if !ok {
				continue
			}
			if handOver && seen.Object == ev.Object && w.convertOwned != nil {
				owner = len(sends)
			}
			sends = append(sends, send{w: w, seen: seen, obj: seen.Object})
		}
		// With a handed-over object, every other watch that sees it gets
		// its copy now, before any is queued (once the owner has it, its
		// consumer may modify it while theirs would be copying it).
		if owner >= 0 {
			for k := range sends {
				sd := &sends[k]
				switch {
				case k == owner:
					sd.owned = true
				case sd.seen.Object == ev.Object:
					sd.obj, sd.owned = ev.Object.DeepCopyObject(), sd.w.convertOwned != nil
				}
			}
		}
		for _, sd := range sends {
			if sd.seen.Type == ev.Type && sd.seen.Object == ev.Object {
				s.sendLocked(sd.w, sd.seen.Type, sd.obj, &info, sd.owned)
			} else {
				seenInfo := eventInfo(&sd.seen)
				s.sendLocked(sd.w, sd.seen.Type, sd.obj, &seenInfo, sd.owned)
			}
		}
	}
}

// sendLocked queues one event for one watch and records it as sent. owned
// says the watch may deliver obj itself (nothing else reads it). info is
// the event's description, shared with its observations (and with the
// other watches and the write's observation when they saw the same event):
// nothing modifies it.
func (s *Server) sendLocked(w *watcher, typ watch.EventType, obj runtime.Object, ip *EventInfo, owned bool) {
	if !w.enqueue(queuedEvent{ev: watch.Event{Type: typ, Object: obj}, info: ip, sentAt: s.clock.Now(), owned: owned}) {
		return
	}
	if s.obs != nil {
		s.observeEventLocked(ObsSent, w, ip)
	}
}

// observeEventLocked records one event sent to or delivered by w.
func (s *Server) observeEventLocked(kind ObservationKind, w *watcher, info *EventInfo) {
	s.observeLocked(Observation{Kind: kind, Watcher: &w.info, Event: info, RV: info.RV,
		Resource: info.Resource, Namespace: info.Namespace, Name: info.Name, UID: types.UID(info.UID)})
}

// sendBookmark queues a periodic bookmark at the latest revision for w.
func (s *Server) sendBookmark(w *watcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Index(s.watchers, w) < 0 {
		return
	}
	if s.st.RV() < w.startRV {
		return // a watch from the future: nothing to mark yet
	}
	ev, err := s.st.Bookmark(w.info.Resource, s.st.RV(), false)
	if err != nil {
		return
	}
	info := eventInfo(&ev)
	s.sendLocked(w, ev.Type, ev.Object, &info, false)
}

// watchEnded is called by a delivery goroutine as it exits.
func (s *Server) watchEnded(w *watcher, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeWatcherLocked(w)
	info := w.info
	s.observeLocked(Observation{Kind: ObsWatchClose, Watcher: &info, Reason: metav1.StatusReason(reason)})
}

// delivered records that the consumer of w received ev.
func (s *Server) delivered(w *watcher, info *EventInfo) {
	if s.obs == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.observeEventLocked(ObsDelivered, w, info)
}

// encode returns obj's JSON with apiVersion and kind and no trailing newline,
// without modifying obj (it may be shared).
func (s *Server) encode(obj runtime.Object) []byte {
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		gvks, _, err := s.scheme.ObjectKinds(obj)
		if err == nil && len(gvks) > 0 {
			obj = obj.DeepCopyObject()
			obj.GetObjectKind().SetGroupVersionKind(gvks[0])
		}
	}
	b, err := runtime.Encode(s.encoder, obj)
	if err != nil {
		return []byte(fmt.Sprintf(`{"error":%q}`, err.Error()))
	}
	return bytes.TrimSuffix(b, []byte("\n"))
}

// eventInfo describes a store event for hooks and observers.
func eventInfo(ev *store.Event) EventInfo {
	info := EventInfo{Type: ev.Type, Resource: ev.GVR, RV: ev.RV, InitialEvent: ev.Initial}
	if m, err := meta.Accessor(ev.Object); err == nil {
		info.Namespace = m.GetNamespace()
		info.Name = m.GetName()
		info.UID = string(m.GetUID())
	}
	return info
}

// resourceFor finds the served resource of obj's kind (from its TypeMeta,
// or its Go type for built-ins).
func (s *Server) resourceFor(obj runtime.Object) (schema.GroupVersionResource, bool, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		if gvks, _, err := s.scheme.ObjectKinds(obj); err == nil && len(gvks) > 0 {
			gvk = gvks[0]
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var kinds []string
	for _, r := range s.st.Resources() {
		if r.GVR.Group == gvk.Group && r.GVR.Version == gvk.Version && r.Kind == gvk.Kind {
			return r.GVR, r.Namespaced, nil
		}
		kinds = append(kinds, r.GVR.GroupVersion().WithKind(r.Kind).String())
	}
	return schema.GroupVersionResource{}, false, apierrors.NewBadRequest(fmt.Sprintf(
		"no served resource has kind %q (%T); served kinds: %v; register a CRD with Server.RegisterCRD", gvk.String(), obj, kinds))
}

// typedInput converts an unstructured object sent for a built-in resource
// (by a dynamic client) into its Go type, as the real server decodes it.
// Called with s.mu held.
func (s *Server) typedInput(gvr schema.GroupVersionResource, obj runtime.Object) (runtime.Object, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	r, ok := s.st.Resource(gvr)
	if !ok {
		return obj, nil
	}
	gvk := gvr.GroupVersion().WithKind(r.Kind)
	typed, err := s.scheme.New(gvk)
	if err != nil {
		return obj, nil // a CRD: served as unstructured
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot decode the %s object: %v", gvk.Kind, err))
	}
	return typed, nil
}

// toUnstructured returns a copy of obj as *unstructured.Unstructured with
// apiVersion and kind set (Status objects of ERROR events are kept).
func toUnstructured(obj runtime.Object, gvk schema.GroupVersionKind) runtime.Object {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return o.DeepCopy()
	case *metav1.Status:
		return o.DeepCopy()
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return obj.DeepCopyObject()
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Observation)

// Observe calls f(o).
func (f ObserverFunc) Observe(o Observation) { f(o) }
