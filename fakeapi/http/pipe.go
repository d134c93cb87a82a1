package http

import (
	"bytes"
	"context"
	"fmt"
	"io"
	nethttp "net/http"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/cachelab/cachelab/fakeapi"
)

// PipeHost is the URL of the server in the rest.Configs a Pipe makes. Any
// host would do: no connection is ever dialled.
const PipeHost = "http://fakeapi.cachelab.invalid"

// Pipe is an in-memory http.RoundTripper to a handler: each request runs
// the handler in its own goroutine and the response body is an in-memory
// pipe, so a watch streams frame by frame as the handler flushes them. No
// socket and no background goroutine: it works inside a testing/synctest
// bubble, where every request goroutine ends when its handler returns
// (for a watch: the watch ends, or the client closes the body). Create it
// inside the bubble that uses it.
//
// A handler that panics with http.ErrAbortHandler breaks the response
// stream as a reset HTTP/2 stream does: the client's body read fails with
// "stream error: stream ID n; INTERNAL_ERROR; received from peer" (which
// client-go's watch decoder reports as an ERROR event, not an EOF).
type Pipe struct {
	h      nethttp.Handler
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// streams counts requests, to number the HTTP/2-like stream IDs.
	streams atomic.Int64
}

var _ nethttp.RoundTripper = (*Pipe)(nil)

// NewPipe returns a Pipe to h.
func NewPipe(h nethttp.Handler) *Pipe {
	fakeapi.PrepareClientGo()
	ctx, cancel := context.WithCancel(context.Background())
	return &Pipe{h: h, ctx: ctx, cancel: cancel}
}

// RESTConfig returns a rest.Config whose requests go through a new Pipe to
// h and are made as client (the User-Agent and the X-Cachelab-Client
// header). Use NewPipe and Pipe.RESTConfig to be able to Close the pipe.
func RESTConfig(h nethttp.Handler, client string) *rest.Config {
	return NewPipe(h).RESTConfig(client)
}

// RESTConfig returns a rest.Config for clients named client. Client-side
// rate limiting is off (QPS -1): the pipe has no capacity to protect, and
// a token bucket would add virtual waits to every test.
func (p *Pipe) RESTConfig(client string) *rest.Config {
	return &rest.Config{
		Host:      PipeHost,
		Transport: namedTransport{rt: p, client: client},
		UserAgent: client,
		QPS:       -1,
	}
}

// Close cancels every request in flight (ending open watches) and waits
// for their handler goroutines to return. Requests after Close fail.
func (p *Pipe) Close() {
	p.cancel()
	p.wg.Wait()
}

// ConfigAs returns a copy of cfg whose requests the fake API server names
// name (ClientHeader, and the User-Agent): the config of a helper actor's
// clients beside a controller (cachelabtest's Env.Client, the upstream
// cluster's controllers), each traced under its own name.
func ConfigAs(cfg *rest.Config, name string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.UserAgent = name
	inner := c.WrapTransport
	c.WrapTransport = func(rt nethttp.RoundTripper) nethttp.RoundTripper {
		if inner != nil {
			rt = inner(rt)
		}
		return namedTransport{rt: rt, client: name}
	}
	return c
}

// namedTransport sets ClientHeader on every request that has none.
type namedTransport struct {
	rt     nethttp.RoundTripper
	client string
}

// RoundTrip implements http.RoundTripper.
func (t namedTransport) RoundTrip(req *nethttp.Request) (*nethttp.Response, error) {
	if t.client != "" && req.Header.Get(ClientHeader) == "" {
		req = req.Clone(req.Context())
		req.Header.Set(ClientHeader, t.client)
	}
	return t.rt.RoundTrip(req)
}

// RoundTrip serves req with the handler and returns as soon as the
// handler has written the response header; the body follows as the
// handler writes it.
func (p *Pipe) RoundTrip(req *nethttp.Request) (*nethttp.Response, error) {
	var data []byte
	if req.Body != nil {
		var err error
		data, err = io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("fakeapi/http pipe: reading the request body: %w", err)
		}
	}
	if err := p.ctx.Err(); err != nil {
		return nil, fmt.Errorf("fakeapi/http pipe: closed: %w", err)
	}
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(p.ctx, cancel)
	sreq := req.Clone(ctx)
	sreq.Body = io.NopCloser(bytes.NewReader(data))
	sreq.ContentLength = int64(len(data))
	sreq.RequestURI = req.URL.RequestURI()
	sreq.RemoteAddr = "pipe"
	sreq.Proto, sreq.ProtoMajor, sreq.ProtoMinor = "HTTP/1.1", 1, 1
	if sreq.Host == "" {
		sreq.Host = req.URL.Host
	}
	body := newBufPipe()
	rw := &pipeWriter{header: make(nethttp.Header), body: body, ready: make(chan struct{})}
	streamID := 2*p.streams.Add(1) + 1

	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer stop()
		defer cancel()
		defer func() {
			v := recover()
			switch {
			case v == nil:
				rw.WriteHeader(nethttp.StatusOK) // no-op if written
				body.closeWrite(io.EOF)
			case v == nethttp.ErrAbortHandler:
				rw.WriteHeader(nethttp.StatusOK)
				body.closeWrite(fmt.Errorf("stream error: stream ID %d; INTERNAL_ERROR; received from peer", streamID))
			default:
				rw.WriteHeader(nethttp.StatusInternalServerError)
				body.closeWrite(fmt.Errorf("fakeapi/http pipe: handler panic: %v", v))
				panic(v)
			}
		}()
		p.h.ServeHTTP(rw, sreq)
	}()

	select {
	case <-rw.ready:
	case <-ctx.Done():
		select {
		case <-rw.ready: // the handler answered, then its context ended
		default:
			body.closeRead()
			return nil, ctx.Err()
		}
	}
	code := rw.code
	return &nethttp.Response{
		Status:        fmt.Sprintf("%d %s", code, nethttp.StatusText(code)),
		StatusCode:    code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rw.sent,
		Body:          &pipeBody{p: body, cancel: cancel},
		ContentLength: -1,
		Request:       req,
	}, nil
}

// pipeWriter is the handler's http.ResponseWriter.
type pipeWriter struct {
	header nethttp.Header
	body   *bufPipe
	once   sync.Once
	ready  chan struct{} // closed when the header is written
	code   int
	sent   nethttp.Header // the header as written
}

// Header implements http.ResponseWriter.
func (w *pipeWriter) Header() nethttp.Header { return w.header }

// WriteHeader implements http.ResponseWriter; only the first call counts.
func (w *pipeWriter) WriteHeader(code int) {
	w.once.Do(func() {
		w.code = code
		w.sent = w.header.Clone()
		close(w.ready)
	})
}

// Write implements http.ResponseWriter.
func (w *pipeWriter) Write(b []byte) (int, error) {
	w.WriteHeader(nethttp.StatusOK)
	return w.body.write(b)
}

// Flush implements http.Flusher: written bytes are readable at once, so it
// only makes sure the header is out.
func (w *pipeWriter) Flush() { w.WriteHeader(nethttp.StatusOK) }

// pipeBody is the response body the client reads.
type pipeBody struct {
	p      *bufPipe
	cancel context.CancelFunc
}

// Read implements io.Reader.
func (b *pipeBody) Read(p []byte) (int, error) { return b.p.read(p) }

// Close ends the request: the handler's context is canceled and its
// further writes fail.
func (b *pipeBody) Close() error {
	b.p.closeRead()
	b.cancel()
	return nil
}

// bufPipe is an unbounded in-memory pipe: writes never block (the handler
// never waits for a slow reader, as a socket buffer would let it), reads
// block on a channel (durably blocking inside a synctest bubble) until
// data or the end arrives.
type bufPipe struct {
	mu      sync.Mutex
	buf     []byte
	werr    error // set when the writer is done: io.EOF or the failure
	rclosed bool
	notify  chan struct{} // capacity 1: "something changed"
}

func newBufPipe() *bufPipe { return &bufPipe{notify: make(chan struct{}, 1)} }

func (b *bufPipe) signal() {
	select {
	case b.notify <- struct{}{}:
	default:
	}
}

func (b *bufPipe) write(p []byte) (int, error) {
	b.mu.Lock()
	if b.rclosed || b.werr != nil {
		b.mu.Unlock()
		return 0, io.ErrClosedPipe
	}
	b.buf = append(b.buf, p...)
	b.mu.Unlock()
	b.signal()
	return len(p), nil
}

func (b *bufPipe) read(p []byte) (int, error) {
	for {
		b.mu.Lock()
		switch {
		case b.rclosed:
			b.mu.Unlock()
			return 0, io.ErrClosedPipe
		case len(b.buf) > 0:
			n := copy(p, b.buf)
			b.buf = b.buf[n:]
			if len(b.buf) == 0 {
				b.buf = nil
			}
			b.mu.Unlock()
			return n, nil
		case b.werr != nil:
			err := b.werr
			b.mu.Unlock()
			return 0, err
		}
		b.mu.Unlock()
		<-b.notify
	}
}

func (b *bufPipe) closeWrite(err error) {
	b.mu.Lock()
	if b.werr == nil {
		b.werr = err
	}
	b.mu.Unlock()
	b.signal()
}

func (b *bufPipe) closeRead() {
	b.mu.Lock()
	b.rclosed = true
	b.buf = nil
	b.mu.Unlock()
	b.signal()
}

// Clientset returns a typed clientset over the pipe, named client.
func (p *Pipe) Clientset(client string) (kubernetes.Interface, error) {
	return kubernetes.NewForConfig(p.RESTConfig(client))
}

// Dynamic returns a dynamic client over the pipe, named client.
func (p *Pipe) Dynamic(client string) (dynamic.Interface, error) {
	return dynamic.NewForConfig(p.RESTConfig(client))
}
