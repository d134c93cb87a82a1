package fakeapi_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/fakeapi"
)

// A real SharedIndexInformer on the server: it syncs through WatchList and
// its cache holds the server's objects with the server's resourceVersions.
func ExampleClient_ListerWatcher() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := fakeapi.NewServer(fakeapi.Options{})
	defer srv.Close()
	c := srv.Client("example")
	configmaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	_, _ = c.Create(ctx, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "",
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{})
	_, _ = c.Create(ctx, configmaps, "demo", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}, metav1.CreateOptions{})

	inf := cache.NewSharedIndexInformer(c.ListerWatcher(configmaps, "demo"), &corev1.ConfigMap{}, 0, cache.Indexers{})
	go inf.RunWithContext(ctx)
	cache.WaitFor(ctx, "configmaps", inf.HasSyncedChecker())

	obj, _, _ := inf.GetStore().GetByKey("demo/settings")
	fmt.Println("cached demo/settings at resourceVersion", obj.(*corev1.ConfigMap).ResourceVersion)
	fmt.Println("server at resourceVersion", srv.ResourceVersion())
	// Output:
	// cached demo/settings at resourceVersion 3
	// server at resourceVersion 3
}
