package cli

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/fakeapi/serve"
)

// startServe runs cachelab serve in-process with a kubeconfig under a
// temporary folder; it stops at the end of the test.
func startServe(t *testing.T) *serve.Running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, err := serve.Serve(ctx, serve.Options{KubeconfigPath: filepath.Join(t.TempDir(), "kubeconfig")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = r.Wait()
	})
	return r
}

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func TestAdminCompactMakesOlderWatchesGetGone(t *testing.T) {
	r := startServe(t)
	c := r.API.Client("test")
	ctx := context.Background()
	for _, name := range []string{"a", "b"} {
		if _, err := c.Create(ctx, configMaps, "default", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	before := r.API.CompactedResourceVersion()
	code, out, errs := run(t, "admin", "compact", "--kubeconfig", r.KubeconfigPath)
	if code != ExitOK {
		t.Fatalf("admin compact exited %d: %s", code, errs)
	}
	latest := r.API.ResourceVersion()
	if got := r.API.CompactedResourceVersion(); got != latest || got == before {
		t.Errorf("compacted resourceVersion = %d (was %d), want the latest, %d", got, before, latest)
	}
	if !strings.Contains(out, "compacted to resourceVersion") {
		t.Errorf("output: %s", out)
	}
	if _, err := c.Watch(ctx, configMaps, "default", metav1.ListOptions{ResourceVersion: "1"}); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("watch from resourceVersion 1 after admin compact: err = %v, want 410 Gone", err)
	}
	if code, _, errs := run(t, "admin", "compact", "--kubeconfig", r.KubeconfigPath, "--resource-version", "999999"); code != ExitUnexpected || !strings.Contains(errs, "999999") {
		t.Errorf("compact past the latest: exit %d, stderr %q; want 1 and the server's reason", code, errs)
	}
}

func TestAdminFaultChangesFieldsOfTheLiveProfile(t *testing.T) {
	r := startServe(t)
	if err := r.SetFaults(serve.Faults{EventDelay: serve.Duration(250e6), Seed: 3}); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "admin", "fault", "errorRate=0.25", "errorCode=429", "retryAfterSeconds=2", "watchBreakAbrupt=true", "--kubeconfig", r.KubeconfigPath)
	if code != ExitOK {
		t.Fatalf("admin fault exited %d: %s", code, errs)
	}
	want := serve.Faults{ErrorRate: 0.25, ErrorCode: 429, RetryAfterSeconds: 2, WatchBreakAbrupt: true, EventDelay: serve.Duration(250e6), Seed: 3}
	if got := r.Faults(); got != want {
		t.Errorf("live profile = %+v, want %+v (the old eventDelay and seed kept)", got, want)
	}
	var printed serve.Faults
	if err := json.Unmarshal([]byte(out), &printed); err != nil || printed != want {
		t.Errorf("printed profile %q (%v), want %+v", out, err, want)
	}

	// --reset replaces the profile.
	if code, _, errs := run(t, "admin", "fault", "--reset", "watchBreakInterval=1s", "--kubeconfig", r.KubeconfigPath); code != ExitOK {
		t.Fatalf("admin fault --reset exited %d: %s", code, errs)
	}
	if got, want := r.Faults(), (serve.Faults{WatchBreakInterval: serve.Duration(1e9)}); got != want {
		t.Errorf("after --reset: %+v, want %+v", got, want)
	}

	// No arguments: print the live profile.
	if code, out, _ := run(t, "admin", "fault", "--kubeconfig", r.KubeconfigPath); code != ExitOK || !strings.Contains(out, `"watchBreakInterval": "1s"`) {
		t.Errorf("admin fault: exit %d, output %s", code, out)
	}

	// From a file.
	f := filepath.Join(t.TempDir(), "faults.json")
	if err := os.WriteFile(f, []byte(`{"replicaLag": 4}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(t, "admin", "fault", "-f", f, "--kubeconfig", r.KubeconfigPath); code != ExitOK || r.Faults().ReplicaLag != 4 {
		t.Errorf("admin fault -f: exit %d (%s), replicaLag %d", code, errs, r.Faults().ReplicaLag)
	}
}

func TestAdminFaultNamesAnUnknownFieldOrBadValueAndChangesNothing(t *testing.T) {
	r := startServe(t)
	before := r.Faults()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"errorrate=0.5"}, `unknown fault field "errorrate" (did you mean errorRate?)`},
		{[]string{"latency=1s"}, `unknown fault field "latency"`},
		{[]string{"errorRate"}, `want field=value`},
		{[]string{"errorRate=2"}, "errorRate must be within 0..1, got 2"},
		{[]string{"errorCode=418"}, "errorCode must be 429, 500, 503 or 504"},
		{[]string{"eventDelay=soon"}, "soon"},
	} {
		code, _, errs := run(t, append([]string{"admin", "fault", "--kubeconfig", r.KubeconfigPath}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("admin fault %v: exit %d, stderr %q; want %d and %q", tc.args, code, errs, ExitUsage, tc.want)
		}
	}
	if after := r.Faults(); after != before {
		t.Errorf("profile changed by refused commands: %+v, was %+v", after, before)
	}
}

func TestAdminSnapshotWritesObjectsAndWatches(t *testing.T) {
	r := startServe(t)
	c := r.API.Client("test")
	ctx := context.Background()
	if _, err := c.Create(ctx, configMaps, "default", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "snap"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, configMaps, "", metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	code, out, errs := run(t, "admin", "snapshot", "--kubeconfig", r.KubeconfigPath)
	if code != ExitOK {
		t.Fatalf("admin snapshot exited %d: %s", code, errs)
	}
	var snap serve.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("snapshot output is not a Snapshot: %v\n%s", err, out)
	}
	if snap.ResourceVersion != r.API.ResourceVersion() || len(snap.Watchers) != 1 || !strings.Contains(out, `"name": "snap"`) {
		t.Errorf("snapshot: rv %d (server %d), %d watchers, want the server's rv, 1 watcher and configmap snap", snap.ResourceVersion, r.API.ResourceVersion(), len(snap.Watchers))
	}
	// 5 objects: namespaces default and kube-system, their default
	// ServiceAccounts (serve runs the serviceaccount controller's part),
	// configmap snap.
	file := filepath.Join(t.TempDir(), "snap.json")
	code, out, errs = run(t, "admin", "snapshot", "-o", file, "--kubeconfig", r.KubeconfigPath)
	if code != ExitOK || !strings.Contains(out, "5 objects (1 ConfigMap, 2 Namespace, 2 ServiceAccount)") || !strings.Contains(out, "1 open watches") {
		t.Errorf("admin snapshot -o: exit %d, output %q, stderr %q", code, out, errs)
	}
	if data, err := os.ReadFile(file); err != nil || !json.Valid(data) {
		t.Errorf("snapshot file: %v", err)
	}
}

func TestAdminCloseWatchesEndsOpenWatches(t *testing.T) {
	r := startServe(t)
	w, err := r.API.Client("test").Watch(context.Background(), configMaps, "", metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "admin", "close-watches", "--kubeconfig", r.KubeconfigPath)
	if code != ExitOK || !strings.Contains(out, "closed 1 watches cleanly") {
		t.Errorf("admin close-watches: exit %d, output %q, stderr %q", code, out, errs)
	}
	if _, open := <-w.ResultChan(); open {
		t.Error("watch still delivering after close-watches")
	}
}

func TestAdminRefusesABadKubeconfigAndNamesAnUnreachableServer(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("KUBECONFIG", "")
	if code, _, errs := run(t, "admin", "snapshot"); code != ExitUsage || !strings.Contains(errs, "give --kubeconfig FILE or set $KUBECONFIG") {
		t.Errorf("no kubeconfig: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := run(t, "admin", "snapshot", "--kubeconfig", filepath.Join(dir, "missing")); code != ExitUsage || !strings.Contains(errs, "no such file") {
		t.Errorf("missing kubeconfig: exit %d, stderr %q", code, errs)
	}
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("clusters: [oops"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(t, "admin", "snapshot", "--kubeconfig", garbage); code != ExitUsage || !strings.Contains(errs, "kubeconfig "+garbage) {
		t.Errorf("malformed kubeconfig: exit %d, stderr %q", code, errs)
	}

	// A kubeconfig of a server that has stopped: its port is closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	stale := filepath.Join(dir, "stale")
	if err := os.WriteFile(stale, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://"+addr+"', insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs := run(t, "admin", "fault", "--kubeconfig", stale)
	if code != ExitUnexpected || !strings.Contains(errs, "cannot reach the server at https://"+addr) || !strings.Contains(errs, "Is `cachelab serve` running") {
		t.Errorf("unreachable server: exit %d, stderr %q", code, errs)
	}

	if code, _, errs := run(t, "admin", "explode"); code != ExitUsage || !strings.Contains(errs, `unknown action "explode"`) {
		t.Errorf("unknown action: exit %d, stderr %q", code, errs)
	}
}

func TestAdminFaultNamesAValueOfTheWrongTypeAndSendsNothing(t *testing.T) {
	r := startServe(t)
	for _, c := range []struct{ pair, want string }{
		{"eventDelay=5", "eventDelay=5: want a duration with its unit, such as eventDelay=250ms"},
		{"errorRate=abc", "errorRate=abc: want a number, such as errorRate=0.1"},
		{"errorCode=5xx", "errorCode=5xx: want a whole number"},
		{"watchBreakAbrupt=yes please", "watchBreakAbrupt=yes please: want true or false"},
	} {
		code, _, errs := run(t, "admin", "fault", "--kubeconfig", r.KubeconfigPath, c.pair)
		if code != ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("admin fault %s: exit %d, stderr %q; want %d and %q", c.pair, code, errs, ExitUsage, c.want)
		}
	}
	if got := r.Faults(); got != (serve.Faults{}) {
		t.Errorf("the live profile changed to %+v after only bad values", got)
	}
	code, out, errs := run(t, "admin", "fault", "--kubeconfig", r.KubeconfigPath, "eventDelay=250ms", "watchBreakAbrupt=true")
	if code != ExitOK || !strings.Contains(out, `"eventDelay": "250ms"`) {
		t.Errorf("admin fault eventDelay=250ms: exit %d, %s %s", code, out, errs)
	}
}
