package serve_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cachelab/cachelab/fakeapi/serve"
)

const crdYAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
`

const seedYAML = `apiVersion: v1
kind: ConfigMap
metadata: {name: one, namespace: team}
data: {k: v}
---
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec: {size: 1}
`

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// admin calls an admin endpoint with the token.
func admin(t *testing.T, r *serve.Running, method, path, body string, out any) int {
	t.Helper()
	rt, err := rest.TransportFor(r.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(method, r.URL+path, strings.NewReader(body))
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %s: %v", method, path, data, err)
		}
	}
	return resp.StatusCode
}

// TestServeOnLoopbackWithTLSAndTokenServesClientGo: Serve listens on
// 127.0.0.1 with a self-signed certificate and a token, writes a kubeconfig
// client-go loads, registers the CRD and seeds objects (namespace first);
// clients without the token get 401; the admin endpoints compact (a watch
// below it gets 410), change faults live (503s) and snapshot; a watch open
// at shutdown ends cleanly and Wait returns nil.
func TestServeOnLoopbackWithTLSAndTokenServesClientGo(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := serve.Serve(ctx, serve.Options{
		KubeconfigPath: filepath.Join(dir, "kubeconfig"),
		CRDFiles:       []string{write(t, dir, "crd.yaml", crdYAML)},
		SeedFiles:      []string{write(t, dir, "seed.yaml", seedYAML)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.URL, "https://127.0.0.1:") {
		t.Errorf("URL = %s, want https on 127.0.0.1", r.URL)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", r.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	got, err := cs.CoreV1().ConfigMaps("team").Get(bg, "one", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "v" {
		t.Fatalf("seeded configmap = %v, %v", got, err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	w, err := dc.Resource(widgets).Namespace("default").Get(bg, "w", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("seeded widget (CRD, default namespace): %v", err)
	}
	if size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size"); size != 1 {
		t.Errorf("widget size = %d, want 1", size)
	}

	// No token, wrong token: 401.
	anon := rest.AnonymousClientConfig(cfg)
	anonCS, _ := kubernetes.NewForConfig(anon)
	if _, err := anonCS.CoreV1().Namespaces().List(bg, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("anonymous list: err = %v, want Unauthorized", err)
	}

	// A watch stays open across the admin calls; compaction past an old
	// resourceVersion makes a new watch from it get a 410 ERROR event.
	list, err := cs.CoreV1().ConfigMaps("team").List(bg, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live, err := cs.CoreV1().ConfigMaps("team").Watch(bg, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("team").Create(bg, &corev1ConfigMap, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-live.ResultChan():
		if ev.Type != watch.Added {
			t.Fatalf("live watch: %s, want ADDED", ev.Type)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("live watch: no event in 10s")
	}
	var compacted map[string]int64
	if code := admin(t, r, "POST", "/admin/compact", "", &compacted); code != 200 || compacted["compactedResourceVersion"] == 0 {
		t.Fatalf("compact: %d %v", code, compacted)
	}
	old, err := cs.CoreV1().ConfigMaps("team").Watch(bg, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-old.ResultChan():
		if st, ok := ev.Object.(*metav1.Status); ev.Type != watch.Error || !ok || st.Code != 410 {
			t.Errorf("watch below the compaction: %s %v, want ERROR 410", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch below the compaction: no event in 10s")
	}
	old.Stop()

	// Faults, live: every request 503 (no Retry-After: client-go does not
	// retry), then none again.
	var f serve.Faults
	if code := admin(t, r, "PUT", "/admin/faults", `{"errorRate":1,"errorCode":503}`, &f); code != 200 || f.ErrorRate != 1 {
		t.Fatalf("set faults: %d %+v", code, f)
	}
	if _, err := cs.CoreV1().ConfigMaps("team").Get(bg, "one", metav1.GetOptions{}); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("get with errorRate 1: err = %v, want ServiceUnavailable", err)
	}
	if code := admin(t, r, "PUT", "/admin/faults", `{"errorRate":2}`, nil); code != 400 {
		t.Errorf("invalid fault profile: code %d, want 400", code)
	}
	if code := admin(t, r, "PUT", "/admin/faults", `{}`, nil); code != 200 {
		t.Errorf("clear faults: code %d", code)
	}

	if _, err := cs.CoreV1().ConfigMaps("team").Get(bg, "one", metav1.GetOptions{}); err != nil {
		t.Errorf("get after clearing faults: %v", err)
	}
	var snap serve.Snapshot
	if code := admin(t, r, "GET", "/admin/snapshot", "", &snap); code != 200 || snap.ResourceVersion == 0 || len(snap.Objects) < 5 || len(snap.Watchers) != 1 {
		t.Errorf("snapshot: %d, rv %d, %d objects, %d watchers; want 5+ objects (3 namespaces, 2 configmaps, 1 widget) and the live watch", code, snap.ResourceVersion, len(snap.Objects), len(snap.Watchers))
	}

	rt, err := rest.TransportFor(r.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: rt}).Get(r.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metricsText, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`cachelab_requests_total{code="200",resource="configmaps",verb="get"}`,
		`cachelab_requests_total{code="503",resource="configmaps",verb="get"} 1`,
		`cachelab_active_watchers 1`,
		`cachelab_faults_injected_total{fault="error-503"} 1`,
		`cachelab_watch_events_sent_total{resource="configmaps",type="ADDED"}`,
	} {
		if !strings.Contains(string(metricsText), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// A watch broken abruptly over real HTTP/2 (RST_STREAM): client-go's
	// decoder reports the stream error as an ERROR event.
	brk, err := cs.CoreV1().Secrets("team").Watch(bg, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, wi := range r.API.Watchers() {
		if wi.Resource.Resource == "secrets" {
			if err := r.API.CloseWatch(wi.ID, true); err != nil {
				t.Fatal(err)
			}
		}
	}
	select {
	case ev := <-brk.ResultChan():
		st, ok := ev.Object.(*metav1.Status)
		if ev.Type != watch.Error || !ok || st.Code != 500 || !strings.Contains(st.Message, "INTERNAL_ERROR") {
			t.Errorf("abruptly closed watch: %s %v, want the client's ERROR for an HTTP/2 stream reset", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Error("abruptly closed watch: nothing in 10s")
	}
	brk.Stop()

	// The profile's periodic watch breaks end a watch on their own.
	if code := admin(t, r, "PUT", "/admin/faults", `{"watchBreakInterval":"100ms"}`, nil); code != 200 {
		t.Fatalf("set watchBreakInterval: code %d", code)
	}
	periodic, err := cs.CoreV1().Secrets("team").Watch(bg, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case _, ok := <-periodic.ResultChan():
		if ok {
			t.Error("periodic break: got an event, want a clean close")
		}
	case <-time.After(10 * time.Second):
		t.Error("periodic break: watch still open after 10s")
	}
	if code := admin(t, r, "PUT", "/admin/faults", `{}`, nil); code != 200 {
		t.Errorf("clear faults: code %d", code)
	}

	// An informer keeps re-watching as its watches end; shutdown must
	// still be prompt.
	ictx, icancel := context.WithCancel(bg)
	defer icancel()
	inf := informers.NewSharedInformerFactory(cs, 0).Core().V1().ConfigMaps().Informer()
	go inf.RunWithContext(ictx)
	if !cache.WaitFor(ictx, "informer", inf.HasSyncedChecker()) {
		t.Fatal("informer did not sync")
	}

	stopAt := time.Now()
	cancel()
	select {
	case _, ok := <-live.ResultChan():
		if ok {
			t.Error("live watch got an event at shutdown, want a clean close")
		}
	case <-time.After(10 * time.Second):
		t.Error("live watch still open 10s after shutdown")
	}
	done := make(chan error, 1)
	go func() { done <- r.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Wait = %v, want nil", err)
		}
		if d := time.Since(stopAt); d >= serve.ShutdownTimeout {
			t.Errorf("shutdown took %v with an informer re-watching, want under %v", d, serve.ShutdownTimeout)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server still running 10s after its context ended")
	}
}

var corev1ConfigMap = func() corev1.ConfigMap {
	return corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "two"}}
}()
