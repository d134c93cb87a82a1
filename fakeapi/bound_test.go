package fakeapi_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/fakeapi"
)

// A client bound to a process's context sends nothing once the process
// ended, even from a goroutine that passes another context.
func TestClientBoundToAnEndedProcessSendsNothing(t *testing.T) {
	srv := fakeapi.NewServer(fakeapi.Options{})
	life, end := context.WithCancel(context.Background())
	c := srv.Client("ctrl").BoundTo(life)
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cm := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	}
	if _, err := c.Create(context.TODO(), gvr, "default", cm("a"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create while alive: %v", err)
	}
	end()
	rv := srv.ResourceVersion()
	if _, err := c.Create(context.TODO(), gvr, "default", cm("b"), metav1.CreateOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("create after the end: %v, want context.Canceled", err)
	}
	if srv.ResourceVersion() != rv {
		t.Fatalf("the ended process's create reached the store (rv %d -> %d)", rv, srv.ResourceVersion())
	}
	// The unbound client of the same name still works (a restarted
	// process gets a new binding).
	if _, err := srv.Client("ctrl").Create(context.TODO(), gvr, "default", cm("b"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("unbound client: %v", err)
	}
}
