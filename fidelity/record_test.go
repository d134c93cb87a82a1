package fidelity

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// realWait bounds each wait for events or garbage collection on the real
// server (wall time).
const realWait = 20 * time.Second

// TestRecordTranscriptsFromRealServer re-records testdata/transcripts from
// a real kube-apiserver. Opt-in: CACHELAB_FIDELITY_RECORD=1 (`make
// fidelity-record`). The server comes from KUBECONFIG (and VERSION,
// ETCD_ENDPOINT) in the environment or in /tmp/realserver.env, which
// fidelity/realserver/start.sh writes. CACHELAB_FIDELITY_CASES, a regular
// expression, records only the matching cases.
func TestRecordTranscriptsFromRealServer(t *testing.T) {
	if os.Getenv("CACHELAB_FIDELITY_RECORD") != "1" {
		t.Skip("set CACHELAB_FIDELITY_RECORD=1 (make fidelity-record) to record from a real kube-apiserver")
	}
	env := realServerEnv(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", env["KUBECONFIG"])
	if err != nil {
		t.Fatalf("kubeconfig %s: %v", env["KUBECONFIG"], err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := cs.CoreV1().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err != nil {
		t.Fatalf("the real server is not ready (/readyz): %v; start it with `make real-apiserver-start`", err)
	}
	info, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	version := info.GitVersion
	for _, m := range crdManifests {
		if err := ensureCRD(ctx, cfg, m); err != nil {
			t.Fatal(err)
		}
	}
	compact := etcdCompactor(env["ETCD_ENDPOINT"])
	only := regexp.MustCompile(os.Getenv("CACHELAB_FIDELITY_CASES"))
	if err := os.MkdirAll(transcriptDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range Cases {
		if !only.MatchString(c.Name) {
			continue
		}
		start := time.Now()
		ns := c.Namespace()
		if err := freshNamespace(ctx, cfg, cs, ns); err != nil {
			t.Fatalf("case %s: %v", c.Name, err)
		}
		raw, runErr := RunCase(ctx, c, EnvConfig{
			Namespace: ns,
			Config:    cfg,
			Compact:   compact,
			Wait:      realWait,
		})
		tr := Transcript{Case: c.Name, Doc: c.Doc, Server: "kube-apiserver " + version, Recorded: time.Now().UTC().Format(time.RFC3339), Steps: Normalize(raw)}
		if runErr != nil {
			tr.Error = runErr.Error()
			t.Errorf("case %s: %v", c.Name, runErr)
		}
		if err := WriteTranscript(transcriptDir, tr); err != nil {
			t.Fatal(err)
		}
		_ = cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		t.Logf("recorded %-45s %d steps in %v", c.Name, len(tr.Steps), time.Since(start).Round(time.Millisecond))
	}
}

// realServerEnv reads KUBECONFIG, VERSION and ETCD_ENDPOINT from the
// environment, else from /tmp/realserver.env.
func realServerEnv(t *testing.T) map[string]string {
	t.Helper()
	env := map[string]string{}
	if f, err := os.Open("/tmp/realserver.env"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok {
				env[k] = v
			}
		}
		_ = f.Close()
	}
	for _, k := range []string{"KUBECONFIG", "VERSION", "ETCD_ENDPOINT"} {
		if v := os.Getenv(k); v != "" {
			env[k] = v
		}
	}
	if env["KUBECONFIG"] == "" {
		t.Fatal("no real server: set KUBECONFIG or start one with `make real-apiserver-start` (it writes /tmp/realserver.env)")
	}
	return env
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// ensureCRD creates the corpus's CRD (if missing) and waits, by watching,
// until it is Established and its resource answers.
func ensureCRD(ctx context.Context, cfg *rest.Config, manifest []byte) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := yaml.Unmarshal(manifest, &m); err != nil {
		return err
	}
	crd := &unstructured.Unstructured{Object: m}
	if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the CRD: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	w, err := dyn.Resource(crdGVR).Watch(wctx, metav1.ListOptions{FieldSelector: "metadata.name=" + crd.GetName()})
	if err != nil {
		return err
	}
	defer w.Stop()
	established := func(u *unstructured.Unstructured) bool {
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			cm, _ := c.(map[string]any)
			if cm["type"] == "Established" && cm["status"] == "True" {
				return true
			}
		}
		return false
	}
	for ok := false; !ok; {
		select {
		case ev, open := <-w.ResultChan():
			if !open {
				return fmt.Errorf("the CRD %s was not Established within a minute", crd.GetName())
			}
			if u, isU := ev.Object.(*unstructured.Unstructured); isU && ev.Type != watch.Deleted {
				ok = established(u)
			}
		case <-wctx.Done():
			return fmt.Errorf("the CRD %s was not Established within a minute", crd.GetName())
		}
	}
	// Established CRDs are served within moments; ask until the list answers.
	group, _, _ := unstructured.NestedString(m, "spec", "group")
	plural, _, _ := unstructured.NestedString(m, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(m, "spec", "versions")
	version, _, _ := unstructured.NestedString(versions[0].(map[string]any), "name")
	gvr := schema.GroupVersionResource{Group: group, Version: version, Resource: plural}
	for {
		_, err := dyn.Resource(gvr).Namespace("default").List(wctx, metav1.ListOptions{})
		if err == nil {
			return nil
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("%s are not served a minute after the CRD was Established: %w", plural, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// freshNamespace deletes ns if it exists, waits (watching) until it is
// gone, and creates it.
func freshNamespace(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, ns string) error {
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cur, err := cs.CoreV1().Namespaces().Get(wctx, ns, metav1.GetOptions{})
	if err == nil {
		if cur.DeletionTimestamp == nil {
			if err := cs.CoreV1().Namespaces().Delete(wctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
		w, err := cs.CoreV1().Namespaces().Watch(wctx, metav1.ListOptions{FieldSelector: "metadata.name=" + ns, ResourceVersion: cur.ResourceVersion})
		if err != nil {
			return err
		}
		for gone := false; !gone; {
			select {
			case ev, open := <-w.ResultChan():
				if !open {
					w.Stop()
					return fmt.Errorf("namespace %s still terminating after 3 minutes", ns)
				}
				gone = ev.Type == watch.Deleted
			case <-wctx.Done():
				w.Stop()
				return fmt.Errorf("namespace %s still terminating after 3 minutes", ns)
			}
		}
		w.Stop()
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	return createNamespace(ctx, cfg, ns)
}

// etcdCompactor compacts etcd at its current revision through etcd's
// JSON gateway, as kube-apiserver's compactor does (it records the
// revision under compact_rev_key first, which tells kube-apiserver), then
// gives the watch cache's compactor one polling period.
func etcdCompactor(endpoint string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if endpoint == "" {
			return fmt.Errorf("compaction needs ETCD_ENDPOINT (in /tmp/realserver.env)")
		}
		post := func(path string, in, out any) error {
			body, _ := json.Marshal(in)
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(endpoint, "/")+path, bytes.NewReader(body))
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			data, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("etcd %s: %s: %s", path, resp.Status, data)
			}
			return json.Unmarshal(data, out)
		}
		key := base64.StdEncoding.EncodeToString([]byte("compact_rev_key"))
		var rng struct {
			Header struct {
				Revision string `json:"revision"`
			} `json:"header"`
		}
		if err := post("/v3/kv/range", map[string]any{"key": key}, &rng); err != nil {
			return err
		}
		rev, err := strconv.ParseInt(rng.Header.Revision, 10, 64)
		if err != nil {
			return fmt.Errorf("etcd revision %q: %v", rng.Header.Revision, err)
		}
		var ignored map[string]any
		if err := post("/v3/kv/put", map[string]any{"key": key, "value": base64.StdEncoding.EncodeToString([]byte(strconv.FormatInt(rev, 10)))}, &ignored); err != nil {
			return err
		}
		if err := post("/v3/kv/compaction", map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true}, &ignored); err != nil {
			return err
		}
		// kube-apiserver learns the compacted revision from
		// compact_rev_key at once, and its watch cache polls it every 15 s
		// (cacher.compactorPollPeriod); no answer shows when it did (the
		// cache keeps serving what it holds), so give it one period.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(16 * time.Second):
		}
		return nil
	}
}
