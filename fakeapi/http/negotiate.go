package http

import (
	"bytes"
	"fmt"
	nethttp "net/http"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// acceptClause is one media range of an Accept header.
type acceptClause struct {
	typ    string // "application/json", "*/*", ...
	params map[string]string
	q      float64
}

// parseAccept parses an Accept header into clauses, best first (stable for
// equal q). An empty header accepts anything.
func parseAccept(header string) []acceptClause {
	var out []acceptClause
	for _, part := range strings.Split(header, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		fields := strings.Split(part, ";")
		c := acceptClause{typ: strings.ToLower(strings.TrimSpace(fields[0])), params: map[string]string{}, q: 1}
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			k = strings.ToLower(strings.TrimSpace(k))
			v = strings.Trim(strings.TrimSpace(v), `"`)
			if k == "q" {
				if q, err := strconv.ParseFloat(v, 64); err == nil {
					c.q = q
				}
				continue
			}
			c.params[k] = v
		}
		if c.q <= 0 {
			continue
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		out = []acceptClause{{typ: "*/*", params: map[string]string{}, q: 1}}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].q > out[j].q })
	return out
}

// choice is the outcome of content negotiation.
type choice struct {
	info runtime.SerializerInfo
	// table is true for as=Table;g=meta.k8s.io;v=v1.
	table bool
	// includeObject is the Table's includeObject policy (None, Metadata,
	// Object).
	includeObject metav1.IncludeObjectPolicy
	// partial is true for as=PartialObjectMetadata(List);g=meta.k8s.io;v=v1
	// (client-go's metadata client): objects become PartialObjectMetadata.
	partial bool
}

// serializer returns the SerializerInfo of a media type ("" if the codec
// factory does not know it).
func serializer(mediaType string) (runtime.SerializerInfo, bool) {
	for _, info := range scheme.Codecs.SupportedMediaTypes() {
		if info.MediaType == mediaType {
			return info, true
		}
	}
	return runtime.SerializerInfo{}, false
}

// negotiate picks the response encoding for r. protobuf allows protobuf
// (built-in kinds and Status); tables allows as=Table (resource reads).
func negotiate(r *nethttp.Request, protobuf, tables bool) (choice, error) {
	for _, c := range parseAccept(r.Header.Get("Accept")) {
		mt := c.typ
		if mt == "*/*" || mt == "application/*" {
			mt = runtime.ContentTypeJSON
		}
		switch mt {
		case runtime.ContentTypeJSON, runtime.ContentTypeYAML:
		case runtime.ContentTypeProtobuf:
			// Protobuf for built-in kinds, or for anything turned into
			// PartialObjectMetadata.
			if !protobuf && !(tables && strings.HasPrefix(c.params["as"], "PartialObjectMetadata")) {
				continue
			}
		default:
			continue
		}
		ch := choice{}
		switch as := c.params["as"]; as {
		case "":
		case "Table":
			if !tables || c.params["g"] != metav1.GroupName || c.params["v"] != "v1" || mt == runtime.ContentTypeProtobuf {
				continue
			}
			ch.table = true
			ch.includeObject = metav1.IncludeMetadata
			if v := r.URL.Query().Get("includeObject"); v != "" {
				switch p := metav1.IncludeObjectPolicy(v); p {
				case metav1.IncludeNone, metav1.IncludeMetadata, metav1.IncludeObject:
					ch.includeObject = p
				default:
					return choice{}, apierrors.NewBadRequest(fmt.Sprintf("includeObject must be None, Metadata or Object, got %q", v))
				}
			}
		case "PartialObjectMetadata", "PartialObjectMetadataList":
			if !tables || c.params["g"] != metav1.GroupName || c.params["v"] != "v1" {
				continue
			}
			ch.partial = true
		default:
			// Aggregated discovery and others: not served;
			// the client's next clause decides.
			continue
		}
		info, ok := serializer(mt)
		if !ok {
			continue
		}
		ch.info = info
		return ch, nil
	}
	accepted := []string{runtime.ContentTypeJSON, runtime.ContentTypeYAML}
	if protobuf {
		accepted = append(accepted, runtime.ContentTypeProtobuf)
	}
	if tables {
		accepted = append(accepted, "application/json;as=Table;v=v1;g=meta.k8s.io",
			"application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io")
	}
	return choice{}, &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    nethttp.StatusNotAcceptable,
		Reason:  metav1.StatusReasonNotAcceptable,
		Message: fmt.Sprintf("only the following media types are accepted: %s", strings.Join(accepted, ", ")),
	}}
}

// setKind sets obj's apiVersion and kind from the scheme when it has none
// (typed objects as the store returns them).
func setKind(obj runtime.Object) {
	if !obj.GetObjectKind().GroupVersionKind().Empty() {
		return
	}
	if gvks, _, err := scheme.Scheme.ObjectKinds(obj); err == nil && len(gvks) > 0 {
		obj.GetObjectKind().SetGroupVersionKind(gvks[0])
	}
}

// encode encodes obj (kind set) with info's serializer.
func encode(info runtime.SerializerInfo, obj runtime.Object) ([]byte, error) {
	setKind(obj)
	var buf bytes.Buffer
	if err := info.Serializer.Encode(obj, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeObject answers a resource request with obj, negotiated: as a Table
// if asked, protobuf for built-ins if asked, else JSON or YAML.
func (h *handler) writeObject(w nethttp.ResponseWriter, req *request, code int, obj runtime.Object) {
	_, isStatus := obj.(*metav1.Status)
	ch, err := negotiate(req.r, req.typed || isStatus, !isStatus)
	if err != nil {
		h.writeError(w, req.r, err)
		return
	}
	switch {
	case ch.table:
		t, err := h.toTable(obj, ch.includeObject)
		if err != nil {
			h.writeError(w, req.r, err)
			return
		}
		obj = t
	case ch.partial:
		p, err := toPartial(obj)
		if err != nil {
			h.writeError(w, req.r, err)
			return
		}
		obj = p
	}
	data, err := encode(ch.info, obj)
	if err != nil {
		h.writeError(w, req.r, apierrors.NewInternalError(fmt.Errorf("encoding %T as %s: %w", obj, ch.info.MediaType, err)))
		return
	}
	w.Header().Set("Content-Type", ch.info.MediaType)
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(code)
	_, _ = w.Write(data)
}

// serveDiscovery answers a discovery document (JSON or YAML; GET only).
func (h *handler) serveDiscovery(w nethttp.ResponseWriter, r *nethttp.Request, obj runtime.Object) {
	if r.Method != nethttp.MethodGet && r.Method != nethttp.MethodHead {
		h.writeError(w, r, apierrors.NewMethodNotSupported(metav1.SchemeGroupVersion.WithResource("discovery").GroupResource(), strings.ToLower(r.Method)))
		return
	}
	ch, err := negotiate(r, false, false)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	data, err := encode(ch.info, obj)
	if err != nil {
		h.writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	w.Header().Set("Content-Type", ch.info.MediaType)
	w.WriteHeader(nethttp.StatusOK)
	_, _ = w.Write(data)
}
