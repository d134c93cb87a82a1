package serve_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachelab/cachelab/fakeapi/serve"
	"github.com/cachelab/cachelab/subjects/bellerophon/config"
)

// kubectlBinary finds the kubectl to drive: $CACHELAB_KUBECTL, else the
// one `make kubectl` builds from source (k8s.io/kubernetes/cmd/kubectl
// through the module proxy, cached outside the repo), else kubectl on PATH.
// It skips the test, saying how to get one, when there is none.
func kubectlBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CACHELAB_KUBECTL"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("CACHELAB_KUBECTL=%s: %v", p, err)
		}
		return p
	}
	if cache, err := os.UserCacheDir(); err == nil {
		if m, _ := filepath.Glob(filepath.Join(cache, "cachelab", "realserver", "v*", "kubectl")); len(m) > 0 {
			return m[len(m)-1]
		}
	}
	if p, err := exec.LookPath("kubectl"); err == nil {
		return p
	}
	t.Skip("no kubectl: run `make kubectl` (builds it from source through the Go module proxy) or put one on PATH")
	return ""
}

// serveCRD runs Serve with one CRD until the test ends.
func serveCRD(t *testing.T, crd string) *serve.Running {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r, err := serve.Serve(ctx, serve.Options{
		KubeconfigPath: filepath.Join(dir, "kubeconfig"),
		CRDFiles:       []string{write(t, dir, "crd.yaml", crd)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// kubectl runs kubectl against the kubeconfig and returns its combined
// output.
func kubectl(t *testing.T, kubeconfig, stdin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlBinary(t), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestKubectlAgainstServe drives a real kubectl binary (see kubectlBinary) against Serve over TLS with the
// written kubeconfig: create from YAML, get as a table, get -w in the
// background (ADDED, MODIFIED, DELETED), apply, patch, delete, and a CRD
// instance.
func TestKubectlAgainstServe(t *testing.T) {
	bin := kubectlBinary(t)
	t.Logf("kubectl: %s", bin)
	r := serveCRD(t, crdYAML)
	kc := r.KubeconfigPath
	run := func(stdin string, args ...string) string {
		t.Helper()
		out, err := kubectl(t, kc, stdin, args...)
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	if out := run("", "version"); !strings.Contains(out, "Server Version: v1.37.2-cachelab") {
		t.Errorf("kubectl version:\n%s", out)
	}
	if out := run("", "get", "namespaces"); !strings.Contains(out, "NAME") || !strings.Contains(out, "AGE") || !strings.Contains(out, "kube-system") {
		t.Errorf("kubectl get namespaces (table):\n%s", out)
	}

	// get -w in the background, with event types.
	wctx, wcancel := context.WithCancel(context.Background())
	defer wcancel()
	watchCmd := exec.CommandContext(wctx, bin, "--kubeconfig", kc, "get", "configmaps", "-w", "--output-watch-events")
	var watchOut syncBuffer
	watchCmd.Stdout, watchCmd.Stderr = &watchOut, &watchOut
	if err := watchCmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor := func(what string, ok func(string) bool) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if ok(watchOut.String()) {
				return
			}
		}
		t.Errorf("kubectl get -w: no %s in:\n%s", what, watchOut.String())
	}

	if out := run("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\ndata: {k: v}\n", "create", "-f", "-"); !strings.Contains(out, "configmap/one created") {
		t.Errorf("kubectl create:\n%s", out)
	}
	waitFor("ADDED one", func(s string) bool { return strings.Contains(s, "ADDED") && strings.Contains(s, "one") })
	if out := run("", "get", "configmaps"); !strings.Contains(out, "NAME") || !strings.Contains(out, "one") {
		t.Errorf("kubectl get configmaps:\n%s", out)
	}
	if out := run("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\ndata: {k: v2}\n", "apply", "-f", "-"); !strings.Contains(out, "configmap/one configured") {
		t.Errorf("kubectl apply:\n%s", out)
	}
	if out := run("", "patch", "configmap", "one", "-p", `{"data":{"k":"v3"}}`); !strings.Contains(out, "configmap/one patched") {
		t.Errorf("kubectl patch:\n%s", out)
	}
	if out := run("", "get", "configmap", "one", "-o", "jsonpath={.data.k}"); out != "v3" {
		t.Errorf("after apply and patch: k = %q, want v3", out)
	}
	if out := run("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 1}\n", "create", "-f", "-"); !strings.Contains(out, "widget.example.com/w created") {
		t.Errorf("kubectl create widget:\n%s", out)
	}
	if out := run("", "get", "widgets"); !strings.Contains(out, "w ") {
		t.Errorf("kubectl get widgets:\n%s", out)
	}
	if out := run("", "delete", "configmap", "one"); !strings.Contains(out, `configmap "one" deleted`) {
		t.Errorf("kubectl delete:\n%s", out)
	}
	waitFor("MODIFIED and DELETED", func(s string) bool { return strings.Contains(s, "MODIFIED") && strings.Contains(s, "DELETED") })
	wcancel()
	_ = watchCmd.Wait()
}

// syncBuffer is a bytes.Buffer safe for a writer process and a reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestKubectlExplainReadsServedOpenAPI runs kubectl explain against Serve:
// built-in kinds from the documents recorded from a real kube-apiserver
// (fakeapi/http/openapi/), a custom resource's fields from its CRD's
// openAPIV3Schema (served in its /openapi/v3 document, shaped as
// kube-apiserver's CRD builder shapes it), down to a nested field's type;
// the custom resource's metadata resolves to the recorded ObjectMeta.
func TestKubectlExplainReadsServedOpenAPI(t *testing.T) {
	bin := kubectlBinary(t)
	t.Logf("kubectl: %s", bin)
	r := serveCRD(t, string(config.CRDManifest))
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"explain", "configmap.data"}, []string{"KIND:       ConfigMap", "VERSION:    v1", "FIELD: data <map[string]string>",
			"Data contains the configuration data."}},
		{[]string{"explain", "pods.spec.containers.image"}, []string{"FIELD: image <string>", "Container image name."}},
		{[]string{"explain", "lease.spec.holderIdentity"}, []string{"GROUP:      coordination.k8s.io", "FIELD: holderIdentity <string>"}},
		{[]string{"explain", "bellerophon.metadata.ownerReferences"}, []string{"FIELD: ownerReferences <[]OwnerReference>", "uid\t<string> -required-"}},
		{[]string{"explain", "bellerophon.spec"}, []string{"GROUP:      lab.cachelab.dev", "KIND:       Bellerophon", "VERSION:    v1alpha1",
			"FIELD: spec <Object>", "replicas\t<integer> -required-", "version\t<string> -required-", "config\t<map[string]string>"}},
		{[]string{"explain", "bellerophon.status.conditions"}, []string{"FIELD: conditions <[]Object>", "lastTransitionTime\t<string> -required-"}},
		{[]string{"explain", "bph.spec.replicas"}, []string{"KIND:       Bellerophon", "FIELD: replicas <integer>"}}, // the CRD's short name
		{[]string{"get", "bph", "-A"}, []string{"No resources found"}},
		{[]string{"explain", "bellerophons"}, []string{"KIND:       Bellerophon", "apiVersion\t<string>", "metadata\t<ObjectMeta>", "spec\t<Object> -required-", "status\t<Object>"}},
	} {
		out, err := kubectl(t, r.KubeconfigPath, "", tc.args...)
		if err != nil {
			t.Errorf("kubectl %s: %v\n%s", strings.Join(tc.args, " "), err, out)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("kubectl %s: no %q in:\n%s", strings.Join(tc.args, " "), w, out)
			}
		}
	}
	if out, err := kubectl(t, r.KubeconfigPath, "", "explain", "bellerophon.spec.nope"); err == nil || !strings.Contains(out, `field "nope" does not exist`) {
		t.Errorf("kubectl explain of a missing field: %v\n%s", err, out)
	}
}
