package fidelity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// Resource is a resource the corpus uses.
type Resource struct {
	// GVR names the resource.
	GVR schema.GroupVersionResource
	// Namespaced is false for cluster-scoped resources.
	Namespaced bool
}

// The resources of the corpus: built-ins and Bellerophon's CRD
// (subjects/bellerophon/config/crd.yaml), which has a status subresource
// and an OpenAPI schema.
var (
	ConfigMaps   = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true}
	Secrets      = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, Namespaced: true}
	Namespaces   = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}}
	Events       = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "events"}, Namespaced: true}
	EventsV1     = Resource{GVR: schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}, Namespaced: true}
	Bellerophons = Resource{GVR: schema.GroupVersionResource{Group: "lab.cachelab.dev", Version: "v1alpha1", Resource: "bellerophons"}, Namespaced: true}
)

// path returns the REST path of the collection (name "") or of one object
// (and its subresource) in namespace ns.
func (r Resource) path(ns, name, sub string) string {
	var b strings.Builder
	if r.GVR.Group == "" {
		b.WriteString("/api/" + r.GVR.Version)
	} else {
		b.WriteString("/apis/" + r.GVR.Group + "/" + r.GVR.Version)
	}
	if r.Namespaced {
		b.WriteString("/namespaces/" + ns)
	}
	b.WriteString("/" + r.GVR.Resource)
	if name != "" {
		b.WriteString("/" + name)
	}
	if sub != "" {
		b.WriteString("/" + sub)
	}
	return b.String()
}

// Env is the server one case runs against, with the case's namespace. Its
// methods send one request each through client-go (a rest.Interface with
// retries off, so every answer is the server's first), record the answer
// as a step and return it, so that a case can chain on it.
type Env struct {
	// Namespace is the case's namespace, named after the case.
	Namespace string

	ctx     context.Context
	rc      rest.Interface
	cs      kubernetes.Interface
	compact func(ctx context.Context) error
	// wait bounds every wait for watch events (virtual time on the fake).
	wait time.Duration

	answers []RawAnswer
	watches []*Watch
	// clean, if set, rewrites every object body before it is recorded
	// (the case still chains on the raw answer).
	clean func(map[string]any) map[string]any
	// managers keeps managedFields in the answers (ShowManagers).
	managers bool
}

// ShowManagers makes every later answer keep its object's managedFields
// (manager, operation, subresource, fields; no time).
func (e *Env) ShowManagers() { e.managers = true }

// Clean makes every later object answer be recorded as clean returns it
// (for content no normalization can rank, such as a UID copied into a
// label); nil stops it.
func (e *Env) Clean(clean func(map[string]any) map[string]any) { e.clean = clean }

// EnvConfig is what a runner gives a case's Env.
type EnvConfig struct {
	// Namespace is the case's namespace (it must exist).
	Namespace string
	// Config reaches the server.
	Config *rest.Config
	// Compact compacts the server's storage at its current revision.
	Compact func(ctx context.Context) error
	// Wait bounds every wait for watch events and garbage collection.
	Wait time.Duration
}

// newEnv builds an Env.
func newEnv(ctx context.Context, c EnvConfig) (*Env, error) {
	cfg := rest.CopyConfig(c.Config)
	cfg.GroupVersion = &schema.GroupVersion{Version: "v1"}
	cfg.APIPath = "/api"
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	cfg.ContentType = runtime.ContentTypeJSON
	cfg.AcceptContentTypes = runtime.ContentTypeJSON
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("fidelity: REST client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return nil, fmt.Errorf("fidelity: clientset: %w", err)
	}
	return &Env{Namespace: c.Namespace, ctx: ctx, rc: rc, cs: cs, compact: c.Compact, wait: c.Wait}, nil
}

// Result is one answer a case can chain on.
type Result struct {
	// Code is the HTTP status code (0 for a typed client's success).
	Code int
	// Body is the decoded JSON body (an object, a list or a Status).
	Body map[string]any
}

// RV is the answered object's (or list's) resourceVersion.
func (r Result) RV() string { return str(meta(r.Body), "resourceVersion") }

// UID is the answered object's UID.
func (r Result) UID() string { return str(meta(r.Body), "uid") }

// Continue is the answered list's continue token.
func (r Result) Continue() string { return str(meta(r.Body), "continue") }

// caseFailure aborts a case whose own logic failed (not a server answer).
type caseFailure struct{ err error }

// Fatalf aborts the case: something the case itself needs went wrong.
func (e *Env) Fatalf(format string, args ...any) {
	panic(caseFailure{fmt.Errorf(format, args...)})
}

// record appends an answer.
func (e *Env) record(a RawAnswer) {
	a.Managers = e.managers
	e.answers = append(e.answers, a)
}

// Note records an observation of the case's own as a step.
func (e *Env) Note(step, note string) { e.record(RawAnswer{Step: step, Note: note}) }

// request sends one request and records its answer.
func (e *Env) request(step, method, path string, params runtime.Object, contentType string, body any) Result {
	a := e.send(step, method, path, params, contentType, body)
	res := Result{Code: a.Code, Body: a.Body}
	if e.clean != nil && a.Body != nil && !isStatus(a.Body) {
		a.Body = e.clean(a.Body)
	}
	e.record(a)
	return res
}

// send sends one request and returns its answer.
func (e *Env) send(step, method, path string, params runtime.Object, contentType string, body any) RawAnswer {
	req := e.rc.Verb(method).AbsPath(path).MaxRetries(0).SetHeader("Accept", runtime.ContentTypeJSON)
	if params != nil {
		req = req.VersionedParams(params, scheme.ParameterCodec)
	}
	if body != nil {
		data, ok := body.([]byte)
		if !ok {
			var err error
			if data, err = json.Marshal(body); err != nil {
				e.Fatalf("step %q: encoding the body: %v", step, err)
			}
		}
		if contentType == "" {
			contentType = runtime.ContentTypeJSON
		}
		req = req.SetHeader("Content-Type", contentType).Body(data)
	}
	res := req.Do(e.ctx)
	var code int
	res.StatusCode(&code)
	raw, err := res.Raw()
	a := RawAnswer{Step: step, Code: code}
	if len(raw) > 0 {
		var m map[string]any
		if jerr := json.Unmarshal(raw, &m); jerr != nil {
			a.Note = "body is not JSON: " + jerr.Error()
		} else {
			a.Body = m
		}
	} else if err != nil {
		a.Body = statusBody(err)
		if a.Body == nil {
			a.Note = "transport error"
		}
	}
	return a
}

// statusBody returns the Status of an API error as a JSON map.
func statusBody(err error) map[string]any {
	var api apierrors.APIStatus
	if !errors.As(err, &api) {
		return nil
	}
	st := api.Status()
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	m, cerr := runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
	if cerr != nil {
		return nil
	}
	return m
}

// Create POSTs obj (a typed object or a map) to the collection.
func (e *Env) Create(step string, r Resource, obj any, opts ...metav1.CreateOptions) Result {
	return e.request(step, http.MethodPost, r.path(e.Namespace, "", ""), createOpts(opts), "", obj)
}

func createOpts(opts []metav1.CreateOptions) runtime.Object {
	if len(opts) == 0 {
		return nil
	}
	return &opts[0]
}

// Get GETs one object.
func (e *Env) Get(step string, r Resource, name string, opts ...metav1.GetOptions) Result {
	var p runtime.Object
	if len(opts) > 0 {
		p = &opts[0]
	}
	return e.request(step, http.MethodGet, r.path(e.Namespace, name, ""), p, "", nil)
}

// List GETs the collection with opts.
func (e *Env) List(step string, r Resource, opts metav1.ListOptions) Result {
	return e.request(step, http.MethodGet, r.path(e.Namespace, "", ""), &opts, "", nil)
}

// ListNames GETs the collection with opts and records only the status
// code and the names of the items (for kinds whose content holds
// timestamps, such as Events).
func (e *Env) ListNames(step string, r Resource, opts metav1.ListOptions) {
	a := e.send(step, http.MethodGet, r.path(e.Namespace, "", ""), &opts, "", nil)
	if a.Body != nil && !isStatus(a.Body) {
		var names []string
		for _, it := range slice(a.Body, "items") {
			if m, ok := it.(map[string]any); ok {
				names = append(names, str(meta(m), "name"))
			}
		}
		a.Body, a.Note = nil, "items: "+strings.Join(names, ", ")
	}
	e.record(a)
}

// Update PUTs obj (its name names the object).
func (e *Env) Update(step string, r Resource, name string, obj any, opts ...metav1.UpdateOptions) Result {
	var p runtime.Object
	if len(opts) > 0 {
		p = &opts[0]
	}
	return e.request(step, http.MethodPut, r.path(e.Namespace, name, ""), p, "", obj)
}

// UpdateStatus PUTs obj to the status subresource.
func (e *Env) UpdateStatus(step string, r Resource, name string, obj any) Result {
	return e.request(step, http.MethodPut, r.path(e.Namespace, name, "status"), nil, "", obj)
}

// Patch PATCHes name (sub "" or "status") with a patch of type pt.
func (e *Env) Patch(step string, r Resource, name, sub string, pt types.PatchType, patch string, opts ...metav1.PatchOptions) Result {
	var p runtime.Object
	if len(opts) > 0 {
		p = &opts[0]
	}
	return e.request(step, http.MethodPatch, r.path(e.Namespace, name, sub), p, string(pt), []byte(patch))
}

// Delete DELETEs name with opts in the body, as client-go sends them.
func (e *Env) Delete(step string, r Resource, name string, opts metav1.DeleteOptions) Result {
	opts.TypeMeta = metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}
	return e.request(step, http.MethodDelete, r.path(e.Namespace, name, ""), nil, "", &opts)
}

// DeleteCollection DELETEs the objects of the collection matching lo.
func (e *Env) DeleteCollection(step string, r Resource, lo metav1.ListOptions) Result {
	return e.request(step, http.MethodDelete, r.path(e.Namespace, "", ""), &lo, "", nil)
}

// Typed returns client-go's typed clientset for steps that use it; record
// their answers with RecordTyped.
func (e *Env) Typed() kubernetes.Interface { return e.cs }

// Context is the case's context.
func (e *Env) Context() context.Context { return e.ctx }

// RecordTyped records the answer of a typed-client call: the object on
// success (Code 0: typed clients do not expose the status code), the
// Status of an API error otherwise.
func (e *Env) RecordTyped(step string, obj runtime.Object, err error) Result {
	a := RawAnswer{Step: step}
	switch {
	case err != nil:
		a.Body = statusBody(err)
		if a.Body == nil {
			a.Note = "error: " + err.Error()
		} else if c, ok := number(a.Body["code"]); ok {
			a.Code = int(c)
		}
	case obj != nil:
		m, cerr := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if cerr != nil {
			e.Fatalf("step %q: converting %T: %v", step, obj, cerr)
		}
		a.Body = m
	}
	e.record(a)
	return Result{Code: a.Code, Body: a.Body}
}

// Compact compacts the server's storage at its current revision (etcd
// compaction on the real server, fakeapi.Server.Compact on the fake). It
// records nothing.
func (e *Env) Compact() {
	if err := e.compact(e.ctx); err != nil {
		e.Fatalf("compact: %v", err)
	}
}

// Watch is a watch a case opened; Collect reads its events.
type Watch struct {
	body   io.ReadCloser
	events chan RawEvent
	done   chan struct{}
	// failed is the answer of a watch that did not open.
	failed *RawAnswer
}

// Watch opens a watch of r with opts (Watch is set) and records the
// server's answer to the request as step (200, or the refusal); the events
// wait for Collect.
func (e *Env) Watch(step string, r Resource, opts metav1.ListOptions) *Watch {
	opts.Watch = true
	body, err := e.rc.Get().AbsPath(r.path(e.Namespace, "", "")).VersionedParams(&opts, scheme.ParameterCodec).
		MaxRetries(0).SetHeader("Accept", runtime.ContentTypeJSON).Stream(e.ctx)
	w := &Watch{events: make(chan RawEvent, 1024), done: make(chan struct{})}
	if err != nil {
		a := RawAnswer{Step: step, Body: statusBody(err)}
		if a.Body == nil {
			a.Note = "watch failed: " + err.Error()
		} else if c, ok := number(a.Body["code"]); ok {
			a.Code = int(c)
		}
		e.record(a)
		w.failed = &a
		close(w.events)
		close(w.done)
		return w
	}
	e.record(RawAnswer{Step: step, Code: http.StatusOK})
	w = streamWatch(body, 1024)
	e.watches = append(e.watches, w)
	return w
}

// Collect records as step the next events of w: up to n of them, stopping
// early at an ERROR event, at the end of the stream, or when the Env's
// wait passes without the n-th event.
func (e *Env) Collect(step string, w *Watch, n int) {
	e.record(RawAnswer{Step: step, Events: e.next(w, n, nil), Note: w.note()})
}

// CollectFor is Collect with its own bound on the wait (for events a
// server sends on a timer, such as bookmarks).
func (e *Env) CollectFor(step string, w *Watch, n int, d time.Duration) {
	saved := e.wait
	e.wait = d
	defer func() { e.wait = saved }()
	e.Collect(step, w, n)
}

// CollectUntil records as step the events of w up to the first for which
// stop is true (or an ERROR, the end of the stream, the Env's wait).
func (e *Env) CollectUntil(step string, w *Watch, stop func(RawEvent) bool) {
	e.record(RawAnswer{Step: step, Events: e.next(w, 0, stop), Note: w.note()})
}

func (w *Watch) note() string {
	if w.failed != nil {
		return "the watch did not open"
	}
	return ""
}

// next reads events of w.
func (e *Env) next(w *Watch, n int, stop func(RawEvent) bool) []RawEvent {
	var out []RawEvent
	timer := time.NewTimer(e.wait)
	defer timer.Stop()
	for n <= 0 || len(out) < n {
		select {
		case ev, ok := <-w.events:
			if !ok {
				return out
			}
			out = append(out, ev)
			if ev.Type == "ERROR" || (stop != nil && stop(ev)) {
				return out
			}
		case <-timer.C:
			return out
		}
	}
	return out
}

// closeWatches ends every watch the case opened and waits for their
// readers.
func (e *Env) closeWatches() {
	for _, w := range e.watches {
		e.Stop(w)
	}
	e.watches = nil
}

// Stop closes one watch.
func (e *Env) Stop(w *Watch) {
	if w.body != nil {
		_ = w.body.Close()
		for range w.events { //nolint:revive // drain so the reader can end
		}
		<-w.done
	}
}

// WaitGone waits, by watching, until r/name no longer exists (the garbage
// collector's or a finalizer's work on a real server), at most the Env's
// wait. It records nothing; the case then records what it sees.
func (e *Env) WaitGone(r Resource, name string) {
	e.waitFor(r, name, func(ev RawEvent) bool { return ev.Type == "DELETED" })
}

// WaitUntil waits, by watching, until r/name satisfies ok (checked on the
// current state first, then on every change), at most the Env's wait.
func (e *Env) WaitUntil(r Resource, name string, ok func(obj map[string]any) bool) {
	e.waitFor(r, name, func(ev RawEvent) bool { return ev.Type != "DELETED" && ok(ev.Object) })
}

// waitFor lists r/name and, unless done already holds, watches it from
// the list's resourceVersion until done does.
func (e *Env) waitFor(r Resource, name string, done func(RawEvent) bool) {
	sel := "metadata.name=" + name
	lo := metav1.ListOptions{FieldSelector: sel}
	raw, err := e.rc.Get().AbsPath(r.path(e.Namespace, "", "")).VersionedParams(&lo, scheme.ParameterCodec).
		MaxRetries(0).SetHeader("Accept", runtime.ContentTypeJSON).Do(e.ctx).Raw()
	if err != nil {
		e.Fatalf("waiting for %s %s: list: %v", r.GVR.Resource, name, err)
	}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		e.Fatalf("waiting for %s %s: list: %v", r.GVR.Resource, name, err)
	}
	if len(list.Items) == 0 {
		if done(RawEvent{Type: "DELETED"}) {
			return
		}
	} else if done(RawEvent{Type: "ADDED", Object: list.Items[0]}) {
		return
	}
	opts := metav1.ListOptions{FieldSelector: sel, ResourceVersion: list.Metadata.ResourceVersion, Watch: true}
	body, err := e.rc.Get().AbsPath(r.path(e.Namespace, "", "")).VersionedParams(&opts, scheme.ParameterCodec).
		MaxRetries(0).SetHeader("Accept", runtime.ContentTypeJSON).Stream(e.ctx)
	if err != nil {
		e.Fatalf("waiting for %s %s: watch: %v", r.GVR.Resource, name, err)
	}
	w := streamWatch(body, 64)
	defer e.Stop(w)
	e.next(w, 0, done)
}

// streamWatch decodes the watch frames of body in a goroutine that ends
// with the stream.
func streamWatch(body io.ReadCloser, buffer int) *Watch {
	w := &Watch{body: body, events: make(chan RawEvent, buffer), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer close(w.events)
		dec := json.NewDecoder(body)
		for {
			var frame struct {
				Type   string         `json:"type"`
				Object map[string]any `json:"object"`
			}
			if err := dec.Decode(&frame); err != nil {
				return
			}
			w.events <- RawEvent{Type: frame.Type, Object: frame.Object}
		}
	}()
	return w
}

// Discovery GETs the aggregated discovery document at path ("/api" or
// "/apis", Accept apidiscovery.k8s.io/v2) and records, as a note, what
// clients resolve names with for the named resources of group: per
// resource its scope, singular name, short names, categories, verbs and
// subresources (each sorted). A resource the document lacks is noted as
// missing.
func (e *Env) Discovery(step, path, group string, resources ...string) {
	raw, err := e.rc.Get().AbsPath(path).MaxRetries(0).
		SetHeader("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList").Do(e.ctx).Raw()
	if err != nil {
		e.record(RawAnswer{Step: step, Body: statusBody(err), Note: "discovery failed"})
		return
	}
	var doc apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(raw, &doc); err != nil {
		e.Note(step, "discovery is not an APIGroupDiscoveryList: "+err.Error())
		return
	}
	found := map[string]apidiscoveryv2.APIResourceDiscovery{}
	for _, g := range doc.Items {
		if g.Name != group {
			continue
		}
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				if _, ok := found[r.Resource]; !ok {
					found[r.Resource] = r
				}
			}
		}
	}
	sorted := func(in []string) string {
		out := slices.Clone(in)
		slices.Sort(out)
		return "[" + strings.Join(out, " ") + "]"
	}
	var lines []string
	for _, name := range resources {
		r, ok := found[name]
		if !ok {
			lines = append(lines, name+": missing")
			continue
		}
		var subs []string
		for _, s := range r.Subresources {
			subs = append(subs, s.Subresource+sorted(s.Verbs))
		}
		lines = append(lines, fmt.Sprintf("%s: scope=%s singular=%s short=%s categories=%s verbs=%s sub=%s",
			name, r.Scope, r.SingularResource, sorted(r.ShortNames), sorted(r.Categories), sorted(r.Verbs), sorted(subs)))
	}
	e.Note(step, strings.Join(lines, "; "))
}
