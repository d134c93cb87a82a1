package http_test

import (
	"context"
	"testing"
	"testing/synctest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/fakeapi"
)

// TestMetadataClientAndInformerOverHTTPSeePartialObjectMetadata: client-go's
// metadata client (as=PartialObjectMetadata[List], protobuf first) gets,
// lists and watches built-ins and custom resources as metadata only, and a
// metadata informer syncs through WatchList.
func TestMetadataClientAndInformerOverHTTPSeePartialObjectMetadata(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		cs := e.clientset(t, "setup")
		ctx := context.Background()
		mustNamespace(t, cs, "a")
		mustCM(t, cs, "a", "one", map[string]string{"k": "v"})
		dc, err := metadata.NewForConfig(e.pipe.RESTConfig("metadata"))
		if err != nil {
			t.Fatal(err)
		}
		m, err := dc.Resource(cmGVR).Namespace("a").Get(ctx, "one", metav1.GetOptions{})
		if err != nil || m.Name != "one" || m.UID == "" {
			t.Fatalf("metadata get = %+v, %v; want one's metadata", m, err)
		}
		list, err := dc.Resource(cmGVR).List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) != 1 || list.ResourceVersion == "" {
			t.Fatalf("metadata list = %+v, %v; want one item and a resourceVersion", list, err)
		}

		w, err := dc.Resource(fooGVR).Namespace("a").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		foo := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Foo", "metadata": map[string]any{"name": "f", "namespace": "a"}}}
		if _, err := e.srv.Client("setup").Create(ctx, fooGVR, "a", foo, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ev := next(t, w)
		if pm, ok := ev.Object.(*metav1.PartialObjectMetadata); ev.Type != watch.Added || !ok || pm.Name != "f" {
			t.Fatalf("metadata watch of a CRD = %s %#v, want ADDED f as PartialObjectMetadata", ev.Type, ev.Object)
		}

		ictx, cancel := context.WithCancel(t.Context())
		defer cancel()
		inf := metadatainformer.NewSharedInformerFactory(dc, 0).ForResource(cmGVR).Informer()
		go inf.RunWithContext(ictx)
		if !cache.WaitFor(ictx, "metadata informer", inf.HasSyncedChecker()) {
			t.Fatal("metadata informer did not sync")
		}
		if got := keys(inf); !equal(got, []string{"a/one"}) {
			t.Errorf("metadata informer cache = %v, want [a/one]", got)
		}
	})
}
