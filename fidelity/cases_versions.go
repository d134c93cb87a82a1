package fidelity

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// HorizontalPodAutoscalersV1 is the autoscaling/v1 version of
// HorizontalPodAutoscalers: one storage, served converted.
var HorizontalPodAutoscalersV1 = Resource{GVR: schema.GroupVersionResource{Group: "autoscaling", Version: "v1", Resource: "horizontalpodautoscalers"}, Namespaced: true}

// GroupVersions notes the versions of group as discovery lists them: the
// legacy /apis/GROUP document (versions in order, preferred version) and
// aggregated discovery's order.
func (e *Env) GroupVersions(step, group string) {
	var notes []string
	raw, err := e.rc.Get().AbsPath("/apis/"+group).MaxRetries(0).SetHeader("Accept", "application/json").Do(e.ctx).Raw()
	if err != nil {
		notes = append(notes, "legacy: "+err.Error())
	} else {
		var g metav1.APIGroup
		if err := json.Unmarshal(raw, &g); err != nil {
			notes = append(notes, "legacy: not an APIGroup: "+err.Error())
		} else {
			var vs []string
			for _, v := range g.Versions {
				vs = append(vs, v.Version)
			}
			notes = append(notes, fmt.Sprintf("legacy versions=[%s] preferred=%s", strings.Join(vs, " "), g.PreferredVersion.Version))
		}
	}
	raw, err = e.rc.Get().AbsPath("/apis").MaxRetries(0).
		SetHeader("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList").Do(e.ctx).Raw()
	var doc apidiscoveryv2.APIGroupDiscoveryList
	if err == nil {
		err = json.Unmarshal(raw, &doc)
	}
	if err != nil {
		notes = append(notes, "aggregated: "+err.Error())
	}
	for _, g := range doc.Items {
		if g.Name != group {
			continue
		}
		var vs []string
		for _, v := range g.Versions {
			var rs []string
			for _, r := range v.Resources {
				rs = append(rs, r.Resource)
			}
			vs = append(vs, v.Version+"("+strings.Join(rs, " ")+")")
		}
		notes = append(notes, "aggregated versions=["+strings.Join(vs, " ")+"]")
	}
	e.Note(step, strings.Join(notes, "; "))
}

// scale sends method to name's scale subresource (a GET when body is nil
// and method is GET).
func (e *Env) scale(step string, r Resource, method, name string, body any) Result {
	return e.request(step, method, r.path(e.Namespace, name, "scale"), nil, "", body)
}

// hpaWithMetrics is an autoscaling/v2 HPA with what autoscaling/v1 has no
// field for: a second metric and a behavior.
func hpaWithMetrics(name string) *autoscalingv2.HorizontalPodAutoscaler {
	h := hpa(name)
	mem := resource.MustParse("500Mi")
	h.Spec.Metrics = []autoscalingv2.MetricSpec{
		{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(int32(70))}}},
		{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &mem}}},
	}
	h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr(int32(60)),
		Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 50, PeriodSeconds: 30}}}}
	return h
}

// scalableCRD is widgetCRD with a scale subresource.
func scalableCRD(group string) map[string]any {
	crd := widgetCRD(group)
	crd["metadata"] = map[string]any{"name": "replicated." + group}
	spec := crd["spec"].(map[string]any)
	spec["names"] = map[string]any{"kind": "Replicated", "plural": "replicated"}
	spec["versions"] = []any{map[string]any{"name": "v1", "served": true, "storage": true,
		"subresources": map[string]any{"status": map[string]any{}, "scale": map[string]any{
			"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}},
		"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
			"spec": map[string]any{"type": "object", "properties": map[string]any{"replicas": map[string]any{"type": "integer", "minimum": int64(0)}}},
			"status": map[string]any{"type": "object", "properties": map[string]any{
				"replicas": map[string]any{"type": "integer"}, "selector": map[string]any{"type": "string"}}},
		}}}}}
	return crd
}

var versionCases = []Case{
	{Name: "hpa-autoscaling-v1-round-trip", Doc: "autoscaling/v1 HPAs are the autoscaling/v2 ones converted: what v1 has no field for (other metrics, current metrics, behavior, conditions) rides in annotations, an update through v1 keeps it, a v1 create gets the v2 defaults (CPU 80%), validation and watch as v2.", Run: func(e *Env) {
		created := e.Create("create api as v2", HorizontalPodAutoscalers, hpaWithMetrics("api"))
		e.Get("get api as v1", HorizontalPodAutoscalersV1, "api")
		st := with(created.Body, map[string]any{
			"currentReplicas": int64(2), "desiredReplicas": int64(3),
			"currentMetrics": []any{map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu", "current": map[string]any{"averageUtilization": int64(90), "averageValue": "200m"}}}},
			"conditions":     []any{map[string]any{"type": "AbleToScale", "status": "True", "reason": "SucceededRescale", "message": "scaled", "lastTransitionTime": "2026-01-01T00:00:00Z"}},
		}, "status")
		e.UpdateStatus("status as v2", HorizontalPodAutoscalers, "api", st)
		asV1 := e.Get("get api as v1 with status", HorizontalPodAutoscalersV1, "api")
		e.Update("update api as v1", HorizontalPodAutoscalersV1, "api", with(asV1.Body, int64(8), "spec", "maxReplicas"))
		e.Get("get api as v2 after", HorizontalPodAutoscalers, "api")
		legacy := map[string]any{"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": map[string]any{"name": "legacy"},
			"spec": map[string]any{"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "legacy"}, "maxReplicas": int64(4), "targetCPUUtilizationPercentage": int64(60)}}
		e.Create("create legacy as v1", HorizontalPodAutoscalersV1, legacy)
		e.Get("get legacy as v2", HorizontalPodAutoscalers, "legacy")
		plain := with(with(legacy, "plain", "metadata", "name"), nil, "spec", "targetCPUUtilizationPercentage")
		e.Create("create plain as v1 without a target", HorizontalPodAutoscalersV1, plain)
		e.Get("get plain as v2", HorizontalPodAutoscalers, "plain")
		e.Patch("merge-patch plain as v1", HorizontalPodAutoscalersV1, "plain", "", types.MergePatchType, `{"spec":{"maxReplicas":6}}`)
		e.Create("create bad as v1", HorizontalPodAutoscalersV1, with(with(legacy, "bad", "metadata", "name"), int64(0), "spec", "maxReplicas"))
		l := e.List("list as v1", HorizontalPodAutoscalersV1, metav1.ListOptions{})
		w := e.Watch("watch as v1", HorizontalPodAutoscalersV1, metav1.ListOptions{ResourceVersion: l.RV()})
		e.Patch("merge-patch legacy as v2", HorizontalPodAutoscalers, "legacy", "", types.MergePatchType, `{"spec":{"minReplicas":2}}`)
		e.Delete("delete plain as v1", HorizontalPodAutoscalersV1, "plain", metav1.DeleteOptions{})
		e.Collect("events", w, 2)
		e.GroupVersions("autoscaling versions", "autoscaling")
	}},
	{Name: "crd-scale-subresource", Doc: "A custom resource whose CRD has a scale subresource serves /scale (autoscaling/v1 Scale from specReplicasPath, statusReplicasPath and labelSelectorPath): get, update, patch, negative replicas, discovery.", Run: func(e *Env) {
		e.Clean(allocated())
		group := e.Namespace + ".cachelab.dev"
		name := "replicated." + group
		e.Create("create the CRD", CustomResourceDefinitions, scalableCRD(group))
		e.WaitUntil(CustomResourceDefinitions, name, established)
		res := Resource{GVR: schema.GroupVersionResource{Group: group, Version: "v1", Resource: "replicated"}, Namespaced: true}
		e.waitServed(res)
		e.Create("create r", res, map[string]any{"apiVersion": group + "/v1", "kind": "Replicated", "metadata": map[string]any{"name": "r"}, "spec": map[string]any{"replicas": int64(2)}})
		sc := e.scale("get scale", res, http.MethodGet, "r", nil)
		e.scale("update scale to 5", res, http.MethodPut, "r", with(sc.Body, int64(5), "spec", "replicas"))
		e.Get("get r after the scale update", res, "r")
		e.Patch("merge-patch scale to 3", res, "r", "scale", types.MergePatchType, `{"spec":{"replicas":3}}`)
		e.Patch("status", res, "r", "status", types.MergePatchType, `{"status":{"replicas":3,"selector":"app=r"}}`)
		e.scale("get scale after status", res, http.MethodGet, "r", nil)
		e.scale("update scale with a stale resourceVersion", res, http.MethodPut, "r", with(sc.Body, int64(4), "spec", "replicas"))
		e.Patch("merge-patch scale to -1", res, "r", "scale", types.MergePatchType, `{"spec":{"replicas":-1}}`)
		e.Create("create s without replicas", res, map[string]any{"apiVersion": group + "/v1", "kind": "Replicated", "metadata": map[string]any{"name": "s"}, "spec": map[string]any{}})
		e.scale("get scale of s", res, http.MethodGet, "s", nil)
		e.scale("get scale of missing", res, http.MethodGet, "missing", nil)
		e.Discovery("discovery", "/apis", group, "replicated")
		e.Delete("delete the CRD", CustomResourceDefinitions, name, metav1.DeleteOptions{})
		e.WaitGone(CustomResourceDefinitions, name)
	}},
	{Name: "crd-validation-beyond-the-subset", Doc: "CRDs that only apiextensions' full validation refuses: a printer column of an unknown type, a Webhook conversion without its webhook.", Run: func(e *Env) {
		group := e.Namespace + ".cachelab.dev"
		crd := widgetCRD(group)
		versions := crd["spec"].(map[string]any)["versions"].([]any)
		v := versions[0].(map[string]any)
		col := map[string]any{"name": "Size", "type": "bogus", "jsonPath": ".spec.size"}
		bad := with(crd, []any{with(v, []any{col}, "additionalPrinterColumns")}, "spec", "versions")
		e.Create("create with a printer column of type bogus", CustomResourceDefinitions, bad)
		e.Create("create with a Webhook conversion and no webhook", CustomResourceDefinitions, with(crd, map[string]any{"strategy": "Webhook"}, "spec", "conversion"))
	}},
}

func init() { Cases = append(Cases, versionCases...) }
