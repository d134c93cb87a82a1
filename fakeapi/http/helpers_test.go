package http_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/fakeapi/fakeapitest"
	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
)

var (
	cmGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	podGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	nsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	fooGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "foos"}
)

// env is a server served over an in-memory pipe.
type env struct {
	srv  *fakeapi.Server
	log  *fakeapitest.Log
	pipe *fakehttp.Pipe
}

// newEnv starts a server (with the Foo CRD registered) behind a pipe; the
// pipe is closed when the test ends. Call it inside the bubble.
func newEnv(t *testing.T, opts fakeapi.Options) *env {
	t.Helper()
	log := &fakeapitest.Log{}
	if opts.Observer == nil {
		opts.Observer = log
	}
	srv := fakeapi.NewServer(opts)
	if err := srv.RegisterCRD(fakeapi.ResourceInfo{GVR: fooGVR, Kind: "Foo", ListKind: "FooList", Namespaced: true, HasStatus: true}); err != nil {
		t.Fatal(err)
	}
	p := fakehttp.NewPipe(fakehttp.NewHandler(srv, fakehttp.Options{}))
	t.Cleanup(func() {
		srv.Close()
		p.Close()
	})
	return &env{srv: srv, log: log, pipe: p}
}

// clientset returns a typed clientset over the pipe, named client.
func (e *env) clientset(t *testing.T, client string, mod ...func(*rest.Config)) kubernetes.Interface {
	t.Helper()
	cfg := e.pipe.RESTConfig(client)
	for _, m := range mod {
		m(cfg)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func mustNamespace(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

func cm(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func mustCM(t *testing.T, cs kubernetes.Interface, ns, name string, data map[string]string) *corev1.ConfigMap {
	t.Helper()
	out, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), cm(ns, name, data), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap %s/%s: %v", ns, name, err)
	}
	return out
}

func pod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}
