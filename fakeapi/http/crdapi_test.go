package http_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/cachelab/cachelab/fakeapi"
)

var widgetGVR = schema.GroupVersionResource{Group: "run.example.com", Version: "v1", Resource: "widgets"}

// widgetCRD is a CRD an operator installs itself through the API.
func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.run.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "run.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget", Plural: "widgets"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"spec":   {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer", Minimum: ptr.To(0.0)}}},
					"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"seen": {Type: "integer"}}},
				}}}}},
		},
	}
}

func widget(name string, size int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "run.example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name, "namespace": "a"},
		"spec":     map[string]any{"size": size},
	}}
}

func condition(crd *apiextensionsv1.CustomResourceDefinition, typ apiextensionsv1.CustomResourceDefinitionConditionType) apiextensionsv1.ConditionStatus {
	for _, c := range crd.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

// TestCRDCreatedThroughTheAPIIsEstablishedServedAndRemovedLive: an
// operator creates its CRD through the API (apiextensions' own typed
// clientset, over HTTP): it becomes NamesAccepted and Established, its
// resource appears in discovery and is served with its schema (a widget
// of size -1 is 422), a watch on the CRD sees the controllers' status
// writes; deleting the CRD deletes its widgets and stops serving them
// (404), and the CRD is gone. An invalid CRD is refused with 422.
func TestCRDCreatedThroughTheAPIIsEstablishedServedAndRemovedLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		ctx := context.Background()
		cfg := e.pipe.RESTConfig("operator")
		ext := apiextensionsclient.NewForConfigOrDie(cfg)
		dyn := dynamic.NewForConfigOrDie(cfg)

		if _, err := dyn.Resource(widgetGVR).Namespace("a").List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("widgets before the CRD: %v, want 404", err)
		}
		w, err := ext.ApiextensionsV1().CustomResourceDefinitions().Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		created, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, widgetCRD(), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := created.Status.StoredVersions; len(got) != 1 || got[0] != "v1" {
			t.Errorf("create answered storedVersions %v, want [v1]", got)
		}
		if created.Spec.Names.ListKind != "WidgetList" || created.Spec.Names.Singular != "widget" || created.Spec.Conversion == nil {
			t.Errorf("apiextensions v1 defaults not applied: names %+v, conversion %v", created.Spec.Names, created.Spec.Conversion)
		}
		// The watch sees the create and the two controllers' writes.
		var types []string
		for len(types) < 3 {
			select {
			case ev := <-w.ResultChan():
				types = append(types, string(ev.Type))
			case <-time.After(10 * time.Second):
				t.Fatalf("watch events %v, want ADDED, MODIFIED, MODIFIED", types)
			}
		}
		got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "widgets.run.example.com", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if condition(got, apiextensionsv1.NamesAccepted) != apiextensionsv1.ConditionTrue || condition(got, apiextensionsv1.Established) != apiextensionsv1.ConditionTrue {
			t.Errorf("conditions %+v, want NamesAccepted and Established True", got.Status.Conditions)
		}
		if got.Status.AcceptedNames.Plural != "widgets" {
			t.Errorf("acceptedNames %+v", got.Status.AcceptedNames)
		}
		rl, err := discovery.NewDiscoveryClientForConfigOrDie(cfg).ServerResourcesForGroupVersion("run.example.com/v1")
		if err != nil || len(rl.APIResources) == 0 || rl.APIResources[0].Name != "widgets" {
			t.Errorf("discovery of run.example.com/v1: %v, %v", rl, err)
		}
		if _, err := dyn.Resource(widgetGVR).Namespace("a").Create(ctx, widget("w", 1), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create a widget: %v", err)
		}
		if _, err := dyn.Resource(widgetGVR).Namespace("a").Create(ctx, widget("bad", -1), metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("a widget of size -1: %v, want 422 from the CRD's schema", err)
		}

		if err := ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, "widgets.run.example.com", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "widgets.run.example.com", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the CRD after its delete: %v, want 404", err)
		}
		if _, err := dyn.Resource(widgetGVR).Namespace("a").Get(ctx, "w", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a widget after its CRD's delete: %v, want 404", err)
		}
		for _, r := range e.srv.Resources() {
			if r.GVR == widgetGVR {
				t.Error("widgets still served after the CRD's delete")
			}
		}

		bad := widgetCRD()
		bad.Name = "gadgets.run.example.com"
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("a CRD not named plural.group: %v, want 422", err)
		}
		bad = widgetCRD()
		bad.Spec.Versions[0].Storage = false
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("a CRD without a storage version: %v, want 422", err)
		}
	})
}

// widgetSizer is a reconciler of unstructured widgets: it writes
// status.seen = spec.size.
type widgetSizer struct{ c client.Client }

func (r widgetSizer) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(widgetGVR.GroupVersion().WithKind("Widget"))
	if err := r.c.Get(ctx, req.NamespacedName, w); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
	if seen, ok, _ := unstructured.NestedInt64(w.Object, "status", "seen"); ok && seen == size {
		return reconcile.Result{}, nil
	}
	_ = unstructured.SetNestedField(w.Object, size, "status", "seen")
	return reconcile.Result{}, r.c.Status().Update(ctx, w)
}

// TestControllerRuntimeWithAProtobufClientReconcilesACustomResource: a
// controller-runtime manager whose rest.Config asks for protobuf (as
// kube-controller-manager-style clients do) lists, watches and writes a
// custom resource of a CRD created through the API: the fake answers
// custom resources in JSON to a client that accepts both (as
// kube-apiserver does), built-ins in protobuf, and the version it reports
// is the emulated one, not client-go's unset v0.0.0-master.
func TestControllerRuntimeWithAProtobufClientReconcilesACustomResource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		ctx := context.Background()
		ext := apiextensionsclient.NewForConfigOrDie(e.pipe.RESTConfig("setup"))
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, widgetCRD(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		dyn := dynamic.NewForConfigOrDie(e.pipe.RESTConfig("setup"))
		if _, err := dyn.Resource(widgetGVR).Namespace("a").Create(ctx, widget("w", 3), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}

		pcfg := e.pipe.RESTConfig("manager")
		pcfg.ContentType = runtime.ContentTypeProtobuf
		pcfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
		v, err := discovery.NewDiscoveryClientForConfigOrDie(pcfg).ServerVersion()
		if err != nil || v.GitVersion == "" || v.GitVersion == "v0.0.0-master+$Format:%H$" || v.Major != "1" {
			t.Errorf("ServerVersion = %+v, %v; want the emulated release", v, err)
		}
		// A raw list asked in protobuf-or-JSON: JSON for the custom
		// resource, protobuf for a built-in.
		for _, c := range []struct {
			path, want string
		}{{"/apis/run.example.com/v1/namespaces/a/widgets", runtime.ContentTypeJSON}, {"/api/v1/namespaces/a/configmaps", runtime.ContentTypeProtobuf}} {
			rc, err := rest.UnversionedRESTClientFor(withCodecs(pcfg))
			if err != nil {
				t.Fatal(err)
			}
			res := rc.Get().AbsPath(c.path).SetHeader("Accept", pcfg.AcceptContentTypes).Do(ctx)
			var ct string
			res.ContentType(&ct)
			if err := res.Error(); err != nil || ct != c.want {
				t.Errorf("GET %s accepting protobuf then JSON: %q, %v; want %s", c.path, ct, err, c.want)
			}
		}

		mgr, err := ctrl.NewManager(pcfg, ctrl.Options{
			Metrics:                metricsserver.Options{BindAddress: "0"},
			HealthProbeBindAddress: "0",
			Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		})
		if err != nil {
			t.Fatal(err)
		}
		owned := &unstructured.Unstructured{}
		owned.SetGroupVersionKind(widgetGVR.GroupVersion().WithKind("Widget"))
		if err := ctrl.NewControllerManagedBy(mgr).For(owned).Complete(widgetSizer{c: mgr.GetClient()}); err != nil {
			t.Fatal(err)
		}
		mctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- mgr.Start(mctx) }()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		got, err := dyn.Resource(widgetGVR).Namespace("a").Get(ctx, "w", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if seen, _, _ := unstructured.NestedInt64(got.Object, "status", "seen"); seen != 3 {
			t.Errorf("status.seen = %d, want 3 (the manager never reconciled the widget)", seen)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager stopped with %v", err)
		}
	})
}

// withCodecs gives cfg the codecs an unversioned REST client needs.
func withCodecs(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	return c
}
