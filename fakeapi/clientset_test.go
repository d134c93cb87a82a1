package fakeapi_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/fakeapi"
)

// TestClientsetSwapInForFakeNewClientset is written as a user of
// fake.NewClientset writes tests; the only cachelab line is the constructor.
// The user gets real resourceVersions, conflicts, a WatchList informer, and
// a delete between list and watch that is not lost (k/k#141528).
func TestClientsetSwapInForFakeNewClientset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Was: cs := fake.NewClientset(...)
		cs := fakeapi.NewClientset(
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "b"}},
		)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		cms := cs.CoreV1().ConfigMaps("default")

		list, err := cms.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if list.ResourceVersion == "" || len(list.Items) != 2 {
			t.Fatalf("list rv %q, %d items; want a resourceVersion and 2 items", list.ResourceVersion, len(list.Items))
		}
		if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		ev := <-w.ResultChan()
		if cm, _ := ev.Object.(*corev1.ConfigMap); ev.Type != watch.Deleted || cm == nil || cm.Name != "a" {
			t.Errorf("first event from the list's resourceVersion = %s %v, want DELETED a", ev.Type, ev.Object)
		}
		w.Stop()

		b, err := cms.Get(ctx, "b", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b.Data = map[string]string{"k": "v"}
		if _, err := cms.Update(ctx, b, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cms.Update(ctx, b, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Errorf("update from a stale copy: err = %v, want 409 Conflict", err)
		}

		factory := informers.NewSharedInformerFactory(cs, 0)
		inf := factory.Core().V1().ConfigMaps().Informer()
		factory.Start(ctx.Done())
		if !cache.WaitFor(ctx, "configmaps", inf.HasSyncedChecker()) {
			t.Fatal("informer did not sync")
		}
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		lister := factory.Core().V1().ConfigMaps().Lister()
		got, _ := lister.ConfigMaps("default").List(everything())
		var names []string
		for _, cm := range got {
			names = append(names, cm.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"b", "c"}) {
			t.Errorf("lister = %v, want [b c]", names)
		}
		var watchList bool
		for _, a := range cs.Actions() {
			if wa, ok := a.(clienttesting.WatchActionImpl); ok && wa.ListOptions.SendInitialEvents != nil && *wa.ListOptions.SendInitialEvents {
				watchList = true
			}
		}
		if !watchList {
			t.Errorf("the informer did not use WatchList; actions: %v", cs.Actions())
		}
		cancel()
		factory.Shutdown()
	})
}

// TestFakeClientsetLosesDeleteBetweenListAndWatch pins the defect the
// swap-in fixes (k/k#141528, client-go v0.37.2): the same calls on
// fake.NewClientset replay nothing of the delete.
func TestFakeClientsetLosesDeleteBetweenListAndWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset(
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}},
		)
		cms := cs.CoreV1().ConfigMaps("default")
		list, err := cms.List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := cms.Delete(t.Context(), "a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		w, err := cms.Watch(t.Context(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		select {
		case ev := <-w.ResultChan():
			t.Logf("the fake now replays %s: k/k#141528 may be fixed upstream", ev.Type)
		default: // the delete is lost
		}
		w.Stop()
	})
}

// TestDynamicClientServesCRDsAsUnstructured: a CRD registered at run time is
// served to a dynamic client and a dynamic informer (WatchList) as
// unstructured objects with status subresource semantics.
func TestDynamicClientServesCRDsAsUnstructured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, log := newServer(t, fakeapi.Options{})
		gvr := schema.GroupVersionResource{Group: "cachelab.dev", Version: "v1", Resource: "bellerophons"}
		if err := s.RegisterCRD(fakeapi.ResourceInfo{GVR: gvr, Kind: "Bellerophon", ListKind: "BellerophonList", Namespaced: true, HasStatus: true}); err != nil {
			t.Fatal(err)
		}
		c := s.Client("test")
		mustNamespace(t, c, "a")
		dc := c.Dynamic()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cachelab.dev/v1", "kind": "Bellerophon",
			"metadata": map[string]any{"name": "b1", "namespace": "a"},
			"spec":     map[string]any{"replicas": int64(2)},
		}}
		created, err := dc.Resource(gvr).Namespace("a").Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if created.GetUID() == "" || created.GetResourceVersion() == "" {
			t.Errorf("created object has no uid/resourceVersion: %v", created.Object["metadata"])
		}

		factory := dynamicinformer.NewDynamicSharedInformerFactory(dc, 0)
		inf := factory.ForResource(gvr).Informer()
		factory.Start(ctx.Done())
		if !cache.WaitFor(ctx, "bellerophons", inf.HasSyncedChecker()) {
			t.Fatal("dynamic informer did not sync")
		}
		created.Object["status"] = map[string]any{"ready": true}
		if _, err := dc.Resource(gvr).Namespace("a").UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		item, exists, err := inf.GetStore().GetByKey("a/b1")
		if err != nil || !exists {
			t.Fatalf("b1 not in the dynamic informer's cache: %v", err)
		}
		u := item.(*unstructured.Unstructured)
		if ready, _, _ := unstructured.NestedBool(u.Object, "status", "ready"); !ready {
			t.Errorf("cached b1 status = %v, want ready", u.Object["status"])
		}
		if sent := watchRequests(log); len(sent) == 0 || !sent[0].Request.SendInitialEvents {
			t.Errorf("dynamic informer did not sync through WatchList: %v", summarize(sent))
		}
		// A built-in through the dynamic client is unstructured too.
		pods, err := dc.Resource(podsGVR).Namespace("a").List(ctx, metav1.ListOptions{})
		if err != nil || pods.GetResourceVersion() == "" {
			t.Errorf("dynamic list of pods: %v, rv %q", err, pods.GetResourceVersion())
		}
		cancel()
		factory.Shutdown()
		time.Sleep(time.Second)
	})
}

// TestDynamicClientListsCRDsRegisteredLaterAndUnknownResources: a dynamic
// client made before a CRD is registered lists it, and an unknown resource
// is a 404, not the dynamic fake's panic.
func TestDynamicClientListsCRDsRegisteredLaterAndUnknownResources(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newServer(t, fakeapi.Options{})
		c := s.Client("test")
		mustNamespace(t, c, "a")
		dc := c.Dynamic()
		gvr := schema.GroupVersionResource{Group: "cachelab.dev", Version: "v1", Resource: "widgets"}
		if _, err := dc.Resource(gvr).Namespace("a").List(t.Context(), metav1.ListOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("list of an unserved resource: err = %v, want 404", err)
		}
		if err := s.RegisterCRD(fakeapi.ResourceInfo{GVR: gvr, Kind: "Widget", ListKind: "WidgetList", Namespaced: true}); err != nil {
			t.Fatal(err)
		}
		w := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cachelab.dev/v1", "kind": "Widget", "metadata": map[string]any{"name": "w1"},
		}}
		if _, err := dc.Resource(gvr).Namespace("a").Create(t.Context(), w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		list, err := dc.Resource(gvr).Namespace("a").List(t.Context(), metav1.ListOptions{})
		if err != nil || len(list.Items) != 1 || list.Items[0].GetName() != "w1" || list.GetResourceVersion() == "" {
			t.Errorf("list = %v, %v; want w1 with a resourceVersion", list, err)
		}
	})
}

// TestObjectTrackerServesClientGoObjectReaction: the tracker plugged into
// client-go's own testing.ObjectReaction gives a fake clientset real
// resourceVersions, patches and 404s.
func TestObjectTrackerServesClientGoObjectReaction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tracker := fakeapi.NewServer(fakeapi.Options{}).Client("user").ObjectTracker()
		cs := fake.NewSimpleClientset()
		cs.PrependReactor("*", "*", clienttesting.ObjectReaction(tracker))
		ctx := t.Context()
		if err := tracker.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}}); err != nil {
			t.Fatal(err)
		}
		cms := cs.CoreV1().ConfigMaps("default")
		a, err := cms.Get(ctx, "a", metav1.GetOptions{})
		if err != nil || a.ResourceVersion == "" || a.UID == "" {
			t.Fatalf("get = %v, %v; want a stored object with uid and resourceVersion", a, err)
		}
		patched, err := cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"k":"v"}}`), metav1.PatchOptions{})
		if err != nil || patched.Data["k"] != "v" || patched.ResourceVersion == a.ResourceVersion {
			t.Errorf("patch = %v, %v; want data k=v at a new resourceVersion", patched, err)
		}
		if _, err := cms.Update(ctx, a, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Errorf("update of the stale copy: err = %v, want 409", err)
		}
		if err := cms.Delete(ctx, "missing", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("delete missing: err = %v, want 404", err)
		}
	})
}

// TestTypedObjectsComeWithoutTypeMetaAsClientGoDecodesThem: like client-go's
// typed clients, the server's typed answers and watch events carry no
// apiVersion/kind, while the dynamic client's unstructured ones do.
func TestTypedObjectsComeWithoutTypeMetaAsClientGoDecodesThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newServer(t, fakeapi.Options{})
		c := s.Client("test")
		mustNamespace(t, c, "a")
		w, err := c.Watch(t.Context(), cmGVR, "a", metav1.ListOptions{ResourceVersion: itoa(s.ResourceVersion())})
		if err != nil {
			t.Fatal(err)
		}
		created := mustCreateCM(t, c, "a", "x", nil)
		ev := <-w.ResultChan()
		w.Stop()
		list, err := c.List(t.Context(), cmGVR, "a", metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		typed := map[string]metav1.TypeMeta{
			"create": created.TypeMeta,
			"watch":  ev.Object.(*corev1.ConfigMap).TypeMeta,
			"list":   list.(*corev1.ConfigMapList).TypeMeta,
			"item":   list.(*corev1.ConfigMapList).Items[0].TypeMeta,
		}
		for what, tm := range typed {
			if tm != (metav1.TypeMeta{}) {
				t.Errorf("%s: TypeMeta = %+v, want empty", what, tm)
			}
		}
		u, err := c.Dynamic().Resource(cmGVR).Namespace("a").Get(t.Context(), "x", metav1.GetOptions{})
		if err != nil || u.GetAPIVersion() != "v1" || u.GetKind() != "ConfigMap" {
			t.Errorf("dynamic get = %v, %v; want apiVersion v1, kind ConfigMap", u, err)
		}
	})
}
