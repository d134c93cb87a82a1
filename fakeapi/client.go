package fakeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/fakeapi/store"
)

// Client makes requests to a Server under a name. It is safe for concurrent
// use.
//
// Objects it returns (and delivers on watches) are the caller's own copies:
// typed for built-in kinds, with apiVersion and kind cleared as client-go's
// typed clients decode them; *unstructured.Unstructured with apiVersion and
// kind for CRDs, as the dynamic client returns them.
type Client struct {
	s    *Server
	name string
	// life, when set (BoundTo), ends the client: once it is done, every
	// request fails with its error, whatever context the caller passed.
	life context.Context
}

// BoundTo returns a copy of c whose requests fail with ctx's error once ctx
// ends, whatever context each request carries: the client of a process
// that a crash ended sends nothing more, even from a goroutine that was
// not watching its context (a status write with context.TODO()).
func (c *Client) BoundTo(ctx context.Context) *Client {
	b := *c
	b.life = ctx
	return &b
}

// Name returns the name the client was created with.
func (c *Client) Name() string { return c.name }

// Server returns the server the client talks to.
func (c *Client) Server() *Server { return c.s }

// NewTimeoutError returns the error a client sees when kube-apiserver's
// request timeout fires: 504 Timeout, "request did not complete within
// requested timeout". Used for Hooks' ApplyThenTimeout.
func NewTimeoutError() error {
	return apierrors.NewTimeoutError("request did not complete within requested timeout - context deadline exceeded", 0)
}

// statusOf returns the HTTP code and reason of an answer.
func statusOf(err error, okCode int) (int, metav1.StatusReason) {
	if err == nil {
		return okCode, ""
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		return int(s.Code), s.Reason
	}
	return http.StatusInternalServerError, metav1.StatusReasonInternalError
}

// faultName labels a fault for observations.
func faultName(f RequestFault, fallback string) string {
	if f.Name != "" {
		return f.Name
	}
	return fallback
}

// answerLocked records the request's answer (and the fault, if one was
// injected) and returns err.
func (c *Client) answerLocked(req *RequestInfo, err error, okCode int) {
	code, reason := statusOf(err, okCode)
	c.s.observeLocked(Observation{Kind: ObsRequest, Request: req, Code: code, Reason: reason,
		Resource: req.Resource, Namespace: req.Namespace, Name: req.Name})
}

// failLocked answers a request with the error a hook injected.
func (c *Client) failLocked(req *RequestInfo, f RequestFault) error {
	c.s.observeLocked(Observation{Kind: ObsFault, Request: req, Fault: faultName(f, "error"),
		Resource: req.Resource, Namespace: req.Namespace, Name: req.Name})
	c.answerLocked(req, f.Err, 0)
	return f.Err
}

// begin is every request's prologue: a done context, then the hooks'
// decision (which may wait for the scheduler), then the server's lock. It
// returns holding the lock (the caller unlocks) when err is nil; a request
// error a hook drew is answered here, and the lock released.
func (c *Client) begin(ctx context.Context, req *RequestInfo) (RequestFault, error) {
	if ctx != nil && ctx.Err() != nil {
		return RequestFault{}, ctx.Err()
	}
	if c.life != nil && c.life.Err() != nil {
		return RequestFault{}, c.life.Err()
	}
	read := isRead(req.Verb)
	if inAdmission(ctx) && !read {
		// A webhook's write while the write it admits holds the
		// server's writes: waiting would never end (admission.go).
		return RequestFault{}, apierrors.NewInternalError(ErrAdmissionReentry)
	}
	f, err := c.s.before(ctx, *req)
	if err != nil {
		return f, err
	}
	if c.life != nil && c.life.Err() != nil {
		// The process ended while the request waited for its turn.
		return RequestFault{}, c.life.Err()
	}
	// admission.go: a write waits for any webhook call in progress.
	if err := c.s.lockForRequest(ctx, read); err != nil {
		return RequestFault{}, err
	}
	if f.Err != nil {
		err := c.failLocked(req, f)
		c.s.mu.Unlock()
		return f, err
	}
	return f, nil
}

// isRead reports whether verb reads (get, list, watch): admission.go
// serves reads while a webhook is called.
func isRead(verb string) bool { return verb == "get" || verb == "list" || verb == "watch" }

// write runs one mutating request: hooks, store, observations, fan-out.
func (c *Client) write(ctx context.Context, req RequestInfo, okCode int, apply func(st *store.Store) (runtime.Object, []store.Event, error)) (runtime.Object, error) {
	s := c.s
	f, err := c.begin(ctx, &req)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	s.admitCtx, s.admitClient, s.admitRV = ctx, req.Client, s.st.RV()
	obj, evs, err := apply(s.st)
	s.admitCtx, s.admitClient = nil, ""
	if err != nil {
		c.answerLocked(&req, err, okCode)
		return nil, err
	}
	// The event's object may be handed over to a watch unless the caller
	// got that very object (the store's contract says it never does).
	s.publishLocked(&req, evs, len(evs) == 1 && obj != evs[0].Object)
	if f.ApplyThenTimeout {
		terr := NewTimeoutError()
		s.observeLocked(Observation{Kind: ObsFault, Request: &req, Fault: faultName(f, "apply-then-timeout"),
			Resource: req.Resource, Namespace: req.Namespace, Name: req.Name})
		c.answerLocked(&req, terr, okCode)
		return nil, terr
	}
	c.answerLocked(&req, nil, okCode)
	return asTypedClientSees(obj), nil
}

// asTypedClientSees clears apiVersion and kind of a typed object (and of a
// typed list's items), as client-go's typed clients decode them
// (runtime.WithoutVersionDecoder); unstructured objects keep theirs, as the
// dynamic client does. obj must be owned by the caller.
func asTypedClientSees(obj runtime.Object) runtime.Object {
	switch obj.(type) {
	case nil, runtime.Unstructured:
		return obj
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	if meta.IsListType(obj) {
		_ = meta.EachListItem(obj, func(item runtime.Object) error {
			if _, ok := item.(runtime.Unstructured); !ok {
				item.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			}
			return nil
		})
	}
	return obj
}

func (c *Client) request(verb string, gvr schema.GroupVersionResource, sub, ns, name string) RequestInfo {
	return RequestInfo{Client: c.name, Verb: verb, Resource: gvr, Subresource: sub, Namespace: ns, Name: name}
}

// objectBody returns RequestInfo.Body for a request that sends obj: its
// JSON, nil when obj is nil or does not encode.
func objectBody(obj runtime.Object) func() []byte {
	return func() []byte {
		if obj == nil {
			return nil
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return nil
		}
		return b
	}
}

func objectName(obj runtime.Object) string {
	if obj == nil {
		return ""
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetName()
}

func badObject(verb string, gvr schema.GroupVersionResource) error {
	return apierrors.NewBadRequest(fmt.Sprintf("%s %s: the request has no object; pass a typed object or *unstructured.Unstructured", verb, gvr.String()))
}

// Create creates obj (typed or *unstructured.Unstructured) in namespace ns.
func (c *Client) Create(ctx context.Context, gvr schema.GroupVersionResource, ns string, obj runtime.Object, opts metav1.CreateOptions) (runtime.Object, error) {
	req := c.request("create", gvr, "", ns, objectName(obj))
	req.Body = objectBody(obj)
	return c.write(ctx, req, http.StatusCreated, func(st *store.Store) (runtime.Object, []store.Event, error) {
		if obj == nil {
			return nil, nil, badObject("create", gvr)
		}
		obj, err := c.s.typedInput(gvr, obj)
		if err != nil {
			return nil, nil, err
		}
		return st.Create(gvr, ns, obj, opts)
	})
}

// Get reads one object.
func (c *Client) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, opts metav1.GetOptions) (runtime.Object, error) {
	req := c.request("get", gvr, "", ns, name)
	req.ResourceVersion = opts.ResourceVersion
	s := c.s
	if _, err := c.begin(ctx, &req); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	obj, err := s.st.Get(gvr, ns, name, opts)
	c.answerLocked(&req, err, http.StatusOK)
	if err != nil {
		return nil, err
	}
	return asTypedClientSees(obj), nil
}

// List lists objects, honouring every ListOptions field.
func (c *Client) List(ctx context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (runtime.Object, error) {
	req := c.request("list", gvr, "", ns, "")
	req.ResourceVersion = opts.ResourceVersion
	req.ResourceVersionMatch = string(opts.ResourceVersionMatch)
	s := c.s
	f, err := c.begin(ctx, &req)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	obj, info, err := s.st.List(gvr, ns, opts, c.replicaLagLocked(f))
	if err != nil {
		c.answerLocked(&req, err, http.StatusOK)
		return nil, err
	}
	if info.Lag > 0 {
		s.observeLocked(Observation{Kind: ObsFault, Request: &req, Fault: faultName(f, "stale-replica"),
			Resource: gvr, Namespace: ns, RV: info.RV, Lag: info.Lag})
	}
	s.observeLocked(Observation{Kind: ObsList, Request: &req, Resource: gvr, Namespace: ns,
		RV: info.RV, Lag: info.Lag, Count: info.Count})
	c.answerLocked(&req, nil, http.StatusOK)
	return asTypedClientSees(obj), nil
}

// replicaLagLocked is how many revisions behind the latest the replica
// that f names is: ReplicaLag, or the distance to ReplicaAt when that is
// further behind.
func (c *Client) replicaLagLocked(f RequestFault) int64 {
	lag := f.ReplicaLag
	if f.ReplicaAt > 0 {
		lag = max(lag, c.s.st.RV()-f.ReplicaAt)
	}
	return lag
}

// Update replaces an object; a stale resourceVersion gets 409 Conflict.
func (c *Client) Update(ctx context.Context, gvr schema.GroupVersionResource, ns string, obj runtime.Object, opts metav1.UpdateOptions) (runtime.Object, error) {
	return c.update(ctx, gvr, ns, obj, opts, "")
}

// UpdateStatus replaces an object's status.
func (c *Client) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, ns string, obj runtime.Object, opts metav1.UpdateOptions) (runtime.Object, error) {
	return c.update(ctx, gvr, ns, obj, opts, "status")
}

func (c *Client) update(ctx context.Context, gvr schema.GroupVersionResource, ns string, obj runtime.Object, opts metav1.UpdateOptions, sub string) (runtime.Object, error) {
	req := c.request("update", gvr, sub, ns, objectName(obj))
	req.Body = objectBody(obj)
	if m, err := meta.Accessor(obj); err == nil && obj != nil {
		req.Precondition = m.GetResourceVersion()
	}
	return c.write(ctx, req, http.StatusOK, func(st *store.Store) (runtime.Object, []store.Event, error) {
		if obj == nil {
			return nil, nil, badObject("update", gvr)
		}
		obj, err := c.s.typedInput(gvr, obj)
		if err != nil {
			return nil, nil, err
		}
		return st.Update(gvr, ns, obj, opts, sub)
	})
}

// Patch patches an object (JSON merge, JSON patch, strategic merge for
// built-ins).
func (c *Client) Patch(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (runtime.Object, error) {
	sub := strings.Join(subresources, "/")
	req := c.request("patch", gvr, sub, ns, name)
	req.Body = func() []byte { return data }
	return c.write(ctx, req, http.StatusOK, func(st *store.Store) (runtime.Object, []store.Event, error) {
		return st.Patch(gvr, ns, name, pt, data, opts, sub)
	})
}

// Delete deletes an object, honouring preconditions and propagation policy.
func (c *Client) Delete(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) error {
	_, err := c.DeleteWithResult(ctx, gvr, ns, name, opts)
	return err
}

// DeleteWithResult is Delete returning what the server answers: the object
// marked for deletion (it has finalizers) or its last state.
func (c *Client) DeleteWithResult(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) (runtime.Object, error) {
	req := c.request("delete", gvr, "", ns, name)
	return c.write(ctx, req, http.StatusOK, func(st *store.Store) (runtime.Object, []store.Event, error) {
		return st.Delete(gvr, ns, name, opts)
	})
}

// DeleteCollection deletes every object matching opts.
func (c *Client) DeleteCollection(ctx context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	req := c.request("deletecollection", gvr, "", ns, "")
	_, err := c.write(ctx, req, http.StatusOK, func(st *store.Store) (runtime.Object, []store.Event, error) {
		evs, err := st.DeleteCollection(gvr, ns, opts, listOpts)
		return nil, evs, err
	})
	return err
}

// Watch opens a watch, honouring every ListOptions field, WatchList included:
// resourceVersion and resourceVersionMatch, sendInitialEvents (synthetic
// ADDED events, then the k8s.io/initial-events-end bookmark),
// allowWatchBookmarks (a bookmark at the latest revision every
// Options.BookmarkInterval), label and field selectors, and timeoutSeconds
// (the watch then closes cleanly). The watch also ends when ctx ends.
//
// The result channel is unbuffered and fed by one goroutine per watch from
// an unbounded queue: a slow consumer never blocks writers.
func (c *Client) Watch(ctx context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (watch.Interface, error) {
	return c.watch(ctx, gvr, ns, opts, false)
}

// watch opens a watch; asUnstructured delivers every object as
// *unstructured.Unstructured (for dynamic clients).
func (c *Client) watch(ctx context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions, asUnstructured bool) (watch.Interface, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	req := c.request("watch", gvr, "", ns, "")
	req.ResourceVersion = opts.ResourceVersion
	req.ResourceVersionMatch = string(opts.ResourceVersionMatch)
	req.SendInitialEvents = opts.SendInitialEvents != nil && *opts.SendInitialEvents
	s := c.s
	f, err := c.begin(ctx, &req)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds < 0 {
		err := apierrors.NewBadRequest(fmt.Sprintf("timeoutSeconds must not be negative, got %d", *opts.TimeoutSeconds))
		c.answerLocked(&req, err, http.StatusOK)
		return nil, err
	}
	filter, err := s.st.Filter(gvr, ns, opts)
	if err != nil {
		c.answerLocked(&req, err, http.StatusOK)
		return nil, err
	}
	initial, startRV, servedRV, err := s.st.WatchStartServed(gvr, ns, opts, c.replicaLagLocked(f))
	if err != nil {
		c.answerLocked(&req, err, http.StatusOK)
		return nil, err
	}
	if servedRV == 0 && f.ReplicaAt > 0 && f.ReplicaAt < s.st.RV() && !req.SendInitialEvents {
		// A plain watch from N at or below a held replica's revision: the
		// replica serves it, and what it has not seen comes when it
		// catches up.
		if n, perr := strconv.ParseInt(opts.ResourceVersion, 10, 64); perr == nil && n > 0 && n <= f.ReplicaAt {
			servedRV = f.ReplicaAt
		}
	}
	s.nextID++
	info := WatcherInfo{
		ID:        s.nextID,
		Client:    c.name,
		Resource:  gvr,
		Namespace: ns,
		StartRV:   opts.ResourceVersion,
		WatchList: req.SendInitialEvents,
		ReplicaRV: servedRV,
	}
	var timeout time.Duration
	if opts.TimeoutSeconds != nil {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	if timeout > 0 && s.sched != nil {
		timeout = s.sched.WatchTimeout(info, timeout)
	}
	w := newWatcher(s, ctx, info, filter, timeout, opts.AllowWatchBookmarks && s.bookmarkInterval > 0)
	w.source = s.st.StorageResource(gvr)
	if asUnstructured {
		if r, ok := s.st.Resource(gvr); ok {
			gvk := gvr.GroupVersion().WithKind(r.Kind)
			w.convert = func(obj runtime.Object) runtime.Object { return toUnstructured(obj, gvk) }
			w.convertOwned = nil
		}
	} else if s.servedUnstructuredAsTyped(gvr) {
		w.convert = s.typedWatchConvert(gvr, w.convert)
		w.convertOwned = nil
	}
	w.lastQueuedRV, w.startRV = startRV, startRV
	s.watchers = append(s.watchers, w)
	c.answerLocked(&req, nil, http.StatusOK)
	wi := info
	s.observeLocked(Observation{Kind: ObsWatchOpen, Request: &req, Watcher: &wi, Resource: gvr, Namespace: ns, RV: startRV})
	if lag := s.st.RV() - servedRV; servedRV > 0 && lag > 0 && opts.ResourceVersion == "0" {
		s.observeLocked(Observation{Kind: ObsFault, Request: &req, Watcher: &wi, Fault: faultName(f, "stale-replica"),
			Resource: gvr, Namespace: ns, RV: servedRV, Lag: lag})
	}
	s.orderInitialLocked(info, initial)
	for i := range initial {
		info := eventInfo(&initial[i])
		s.sendLocked(w, initial[i].Type, initial[i].Object, &info, false)
	}
	go w.run()
	return w, nil
}

// orderInitialLocked puts the initial ADDED events that open events (a
// WatchList's objects) in the order the hooks ask for (InitialOrderer);
// the bookmark and any event after them stay where they are.
func (s *Server) orderInitialLocked(w WatcherInfo, events []store.Event) {
	o, ok := s.hooks.(InitialOrderer)
	if !ok {
		return
	}
	n := 0
	for n < len(events) && events[n].Initial && events[n].Type == watch.Added {
		n++
	}
	if n < 2 {
		return
	}
	infos := make([]EventInfo, n)
	for i := range n {
		infos[i] = eventInfo(&events[i])
	}
	order := o.OrderInitial(w, infos)
	if len(order) != n {
		return
	}
	seen := make([]bool, n)
	for _, i := range order {
		if i < 0 || i >= n || seen[i] {
			return
		}
		seen[i] = true
	}
	sorted := make([]store.Event, n)
	for k, i := range order {
		sorted[k] = events[i]
	}
	copy(events, sorted)
}
