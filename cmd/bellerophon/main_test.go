package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/cachelab/cachelab/fakeapi/serve"
	"github.com/cachelab/cachelab/subjects/bellerophon/apis/lab/v1alpha1"
	"github.com/cachelab/cachelab/subjects/bellerophon/config"
)

func TestRunRefusesBadFlagsAndKubeconfigsWithWhatToDo(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("KUBECONFIG", filepath.Join(dir, "nowhere"))
	t.Setenv("HOME", dir)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--workers", "0"}, exitUsage, "--workers=0: want at least 1"},
		{[]string{"--bogus"}, exitUsage, "flag provided but not defined: -bogus"},
		{[]string{"extra"}, exitUsage, `takes no arguments, got ["extra"]`},
		{[]string{"--kubeconfig", filepath.Join(dir, "missing")}, exitUsage, "loading the kubeconfig (" + filepath.Join(dir, "missing") + ")"},
		{nil, exitUsage, "give --kubeconfig FILE"},
		{[]string{"--help"}, exitOK, "Usage: bellerophon"},
	} {
		var stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stderr, false)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("bellerophon %v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}

// TestRunWithLeaderElectionReconcilesWhileLeadingAndReleasesTheLease runs
// the command in-process against cachelab serve (which serves Leases) with
// --leader-elect: it takes the Lease, reconciles (a Bellerophon gets its
// ConfigMap), and when its context ends it returns 0 and releases the
// Lease (holderIdentity cleared, as ReleaseOnCancel does).
func TestRunWithLeaderElectionReconcilesWhileLeadingAndReleasesTheLease(t *testing.T) {
	dir := t.TempDir()
	sctx, stopServe := context.WithCancel(context.Background())
	defer stopServe()
	r, err := serve.Serve(sctx, serve.Options{
		KubeconfigPath: filepath.Join(dir, "kubeconfig"),
		CRDFiles:       []string{writeFile(t, dir, "crd.yaml", string(config.CRDManifest))},
		Kubelet:        true,
	})
	if err != nil {
		t.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(r.RESTConfig())
	dyn := dynamic.NewForConfigOrDie(r.RESTConfig())
	bg := context.Background()
	leases, err := kube.CoordinationV1().Leases("default").Watch(bg, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer leases.Stop()
	cms, err := kube.CoreV1().ConfigMaps("default").Watch(bg, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cms.Stop()

	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	var stderr lockedBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--kubeconfig", r.KubeconfigPath, "--leader-elect", "--leader-elect-namespace", "default", "--leader-elect-lease", "bph"}, &stderr, false)
	}()
	holder := func(ev watch.Event) string {
		l, ok := ev.Object.(*coordinationv1.Lease)
		if !ok {
			t.Fatalf("lease watch: %s %#v; output:\n%s", ev.Type, ev.Object, stderr.String())
		}
		if l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	deadline := time.After(20 * time.Second)
	var leader string
	for leader == "" {
		select {
		case ev := <-leases.ResultChan():
			leader = holder(ev)
		case <-deadline:
			t.Fatalf("no Lease taken within 20s; output:\n%s", stderr.String())
		}
	}

	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": v1alpha1.Kind,
		"metadata": map[string]any{"name": "led"},
		"spec":     map[string]any{"replicas": int64(1), "version": "1", "config": map[string]any{"k": "v"}},
	}}
	if _, err := dyn.Resource(v1alpha1.Resource).Namespace("default").Create(bg, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for rendered := false; !rendered; {
		select {
		case ev := <-cms.ResultChan():
			cm, ok := ev.Object.(*corev1.ConfigMap)
			rendered = ok && cm.Name == "led-config" && cm.Data["k"] == "v"
		case <-deadline:
			t.Fatalf("the leader rendered no ConfigMap within 20s; output:\n%s", stderr.String())
		}
	}

	cancel()
	select {
	case c := <-code:
		if c != exitOK {
			t.Errorf("exit %d after its context ended, want 0; output:\n%s", c, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10s after its context ended")
	}
	for released := false; !released; {
		select {
		case ev := <-leases.ResultChan():
			released = holder(ev) == ""
		case <-time.After(10 * time.Second):
			t.Fatalf("Lease held by %s not released at shutdown", leader)
		}
	}
}

// TestRunWithNamespaceWatchesAndReconcilesOnlyThatNamespace: with
// --namespace team the operator's every watch is confined to team (the
// server's list of open watches says so), it renders team's Bellerophon,
// and it never touched one in another namespace (no finalizer on it).
func TestRunWithNamespaceWatchesAndReconcilesOnlyThatNamespace(t *testing.T) {
	dir := t.TempDir()
	sctx, stopServe := context.WithCancel(context.Background())
	defer stopServe()
	r, err := serve.Serve(sctx, serve.Options{
		KubeconfigPath: filepath.Join(dir, "kubeconfig"),
		CRDFiles:       []string{writeFile(t, dir, "crd.yaml", string(config.CRDManifest))},
	})
	if err != nil {
		t.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(r.RESTConfig())
	dyn := dynamic.NewForConfigOrDie(r.RESTConfig())
	bg := context.Background()
	cms, err := kube.CoreV1().ConfigMaps("").Watch(bg, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cms.Stop()
	for _, ns := range []string{"other", "team"} {
		// serve refuses creates in a missing namespace, as kube-apiserver does.
		if _, err := kube.CoreV1().Namespaces().Create(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": v1alpha1.Kind,
			"metadata": map[string]any{"name": "app"},
			"spec":     map[string]any{"replicas": int64(0), "version": "1", "config": map[string]any{"ns": ns}},
		}}
		if _, err := dyn.Resource(v1alpha1.Resource).Namespace(ns).Create(bg, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	var stderr lockedBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--kubeconfig", r.KubeconfigPath, "--namespace", "team"}, &stderr, false)
	}()
	deadline := time.After(20 * time.Second)
	for rendered := false; !rendered; {
		select {
		case ev := <-cms.ResultChan():
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if ok && cm.Name == "app-config" && cm.Namespace != "team" {
				t.Fatalf("rendered %s/%s outside --namespace team", cm.Namespace, cm.Name)
			}
			rendered = ok && cm.Name == "app-config"
		case <-deadline:
			t.Fatalf("team/app not rendered within 20s; output:\n%s", stderr.String())
		}
	}
	watches := 0
	for _, w := range r.API.Watchers() {
		if w.Client != "bellerophon" {
			continue
		}
		watches++
		if w.Namespace != "team" {
			t.Errorf("operator watch of %s in namespace %q, want team", w.Resource.Resource, w.Namespace)
		}
	}
	if watches < 3 {
		t.Errorf("operator has %d open watches, want one per informer (3)", watches)
	}
	other, err := dyn.Resource(v1alpha1.Resource).Namespace("other").Get(bg, "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f := other.GetFinalizers(); len(f) != 0 {
		t.Errorf("other/app got finalizers %v from an operator confined to team", f)
	}
	cancel()
	if c := <-code; c != exitOK {
		t.Errorf("exit %d, want 0; output:\n%s", c, stderr.String())
	}
}
