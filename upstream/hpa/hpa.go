// Package hpa puts the real HorizontalPodAutoscaler controller of
// kube-controller-manager (k8s.io/kubernetes v1.37.1,
// pkg/controller/podautoscaler) under the lab, wired to the lab's recorded
// typed informers over the fake API server, with the KEP-5647 feature gate
// StaleControllerConsistencyHPA on (upstream/hpa, the default since v1.37)
// or off (upstream/hpa-nogate).
//
// The metrics come from the plan: an external metric's value is the data
// key of the same name in the ConfigMap "metrics" of the HPA's namespace
// (a quantity, "1200" or "1.5k"), read by the controller's metrics client
// (MetricsClient) on a client of its own named "metrics-server"; a user's
// patch of that ConfigMap is a change of load. Resource, pod and object
// metrics are answered with an error (not served). The HPA scales a
// Deployment: the real Deployment and ReplicaSet controllers run beside it
// (upstream/cluster, not judged) and the plans run the kubelet actor.
// kube-controller-manager's defaults: sync period 15 s, tolerance 0.1,
// downscale stabilisation 5 min (the plans' HPAs set their own scale-down
// window), CPU initialisation 5 min, readiness delay 30 s, 5 workers.
package hpa

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/kubernetes/pkg/controller/podautoscaler"
	metricsclient "k8s.io/kubernetes/pkg/controller/podautoscaler/metrics"
	"k8s.io/kubernetes/pkg/features"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/upstream/cluster"
	"github.com/cachelab/cachelab/upstream/internal/wiring"
)

// Names of the two subjects.
const (
	// Name is the controller with KEP-5647's gate on (the v1.37 default).
	Name = "upstream/hpa"
	// NameNoGate is the controller with the gate off.
	NameNoGate = "upstream/hpa-nogate"
)

// MetricsConfigMap is the ConfigMap, in the HPA's namespace, whose data
// holds the external metrics' values.
const MetricsConfigMap = "metrics"

// MetricsClientName is the client name of the metrics client's reads.
const MetricsClientName = "metrics-server"

// Workers is kube-controller-manager's default
// --concurrent-horizontal-pod-autoscaler-syncs.
const Workers = 5

// kube-controller-manager's defaults (podautoscaler/config/v1alpha1).
const (
	syncPeriod        = 15 * time.Second
	downscaleWindow   = 5 * time.Minute
	tolerance         = 0.1
	cpuInitialization = 5 * time.Minute
	readinessDelay    = 30 * time.Second
)

// Controller returns the real HPA controller as a lab controller, with
// the KEP-5647 gate set to gate and the Deployment and ReplicaSet
// controllers beside it. It is named Name or NameNoGate.
func Controller(gate bool) cachelabtest.Controller {
	return cluster.Around(wiring.Controller([2]string{Name, NameNoGate}, features.StaleControllerConsistencyHPA, gate, Workers,
		func(ctx context.Context, env *cachelabtest.Env) (*podautoscaler.HorizontalController, error) {
			groups, err := restmapper.GetAPIGroupResources(env.Kube.Discovery())
			if err != nil {
				return nil, fmt.Errorf("discovery: %w", err)
			}
			mapper := restmapper.NewDiscoveryRESTMapper(groups)
			scales, err := scale.NewForConfig(env.RESTConfig, mapper, dynamic.LegacyAPIPathResolverFunc, autoscalingV1Scale{})
			if err != nil {
				return nil, fmt.Errorf("scale client: %w", err)
			}
			metrics, err := env.Client(MetricsClientName)
			if err != nil {
				return nil, err
			}
			return podautoscaler.NewHorizontalController(ctx, env.Kube.CoreV1(), scales, env.Kube.AutoscalingV2(), mapper,
				&MetricsClient{ctx: ctx, kube: metrics.Kube}, env.Informers.Autoscaling().V2().HorizontalPodAutoscalers(),
				env.Informers.Core().V1().Pods(), syncPeriod, downscaleWindow, tolerance, cpuInitialization, readinessDelay), nil
		}, Desired), cluster.DeploymentController, cluster.ReplicaSetController)
}

// MetricsClient serves external metrics from the ConfigMap
// MetricsConfigMap (its data key of the metric's name); every other kind
// of metric is an error.
type MetricsClient struct {
	ctx  context.Context
	kube kubernetes.Interface
}

var _ metricsclient.MetricsClient = (*MetricsClient)(nil)

// errNotServed answers the metrics the lab does not serve.
var errNotServed = errors.New("lab metrics: only external metrics from the ConfigMap " + MetricsConfigMap + " are served")

// GetResourceMetric is not served.
func (*MetricsClient) GetResourceMetric(context.Context, corev1.ResourceName, string, labels.Selector, string) (metricsclient.PodMetricsInfo, time.Time, error) {
	return nil, time.Time{}, errNotServed
}

// GetRawMetric is not served.
func (*MetricsClient) GetRawMetric(string, string, labels.Selector, labels.Selector) (metricsclient.PodMetricsInfo, time.Time, error) {
	return nil, time.Time{}, errNotServed
}

// GetObjectMetric is not served.
func (*MetricsClient) GetObjectMetric(string, string, *autoscalingv2.CrossVersionObjectReference, labels.Selector) (int64, time.Time, error) {
	return 0, time.Time{}, errNotServed
}

// GetExternalMetric returns the value (in milli-units, as the metrics
// API's client does) of data[metricName] of the ConfigMap MetricsConfigMap
// in namespace, read from the server now.
func (m *MetricsClient) GetExternalMetric(metricName, namespace string, _ labels.Selector) ([]int64, time.Time, error) {
	cm, err := m.kube.CoreV1().ConfigMaps(namespace).Get(m.ctx, MetricsConfigMap, metav1.GetOptions{})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("lab metrics: %w", err)
	}
	q, err := external(cm, metricName)
	if err != nil {
		return nil, time.Time{}, err
	}
	return []int64{q.MilliValue()}, time.Now(), nil
}

// external parses data[name] of the metrics ConfigMap cm.
func external(cm *corev1.ConfigMap, name string) (resource.Quantity, error) {
	v, ok := cm.Data[name]
	if !ok {
		return resource.Quantity{}, fmt.Errorf("lab metrics: ConfigMap %s/%s has no key %q", cm.Namespace, cm.Name, name)
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("lab metrics: ConfigMap %s/%s key %q: %w", cm.Namespace, cm.Name, name, err)
	}
	return q, nil
}

// Desired holds when every HPA with one external metric of target type
// AverageValue, over a Deployment, has scaled it to what the metric asks:
// n = ceil(value / averageValue) within [minReplicas, maxReplicas], or any
// n whose ratio value / (n * averageValue) is within the tolerance 0.1 of
// 1 (the controller leaves such a count alone); the Deployment's
// spec.replicas is that n and the HPA's status says so (desiredReplicas and
// currentReplicas n). HPAs of other shapes are not judged.
func Desired(s *cachelabtest.State) error {
	var why []string
	for _, h := range cachelabtest.List[autoscalingv2.HorizontalPodAutoscaler](s, "") {
		if err := scaled(s, h); err != nil {
			why = append(why, fmt.Sprintf("HPA %s/%s %v", h.Namespace, h.Name, err))
		}
	}
	if len(why) > 0 {
		sort.Strings(why)
		return fmt.Errorf("%s", strings.Join(why, "; "))
	}
	return nil
}

// scaled says why h has not scaled its Deployment as its metric asks.
func scaled(s *cachelabtest.State, h *autoscalingv2.HorizontalPodAutoscaler) error {
	if h.DeletionTimestamp != nil || len(h.Spec.Metrics) != 1 || h.Spec.Metrics[0].External == nil ||
		h.Spec.Metrics[0].External.Target.AverageValue == nil || h.Spec.ScaleTargetRef.Kind != "Deployment" {
		return nil
	}
	ext := h.Spec.Metrics[0].External
	cm, ok := cachelabtest.Get[corev1.ConfigMap](s, h.Namespace, MetricsConfigMap)
	if !ok {
		return nil // no metric: the controller cannot scale, nothing to want
	}
	q, err := external(cm, ext.Metric.Name)
	if err != nil {
		return nil
	}
	d, ok := cachelabtest.Get[appsv1.Deployment](s, h.Namespace, h.Spec.ScaleTargetRef.Name)
	if !ok || d.DeletionTimestamp != nil {
		return nil
	}
	lo, hi := int32(1), h.Spec.MaxReplicas
	if h.Spec.MinReplicas != nil {
		lo = *h.Spec.MinReplicas
	}
	value, target := float64(q.MilliValue()), float64(ext.Target.AverageValue.MilliValue())
	want := min(max(int32(math.Ceil(value/target)), lo), hi)
	n := int32(1)
	if d.Spec.Replicas != nil {
		n = *d.Spec.Replicas
	}
	if n != want && (n < lo || n > hi || math.Abs(value/(float64(n)*target)-1) > tolerance) {
		return fmt.Errorf("wants %d replicas (%s=%s, averageValue %s, min %d, max %d) and Deployment %s has %d",
			want, ext.Metric.Name, q.String(), ext.Target.AverageValue.String(), lo, hi, d.Name, n)
	}
	if h.Status.DesiredReplicas != n || h.Status.CurrentReplicas != n {
		return fmt.Errorf("scaled Deployment %s to %d and its status says desiredReplicas=%d, currentReplicas=%d",
			d.Name, n, h.Status.DesiredReplicas, h.Status.CurrentReplicas)
	}
	return nil
}

// autoscalingV1Scale resolves every resource's scale subresource to
// autoscaling/v1 Scale, what kube-apiserver's discovery says for
// Deployments, ReplicaSets and StatefulSets. kube-controller-manager asks
// discovery (scale.NewDiscoveryScaleKindResolver); the fake API server's
// discovery lists no "<resource>/scale" subresource, though it serves
// them, so that resolver fails ("could not find scale subresource ... in
// discovery information") and the HPA never scales.
type autoscalingV1Scale struct{}

// ScaleForResource returns autoscaling/v1 Scale.
func (autoscalingV1Scale) ScaleForResource(schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return autoscalingv1.SchemeGroupVersion.WithKind("Scale"), nil
}
