// Package http serves a fakeapi.Server over HTTP, as kube-apiserver's REST
// API, so that unmodified clients (client-go's typed clientset, the dynamic
// client, informers, controller-runtime, kubectl) talk to it.
//
// NewHandler returns the http.Handler: Kubernetes REST paths for every
// served resource (core /api/v1/..., groups /apis/G/V/..., namespaced and
// cluster-scoped, the status subresource), discovery (/api, /apis,
// /api/v1, /apis/G, /apis/G/V), /version, metav1.Status bodies on every
// error, watches streamed as metav1.WatchEvent frames. Every request is made
// through a fakeapi.Client named after the caller (the X-Cachelab-Client
// header, else the User-Agent's product), so the server's Hooks and
// Observer see HTTP requests exactly as in-process ones.
//
// Pipe is an in-memory transport (no socket, no background goroutine) whose
// rest.Config lets client-go run inside a testing/synctest bubble.
//
// Content negotiation, as kube-apiserver does it for the cases clients use:
//   - JSON (application/json) and YAML (application/yaml) for everything;
//   - protobuf (application/vnd.kubernetes.protobuf) for built-in kinds and
//     Status; for custom resources and discovery a protobuf-only Accept gets
//     406 NotAcceptable, and client-go's default Accept
//     ("application/vnd.kubernetes.protobuf, */*") falls back to JSON;
//   - as=Table;g=meta.k8s.io;v=v1 (kubectl get): a metav1.Table with Name
//     and Age columns;
//   - as=PartialObjectMetadata and as=PartialObjectMetadataList (client-go's
//     metadata client, controller-runtime's metadata-only watches), in JSON
//     or protobuf, for every resource;
//   - aggregated discovery (apidiscovery.k8s.io/v2 APIGroupDiscoveryList,
//     JSON) on /api and /apis when the Accept header prefers it, as
//     client-go's discovery does; legacy discovery otherwise.
//
// OpenAPI: /openapi/v3 lists one document per group version: recorded from
// a real kube-apiserver for built-ins, generated for custom resources (with
// their schemas when Options.OpenAPISchemas has them), so kubectl
// create/apply/patch leave validation to the server and kubectl explain
// works (openapi.go); /openapi/v2 is 404.
//
// Patch content types: merge, JSON patch and strategic merge (built-ins);
// server-side apply (application/apply-patch+yaml) is served by the
// store's field manager.
package http

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	nethttp "net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/fakeapi/store"
)

// ClientHeader is the request header naming the client for hooks and
// observers. Without it the client is named after the User-Agent's product
// token (the part before the first "/"), or DefaultClient.
const ClientHeader = "X-Cachelab-Client"

// DefaultClient names requests that carry neither ClientHeader nor a
// User-Agent.
const DefaultClient = "http"

// MaxBodyBytes is the largest request body accepted (kube-apiserver's
// default limit is 3 MiB); larger bodies get 413.
const MaxBodyBytes = 3 << 20

// Options configures the handler. The zero value is usable.
type Options struct {
	// Clock gives "now" for the Age column of tables. Optional; default
	// clock.RealClock{} (virtual inside a synctest bubble).
	Clock clock.PassiveClock
	// Version is what /version answers. Optional; default DefaultVersion.
	Version *version.Info
	// OpenAPISchemas are custom resource kinds' schemas (a CRD version's
	// schema.openAPIV3Schema, as JSON), served in their /openapi/v3
	// document so that kubectl explain works for them. Optional.
	OpenAPISchemas map[schema.GroupVersionKind]stdjson.RawMessage
}

// DefaultVersion is what /version answers by default: the Kubernetes
// version of the client-go the lab is built with (fakeapi.ServerVersion).
var DefaultVersion = fakeapi.ServerVersion()

// handler is the http.Handler returned by NewHandler.
type handler struct {
	srv     *fakeapi.Server
	clock   clock.PassiveClock
	version version.Info
	// openAPISchemas is Options.OpenAPISchemas.
	openAPISchemas map[schema.GroupVersionKind]stdjson.RawMessage
	// optionsDecoder decodes DeleteOptions bodies of any apiVersion (v1,
	// meta.k8s.io/v1, a group's version) straight into the Go type.
	optionsDecoder runtime.Decoder
}

// NewHandler returns an http.Handler serving srv's resources as
// kube-apiserver does. It holds no goroutine of its own; a watch request
// holds its handler call until the watch ends (its timeoutSeconds, a
// server-side close, or the request's context).
func NewHandler(srv *fakeapi.Server, opts Options) nethttp.Handler {
	h := &handler{srv: srv, clock: opts.Clock, version: DefaultVersion, openAPISchemas: opts.OpenAPISchemas}
	if h.clock == nil {
		h.clock = clock.RealClock{}
	}
	if opts.Version != nil {
		h.version = *opts.Version
	}
	empty := runtime.NewScheme()
	h.optionsDecoder = json.NewSerializerWithOptions(json.DefaultMetaFactory, empty, empty, json.SerializerOptions{Yaml: false})
	return h
}

// clientName names the caller of r.
func clientName(r *nethttp.Request) string {
	if c := strings.TrimSpace(r.Header.Get(ClientHeader)); c != "" {
		return c
	}
	ua := strings.TrimSpace(r.UserAgent())
	if i := strings.IndexAny(ua, "/ "); i >= 0 {
		ua = ua[:i]
	}
	if ua == "" {
		return DefaultClient
	}
	return ua
}

// request is one parsed REST request.
type request struct {
	r      *nethttp.Request
	client *fakeapi.Client
	res    fakeapi.ResourceInfo
	gvr    schema.GroupVersionResource
	ns     string
	name   string
	sub    string
	// typed is true when the resource's kind has a Go type (built-ins).
	typed bool
}

// ServeHTTP routes r.
func (h *handler) ServeHTTP(w nethttp.ResponseWriter, r *nethttp.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	segs := splitPath(path)
	switch {
	case path == "/version":
		h.writeJSON(w, r, nethttp.StatusOK, &h.version)
		return
	case path == "/healthz" || path == "/readyz" || path == "/livez":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(nethttp.StatusOK)
		_, _ = io.WriteString(w, "ok")
		return
	case len(segs) >= 2 && segs[0] == "openapi" && segs[1] == "v3" && r.Method == nethttp.MethodGet:
		h.serveOpenAPI(w, r, segs[2:])
		return
	case len(segs) >= 1 && segs[0] == "api":
		if len(segs) == 1 {
			if wantsAggregated(r) && r.Method == nethttp.MethodGet {
				h.serveAggregated(w, r, true)
				return
			}
			h.serveDiscovery(w, r, h.apiVersions(r))
			return
		}
		if segs[1] != "v1" {
			h.writeError(w, r, notFound())
			return
		}
		h.serveGroupVersion(w, r, schema.GroupVersion{Version: "v1"}, segs[2:])
		return
	case len(segs) >= 1 && segs[0] == "apis":
		switch len(segs) {
		case 1:
			if wantsAggregated(r) && r.Method == nethttp.MethodGet {
				h.serveAggregated(w, r, false)
				return
			}
			h.serveDiscovery(w, r, h.apiGroupList())
			return
		case 2:
			g, ok := h.apiGroup(segs[1])
			if !ok {
				h.writeError(w, r, notFound())
				return
			}
			h.serveDiscovery(w, r, g)
			return
		}
		if segs[1] == "" {
			h.writeError(w, r, notFound())
			return
		}
		h.serveGroupVersion(w, r, schema.GroupVersion{Group: segs[1], Version: segs[2]}, segs[3:])
		return
	}
	h.writeError(w, r, notFound())
}

// splitPath splits a URL path into its segments ("" has none).
func splitPath(p string) []string {
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// notFound is kube-apiserver's answer for a path it has no route for.
func notFound() error {
	return apierrors.NewGenericServerResponse(nethttp.StatusNotFound, "", schema.GroupResource{}, "", "", 0, false)
}

// serveGroupVersion serves /api/v1/... and /apis/G/V/... (rest is what
// follows the group version).
func (h *handler) serveGroupVersion(w nethttp.ResponseWriter, r *nethttp.Request, gv schema.GroupVersion, rest []string) {
	resources := h.resourcesOf(gv)
	if len(resources) == 0 {
		// A group version nobody serves (a CRD's, once it is gone) reaches
		// kube-apiserver's not-found handler: a plain-text 404 page, not a
		// Status (client-go still reads it as NotFound).
		nethttp.NotFound(w, r)
		return
	}
	if len(rest) == 0 {
		h.serveDiscovery(w, r, h.apiResourceList(gv, resources))
		return
	}
	req := &request{r: r}
	// /namespaces/{ns}/{resource}/... unless it is the namespace itself
	// (/namespaces/{name}/status).
	if rest[0] == "namespaces" && len(rest) >= 3 && rest[2] != "status" && rest[2] != "finalize" {
		req.ns = rest[1]
		rest = rest[2:]
		if req.ns == "" {
			h.writeError(w, r, notFound())
			return
		}
	}
	var found bool
	for _, res := range resources {
		if res.GVR.Resource == rest[0] {
			req.res, found = res, true
			break
		}
	}
	if !found || len(rest) > 3 {
		h.writeError(w, r, notFound())
		return
	}
	req.gvr = req.res.GVR
	if len(rest) >= 2 {
		req.name = rest[1]
		if req.name == "" {
			h.writeError(w, r, notFound())
			return
		}
	}
	if len(rest) == 3 {
		req.sub = rest[2]
		if !(req.sub == "status" && req.res.HasStatus) && !(req.sub == "scale" && h.srv.HasScale(req.res.GVR)) && !(req.sub == "token" && req.res.GVR == serviceAccountsGVR) {
			h.writeError(w, r, notFound())
			return
		}
	}
	if req.res.Namespaced && req.ns == "" && req.name != "" {
		// Namespaced objects are only addressed under /namespaces/{ns}.
		h.writeError(w, r, notFound())
		return
	}
	if !req.res.Namespaced && req.ns != "" {
		h.writeError(w, r, notFound())
		return
	}
	req.typed = scheme.Scheme.Recognizes(req.gvr.GroupVersion().WithKind(req.res.Kind))
	req.client = h.srv.Client(clientName(r))
	h.serveResource(w, req)
}

// resourcesOf returns the served resources of one group version.
func (h *handler) resourcesOf(gv schema.GroupVersion) []fakeapi.ResourceInfo {
	var out []fakeapi.ResourceInfo
	for _, res := range h.srv.Resources() {
		if res.GVR.GroupVersion() == gv {
			out = append(out, res)
		}
	}
	return out
}

// serveResource dispatches a resource request on its method.
func (h *handler) serveResource(w nethttp.ResponseWriter, req *request) {
	r := req.r
	ctx := r.Context()
	gr := req.gvr.GroupResource()
	collection := req.name == ""
	if req.sub == "scale" {
		h.serveScale(w, req)
		return
	}
	if req.sub == "token" {
		h.serveToken(w, req) // token.go
		return
	}
	switch r.Method {
	case nethttp.MethodGet:
		if collection {
			var opts metav1.ListOptions
			if err := decodeQuery(r, &opts); err != nil {
				h.writeError(w, r, err)
				return
			}
			if opts.Watch {
				h.serveWatch(w, req, opts)
				return
			}
			obj, err := req.client.List(ctx, req.gvr, req.ns, opts)
			h.respond(w, req, nethttp.StatusOK, obj, err)
			return
		}
		var opts metav1.GetOptions
		if err := decodeQuery(r, &opts); err != nil {
			h.writeError(w, r, err)
			return
		}
		obj, err := req.client.Get(ctx, req.gvr, req.ns, req.name, opts)
		h.respond(w, req, nethttp.StatusOK, obj, err)
	case nethttp.MethodPost:
		if !collection {
			h.writeError(w, r, methodNotAllowed(gr, "create"))
			return
		}
		var opts metav1.CreateOptions
		if err := decodeQuery(r, &opts); err != nil {
			h.writeError(w, r, err)
			return
		}
		obj, err := h.decodeObject(req)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		if err := checkIdentity(req, obj, false); err != nil {
			h.writeError(w, r, err)
			return
		}
		if opts.FieldManager == "" {
			opts.FieldManager = prefixFromUserAgent(r.UserAgent())
		}
		out, err := req.client.Create(ctx, req.gvr, req.ns, obj, opts)
		h.respond(w, req, nethttp.StatusCreated, out, err)
	case nethttp.MethodPut:
		if collection {
			h.writeError(w, r, methodNotAllowed(gr, "update"))
			return
		}
		var opts metav1.UpdateOptions
		if err := decodeQuery(r, &opts); err != nil {
			h.writeError(w, r, err)
			return
		}
		obj, err := h.decodeObject(req)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		if err := checkIdentity(req, obj, true); err != nil {
			h.writeError(w, r, err)
			return
		}
		if opts.FieldManager == "" {
			opts.FieldManager = prefixFromUserAgent(r.UserAgent())
		}
		var out runtime.Object
		code := nethttp.StatusOK
		if req.sub == "status" {
			out, err = req.client.UpdateStatus(ctx, req.gvr, req.ns, obj, opts)
		} else {
			if !h.srv.Exists(req.gvr, req.ns, req.name) {
				code = nethttp.StatusCreated // an update that creates (leases, events) answers 201
			}
			out, err = req.client.Update(ctx, req.gvr, req.ns, obj, opts)
		}
		h.respond(w, req, code, out, err)
	case nethttp.MethodPatch:
		if collection {
			h.writeError(w, r, methodNotAllowed(gr, "patch"))
			return
		}
		var opts metav1.PatchOptions
		if err := decodeQuery(r, &opts); err != nil {
			h.writeError(w, r, err)
			return
		}
		body, err := readBody(r)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		pt := types.PatchType(mediaTypeOf(r.Header.Get("Content-Type")))
		var subs []string
		if req.sub != "" {
			subs = []string{req.sub}
		}
		code := nethttp.StatusOK
		if pt == types.ApplyYAMLPatchType && req.sub == "" && !h.srv.Exists(req.gvr, req.ns, req.name) {
			code = nethttp.StatusCreated // an apply that creates answers 201
		}
		if opts.FieldManager == "" && pt != types.ApplyYAMLPatchType {
			opts.FieldManager = prefixFromUserAgent(r.UserAgent())
		}
		out, err := req.client.Patch(ctx, req.gvr, req.ns, req.name, pt, body, opts, subs...)
		h.respond(w, req, code, out, err)
	case nethttp.MethodDelete:
		if req.sub != "" {
			h.writeError(w, r, methodNotAllowed(schema.GroupResource{Group: gr.Group, Resource: gr.Resource + "/" + req.sub}, "delete"))
			return
		}
		opts, err := h.deleteOptions(r)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		if collection && !hasDeleteCollection(req.gvr) {
			h.writeError(w, r, methodNotAllowed(gr, "deletecollection"))
			return
		}
		if collection {
			var lo metav1.ListOptions
			if err := decodeQuery(r, &lo); err != nil {
				h.writeError(w, r, err)
				return
			}
			// kube-apiserver lists what matches, deletes each and answers
			// the list of what it deleted (200); so does the handler (the
			// list is a request of the client's in hooks and observations).
			listOpts := metav1.ListOptions{LabelSelector: lo.LabelSelector, FieldSelector: lo.FieldSelector}
			deleted, err := req.client.List(ctx, req.gvr, req.ns, listOpts)
			if err != nil {
				h.writeError(w, r, err)
				return
			}
			if err := req.client.DeleteCollection(ctx, req.gvr, req.ns, opts, lo); err != nil {
				h.writeError(w, r, err)
				return
			}
			h.respond(w, req, nethttp.StatusOK, deleted, nil)
			return
		}
		out, err := req.client.DeleteWithResult(ctx, req.gvr, req.ns, req.name, opts)
		if err == nil && out != nil {
			// A namespace marked Terminating is answered as the object even
			// when the store (doing the namespace controller's work at
			// once) has already removed it: kube-apiserver answers the
			// mark, the controller removes it later.
			terminating := req.gvr.Group == "" && req.gvr.Resource == "namespaces"
			if m, merr := meta.Accessor(out); merr == nil && m.GetDeletionTimestamp() != nil && (len(m.GetFinalizers()) > 0 || terminating) {
				// Still there (finalizers): kube-apiserver answers the
				// object, 202 Accepted if the client asked for cascading
				// deletion with orphanDependents=false, else 200.
				code := nethttp.StatusOK
				//nolint:staticcheck // OrphanDependents is deprecated but still honoured
				if opts.OrphanDependents != nil && !*opts.OrphanDependents {
					code = nethttp.StatusAccepted
				}
				h.respond(w, req, code, out, nil)
				return
			}
		}
		if err == nil && out != nil && h.srv.ReturnsDeletedObject(req.gvr) {
			h.respond(w, req, nethttp.StatusOK, out, nil)
			return
		}
		h.respondStatusSuccess(w, req, types.UID(uidOf(out)), err)
	default:
		h.writeError(w, r, methodNotAllowed(gr, strings.ToLower(r.Method)))
	}
}

// uidOf returns obj's UID, or "".
func uidOf(obj runtime.Object) string {
	if obj == nil {
		return ""
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return string(m.GetUID())
}

// respondStatusSuccess answers a delete with a Success Status (or err).
func (h *handler) respondStatusSuccess(w nethttp.ResponseWriter, req *request, uid types.UID, err error) {
	if err != nil {
		h.writeError(w, req.r, err)
		return
	}
	st := &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		// The registry's finalizeDelete answers no code (only the
		// handler's fallback, for storages that return nothing, has one).
		Status: metav1.StatusSuccess,
		Details: &metav1.StatusDetails{
			Name:  req.name,
			Group: req.gvr.Group,
			Kind:  req.gvr.Resource,
			UID:   uid,
		},
	}
	h.writeObject(w, req, nethttp.StatusOK, st)
}

// decodeQuery decodes r's query parameters into opts (ListOptions,
// GetOptions, ...) with client-go's parameter codec (metav1's url.Values conversions); a malformed value is 400.
func decodeQuery(r *nethttp.Request, opts runtime.Object) error {
	if err := scheme.ParameterCodec.DecodeParameters(r.URL.Query(), schema.GroupVersion{Version: "v1"}, opts); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid query parameters: %v", err))
	}
	return nil
}

// readBody reads the request body, refusing more than MaxBodyBytes.
func readBody(r *nethttp.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot read the request body: %v", err))
	}
	if len(data) > MaxBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", MaxBodyBytes))
	}
	return data, nil
}

// mediaTypeOf returns the media type of a Content-Type value, without
// parameters, lower-cased.
func mediaTypeOf(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.ToLower(strings.TrimSpace(ct))
}

// unsupportedMediaType is kube-apiserver's 415 for a body it cannot decode.
func unsupportedMediaType(ct string, accepted ...string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    nethttp.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format (%q) - accepted media types include: %s", ct, strings.Join(accepted, ", ")),
	}}
}

// strictCodecs decodes bodies of built-ins, reporting unknown and
// duplicate fields as strict decoding errors (ignored unless the request
// asks for fieldValidation=Strict).
var strictCodecs = runtimeserializer.NewCodecFactory(scheme.Scheme, runtimeserializer.EnableStrict)

// decodeObject decodes the request body as an object of req's kind: typed
// for built-ins (JSON, YAML or protobuf), unstructured for custom resources
// (JSON or YAML). A body without apiVersion/kind is taken to be of the
// URL's kind, as kube-apiserver does.
func (h *handler) decodeObject(req *request) (runtime.Object, error) {
	body, err := readBody(req.r)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the request has no body; send a %s object", req.res.Kind))
	}
	gvk := req.gvr.GroupVersion().WithKind(req.res.Kind)
	ct := mediaTypeOf(req.r.Header.Get("Content-Type"))
	switch ct {
	case "", runtime.ContentTypeJSON, runtime.ContentTypeYAML:
	case runtime.ContentTypeProtobuf:
		if req.gvr == store.CRDsResource {
			return decodeCRDProtobuf(body, gvk) // crdapi.go
		}
		if !req.typed {
			return nil, unsupportedMediaType(ct, runtime.ContentTypeJSON, runtime.ContentTypeYAML)
		}
	default:
		accepted := []string{runtime.ContentTypeJSON, runtime.ContentTypeYAML}
		if req.typed {
			accepted = append(accepted, runtime.ContentTypeProtobuf)
		}
		return nil, unsupportedMediaType(ct, accepted...)
	}
	var obj runtime.Object
	var got *schema.GroupVersionKind
	if req.typed {
		into, err := scheme.Scheme.New(gvk)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		// Field names are case-sensitive; an unknown field is dropped, or
		// with fieldValidation=Strict refused (400 with the strict
		// decoding error), as kube-apiserver decodes a body. Protobuf has
		// no unknown fields to check.
		strict := req.r.URL.Query().Get("fieldValidation") == metav1.FieldValidationStrict && ct != runtime.ContentTypeProtobuf
		obj, got, err = strictCodecs.UniversalDeserializer().Decode(body, &gvk, into)
		if err != nil && runtime.IsStrictDecodingError(err) && !strict {
			err = nil
		}
		if err != nil && runtime.IsStrictDecodingError(err) {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot decode the body as %s: %v", gvk.Kind, err))
		}
	} else {
		if ct == runtime.ContentTypeYAML {
			body, err = utilyaml.ToJSON(body)
			if err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot decode the YAML body: %v", err))
			}
		}
		obj, got, err = unstructured.UnstructuredJSONScheme.Decode(body, &gvk, &unstructured.Unstructured{})
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot decode the body as %s: %v", gvk.Kind, err))
		}
		if _, ok := obj.(*unstructured.Unstructured); !ok {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is a list; send one %s object", gvk.Kind))
		}
	}
	if got == nil || *got != gvk {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version and kind in the data (%v) do not match the URL's (%s)", got, gvk))
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj, nil
}

// checkIdentity checks the body's name and namespace against the URL's,
// filling in an empty namespace, as kube-apiserver's handlers do.
func checkIdentity(req *request, obj runtime.Object, named bool) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("the body has no object metadata: %v", err))
	}
	if req.res.Namespaced {
		switch m.GetNamespace() {
		case "":
			m.SetNamespace(req.ns)
		case req.ns:
		default:
			return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
	} else {
		// Cluster-scoped: kube-apiserver clears a namespace sent in the body
		// (rest.EnsureObjectNamespaceMatchesRequestNamespace).
		m.SetNamespace("")
	}
	if named && m.GetName() != req.name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), req.name))
	}
	return nil
}

// deleteOptions reads DeleteOptions from the query, then from the body (the
// body wins, as kube-apiserver's handler does).
func (h *handler) deleteOptions(r *nethttp.Request) (metav1.DeleteOptions, error) {
	var opts metav1.DeleteOptions
	if err := decodeQuery(r, &opts); err != nil {
		return opts, err
	}
	body, err := readBody(r)
	if err != nil {
		return opts, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return opts, nil
	}
	dec := h.optionsDecoder
	switch ct := mediaTypeOf(r.Header.Get("Content-Type")); ct {
	case "", runtime.ContentTypeJSON:
	case runtime.ContentTypeYAML:
		if body, err = utilyaml.ToJSON(body); err != nil {
			return opts, apierrors.NewBadRequest(fmt.Sprintf("cannot decode DeleteOptions: %v", err))
		}
	case runtime.ContentTypeProtobuf:
		dec = scheme.Codecs.UniversalDeserializer()
	default:
		return opts, unsupportedMediaType(ct, runtime.ContentTypeJSON, runtime.ContentTypeYAML, runtime.ContentTypeProtobuf)
	}
	var fromBody metav1.DeleteOptions
	gvk := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
	if _, _, err := dec.Decode(body, &gvk, &fromBody); err != nil {
		// apiextensions' clientset sends its DeleteOptions in its own group.
		if _, _, cerr := crdCodecs.UniversalDeserializer().Decode(body, &gvk, &fromBody); cerr != nil {
			return opts, apierrors.NewBadRequest(fmt.Sprintf("cannot decode DeleteOptions: %v", err))
		}
	}
	return fromBody, nil
}

// respond answers a resource request with obj (negotiated) or err.
func (h *handler) respond(w nethttp.ResponseWriter, req *request, code int, obj runtime.Object, err error) {
	if err != nil {
		h.writeError(w, req.r, err)
		return
	}
	if obj == nil {
		h.writeError(w, req.r, apierrors.NewInternalError(errors.New("the server returned no object")))
		return
	}
	h.writeObject(w, req, code, obj)
}

// errorStatus converts err to the Status kube-apiserver would answer.
func errorStatus(err error) *metav1.Status {
	var st metav1.Status
	var api apierrors.APIStatus
	switch {
	case errors.As(err, &api):
		st = api.Status()
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		st = apierrors.NewTimeoutError(fmt.Sprintf("request did not complete: %v", err), 0).Status()
	default:
		st = apierrors.NewInternalError(err).Status()
	}
	if st.Code == 0 {
		st.Code = nethttp.StatusInternalServerError
	}
	if st.Status == "" {
		st.Status = metav1.StatusFailure
	}
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	return &st
}

// writeError answers err as a metav1.Status in JSON, with its HTTP code and,
// for errors that carry one, a Retry-After header.
func (h *handler) writeError(w nethttp.ResponseWriter, r *nethttp.Request, err error) {
	st := errorStatus(err)
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	code := int(st.Code)
	if code < 100 || code > 599 {
		code = nethttp.StatusInternalServerError
	}
	h.writeJSON(w, r, code, st)
}

// writeJSON encodes obj (TypeMeta already set) as JSON.
func (h *handler) writeJSON(w nethttp.ResponseWriter, _ *nethttp.Request, code int, obj any) {
	var buf bytes.Buffer
	var err error
	if ro, ok := obj.(runtime.Object); ok {
		err = jsonSerializer.Encode(ro, &buf)
	} else {
		// Plain structs (version.Info) are plain JSON, as kube-apiserver
		// writes them.
		var data []byte
		if data, err = stdjson.Marshal(obj); err == nil {
			buf.Write(data)
		}
	}
	if err != nil {
		buf.Reset()
		st := apierrors.NewInternalError(err).Status()
		st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
		_ = jsonSerializer.Encode(&st, &buf)
		code = nethttp.StatusInternalServerError
	}
	w.Header().Set("Content-Type", runtime.ContentTypeJSON)
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// jsonSerializer encodes objects whose TypeMeta is set (it needs no scheme
// to encode).
var jsonSerializer = json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, json.SerializerOptions{})

// now is the handler's current time.
func (h *handler) now() time.Time { return h.clock.Now() }

// methodNotAllowed is the 405 kube-apiserver's router answers for a verb a
// resource does not have: MethodNotAllowed with no details.
func methodNotAllowed(gr schema.GroupResource, verb string) error {
	err := apierrors.NewMethodNotSupported(gr, verb)
	err.ErrStatus.Details = nil
	return err
}

// serveScale answers the scale subresource (autoscaling/v1 Scale) of
// Deployments, ReplicaSets and StatefulSets: get, update and patch.
func (h *handler) serveScale(w nethttp.ResponseWriter, req *request) {
	r := req.r
	ctx := r.Context()
	var (
		out *autoscalingv1.Scale
		err error
	)
	switch r.Method {
	case nethttp.MethodGet:
		out, err = req.client.GetScale(ctx, req.gvr, req.ns, req.name)
	case nethttp.MethodPut:
		var opts metav1.UpdateOptions
		if qerr := decodeQuery(r, &opts); qerr != nil {
			h.writeError(w, r, qerr)
			return
		}
		body, berr := readBody(r)
		if berr != nil {
			h.writeError(w, r, berr)
			return
		}
		var sc autoscalingv1.Scale
		if _, _, derr := scheme.Codecs.UniversalDeserializer().Decode(body, nil, &sc); derr != nil {
			h.writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("the body is not an autoscaling/v1 Scale: %v", derr)))
			return
		}
		if sc.Name != "" && sc.Name != req.name {
			h.writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", sc.Name, req.name)))
			return
		}
		sc.Name = req.name
		out, err = req.client.UpdateScale(ctx, req.gvr, req.ns, &sc, opts)
	case nethttp.MethodPatch:
		var opts metav1.PatchOptions
		if qerr := decodeQuery(r, &opts); qerr != nil {
			h.writeError(w, r, qerr)
			return
		}
		body, berr := readBody(r)
		if berr != nil {
			h.writeError(w, r, berr)
			return
		}
		out, err = req.client.PatchScale(ctx, req.gvr, req.ns, req.name, types.PatchType(mediaTypeOf(r.Header.Get("Content-Type"))), body, opts)
	default:
		h.writeError(w, r, methodNotAllowed(schema.GroupResource{Group: req.gvr.Group, Resource: req.gvr.Resource + "/scale"}, strings.ToLower(r.Method)))
		return
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	out.TypeMeta = metav1.TypeMeta{Kind: "Scale", APIVersion: "autoscaling/v1"}
	h.writeObject(w, req, nethttp.StatusOK, out)
}

// prefixFromUserAgent is kube-apiserver's default fieldManager of a write
// that names none: the user agent up to its first "/", printable
// characters only, at most 128 bytes.
func prefixFromUserAgent(ua string) string {
	m := strings.Split(ua, "/")[0]
	var b strings.Builder
	for _, r := range m {
		if !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > 128 {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}
