// Package serve runs a fakeapi.Server as a real-time HTTPS API server on a
// socket, for clients outside the process: kubectl, a controller binary,
// anything that takes a kubeconfig.
//
// Serve listens on 127.0.0.1 (never a wider address unless Options.Address
// says so), with a self-signed TLS certificate generated at start and a
// bearer token, writes a kubeconfig, registers CRDs from files, seeds
// objects from YAML, and serves fakeapi/http's handler plus admin endpoints
// (all behind the token):
//
//	POST /admin/compact[?resourceVersion=N]  compact history to N (default: latest)
//	GET  /admin/faults                       the live fault profile (Faults, JSON)
//	PUT  /admin/faults                       replace it (POST works too)
//	POST /admin/close-watches[?abrupt=true]  end every open watch
//	GET  /admin/snapshot                     resourceVersions, watches and every object
//	GET  /metrics                            Prometheus: requests by verb/resource/code,
//	                                         writes, watch events sent, active watchers,
//	                                         faults injected, resourceVersion
//
// The fault profile (Faults) is live: error rate and code, Retry-After,
// apply-then-timeout rate, watch event delay, stale-replica lag and
// periodic watch breaks, changed through /admin/faults or SetFaults.
//
// Leases (coordination.k8s.io/v1, a typed built-in of the store) are
// served too, so operators can run with leader election. With Options.Kubelet a kubelet-like actor makes every Pod Running and
// Ready, so controllers that wait for Ready Pods converge.
//
// It shuts down cleanly when the context ends: the listener closes and
// HTTP/2 clients get GOAWAY, open watches end cleanly (again until none
// remain, as clients re-watch), and the server drains within
// ShutdownTimeout; Running.Wait returns after that.
package serve

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/cachelab/cachelab/fakeapi"
	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
)

// DefaultAddress is where Serve listens when Options.Address is empty:
// loopback only, on a free port.
const DefaultAddress = "127.0.0.1:0"

// MaxConcurrentStreams is the HTTP/2 stream limit per connection (Go's
// default, 250, would queue a controller's 251st watch).
const MaxConcurrentStreams = 10000

// KubeletClient is the client name the kubelet's requests carry (in the
// trace and in /metrics). Its requests are faulted like everyone's.
const KubeletClient = "kubelet"

// ShutdownTimeout bounds a graceful shutdown; requests still running then
// are cut.
const ShutdownTimeout = 5 * time.Second

// Options configures Serve. The zero value serves an empty server on
// DefaultAddress with a generated token and writes no kubeconfig.
type Options struct {
	// Address is the TCP address to listen on. Optional; default
	// DefaultAddress. Give 0.0.0.0:port explicitly to serve beyond
	// loopback.
	Address string
	// Token is the bearer token clients must send. Optional; default a
	// random 32-hex-digit token.
	Token string
	// KubeconfigPath, if set, is where a kubeconfig for the server is
	// written (mode 0600; an existing file is replaced).
	KubeconfigPath string
	// CRDFiles are YAML or JSON files of apiextensions.k8s.io/v1
	// CustomResourceDefinitions (several documents per file allowed); every
	// served version is registered.
	CRDFiles []string
	// SeedFiles are YAML or JSON files of objects created at start
	// (namespaces first), as client "seed".
	SeedFiles []string
	// Faults is the initial fault profile. Optional; default none.
	Faults Faults
	// Kubelet, when true, runs a kubelet-like actor in the process: every
	// Pod that is not Running and Ready becomes so KubeletReadyAfter after
	// it first appears (status written through UpdateStatus by client
	// "kubelet", faulted like every client). Without it no Pod ever becomes
	// Ready. Optional; default off.
	Kubelet bool
	// KubeletReadyAfter is the kubelet's delay. Optional; default 0 (at
	// once).
	KubeletReadyAfter time.Duration
	// Server options for the fakeapi.Server Serve creates (Hooks is
	// replaced by the live fault profile; Observer, if set, receives every
	// observation after the metrics do: record the trace there;
	// NamespaceLifecycle is set unless AllowMissingNamespaces;
	// TrackManagedFields is set). Optional.
	Server fakeapi.Options
	// AllowMissingNamespaces turns NamespaceLifecycle off: creates in a
	// namespace that does not exist succeed (kube-apiserver answers 404,
	// and so does serve by default).
	AllowMissingNamespaces bool
	// Logger logs requests (debug), admin actions and shutdown (info).
	// Optional; default discards.
	Logger *slog.Logger
}

// Running is a server started by Serve.
type Running struct {
	// URL is the server's https URL ("https://127.0.0.1:port").
	URL string
	// Token is the bearer token.
	Token string
	// CAPEM is the PEM of the self-signed certificate (also the CA clients
	// must trust).
	CAPEM []byte
	// KubeconfigPath is where the kubeconfig was written ("" if none).
	KubeconfigPath string
	// API is the in-memory server behind the socket.
	API *fakeapi.Server

	faults *faultHooks
	done   chan struct{}
	err    error
}

// Wait blocks until the server has shut down (its context ended) and
// returns the serving error, nil for a clean shutdown.
func (r *Running) Wait() error {
	<-r.done
	return r.err
}

// Done is closed when the server has shut down.
func (r *Running) Done() <-chan struct{} { return r.done }

// RESTConfig returns a rest.Config for the server (TLS verified against
// CAPEM, bearer token).
func (r *Running) RESTConfig() *rest.Config {
	return &rest.Config{
		Host:            r.URL,
		BearerToken:     r.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: r.CAPEM, ServerName: "localhost"},
	}
}

// SetFaults replaces the live fault profile.
func (r *Running) SetFaults(f Faults) error { return r.faults.set(f) }

// Faults returns the live fault profile.
func (r *Running) Faults() Faults { return r.faults.get() }

// Serve starts serving and returns once the socket listens, the CRDs are
// registered and the objects seeded. It serves until ctx ends; use
// Running.Wait to wait for the shutdown to finish.
func Serve(ctx context.Context, opts Options) (*Running, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	addr := opts.Address
	if addr == "" {
		addr = DefaultAddress
	}
	token := opts.Token
	if token == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("serve: generating a token: %w", err)
		}
		token = hex.EncodeToString(b)
	}
	hooks, err := newFaultHooks(opts.Faults)
	if err != nil {
		return nil, err
	}
	sopts := opts.Server
	sopts.Hooks = hooks
	sopts.NamespaceLifecycle = !opts.AllowMissingNamespaces
	sopts.TrackManagedFields = true
	sopts.DefaultServiceAccounts = true
	mets := newMetrics(sopts.Observer)
	sopts.Observer = mets
	api := fakeapi.NewServer(sopts)
	for _, ns := range []string{"default", "kube-system"} {
		if _, err := api.Client("seed").Create(ctx, nsGVR, "", namespace(ns), metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("serve: creating namespace %s: %w", ns, err)
		}
	}
	crdSchemas := map[schema.GroupVersionKind]json.RawMessage{}
	for _, f := range opts.CRDFiles {
		if err := loadCRDs(api, f, crdSchemas); err != nil {
			return nil, err
		}
	}
	for _, f := range opts.SeedFiles {
		if err := seed(ctx, api, f); err != nil {
			return nil, err
		}
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: listening on %s: %w (use --address host:port with a free port)", addr, err)
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	certPEM, keyPEM, err := selfSigned(host)
	if err != nil {
		ln.Close()
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("serve: loading the generated certificate: %w", err)
	}
	urlHost := host
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		urlHost = "127.0.0.1"
	}
	r := &Running{
		URL:            "https://" + net.JoinHostPort(urlHost, port),
		Token:          token,
		CAPEM:          certPEM,
		KubeconfigPath: opts.KubeconfigPath,
		API:            api,
		faults:         hooks,
		done:           make(chan struct{}),
	}
	if opts.KubeconfigPath != "" {
		if err := writeKubeconfig(r); err != nil {
			ln.Close()
			return nil, err
		}
	}

	mux := http.NewServeMux()
	mux.Handle("/admin/", adminHandler(r, log))
	mux.Handle("/metrics", mets.handler())
	mux.Handle("/", fakehttp.NewHandler(api, fakehttp.Options{OpenAPISchemas: crdSchemas}))
	baseCtx, cancelBase := context.WithCancel(context.Background())
	hs := &http.Server{
		Handler:           logRequests(log, authenticate(token, mux)),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		// client-go multiplexes every watch of a process on one HTTP/2
		// connection; kube-apiserver allows it many streams.
		HTTP2: &http.HTTP2Config{MaxConcurrentStreams: MaxConcurrentStreams},
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.ServeTLS(ln, "", "") }()
	breakCtx, stopBreaking := context.WithCancel(ctx)
	breakDone := make(chan struct{})
	go func() {
		defer close(breakDone)
		hooks.breakWatches(breakCtx, api)
	}()
	var kl *fakeapi.Kubelet
	if opts.Kubelet {
		ko := fakeapi.KubeletOptions{ReadyAfter: opts.KubeletReadyAfter,
			// client-go's own metrics of the kubelet's queue and informer,
			// on /metrics labelled client="kubelet".
			QueueMetrics: mets.client.Workqueue(KubeletClient), InformerMetrics: mets.client.Informer(KubeletClient),
			Report: func(pod cache.ObjectName, err error) {
				if err != nil {
					log.Debug("kubelet: setting Running/Ready failed, will retry", "pod", pod.String(), "err", err)
					return
				}
				log.Debug("kubelet: pod ready", "pod", pod.String())
			}}
		if id, err := mets.client.InformerID(KubeletClient, "", schema.GroupVersionResource{Version: "v1", Resource: "pods"}); err == nil {
			ko.InformerID = id
		}
		kl = fakeapi.StartKubeletWithOptions(breakCtx, api.Client(KubeletClient), ko)
	}
	log.Info("serving", "url", r.URL, "kubeconfig", opts.KubeconfigPath)

	go func() {
		defer close(r.done)
		var err error
		select {
		case <-ctx.Done():
		case err = <-serveErr:
		}
		stopBreaking()
		<-breakDone
		if kl != nil {
			kl.Wait()
		}
		mets.client.Release()
		// Shutdown closes the listener and sends HTTP/2 GOAWAY, then waits
		// for active requests; watches never go idle, so end them (again
		// and again: a client may re-watch before its GOAWAY arrives).
		sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
		defer cancel()
		shut := make(chan error, 1)
		go func() { shut <- hs.Shutdown(sctx) }()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
	drain:
		for {
			api.Close()
			select {
			case serr := <-shut:
				if serr != nil {
					cancelBase()
					_ = hs.Close()
				}
				break drain
			case <-tick.C:
			}
		}
		cancelBase()
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.err = err
		}
		log.Info("shut down", "url", r.URL, "resourceVersion", api.ResourceVersion())
	}()
	return r, nil
}

// authenticate requires "Authorization: Bearer token" on every request but
// the health checks; others get 401 with a Status body.
func authenticate(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz", "/readyz", "/livez":
			next.ServeHTTP(w, r)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			writeStatus(w, apierrors.NewUnauthorized("a bearer token is required: use the kubeconfig written by cachelab serve"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// writeStatus writes an apierrors error as a JSON v1 Status.
func writeStatus(w http.ResponseWriter, err error) {
	var st metav1.Status
	var api apierrors.APIStatus
	if errors.As(err, &api) {
		st = api.Status()
	} else {
		st = apierrors.NewBadRequest(err.Error()).Status()
	}
	st.Kind, st.APIVersion = "Status", "v1"
	writeJSON(w, int(st.Code), st)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		code = http.StatusInternalServerError
		data = []byte(fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":500,"message":%q}`, err.Error()))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}

// statusRecorder remembers the response code for the request log.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Flush keeps watches streaming through the recorder.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// logRequests logs every request at debug level when it ends.
func logRequests(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			log.Debug("request", "method", r.Method, "uri", r.URL.RequestURI(), "code", rec.code,
				"client", r.UserAgent(), "duration", time.Since(start))
		}()
		next.ServeHTTP(rec, r)
	})
}

// selfSigned generates a self-signed ECDSA certificate for localhost,
// 127.0.0.1, ::1 and host, valid for a year.
func selfSigned(host string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("serve: generating a key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, fmt.Errorf("serve: generating a serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "cachelab serve", Organization: []string{"cachelab"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if ip := net.ParseIP(host); ip != nil && !ip.IsLoopback() && !ip.IsUnspecified() {
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("serve: creating the certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("serve: encoding the key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// writeKubeconfig writes a kubeconfig with one cluster, user and context,
// all named "cachelab".
func writeKubeconfig(r *Running) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cachelab"] = &clientcmdapi.Cluster{Server: r.URL, CertificateAuthorityData: r.CAPEM}
	cfg.AuthInfos["cachelab"] = &clientcmdapi.AuthInfo{Token: r.Token}
	cfg.Contexts["cachelab"] = &clientcmdapi.Context{Cluster: "cachelab", AuthInfo: "cachelab", Namespace: "default"}
	cfg.CurrentContext = "cachelab"
	if err := clientcmd.WriteToFile(*cfg, r.KubeconfigPath); err != nil {
		return fmt.Errorf("serve: writing the kubeconfig %s: %w", r.KubeconfigPath, err)
	}
	return os.Chmod(r.KubeconfigPath, 0o600)
}

// adminHandler serves /admin/...
func adminHandler(r *Running, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch path := strings.TrimSuffix(req.URL.Path, "/"); {
		case path == "/admin/compact" && req.Method == http.MethodPost:
			rv := r.API.ResourceVersion()
			if s := req.URL.Query().Get("resourceVersion"); s != "" {
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil || n < 0 {
					writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("resourceVersion must be a non-negative integer, got %q", s)))
					return
				}
				rv = n
			}
			if err := r.API.Compact(rv); err != nil {
				writeStatus(w, err)
				return
			}
			log.Info("compacted", "resourceVersion", r.API.CompactedResourceVersion())
			writeJSON(w, http.StatusOK, map[string]int64{"compactedResourceVersion": r.API.CompactedResourceVersion(), "resourceVersion": r.API.ResourceVersion()})
		case path == "/admin/faults" && req.Method == http.MethodGet:
			writeJSON(w, http.StatusOK, r.Faults())
		case path == "/admin/faults" && (req.Method == http.MethodPut || req.Method == http.MethodPost):
			data, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
			if err != nil {
				writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("reading the fault profile: %v", err)))
				return
			}
			f, err := ParseFaults(data)
			if err != nil {
				writeStatus(w, apierrors.NewBadRequest(err.Error()))
				return
			}
			if err := r.SetFaults(f); err != nil {
				writeStatus(w, apierrors.NewBadRequest(err.Error()))
				return
			}
			log.Info("faults changed", "faults", f)
			writeJSON(w, http.StatusOK, r.Faults())
		case path == "/admin/close-watches" && req.Method == http.MethodPost:
			abrupt := req.URL.Query().Get("abrupt") == "true"
			n := 0
			for _, wi := range r.API.Watchers() {
				if r.API.CloseWatch(wi.ID, abrupt) == nil {
					n++
				}
			}
			log.Info("closed watches", "count", n, "abrupt", abrupt)
			writeJSON(w, http.StatusOK, map[string]any{"closed": n, "abrupt": abrupt})
		case path == "/admin/snapshot" && req.Method == http.MethodGet:
			writeJSON(w, http.StatusOK, snapshot(r.API))
		default:
			writeStatus(w, apierrors.NewNotFound(metav1.SchemeGroupVersion.WithResource("admin").GroupResource(),
				req.Method+" "+req.URL.Path+" (try POST /admin/compact, GET|PUT /admin/faults, POST /admin/close-watches, GET /admin/snapshot)"))
		}
	})
}

// Snapshot is what GET /admin/snapshot answers.
type Snapshot struct {
	ResourceVersion          int64                 `json:"resourceVersion"`
	CompactedResourceVersion int64                 `json:"compactedResourceVersion"`
	Watchers                 []fakeapi.WatcherInfo `json:"watchers"`
	Objects                  []json.RawMessage     `json:"objects"`
}

var snapMu sync.Mutex

func snapshot(api *fakeapi.Server) Snapshot {
	snapMu.Lock()
	defer snapMu.Unlock()
	s := Snapshot{
		ResourceVersion:          api.ResourceVersion(),
		CompactedResourceVersion: api.CompactedResourceVersion(),
		Watchers:                 api.Watchers(),
		Objects:                  []json.RawMessage{},
	}
	for _, obj := range api.Objects() {
		var buf bytes.Buffer
		if err := encodeObject(obj, &buf); err == nil {
			s.Objects = append(s.Objects, bytes.TrimSpace(buf.Bytes()))
		}
	}
	return s
}
