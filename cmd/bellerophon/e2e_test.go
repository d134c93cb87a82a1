package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cachelab/cachelab/fakeapi/serve"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/subjects/bellerophon"
	"github.com/cachelab/cachelab/subjects/bellerophon/apis/lab/v1alpha1"
	"github.com/cachelab/cachelab/subjects/bellerophon/config"
)

// The fault profile the server starts with: 5% of requests fail with 503
// and Retry-After (client-go retries them itself), 5% of writes apply and
// then answer 504, every watch event is held 20ms, and every second one
// open watch (anyone's) ends. The test changes the error code to 429 (with
// abrupt watch breaks) before scaling, and to 500 (no Retry-After: the
// controller's workqueue retries) before deleting.
const e2eFaults = `{"errorRate":0.05,"errorCode":503,"retryAfterSeconds":1,"applyThenTimeoutRate":0.05,
"eventDelay":"20ms","watchBreakInterval":"1s","seed":7}`

// TestOperatorConvergesAgainstServeWithFaultsAndShutsDownCleanly is the
// operator end to end, in real time, in three processes: it builds the
// cachelab and bellerophon binaries, starts `cachelab serve` with the
// Bellerophon CRD, its kubelet and a fault profile, starts `bellerophon
// --kubeconfig` against it, and as a user (through client-go, faulted like
// everyone, retrying what a user would) creates a Bellerophon, scales it up
// then down and deletes it. After each step it watches (informers in this
// process, a deadline, no polling) until the operator has converged: the
// wanted number of Ready Pods it controls, the ConfigMap rendered from
// spec.config, status.observedGeneration and readyReplicas current; after
// the delete, the finalizer removed, the object and its children gone.
// Then SIGTERM: the operator exits 0, `cachelab admin snapshot` reads the
// final resourceVersion, serve exits 0 and its trace file holds the write
// at that resourceVersion (nothing lost) and the faults it injected.
func TestOperatorConvergesAgainstServeWithFaultsAndShutsDownCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries and runs them for seconds of real time; skipped with -short")
	}
	start := time.Now()
	dir := t.TempDir()
	bin := buildBinaries(t, dir)
	t.Logf("built cachelab and bellerophon in %v", time.Since(start).Round(time.Millisecond))

	crd := writeFile(t, dir, "crd.yaml", string(config.CRDManifest))
	faults := writeFile(t, dir, "faults.json", e2eFaults)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	tracePath := filepath.Join(dir, "trace.jsonl")

	srv := startProcess(t, "serve", filepath.Join(bin, "cachelab"), "serve",
		"--address", "127.0.0.1:0", "--kubeconfig", kubeconfig, "--trace", tracePath,
		"--crd", crd, "--faults", faults, "--kubelet", "--kubelet-ready-after", "100ms")
	srv.waitForLine(t, "export KUBECONFIG=", 20*time.Second)
	op := startProcess(t, "bellerophon", filepath.Join(bin, "bellerophon"), "--kubeconfig", kubeconfig, "--workers", "2", "-v", "1")

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.UserAgent = "e2e-user"
	kube := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newWorld(ctx, t, kube, dyn)

	bphs := dyn.Resource(v1alpha1.Resource).Namespace("default")
	admin := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(filepath.Join(bin, "cachelab"), append([]string{"admin"}, append(args, "--kubeconfig", kubeconfig)...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("cachelab admin %v: %v\n%s", args, err, out)
		}
		return string(out)
	}

	// Create: 3 Pods, ConfigMap {color: blue}.
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": v1alpha1.Kind,
		"metadata": map[string]any{"name": "web"},
		"spec":     map[string]any{"replicas": int64(3), "version": "1.0", "config": map[string]any{"color": "blue"}},
	}}
	userWrite(t, "create web", func() error {
		_, err := bphs.Create(ctx, obj, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) { // a retried create whose first try applied (504)
			return nil
		}
		return err
	})
	phase := time.Now()
	uid := w.waitConverged(t, "web", 3, map[string]string{"color": "blue"})
	t.Logf("created: converged in %v", time.Since(phase).Round(time.Millisecond))

	// Scale up under 429s and abrupt watch breaks, with a new config.
	admin("fault", "errorCode=429", "watchBreakAbrupt=true")
	userWrite(t, "scale web to 5", func() error {
		_, err := bphs.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":5,"config":{"color":"green"}}}`), metav1.PatchOptions{})
		return err
	})
	phase = time.Now()
	w.waitConverged(t, "web", 5, map[string]string{"color": "green"})
	t.Logf("scaled up: converged in %v", time.Since(phase).Round(time.Millisecond))

	// Scale down under 500s that nobody retries but the controller.
	admin("fault", "errorCode=500", "retryAfterSeconds=0")
	userWrite(t, "scale web to 2", func() error {
		_, err := bphs.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{})
		return err
	})
	phase = time.Now()
	w.waitConverged(t, "web", 2, map[string]string{"color": "green"})
	t.Logf("scaled down: converged in %v", time.Since(phase).Round(time.Millisecond))

	// Delete: the finalizer cleans the backup and goes, the object and its
	// children go.
	userWrite(t, "delete web", func() error {
		err := bphs.Delete(ctx, "web", metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	phase = time.Now()
	w.waitGone(t, "web", uid)
	t.Logf("deleted: finalizer removed, object and children gone in %v", time.Since(phase).Round(time.Millisecond))
	cancel() // stop this process's informers

	// SIGTERM the operator: a clean exit.
	op.stop(t, 10*time.Second)

	// The server's final resourceVersion, then SIGTERM it.
	snapFile := filepath.Join(dir, "snapshot.json")
	admin("fault", "--reset")
	admin("snapshot", "-o", snapFile)
	snapData, err := os.ReadFile(snapFile)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := decodeSnapshot(snapData)
	if err != nil {
		t.Fatal(err)
	}
	srv.stop(t, 15*time.Second)

	tr, err := sim.ReadTraceFile(tracePath)
	if err != nil {
		t.Fatalf("serve's trace after SIGTERM: %v", err)
	}
	if tr.Outcome != "shutdown" {
		t.Errorf("trace outcome = %q, want shutdown", tr.Outcome)
	}
	var lastWrite int64
	faultKinds := map[string]int{}
	operatorWrites := map[string]int{}
	for _, r := range tr.Records {
		switch r.Kind {
		case sim.RecWrite:
			lastWrite = max(lastWrite, r.RV)
			if r.Actor == "bellerophon" {
				operatorWrites[r.Verb+" "+r.Resource]++
			}
		case sim.RecFault:
			faultKinds[r.Fault]++
		}
	}
	if lastWrite != snap.ResourceVersion {
		t.Errorf("trace's last write at resourceVersion %d, server ended at %d: the trace lost writes", lastWrite, snap.ResourceVersion)
	}
	if operatorWrites["create pods"] < 5 || operatorWrites["delete pods"] < 3 {
		t.Errorf("operator writes in the trace: %v; want at least 5 Pod creates and 3 Pod deletes", operatorWrites)
	}
	if len(faultKinds) == 0 {
		t.Errorf("the trace records no injected fault: the profile was not on")
	}
	t.Logf("end to end in %v (including the build); trace: %d records, faults injected %v, operator writes %v",
		time.Since(start).Round(time.Millisecond), len(tr.Records), faultKinds, operatorWrites)
}

// buildBinaries builds cachelab and bellerophon into dir/bin. It skips the
// test when no go command can be run (an environment without a toolchain),
// and fails it when the code does not compile.
func buildBinaries(t *testing.T, dir string) string {
	t.Helper()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			t.Skipf("end-to-end test skipped: no go command to build the binaries with (GOROOT %s, PATH): %v", runtime.GOROOT(), err)
		}
	}
	bin := filepath.Join(dir, "bin")
	cmd := exec.Command(goTool, "build", "-o", bin+string(filepath.Separator),
		"github.com/cachelab/cachelab/cmd/cachelab", "github.com/cachelab/cachelab/cmd/bellerophon")
	out, err := cmd.CombinedOutput()
	if err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) || !bytes.Contains(out, []byte(".go:")) {
			t.Skipf("end-to-end test skipped: building the binaries failed for a reason outside the code: %v\n%s", err, out)
		}
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// process is a child process whose output is kept (and shown when the test
// fails).
type process struct {
	name string
	cmd  *exec.Cmd
	out  lockedBuffer
	// lines receives every stdout line until the process ends.
	lines  chan string
	exited chan struct{}
	err    error
}

func startProcess(t *testing.T, name, path string, args ...string) *process {
	t.Helper()
	p := &process{name: name, cmd: exec.Command(path, args...), lines: make(chan string, 1024), exited: make(chan struct{})}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = &p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		sc := bufio.NewScanner(io.TeeReader(stdout, &p.out))
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("--- %s output (last 6000 bytes) ---\n%s", name, tail(p.out.String(), 6000))
		}
	})
	return p
}

// waitForLine waits until the process prints a line containing s.
func (p *process) waitForLine(t *testing.T, s string, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case l := <-p.lines:
			if strings.Contains(l, s) {
				return
			}
		case <-p.exited:
			t.Fatalf("%s exited (%v) before printing %q", p.name, p.err, s)
		case <-deadline:
			t.Fatalf("%s printed no %q within %v", p.name, s, timeout)
		}
	}
}

// stop sends SIGTERM and requires a clean exit (code 0) within timeout.
func (p *process) stop(t *testing.T, timeout time.Duration) {
	t.Helper()
	sent := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM to %s: %v", p.name, err)
	}
	select {
	case <-p.exited:
		if p.err != nil {
			t.Errorf("%s after SIGTERM: %v, want exit 0", p.name, p.err)
		}
		t.Logf("%s exited cleanly %v after SIGTERM", p.name, time.Since(sent).Round(time.Millisecond))
	case <-time.After(timeout):
		t.Fatalf("%s still running %v after SIGTERM", p.name, timeout)
	}
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// transient reports errors a user retries: the injected faults and
// write conflicts.
func transient(err error) bool {
	return apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err) || apierrors.IsInternalError(err) ||
		apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsConflict(err)
}

// userWrite runs write until it succeeds, retrying transient errors with
// backoff (about 6 s in all).
func userWrite(t *testing.T, what string, write func() error) {
	t.Helper()
	var last error
	err := wait.ExponentialBackoff(wait.Backoff{Duration: 50 * time.Millisecond, Factor: 1.5, Steps: 12}, func() (bool, error) {
		last = write()
		if last != nil && transient(last) {
			return false, nil
		}
		return true, last
	})
	if err != nil {
		t.Fatalf("%s: %v (last error %v)", what, err, last)
	}
}

// world is this process's view of the server: real informers on
// Bellerophons, Pods and ConfigMaps, and a channel told of every change.
type world struct {
	bphs, pods, cms cache.Store
	changed         chan struct{}
}

func newWorld(ctx context.Context, t *testing.T, kube kubernetes.Interface, dyn dynamic.Interface) *world {
	t.Helper()
	w := &world{changed: make(chan struct{}, 1)}
	poke := func() {
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}
	h := cache.ResourceEventHandlerFuncs{AddFunc: func(any) { poke() }, UpdateFunc: func(any, any) { poke() }, DeleteFunc: func(any) { poke() }}
	kf := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace("default"))
	df := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, "default", nil)
	var synced []cache.DoneChecker
	for _, inf := range []cache.SharedIndexInformer{df.ForResource(v1alpha1.Resource).Informer(), kf.Core().V1().Pods().Informer(), kf.Core().V1().ConfigMaps().Informer()} {
		if _, err := inf.AddEventHandler(h); err != nil {
			t.Fatal(err)
		}
		synced = append(synced, inf.HasSyncedChecker())
	}
	w.bphs = df.ForResource(v1alpha1.Resource).Informer().GetStore()
	w.pods = kf.Core().V1().Pods().Informer().GetStore()
	w.cms = kf.Core().V1().ConfigMaps().Informer().GetStore()
	kf.Start(ctx.Done())
	df.Start(ctx.Done())
	t.Cleanup(func() { kf.Shutdown(); df.Shutdown() })
	if !cache.WaitFor(ctx, "", synced...) {
		t.Fatal("the test's informers did not sync")
	}
	return w
}

// waitFor re-checks cond at every change this process's informers see,
// until it holds or 20 s pass.
func (w *world) waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		ok, why := cond()
		if ok {
			return
		}
		select {
		case <-w.changed:
		case <-deadline:
			t.Fatalf("%s: not within 20s: %s", what, why)
		}
	}
}

// waitConverged waits until Bellerophon default/name has converged at
// replicas and cfg, and returns its UID.
func (w *world) waitConverged(t *testing.T, name string, replicas int, cfg map[string]string) types.UID {
	t.Helper()
	var uid types.UID
	w.waitFor(t, fmt.Sprintf("%s at %d replicas", name, replicas), func() (bool, string) {
		obj, ok, _ := w.bphs.GetByKey("default/" + name)
		if !ok {
			return false, "no Bellerophon " + name
		}
		u := obj.(*unstructured.Unstructured)
		uid = u.GetUID()
		hasFinalizer := false
		for _, f := range u.GetFinalizers() {
			hasFinalizer = hasFinalizer || f == bellerophon.FinalizerName
		}
		if !hasFinalizer {
			return false, "no finalizer yet"
		}
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		if observed != u.GetGeneration() {
			return false, fmt.Sprintf("status.observedGeneration %d, generation %d", observed, u.GetGeneration())
		}
		if ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas"); ready != int64(replicas) {
			return false, fmt.Sprintf("status.readyReplicas %d, want %d", ready, replicas)
		}
		n := 0
		for _, o := range w.pods.List() {
			p := o.(*corev1.Pod)
			if ref := metav1.GetControllerOf(p); ref == nil || ref.UID != uid || p.DeletionTimestamp != nil {
				continue
			}
			if !podReady(p) {
				return false, "Pod " + p.Name + " not Ready"
			}
			n++
		}
		if n != replicas {
			return false, fmt.Sprintf("%d Pods, want %d", n, replicas)
		}
		o, ok, _ := w.cms.GetByKey("default/" + name + "-config")
		if !ok {
			return false, "no ConfigMap " + name + "-config"
		}
		cm := o.(*corev1.ConfigMap)
		if ref := metav1.GetControllerOf(cm); ref == nil || ref.UID != uid {
			return false, "ConfigMap not controlled by " + name
		}
		if fmt.Sprint(cm.Data) != fmt.Sprint(cfg) {
			return false, fmt.Sprintf("ConfigMap data %v, want %v", cm.Data, cfg)
		}
		return true, ""
	})
	return uid
}

// waitGone waits until Bellerophon default/name and everything it
// controlled are gone.
func (w *world) waitGone(t *testing.T, name string, uid types.UID) {
	t.Helper()
	w.waitFor(t, name+" deleted", func() (bool, string) {
		if obj, ok, _ := w.bphs.GetByKey("default/" + name); ok {
			return false, fmt.Sprintf("Bellerophon still there, finalizers %v", obj.(*unstructured.Unstructured).GetFinalizers())
		}
		for _, store := range []cache.Store{w.pods, w.cms} {
			for _, o := range store.List() {
				m := o.(metav1.Object)
				if ref := metav1.GetControllerOf(m); ref != nil && ref.UID == uid {
					return false, "child " + m.GetName() + " still there"
				}
			}
		}
		return true, ""
	})
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func decodeSnapshot(data []byte) (serve.Snapshot, error) {
	var s serve.Snapshot
	err := json.Unmarshal(data, &s)
	return s, err
}
