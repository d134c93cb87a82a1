package http

import (
	"fmt"
	"io"
	nethttp "net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	restclientwatch "k8s.io/client-go/rest/watch"
)

// embeddedEncoder encodes the object of one watch event: as a Table when
// the client asked for tables, with its kind set, in the negotiated format.
type embeddedEncoder struct {
	h  *handler
	ch choice
}

// Encode implements runtime.Encoder.
func (e embeddedEncoder) Encode(obj runtime.Object, w io.Writer) error {
	if st, ok := obj.(*metav1.Status); ok {
		st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	} else if e.ch.table {
		t, err := e.h.toTable(obj, e.ch.includeObject)
		if err != nil {
			return err
		}
		obj = t
	} else if e.ch.partial {
		p, err := toPartial(obj)
		if err != nil {
			return err
		}
		obj = p
	}
	setKind(obj)
	return e.ch.info.Serializer.Encode(obj, w)
}

// Identifier implements runtime.Encoder.
func (e embeddedEncoder) Identifier() runtime.Identifier {
	return runtime.Identifier("cachelab-watch-" + e.ch.info.MediaType)
}

// isBrokenConnection reports whether ev is the ERROR event fakeapi's
// CloseWatch(id, abrupt=true) sends to model a reset HTTP/2 stream.
func isBrokenConnection(ev watch.Event) bool {
	st, ok := ev.Object.(*metav1.Status)
	if ev.Type != watch.Error || !ok || st.Details == nil {
		return false
	}
	for _, c := range st.Details.Causes {
		if c.Type == "ClientWatchDecoding" {
			return true
		}
	}
	return false
}

// serveWatch streams a watch as kube-apiserver does: 200, then one
// metav1.WatchEvent frame per event, flushed at once (newline-delimited
// JSON, or length-prefixed protobuf with ";stream=watch"). The stream ends
// cleanly when the watch ends (timeoutSeconds, a clean server-side close,
// after a 410 ERROR event) or when the client goes away. A watch broken by
// fakeapi.Server.CloseWatch(id, true) aborts the response
// (http.ErrAbortHandler), so the client sees a broken stream, not an event.
//
// A watch from a compacted resourceVersion is answered as kube-apiserver's
// watch cache answers it: 200 and a single ERROR event holding the 410
// Expired Status.
func (h *handler) serveWatch(w nethttp.ResponseWriter, req *request, opts metav1.ListOptions) {
	r := req.r
	ch, err := negotiate(r, req.typed, true)
	if err == nil && ch.info.StreamSerializer == nil {
		err = &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: nethttp.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable,
			Message: fmt.Sprintf("%s cannot stream a watch; accept %s or %s", ch.info.MediaType, runtime.ContentTypeJSON, runtime.ContentTypeProtobuf),
		}}
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	wi, err := req.client.Watch(r.Context(), req.gvr, req.ns, opts)
	var events <-chan watch.Event
	switch {
	case err != nil && (apierrors.IsResourceExpired(err) || apierrors.IsGone(err)):
		st := errorStatus(err)
		one := make(chan watch.Event, 1)
		one <- watch.Event{Type: watch.Error, Object: st}
		close(one)
		events = one
	case err != nil:
		h.writeError(w, r, err)
		return
	default:
		defer wi.Stop()
		events = wi.ResultChan()
	}

	contentType := ch.info.MediaType
	if contentType != runtime.ContentTypeJSON {
		contentType += ";stream=watch"
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(nethttp.StatusOK)
	flusher, _ := w.(nethttp.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	flush()

	framer := ch.info.StreamSerializer.Framer.NewFrameWriter(w)
	enc := restclientwatch.NewEncoder(streaming.NewEncoder(framer, ch.info.StreamSerializer.Serializer), embeddedEncoder{h: h, ch: ch})
	done := r.Context().Done()
	for {
		select {
		case <-done:
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			if isBrokenConnection(ev) {
				panic(nethttp.ErrAbortHandler)
			}
			if err := enc.Encode(&ev); err != nil {
				// The client went away (or the object cannot be encoded):
				// nothing more can be said on this stream.
				return
			}
			flush()
		}
	}
}
