package store

import (
	"encoding/json"
	"fmt"
	"maps"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// The annotations autoscaling/v1 HorizontalPodAutoscalers carry what v1
// has no field for (k8s.io/kubernetes pkg/apis/autoscaling/annotations.go).
const (
	hpaMetricSpecsAnnotation       = "autoscaling.alpha.kubernetes.io/metrics"
	hpaMetricStatusesAnnotation    = "autoscaling.alpha.kubernetes.io/current-metrics"
	hpaConditionsAnnotation        = "autoscaling.alpha.kubernetes.io/conditions"
	hpaBehaviorAnnotation          = "autoscaling.alpha.kubernetes.io/behavior"
	hpaScaleDownToleranceAnnotaton = "autoscaling.alpha.kubernetes.io/scale-down-tolerance"
	hpaScaleUpToleranceAnnotation  = "autoscaling.alpha.kubernetes.io/scale-up-tolerance"
)

// dropHPARoundTripAnnotations is autoscaling's
// DropRoundTripHorizontalPodAutoscalerAnnotations: in without the
// round-trip annotations (a copy when it had any; v2 never stores them).
func dropHPARoundTripAnnotations(in map[string]string) map[string]string {
	keys := []string{hpaMetricSpecsAnnotation, hpaBehaviorAnnotation, hpaScaleDownToleranceAnnotaton,
		hpaScaleUpToleranceAnnotation, hpaMetricStatusesAnnotation, hpaConditionsAnnotation}
	has := false
	for _, k := range keys {
		_, ok := in[k]
		has = has || ok
	}
	if !has {
		return in
	}
	out := maps.Clone(in)
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

// hpaBehaviorInternal mirrors the internal (untagged) HPA behavior type that
// kube-apiserver marshals into the behavior annotation as it is: its JSON
// keys are the Go field names ("ScaleUp", "StabilizationWindowSeconds").
type hpaBehaviorInternal struct {
	ScaleUp   *hpaScalingRulesInternal
	ScaleDown *hpaScalingRulesInternal
}

type hpaScalingRulesInternal struct {
	StabilizationWindowSeconds *int32
	SelectPolicy               *autoscalingv2.ScalingPolicySelect
	Policies                   []hpaScalingPolicyInternal
	Tolerance                  *resource.Quantity
}

type hpaScalingPolicyInternal struct {
	Type          autoscalingv2.HPAScalingPolicyType
	Value         int32
	PeriodSeconds int32
}

func rulesToInternal(r *autoscalingv2.HPAScalingRules) *hpaScalingRulesInternal {
	if r == nil {
		return nil
	}
	out := &hpaScalingRulesInternal{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance}
	if r.Policies != nil { // an empty list stays one: "[]", not null
		out.Policies = make([]hpaScalingPolicyInternal, len(r.Policies))
	}
	for i, p := range r.Policies {
		out.Policies[i] = hpaScalingPolicyInternal(p)
	}
	return out
}

func rulesFromInternal(r *hpaScalingRulesInternal) *autoscalingv2.HPAScalingRules {
	if r == nil {
		return nil
	}
	out := &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance}
	if r.Policies != nil {
		out.Policies = make([]autoscalingv2.HPAScalingPolicy, len(r.Policies))
	}
	for i, p := range r.Policies {
		out.Policies[i] = autoscalingv2.HPAScalingPolicy(p)
	}
	return out
}

// isCPUUtilization is the metric autoscaling/v1 has a field for.
func isCPUUtilization(m autoscalingv2.MetricSpec) bool {
	return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU && m.Resource.Target.AverageUtilization != nil
}

// hpaV2ToV1 is kube-apiserver's conversion of a HorizontalPodAutoscaler
// from autoscaling/v2 (through the internal version) to autoscaling/v1
// (pkg/apis/autoscaling/v1/conversion.go): the CPU utilization target and
// current value become fields, every other metric, the current metrics,
// the behavior and the conditions go into annotations.
func hpaV2ToV1(in *autoscalingv2.HorizontalPodAutoscaler) (*autoscalingv1.HorizontalPodAutoscaler, error) {
	out := &autoscalingv1.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{Kind: "HorizontalPodAutoscaler", APIVersion: "autoscaling/v1"},
		ObjectMeta: *in.ObjectMeta.DeepCopy(),
	}
	out.Annotations = dropHPARoundTripAnnotations(out.Annotations)
	ref := in.Spec.ScaleTargetRef
	out.Spec.ScaleTargetRef = autoscalingv1.CrossVersionObjectReference{Kind: ref.Kind, Name: ref.Name, APIVersion: ref.APIVersion}
	if in.Spec.MinReplicas != nil {
		out.Spec.MinReplicas = ptr.To(*in.Spec.MinReplicas)
	}
	out.Spec.MaxReplicas = in.Spec.MaxReplicas
	var other []autoscalingv1.MetricSpec
	for _, m := range in.Spec.Metrics {
		if isCPUUtilization(m) {
			if out.Spec.TargetCPUUtilizationPercentage == nil {
				out.Spec.TargetCPUUtilizationPercentage = ptr.To(*m.Resource.Target.AverageUtilization)
			}
			continue
		}
		other = append(other, metricSpecToV1(m))
	}
	st := in.Status
	out.Status = autoscalingv1.HorizontalPodAutoscalerStatus{ObservedGeneration: st.ObservedGeneration, LastScaleTime: st.LastScaleTime.DeepCopy(),
		CurrentReplicas: st.CurrentReplicas, DesiredReplicas: st.DesiredReplicas}
	for _, m := range st.CurrentMetrics {
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU && m.Resource.Current.AverageUtilization != nil {
			out.Status.CurrentCPUUtilizationPercentage = ptr.To(*m.Resource.Current.AverageUtilization)
		}
	}
	set := func(key string, v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("autoscaling/v1 conversion: %s: %w", key, err)
		}
		out.Annotations = maps.Clone(out.Annotations)
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[key] = string(data)
		return nil
	}
	if len(other) > 0 {
		if err := set(hpaMetricSpecsAnnotation, other); err != nil {
			return nil, err
		}
	}
	if len(st.CurrentMetrics) > 0 {
		cur := make([]autoscalingv1.MetricStatus, len(st.CurrentMetrics))
		for i, m := range st.CurrentMetrics {
			cur[i] = metricStatusToV1(m)
		}
		if err := set(hpaMetricStatusesAnnotation, cur); err != nil {
			return nil, err
		}
	}
	if b := in.Spec.Behavior; b != nil {
		if err := set(hpaBehaviorAnnotation, hpaBehaviorInternal{ScaleUp: rulesToInternal(b.ScaleUp), ScaleDown: rulesToInternal(b.ScaleDown)}); err != nil {
			return nil, err
		}
	}
	if len(st.Conditions) > 0 {
		conds := make([]autoscalingv1.HorizontalPodAutoscalerCondition, len(st.Conditions))
		for i, c := range st.Conditions {
			conds[i] = autoscalingv1.HorizontalPodAutoscalerCondition{Type: autoscalingv1.HorizontalPodAutoscalerConditionType(c.Type),
				Status: c.Status, LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message, ObservedGeneration: c.ObservedGeneration}
		}
		if err := set(hpaConditionsAnnotation, conds); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// hpaV1ToV2 is kube-apiserver's conversion the other way: the v1 fields,
// then what the annotations hold (an annotation that does not parse is
// ignored, as there), a CPU target of 80% when no metric is left, and the
// annotations dropped.
func hpaV1ToV2(in *autoscalingv1.HorizontalPodAutoscaler) (*autoscalingv2.HorizontalPodAutoscaler, error) {
	out := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{Kind: "HorizontalPodAutoscaler", APIVersion: "autoscaling/v2"},
		ObjectMeta: *in.ObjectMeta.DeepCopy(),
	}
	ref := in.Spec.ScaleTargetRef
	out.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{Kind: ref.Kind, Name: ref.Name, APIVersion: ref.APIVersion}
	if in.Spec.MinReplicas != nil {
		out.Spec.MinReplicas = ptr.To(*in.Spec.MinReplicas)
	}
	out.Spec.MaxReplicas = in.Spec.MaxReplicas
	if in.Spec.TargetCPUUtilizationPercentage != nil {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilizationMetric(*in.Spec.TargetCPUUtilizationPercentage)}
	}
	st := in.Status
	out.Status = autoscalingv2.HorizontalPodAutoscalerStatus{ObservedGeneration: st.ObservedGeneration, LastScaleTime: st.LastScaleTime.DeepCopy(),
		CurrentReplicas: st.CurrentReplicas, DesiredReplicas: st.DesiredReplicas}
	if st.CurrentCPUUtilizationPercentage != nil {
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To(*st.CurrentCPUUtilizationPercentage)}}}}
	}
	if enc, ok := out.Annotations[hpaMetricSpecsAnnotation]; ok {
		var other []autoscalingv1.MetricSpec
		if json.Unmarshal([]byte(enc), &other) == nil {
			metrics := make([]autoscalingv2.MetricSpec, 0, len(other)+1)
			for _, m := range other {
				metrics = append(metrics, metricSpecFromV1(m))
			}
			if out.Spec.Metrics != nil {
				metrics = append(metrics, out.Spec.Metrics[0])
			}
			out.Spec.Metrics = metrics
		}
	}
	if enc, ok := out.Annotations[hpaBehaviorAnnotation]; ok {
		var b hpaBehaviorInternal
		if json.Unmarshal([]byte(enc), &b) == nil && (b.ScaleUp != nil || b.ScaleDown != nil) {
			out.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rulesFromInternal(b.ScaleUp), ScaleDown: rulesFromInternal(b.ScaleDown)}
		}
	}
	if enc, ok := out.Annotations[hpaMetricStatusesAnnotation]; ok {
		var cur []autoscalingv1.MetricStatus
		if json.Unmarshal([]byte(enc), &cur) == nil {
			out.Status.CurrentMetrics = make([]autoscalingv2.MetricStatus, len(cur))
			for i, m := range cur {
				out.Status.CurrentMetrics[i] = metricStatusFromV1(m)
			}
		}
	}
	if len(out.Spec.Metrics) == 0 {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilizationMetric(80)}
	}
	if enc, ok := out.Annotations[hpaConditionsAnnotation]; ok {
		var conds []autoscalingv1.HorizontalPodAutoscalerCondition
		if json.Unmarshal([]byte(enc), &conds) == nil {
			out.Status.Conditions = make([]autoscalingv2.HorizontalPodAutoscalerCondition, len(conds))
			for i, c := range conds {
				out.Status.Conditions[i] = autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.HorizontalPodAutoscalerConditionType(c.Type),
					Status: c.Status, LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message, ObservedGeneration: c.ObservedGeneration}
			}
		}
	}
	out.Annotations = dropHPARoundTripAnnotations(out.Annotations)
	return out, nil
}

func cpuUtilizationMetric(pct int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(pct)}}}
}

// quantityOrZero is *q, or the zero Quantity v1's non-pointer fields hold.
func quantityOrZero(q *resource.Quantity) resource.Quantity {
	if q == nil {
		return resource.Quantity{}
	}
	return q.DeepCopy()
}

// metricSpecToV1 is Convert_autoscaling_MetricSpec_To_v1_MetricSpec.
func metricSpecToV1(m autoscalingv2.MetricSpec) autoscalingv1.MetricSpec {
	out := autoscalingv1.MetricSpec{Type: autoscalingv1.MetricSourceType(m.Type)}
	if s := m.Object; s != nil {
		out.Object = &autoscalingv1.ObjectMetricSource{
			Target:       autoscalingv1.CrossVersionObjectReference{Kind: s.DescribedObject.Kind, Name: s.DescribedObject.Name, APIVersion: s.DescribedObject.APIVersion},
			MetricName:   s.Metric.Name,
			TargetValue:  quantityOrZero(s.Target.Value),
			Selector:     s.Metric.Selector,
			AverageValue: s.Target.AverageValue,
		}
	}
	if s := m.Pods; s != nil {
		out.Pods = &autoscalingv1.PodsMetricSource{MetricName: s.Metric.Name, TargetAverageValue: quantityOrZero(s.Target.AverageValue), Selector: s.Metric.Selector}
	}
	if s := m.Resource; s != nil {
		out.Resource = &autoscalingv1.ResourceMetricSource{Name: s.Name, TargetAverageUtilization: s.Target.AverageUtilization, TargetAverageValue: s.Target.AverageValue}
	}
	if s := m.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricSource{Name: s.Name, Container: s.Container,
			TargetAverageUtilization: s.Target.AverageUtilization, TargetAverageValue: s.Target.AverageValue}
	}
	if s := m.External; s != nil {
		out.External = &autoscalingv1.ExternalMetricSource{MetricName: s.Metric.Name, MetricSelector: s.Metric.Selector,
			TargetValue: s.Target.Value, TargetAverageValue: s.Target.AverageValue}
	}
	return out
}

// metricSpecFromV1 is Convert_v1_MetricSpec_To_autoscaling_MetricSpec.
func metricSpecFromV1(m autoscalingv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(m.Type)}
	if s := m.Object; s != nil {
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(s.TargetValue.DeepCopy()), AverageValue: s.AverageValue}
		if s.AverageValue != nil {
			t.Type, t.Value = autoscalingv2.AverageValueMetricType, nil
			if !s.TargetValue.IsZero() {
				t.Value = ptr.To(s.TargetValue.DeepCopy())
			}
		}
		out.Object = &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: s.Target.Kind, Name: s.Target.Name, APIVersion: s.Target.APIVersion},
			Target:          t,
			Metric:          autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
		}
	}
	if s := m.Pods; s != nil {
		out.Pods = &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(s.TargetAverageValue.DeepCopy())}}
	}
	targetOf := func(util *int32, avg *resource.Quantity) autoscalingv2.MetricTarget {
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: util, AverageValue: avg}
		if util == nil {
			t.Type = autoscalingv2.AverageValueMetricType
		}
		return t
	}
	if s := m.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricSource{Name: s.Name, Target: targetOf(s.TargetAverageUtilization, s.TargetAverageValue)}
	}
	if s := m.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{Name: s.Name, Container: s.Container, Target: targetOf(s.TargetAverageUtilization, s.TargetAverageValue)}
	}
	if s := m.External; s != nil {
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: s.TargetValue, AverageValue: s.TargetAverageValue}
		if s.TargetValue == nil {
			t.Type = autoscalingv2.AverageValueMetricType
		}
		out.External = &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector}, Target: t}
	}
	return out
}

// metricStatusToV1 is Convert_autoscaling_MetricStatus_To_v1_MetricStatus.
func metricStatusToV1(m autoscalingv2.MetricStatus) autoscalingv1.MetricStatus {
	out := autoscalingv1.MetricStatus{Type: autoscalingv1.MetricSourceType(m.Type)}
	if s := m.Object; s != nil {
		out.Object = &autoscalingv1.ObjectMetricStatus{
			Target:       autoscalingv1.CrossVersionObjectReference{Kind: s.DescribedObject.Kind, Name: s.DescribedObject.Name, APIVersion: s.DescribedObject.APIVersion},
			MetricName:   s.Metric.Name,
			CurrentValue: quantityOrZero(s.Current.Value),
			Selector:     s.Metric.Selector,
		}
		if s.Current.AverageValue != nil {
			out.Object.AverageValue = ptr.To(s.Current.AverageValue.DeepCopy())
		}
	}
	if s := m.Pods; s != nil {
		out.Pods = &autoscalingv1.PodsMetricStatus{MetricName: s.Metric.Name, CurrentAverageValue: quantityOrZero(s.Current.AverageValue), Selector: s.Metric.Selector}
	}
	if s := m.Resource; s != nil {
		out.Resource = &autoscalingv1.ResourceMetricStatus{Name: s.Name, CurrentAverageUtilization: s.Current.AverageUtilization, CurrentAverageValue: quantityOrZero(s.Current.AverageValue)}
	}
	if s := m.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricStatus{Name: s.Name, Container: s.Container,
			CurrentAverageUtilization: s.Current.AverageUtilization, CurrentAverageValue: quantityOrZero(s.Current.AverageValue)}
	}
	if s := m.External; s != nil {
		out.External = &autoscalingv1.ExternalMetricStatus{MetricName: s.Metric.Name, MetricSelector: s.Metric.Selector,
			CurrentValue: quantityOrZero(s.Current.Value), CurrentAverageValue: s.Current.AverageValue}
	}
	return out
}

// metricStatusFromV1 is Convert_v1_MetricStatus_To_autoscaling_MetricStatus.
func metricStatusFromV1(m autoscalingv1.MetricStatus) autoscalingv2.MetricStatus {
	out := autoscalingv2.MetricStatus{Type: autoscalingv2.MetricSourceType(m.Type)}
	if s := m.Object; s != nil {
		out.Object = &autoscalingv2.ObjectMetricStatus{
			DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: s.Target.Kind, Name: s.Target.Name, APIVersion: s.Target.APIVersion},
			Metric:          autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Current:         autoscalingv2.MetricValueStatus{Value: ptr.To(s.CurrentValue.DeepCopy()), AverageValue: s.AverageValue},
		}
	}
	if s := m.Pods; s != nil {
		out.Pods = &autoscalingv2.PodsMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(s.CurrentAverageValue.DeepCopy())}}
	}
	if s := m.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricStatus{Name: s.Name,
			Current: autoscalingv2.MetricValueStatus{AverageUtilization: s.CurrentAverageUtilization, AverageValue: ptr.To(s.CurrentAverageValue.DeepCopy())}}
	}
	if s := m.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{Name: s.Name, Container: s.Container,
			Current: autoscalingv2.MetricValueStatus{AverageUtilization: s.CurrentAverageUtilization, AverageValue: ptr.To(s.CurrentAverageValue.DeepCopy())}}
	}
	if s := m.External; s != nil {
		out.External = &autoscalingv2.ExternalMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector},
			Current: autoscalingv2.MetricValueStatus{Value: ptr.To(s.CurrentValue.DeepCopy()), AverageValue: s.CurrentAverageValue}}
	}
	return out
}

// hpaConverter is the hand-written Converter of HorizontalPodAutoscalers
// between autoscaling/v1 and autoscaling/v2, used unless one is registered.
type hpaConverter struct{}

// Convert implements Converter.
func (hpaConverter) Convert(in, out runtime.Object) error {
	switch src := in.(type) {
	case *autoscalingv2.HorizontalPodAutoscaler:
		dst, ok := out.(*autoscalingv1.HorizontalPodAutoscaler)
		if !ok {
			break
		}
		v1, err := hpaV2ToV1(src)
		if err != nil {
			return err
		}
		*dst = *v1
		return nil
	case *autoscalingv1.HorizontalPodAutoscaler:
		dst, ok := out.(*autoscalingv2.HorizontalPodAutoscaler)
		if !ok {
			break
		}
		v2, err := hpaV1ToV2(src)
		if err != nil {
			return err
		}
		*dst = *v2
		return nil
	}
	return fmt.Errorf("store: no conversion from %T to %T", in, out)
}
