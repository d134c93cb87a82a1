package http_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/cachelab/cachelab/fakeapi"
)

// An autoscaling/v1 client reads and writes the autoscaling/v2
// HorizontalPodAutoscalers (one storage, converted as kube-apiserver
// converts them): what v1 has no field for rides in annotations and
// survives a v1 read-modify-write; a v1 watch sees v2 writes; discovery
// prefers v2, so controller-runtime maps the kind to v2.
func TestAutoscalingV1HPAsAreTheV2StorageConverted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, fakeapi.Options{})
		cs := e.clientset(t, "hpa", func(c *rest.Config) {
			c.ContentType = runtime.ContentTypeProtobuf
			c.AcceptContentTypes = runtime.ContentTypeProtobuf
		})
		mem := resource.MustParse("500Mi")
		v2 := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "api"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "api"}, MaxReplicas: 5,
				Metrics: []autoscalingv2.MetricSpec{
					{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
						Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](70)}}},
					{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
						Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &mem}}},
				}}}
		if _, err := cs.AutoscalingV2().HorizontalPodAutoscalers("ns").Create(ctx, v2, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		v1c := cs.AutoscalingV1().HorizontalPodAutoscalers("ns")
		got, err := v1c.Get(ctx, "api", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get as autoscaling/v1: %v", err)
		}
		if p := got.Spec.TargetCPUUtilizationPercentage; p == nil || *p != 70 || got.Spec.MaxReplicas != 5 {
			t.Errorf("v1 spec = %+v; want targetCPUUtilizationPercentage 70, maxReplicas 5", got.Spec)
		}
		const metrics = `[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"500Mi"}}]`
		if a := got.Annotations["autoscaling.alpha.kubernetes.io/metrics"]; a != metrics {
			t.Errorf("metrics annotation = %q, want %q", a, metrics)
		}
		list, err := v1c.List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("list as v1: %v items, %v", len(list.Items), err)
		}
		w, err := v1c.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		got.Spec.MaxReplicas = 8
		if _, err := v1c.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update as v1: %v", err)
		}
		select {
		case ev := <-w.ResultChan():
			h, ok := ev.Object.(*autoscalingv1.HorizontalPodAutoscaler)
			if ev.Type != watch.Modified || !ok || h.Spec.MaxReplicas != 8 {
				t.Errorf("v1 watch event %s %T; want MODIFIED v1 HPA with maxReplicas 8", ev.Type, ev.Object)
			}
		case <-time.After(time.Minute):
			t.Fatal("no event on the autoscaling/v1 watch")
		}
		after, err := cs.AutoscalingV2().HorizontalPodAutoscalers("ns").Get(ctx, "api", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(after.Spec.Metrics) != 2 || after.Spec.Metrics[0].Resource.Name != corev1.ResourceMemory || after.Spec.MaxReplicas != 8 || len(after.Annotations) != 0 {
			t.Errorf("v2 after a v1 update: metrics %+v maxReplicas %d annotations %v; want memory then cpu, 8, none", after.Spec.Metrics, after.Spec.MaxReplicas, after.Annotations)
		}
		if _, err := v1c.Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "bad"},
			Spec: autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "x"}}}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("v1 create with maxReplicas 0: %v; want 422 Invalid", err)
		}

		g, err := cs.Discovery().ServerGroups()
		if err != nil {
			t.Fatal(err)
		}
		for _, grp := range g.Groups {
			if grp.Name == "autoscaling" && (grp.PreferredVersion.Version != "v2" || len(grp.Versions) != 2 || grp.Versions[0].Version != "v2") {
				t.Errorf("autoscaling group = %+v; want versions v2, v1 with v2 preferred", grp)
			}
		}
		cfg := e.pipe.RESTConfig("cr")
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
		if err != nil {
			t.Fatal(err)
		}
		m, err := mapper.RESTMapping(schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"})
		if err != nil || m.Resource.Version != "v2" {
			t.Errorf("RESTMapping(HorizontalPodAutoscaler) = %v, %v; want autoscaling/v2", m, err)
		}
	})
}

// A CRD with a scale subresource serves /scale: client-go's scale client
// reads spec and status replicas and the selector from the CRD's paths,
// an update writes spec.replicas (generation bumps), and a negative
// replica count is 422 on the custom resource.
func TestCRDScaleSubresourceIsServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, fakeapi.Options{})
		gvr := schema.GroupVersionResource{Group: "cachelab.dev", Version: "v1", Resource: "replicated"}
		err := e.srv.RegisterCRDManifest([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: replicated.cachelab.dev}
spec:
  group: cachelab.dev
  scope: Namespaced
  names: {kind: Replicated, plural: replicated}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {replicas: {type: integer}}}
          status: {type: object, properties: {replicas: {type: integer}, selector: {type: string}}}
`))
		if err != nil {
			t.Fatal(err)
		}
		cfg := e.pipe.RESTConfig("scale")
		dc, err := dynamic.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := dc.Resource(gvr).Namespace("ns")
		if _, err := r.Create(ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cachelab.dev/v1", "kind": "Replicated",
			"metadata": map[string]any{"name": "r"}, "spec": map[string]any{"replicas": int64(2)}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Patch(ctx, "r", "application/merge-patch+json", []byte(`{"status":{"replicas":2,"selector":"app=r"}}`), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatal(err)
		}
		sc, err := r.Get(ctx, "r", metav1.GetOptions{}, "scale")
		if err != nil {
			t.Fatalf("get scale: %v", err)
		}
		var scale autoscalingv1.Scale
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(sc.Object, &scale); err != nil {
			t.Fatal(err)
		}
		if scale.Spec.Replicas != 2 || scale.Status.Replicas != 2 || scale.Status.Selector != "app=r" {
			t.Errorf("scale = %+v; want spec 2, status 2, selector app=r", scale)
		}
		scale.Spec.Replicas = 5
		body, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(&scale)
		if _, err := r.Update(ctx, &unstructured.Unstructured{Object: body}, metav1.UpdateOptions{}, "scale"); err != nil {
			t.Fatalf("update scale: %v", err)
		}
		obj, err := r.Get(ctx, "r", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); n != 5 || obj.GetGeneration() != 2 {
			t.Errorf("after the scale update spec.replicas %d generation %d; want 5 and 2", n, obj.GetGeneration())
		}
		if _, err := r.Patch(ctx, "r", "application/merge-patch+json", []byte(`{"spec":{"replicas":-1}}`), metav1.PatchOptions{}, "scale"); !apierrors.IsInvalid(err) {
			t.Errorf("scale to -1: %v; want 422 Invalid", err)
		}
		list, err := e.clientset(t, "disco").Discovery().ServerResourcesForGroupVersion("cachelab.dev/v1")
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, res := range list.APIResources {
			found = found || res.Name == "replicated/scale"
		}
		if !found {
			t.Errorf("discovery of cachelab.dev/v1 lists no replicated/scale: %+v", list.APIResources)
		}
	})
}
