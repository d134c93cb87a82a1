package fidelity

import (
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The kinds issue 29 names (operators create them; the fake served them
// hand-written, never compared with a recording before).
var (
	PersistentVolumeClaims    = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, Namespaced: true}
	ReplicationControllers    = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "replicationcontrollers"}, Namespaced: true}
	Roles                     = Resource{GVR: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, Namespaced: true}
	RoleBindings              = Resource{GVR: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}, Namespaced: true}
	ClusterRoles              = Resource{GVR: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}}
	ClusterRoleBindings       = Resource{GVR: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}}
	PodDisruptionBudgets      = Resource{GVR: schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, Namespaced: true}
	Ingresses                 = Resource{GVR: schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}, Namespaced: true}
	NetworkPolicies           = Resource{GVR: schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}, Namespaced: true}
	HorizontalPodAutoscalers  = Resource{GVR: schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}, Namespaced: true}
	CustomResourceDefinitions = Resource{GVR: schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}}
)

// The ranges both servers allocate from: kube-apiserver's defaults
// (--service-cluster-ip-range 10.0.0.0/24 in start.sh, the default
// --service-node-port-range), which the fake uses too.
var (
	serviceCIDR  = &net.IPNet{IP: net.IPv4(10, 0, 0, 0).To4(), Mask: net.CIDRMask(24, 32)}
	nodePortLow  = int64(30000)
	nodePortHigh = int64(32767)
)

const (
	allocatedIP   = "<allocated from 10.0.0.0/24>"
	allocatedPort = "<allocated from 30000-32767>"
)

// allocated rewrites what a server draws at random: a Service's clusterIP
// and clusterIPs in the service range and nodePorts in the node-port range
// (but those in keep, which the case asked for), a TokenRequest's token
// and expiration, and conditions' lastTransitionTime. The rewrite keeps
// an address or port outside its range as it is, so a wrong range shows.
func allocated(keep ...string) func(map[string]any) map[string]any {
	kept := map[string]bool{}
	for _, k := range keep {
		kept[k] = true
	}
	ip := func(v any) any {
		s, ok := v.(string)
		if !ok || kept[s] {
			return v
		}
		if p := net.ParseIP(s); p != nil && serviceCIDR.Contains(p) {
			return allocatedIP
		}
		return v
	}
	return func(body map[string]any) map[string]any {
		// A copy in encoding/json's numbers, as a recorded transcript
		// reads them.
		data, err := json.Marshal(body)
		if err != nil {
			panic(caseFailure{err})
		}
		var out map[string]any
		if err := json.Unmarshal(data, &out); err != nil {
			panic(caseFailure{err})
		}
		if spec, ok := out["spec"].(map[string]any); ok {
			if v, ok := spec["clusterIP"]; ok {
				spec["clusterIP"] = ip(v)
			}
			if ips, ok := spec["clusterIPs"].([]any); ok {
				for i := range ips {
					ips[i] = ip(ips[i])
				}
			}
			if ports, ok := spec["ports"].([]any); ok {
				for _, p := range ports {
					pm, _ := p.(map[string]any)
					if n, ok := number(pm["nodePort"]); ok && !kept[strconv.FormatInt(n, 10)] && n >= nodePortLow && n <= nodePortHigh {
						pm["nodePort"] = allocatedPort
					}
				}
			}
			if n, ok := number(spec["healthCheckNodePort"]); ok && n >= nodePortLow && n <= nodePortHigh {
				spec["healthCheckNodePort"] = allocatedPort
			}
		}
		if st, ok := out["status"].(map[string]any); ok {
			if t, ok := st["token"].(string); ok && t != "" {
				st["token"] = "<issued>"
			}
			if _, ok := st["expirationTimestamp"]; ok {
				st["expirationTimestamp"] = "<time>"
			}
			for _, c := range slice(st, "conditions") {
				if cm, ok := c.(map[string]any); ok {
					delete(cm, "lastTransitionTime")
				}
			}
		}
		return out
	}
}

func service(name string, typ corev1.ServiceType, ports ...corev1.ServicePort) *corev1.Service {
	if len(ports) == 0 {
		ports = []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}
	}
	return &corev1.Service{TypeMeta: metav1.TypeMeta{Kind: "Service", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Type: typ, Selector: map[string]string{"app": name}, Ports: ports}}
}

func pvc(name string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{TypeMeta: metav1.TypeMeta{Kind: "PersistentVolumeClaim", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
}

func replicationController(name string) *corev1.ReplicationController {
	t := template(name)
	return &corev1.ReplicationController{TypeMeta: metav1.TypeMeta{Kind: "ReplicationController", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{"app": name}, Template: &t}}
}

func role(name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
	if rules == nil {
		rules = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}}
	}
	return &rbacv1.Role{TypeMeta: metav1.TypeMeta{Kind: "Role", APIVersion: "rbac.authorization.k8s.io/v1"}, ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
}

func roleBinding(name, roleName string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{Kind: "RoleBinding", APIVersion: "rbac.authorization.k8s.io/v1"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{Kind: "Role", Name: roleName},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default"}, {Kind: "User", Name: "alice"}}}
}

func pdb(name string) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{TypeMeta: metav1.TypeMeta{Kind: "PodDisruptionBudget", APIVersion: "policy/v1"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr(intstr.FromInt32(1)), Selector: selector(name)}}
}

func ingress(name string) *networkingv1.Ingress {
	pt := networkingv1.PathTypePrefix
	return &networkingv1.Ingress{TypeMeta: metav1.TypeMeta{Kind: "Ingress", APIVersion: "networking.k8s.io/v1"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "web.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &pt, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}}}
}

func networkPolicy(name string) *networkingv1.NetworkPolicy {
	port := intstr.FromInt32(5432)
	return &networkingv1.NetworkPolicy{TypeMeta: metav1.TypeMeta{Kind: "NetworkPolicy", APIVersion: "networking.k8s.io/v1"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: *selector("db"),
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: selector("web")}}, Ports: []networkingv1.NetworkPolicyPort{{Port: &port}}}}}}
}

func hpa(name string) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{TypeMeta: metav1.TypeMeta{Kind: "HorizontalPodAutoscaler", APIVersion: "autoscaling/v2"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name}, MaxReplicas: 5}}
}

// widgetCRD is a CRD a case creates through the API (as an operator
// installing its own does), named after the case's namespace so that
// recordings do not collide.
func widgetCRD(group string) map[string]any {
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"kind": "Widget", "plural": "widgets"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
					"spec": map[string]any{"type": "object", "properties": map[string]any{"size": map[string]any{"type": "integer", "minimum": int64(0)}}},
				}}}}},
		},
	}
}

func established(obj map[string]any) bool {
	st, _ := obj["status"].(map[string]any)
	for _, c := range slice(st, "conditions") {
		if cm, ok := c.(map[string]any); ok && cm["type"] == "Established" && cm["status"] == "True" {
			return true
		}
	}
	return false
}

// waitServed asks for r's collection until it answers 200 (a CRD's
// resource is served moments after Established on kube-apiserver), at most
// the Env's wait. It records nothing.
func (e *Env) waitServed(r Resource) {
	deadline := time.Now().Add(e.wait)
	for {
		a := e.send("", http.MethodGet, r.path(e.Namespace, "", ""), nil, "", nil)
		if a.Code == http.StatusOK || time.Now().After(deadline) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

const deployHeader = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"

const deployApply = deployHeader + "spec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: c\n        image: registry.example/app:1.0\n"

// issue29Cases record, from a real kube-apiserver, each difference issue
// 29 names, and the kinds the fake added for it.
var issue29Cases = []Case{
	// --- apps/v1: validation ---
	{Name: "deployment-status-ready-above-replicas", Doc: "A Deployment status with readyReplicas above replicas (or available above ready) is 422.", Run: func(e *Env) {
		e.Create("create web", Deployments, deploymentObj("web"))
		e.Patch("status ready 3 of 1", Deployments, "web", "status", types.MergePatchType, `{"status":{"replicas":1,"readyReplicas":3}}`)
		e.Patch("status available 2 of ready 1", Deployments, "web", "status", types.MergePatchType, `{"status":{"replicas":2,"readyReplicas":1,"availableReplicas":2}}`)
		e.Patch("status consistent", Deployments, "web", "status", types.MergePatchType, `{"status":{"replicas":2,"readyReplicas":2,"availableReplicas":1,"updatedReplicas":2}}`)
	}},
	{Name: "deployment-status-negative", Doc: "Negative Deployment status counts and observedGeneration are 422.", Run: func(e *Env) {
		e.Create("create web", Deployments, deploymentObj("web"))
		e.Patch("status replicas -1", Deployments, "web", "status", types.MergePatchType, `{"status":{"replicas":-1}}`)
		e.Patch("status observedGeneration -1", Deployments, "web", "status", types.MergePatchType, `{"status":{"observedGeneration":-1}}`)
	}},
	{Name: "deployment-recreate-with-rolling-update", Doc: "A Recreate Deployment with rollingUpdate parameters is 422 (spec.strategy.rollingUpdate forbidden).", Run: func(e *Env) {
		d := deploymentObj("web")
		d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr(intstr.FromInt32(1))}}
		e.Create("create Recreate with rollingUpdate", Deployments, d)
		d.Spec.Strategy.RollingUpdate = nil
		e.Create("create Recreate", Deployments, d)
	}},
	{Name: "deployment-rolling-update-zero-zero", Doc: "maxSurge and maxUnavailable both 0 is 422; a percentage above 100% is 422.", Run: func(e *Env) {
		d := deploymentObj("a")
		d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: ptr(intstr.FromInt32(0)), MaxUnavailable: ptr(intstr.FromInt32(0))}
		e.Create("create with 0 and 0", Deployments, d)
		d = deploymentObj("b")
		d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr(intstr.FromString("150%"))}
		e.Create("create with maxUnavailable 150%", Deployments, d)
	}},
	{Name: "deployment-progress-deadline", Doc: "progressDeadlineSeconds must exceed minReadySeconds; negative revisionHistoryLimit is 422.", Run: func(e *Env) {
		d := deploymentObj("a")
		d.Spec.MinReadySeconds, d.Spec.ProgressDeadlineSeconds = 30, ptr(int32(30))
		e.Create("create with deadline equal to minReady", Deployments, d)
		d = deploymentObj("b")
		d.Spec.RevisionHistoryLimit = ptr(int32(-1))
		e.Create("create with revisionHistoryLimit -1", Deployments, d)
	}},
	{Name: "deployment-generation-on-annotation", Doc: "A Deployment's generation grows when its annotations change (the deployment strategy compares annotations too), not on a label change.", Run: func(e *Env) {
		e.Create("create web", Deployments, deploymentObj("web"))
		e.Patch("annotate web", Deployments, "web", "", types.MergePatchType, `{"metadata":{"annotations":{"note":"x"}}}`)
		e.Patch("label web", Deployments, "web", "", types.MergePatchType, `{"metadata":{"labels":{"tier":"x"}}}`)
		e.Patch("change the annotation", Deployments, "web", "", types.MergePatchType, `{"metadata":{"annotations":{"note":"y"}}}`)
	}},
	{Name: "deployment-paused-and-template-labels", Doc: "A paused Deployment stores paused; template labels not matching the selector on update are 422.", Run: func(e *Env) {
		d := deploymentObj("web")
		d.Spec.Paused = true
		e.Create("create paused web", Deployments, d)
		e.Patch("template labels off the selector", Deployments, "web", "", types.MergePatchType, `{"spec":{"template":{"metadata":{"labels":{"app":"other"}}}}}`)
	}},
	{Name: "replicaset-status-ready-above-replicas", Doc: "A ReplicaSet status with readyReplicas above replicas, or available above ready, is 422.", Run: func(e *Env) {
		e.Create("create rs", ReplicaSets, replicaSetObj("rs"))
		e.Patch("status ready 2 of 1", ReplicaSets, "rs", "status", types.MergePatchType, `{"status":{"replicas":1,"readyReplicas":2}}`)
		e.Patch("status available 1 of ready 0", ReplicaSets, "rs", "status", types.MergePatchType, `{"status":{"replicas":1,"availableReplicas":1}}`)
		e.Patch("status fullyLabeled 2 of 1", ReplicaSets, "rs", "status", types.MergePatchType, `{"status":{"replicas":1,"fullyLabeledReplicas":2}}`)
	}},
	{Name: "statefulset-service-name-change", Doc: "A StatefulSet's serviceName cannot change (422: updates to statefulset spec for fields other than ... are forbidden).", Run: func(e *Env) {
		e.Create("create db", StatefulSets, statefulSetObj("db"))
		e.Patch("change serviceName", StatefulSets, "db", "", types.MergePatchType, `{"spec":{"serviceName":"other"}}`)
		e.Patch("change podManagementPolicy", StatefulSets, "db", "", types.MergePatchType, `{"spec":{"podManagementPolicy":"Parallel"}}`)
		e.Patch("change replicas and template", StatefulSets, "db", "", types.MergePatchType, `{"spec":{"replicas":3,"template":{"metadata":{"annotations":{"v":"2"}}}}}`)
	}},
	{Name: "statefulset-volume-claim-templates", Doc: "A StatefulSet's volumeClaimTemplates get the PVC defaults (volumeMode Filesystem, status phase Pending); the retention policy defaults to Retain.", Run: func(e *Env) {
		s := statefulSetObj("db")
		c := pvc("data")
		c.TypeMeta = metav1.TypeMeta{}
		s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{*c}
		e.Create("create db with a claim template", StatefulSets, s)
		e.Patch("change the claim template", StatefulSets, "db", "", types.JSONPatchType, `[{"op":"replace","path":"/spec/volumeClaimTemplates/0/spec/resources/requests/storage","value":"2Gi"}]`)
	}},
	{Name: "statefulset-volume-claim-template-invalid", Doc: "A claim template without access modes or storage is 422.", Run: func(e *Env) {
		s := statefulSetObj("db")
		c := pvc("data")
		c.TypeMeta = metav1.TypeMeta{}
		c.Spec.AccessModes = nil
		c.Spec.Resources.Requests = nil
		s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{*c}
		e.Create("create with an empty claim template", StatefulSets, s)
	}},
	{Name: "statefulset-rolling-update-explicit", Doc: "A StatefulSet with an explicit RollingUpdate strategy: which of partition and maxUnavailable are defaulted.", Run: func(e *Env) {
		s := statefulSetObj("db")
		s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}
		e.Create("create with type RollingUpdate", StatefulSets, s)
		s = statefulSetObj("db2")
		s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
		e.Create("create with type OnDelete", StatefulSets, s)
		s = statefulSetObj("db3")
		s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr(int32(1))}}
		e.Create("create OnDelete with rollingUpdate", StatefulSets, s)
	}},
	{Name: "statefulset-status-ready-above-replicas", Doc: "A StatefulSet status with readyReplicas above replicas is 422; negative counts are 422.", Run: func(e *Env) {
		e.Create("create db", StatefulSets, statefulSetObj("db"))
		e.Patch("status ready 2 of 1", StatefulSets, "db", "status", types.MergePatchType, `{"status":{"replicas":1,"readyReplicas":2}}`)
		e.Patch("status current -1", StatefulSets, "db", "status", types.MergePatchType, `{"status":{"currentReplicas":-1}}`)
	}},
	{Name: "statefulset-pod-management-invalid", Doc: "An unknown podManagementPolicy or a template restartPolicy other than Always is 422.", Run: func(e *Env) {
		s := statefulSetObj("a")
		s.Spec.PodManagementPolicy = "Sometimes"
		e.Create("create with podManagementPolicy Sometimes", StatefulSets, s)
		s = statefulSetObj("b")
		s.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
		e.Create("create with restartPolicy Never", StatefulSets, s)
	}},
	{Name: "daemonset-restart-policy-never", Doc: "A DaemonSet template with restartPolicy Never (or OnFailure) is 422.", Run: func(e *Env) {
		d := daemonSetObj("a")
		d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
		e.Create("create with restartPolicy Never", DaemonSets, d)
		d = daemonSetObj("b")
		d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		e.Create("create with restartPolicy OnFailure", DaemonSets, d)
	}},
	{Name: "daemonset-update-strategy-invalid", Doc: "A DaemonSet with maxUnavailable 0 and maxSurge 0, or an unknown strategy type, is 422.", Run: func(e *Env) {
		d := daemonSetObj("a")
		d.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateDaemonSet{MaxUnavailable: ptr(intstr.FromInt32(0)), MaxSurge: ptr(intstr.FromInt32(0))}
		e.Create("create with 0 and 0", DaemonSets, d)
		d = daemonSetObj("b")
		d.Spec.UpdateStrategy.Type = "Sometimes"
		e.Create("create with strategy Sometimes", DaemonSets, d)
	}},
	{Name: "daemonset-status-and-selector", Doc: "A DaemonSet's status counts must not be negative; its selector is immutable.", Run: func(e *Env) {
		e.Create("create agent", DaemonSets, daemonSetObj("agent"))
		e.Patch("status numberReady -1", DaemonSets, "agent", "status", types.MergePatchType, `{"status":{"numberReady":-1}}`)
		e.Patch("change the selector", DaemonSets, "agent", "", types.MergePatchType, `{"spec":{"selector":{"matchLabels":{"app":"agent","x":"y"}},"template":{"metadata":{"labels":{"app":"agent","x":"y"}}}}}`)
	}},

	// --- batch/v1 Job ---
	{Name: "job-template-immutable", Doc: "A Job's pod template cannot change once created (422 on spec.template).", Run: func(e *Env) {
		e.Clean(sansJobUIDs)
		e.Create("create job", Jobs, jobObj("job"))
		e.Patch("change the image", Jobs, "job", "", types.JSONPatchType, `[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.example/app:2.0"}]`)
		e.Patch("change parallelism", Jobs, "job", "", types.MergePatchType, `{"spec":{"parallelism":2}}`)
	}},
	{Name: "job-manual-selector", Doc: "manualSelector without a selector is 422; with one, no labels are generated.", Run: func(e *Env) {
		j := jobObj("a")
		j.Spec.ManualSelector = ptr(true)
		e.Create("create manualSelector without selector", Jobs, j)
		j = jobObj("b")
		j.Spec.ManualSelector = ptr(true)
		j.Spec.Selector = selector("b")
		e.Create("create manualSelector with selector", Jobs, j)
		j = jobObj("c")
		j.Spec.Selector = selector("c")
		e.Create("create with a selector but no manualSelector", Jobs, j)
	}},
	{Name: "job-generated-labels", Doc: "A Job's generated selector and template labels: controller-uid and job-name, both the batch.kubernetes.io and the legacy keys; the Job's own labels.", Run: func(e *Env) {
		e.Clean(sansJobUIDs)
		j := jobObj("job")
		j.Labels = map[string]string{"team": "a"}
		r := e.Create("create job", Jobs, j)
		jobNote(e, "generated labels on create", r)
		r = e.Get("get job", Jobs, "job")
		jobNote(e, "generated labels on get", r)
	}},
	{Name: "job-validation-counts", Doc: "A Job with negative parallelism or backoffLimit is 422; activeDeadlineSeconds 0 and Indexed without completions are accepted.", Run: func(e *Env) {
		e.Clean(sansJobUIDs)
		j := jobObj("a")
		j.Spec.Parallelism = ptr(int32(-1))
		e.Create("create with parallelism -1", Jobs, j)
		j = jobObj("b")
		j.Spec.BackoffLimit = ptr(int32(-1))
		e.Create("create with backoffLimit -1", Jobs, j)
		j = jobObj("c")
		j.Spec.ActiveDeadlineSeconds = ptr(int64(0))
		e.Create("create with activeDeadlineSeconds 0", Jobs, j)
		j = jobObj("d")
		j.Spec.CompletionMode = ptr(batchv1.IndexedCompletion)
		e.Create("create Indexed without completions", Jobs, j)
		j = jobObj("e")
		j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		e.Create("create with restartPolicy Always", Jobs, j)
	}},
	{Name: "job-suspend-and-status", Doc: "A Job suspends and resumes; its status rejects negative counts.", Run: func(e *Env) {
		e.Clean(sansJobUIDs)
		e.Create("create job", Jobs, jobObj("job"))
		e.Patch("suspend", Jobs, "job", "", types.MergePatchType, `{"spec":{"suspend":true}}`)
		e.Patch("status active -1", Jobs, "job", "status", types.MergePatchType, `{"status":{"active":-1}}`)
	}},

	// --- core/v1 Service: validation ---
	{Name: "service-port-out-of-range", Doc: "Service ports 0 and 70000 are 422; a targetPort 70000 too.", Run: func(e *Env) {
		e.Create("create with port 0", Services, service("a", "", corev1.ServicePort{Port: 0}))
		e.Create("create with port 70000", Services, service("b", "", corev1.ServicePort{Port: 70000}))
		e.Create("create with targetPort 70000", Services, service("c", "", corev1.ServicePort{Port: 80, TargetPort: intstr.FromInt32(70000)}))
	}},
	{Name: "service-protocol-bogus", Doc: "A Service port with protocol BOGUS is 422 NotSupported.", Run: func(e *Env) {
		e.Create("create with protocol BOGUS", Services, service("a", "", corev1.ServicePort{Port: 80, Protocol: "BOGUS"}))
	}},
	{Name: "service-type-bogus", Doc: "A Service of type Bogus is 422 NotSupported.", Run: func(e *Env) {
		e.Create("create with type Bogus", Services, service("a", "Bogus"))
	}},
	{Name: "service-target-port-name", Doc: "A targetPort name that is not an IANA service name is 422; a valid one is kept.", Run: func(e *Env) {
		e.Clean(allocated())
		e.Create("create with targetPort Bad_Name", Services, service("a", "", corev1.ServicePort{Port: 80, TargetPort: intstr.FromString("Bad_Name")}))
		e.Create("create with targetPort http", Services, service("b", "", corev1.ServicePort{Port: 80, TargetPort: intstr.FromString("http")}))
	}},
	{Name: "service-ports-duplicate", Doc: "Two ports with the same name, or the same port and protocol, are 422; ports of a multi-port Service need names.", Run: func(e *Env) {
		e.Create("create with duplicate names", Services, service("a", "", corev1.ServicePort{Name: "p", Port: 80}, corev1.ServicePort{Name: "p", Port: 81}))
		e.Create("create with duplicate ports", Services, service("b", "", corev1.ServicePort{Name: "p", Port: 80}, corev1.ServicePort{Name: "q", Port: 80}))
		e.Create("create with unnamed ports", Services, service("c", "", corev1.ServicePort{Port: 80}, corev1.ServicePort{Port: 81}))
	}},
	{Name: "service-external-name", Doc: "An ExternalName Service needs externalName and gets no clusterIP.", Run: func(e *Env) {
		e.Create("create ExternalName without externalName", Services, service("a", corev1.ServiceTypeExternalName))
		s := service("b", corev1.ServiceTypeExternalName)
		s.Spec.ExternalName = "db.example.com"
		e.Create("create ExternalName", Services, s)
	}},

	// --- core/v1 Service: allocation ---
	{Name: "service-cluster-ip-allocated", Doc: "A ClusterIP Service gets an address from the service range, clusterIPs, ipFamilies [IPv4], ipFamilyPolicy SingleStack, internalTrafficPolicy Cluster.", Run: func(e *Env) {
		e.Clean(allocated())
		e.Create("create web", Services, service("web", ""))
		e.Get("get web", Services, "web")
	}},
	{Name: "service-cluster-ip-requested", Doc: "A requested clusterIP in range is kept; the same address again is 422 (already allocated); one out of range is 422.", Run: func(e *Env) {
		e.Clean(allocated("10.0.0.10"))
		s := service("a", "")
		s.Spec.ClusterIP = "10.0.0.10"
		e.Create("create a at 10.0.0.10", Services, s)
		s = service("b", "")
		s.Spec.ClusterIP = "10.0.0.10"
		e.Create("create b at 10.0.0.10", Services, s)
		s = service("c", "")
		s.Spec.ClusterIP = "10.1.0.5"
		e.Create("create c at 10.1.0.5", Services, s)
		s = service("d", "")
		s.Spec.ClusterIP = "not-an-ip"
		e.Create("create d at not-an-ip", Services, s)
	}},
	{Name: "service-cluster-ip-released-on-delete", Doc: "Deleting a Service releases its address: a new Service may take it at once.", Run: func(e *Env) {
		e.Clean(allocated("10.0.0.11"))
		s := service("a", "")
		s.Spec.ClusterIP = "10.0.0.11"
		e.Create("create a at 10.0.0.11", Services, s)
		e.Delete("delete a", Services, "a", metav1.DeleteOptions{})
		s = service("b", "")
		s.Spec.ClusterIP = "10.0.0.11"
		e.Create("create b at 10.0.0.11", Services, s)
	}},
	{Name: "service-cluster-ip-immutable", Doc: "A Service's clusterIP cannot change (422); an update that leaves it out keeps it.", Run: func(e *Env) {
		e.Clean(allocated("10.0.0.12", "10.0.0.13"))
		s := service("a", "")
		s.Spec.ClusterIP = "10.0.0.12"
		a := e.Create("create a at 10.0.0.12", Services, s)
		e.Patch("change clusterIP", Services, "a", "", types.MergePatchType, `{"spec":{"clusterIP":"10.0.0.13","clusterIPs":["10.0.0.13"]}}`)
		if a.Body != nil {
			e.Update("update without clusterIP", Services, "a", with(with(a.Body, nil, "spec", "clusterIP"), nil, "spec", "clusterIPs"))
		}
	}},
	{Name: "service-ip-family-policy", Doc: "A RequireDualStack Service on a single-stack cluster is 422; PreferDualStack gets one family.", Run: func(e *Env) {
		e.Clean(allocated())
		s := service("a", "")
		s.Spec.IPFamilyPolicy = ptr(corev1.IPFamilyPolicyRequireDualStack)
		e.Create("create RequireDualStack", Services, s)
		s = service("b", "")
		s.Spec.IPFamilyPolicy = ptr(corev1.IPFamilyPolicyPreferDualStack)
		e.Create("create PreferDualStack", Services, s)
		s = service("c", "")
		s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
		e.Create("create IPv6", Services, s)
	}},
	{Name: "service-node-port-allocated", Doc: "A NodePort Service gets a clusterIP and a nodePort per port from the node-port range, externalTrafficPolicy Cluster.", Run: func(e *Env) {
		e.Clean(allocated())
		e.Create("create np", Services, service("np", corev1.ServiceTypeNodePort, corev1.ServicePort{Name: "http", Port: 80}, corev1.ServicePort{Name: "https", Port: 443}))
		e.Get("get np", Services, "np")
	}},
	{Name: "service-node-port-requested", Doc: "A requested nodePort is kept; the same port in a second Service is 422 (already allocated); one out of range is 422; the same nodePort twice in one Service is 422 Duplicate.", Run: func(e *Env) {
		e.Clean(allocated("30080", "30081"))
		e.Create("create a on 30080", Services, service("a", corev1.ServiceTypeNodePort, corev1.ServicePort{Port: 80, NodePort: 30080}))
		e.Create("create b on 30080", Services, service("b", corev1.ServiceTypeNodePort, corev1.ServicePort{Port: 80, NodePort: 30080}))
		e.Create("create c on 80", Services, service("c", corev1.ServiceTypeNodePort, corev1.ServicePort{Port: 80, NodePort: 80}))
		e.Create("create d with 30081 twice", Services, service("d", corev1.ServiceTypeNodePort, corev1.ServicePort{Name: "x", Port: 80, NodePort: 30081}, corev1.ServicePort{Name: "y", Port: 81, NodePort: 30081}))
		e.Create("create e with a nodePort on ClusterIP", Services, service("e", "", corev1.ServicePort{Port: 80, NodePort: 30082}))
	}},
	{Name: "service-node-port-released", Doc: "Deleting a NodePort Service releases its port; changing the type to ClusterIP drops the nodePort.", Run: func(e *Env) {
		e.Clean(allocated("30020", "30021"))
		e.Create("create a on 30020", Services, service("a", corev1.ServiceTypeNodePort, corev1.ServicePort{Port: 80, NodePort: 30020}))
		e.Delete("delete a", Services, "a", metav1.DeleteOptions{})
		e.Create("create b on 30020", Services, service("b", corev1.ServiceTypeNodePort, corev1.ServicePort{Port: 80, NodePort: 30020}))
		e.Create("create c on 30021", Services, service("c", corev1.ServiceTypeNodePort, corev1.ServicePort{Port: 80, NodePort: 30021}))
		e.Patch("c becomes ClusterIP", Services, "c", "", types.MergePatchType, `{"spec":{"type":"ClusterIP","externalTrafficPolicy":null,"ports":[{"port":80,"protocol":"TCP","targetPort":80}]}}`)
		e.Create("create d on 30021", Services, service("d", corev1.ServiceTypeNodePort, corev1.ServicePort{Port: 80, NodePort: 30021}))
	}},
	{Name: "service-type-change-allocates", Doc: "Changing a ClusterIP Service to NodePort allocates a nodePort and sets externalTrafficPolicy.", Run: func(e *Env) {
		e.Clean(allocated())
		e.Create("create a", Services, service("a", ""))
		e.Patch("a becomes NodePort", Services, "a", "", types.MergePatchType, `{"spec":{"type":"NodePort"}}`)
	}},
	{Name: "service-load-balancer", Doc: "A LoadBalancer Service gets a clusterIP, nodePorts, allocateLoadBalancerNodePorts true and externalTrafficPolicy Cluster; Local gets a healthCheckNodePort.", Run: func(e *Env) {
		e.Clean(allocated())
		e.Create("create lb", Services, service("lb", corev1.ServiceTypeLoadBalancer))
		s := service("local", corev1.ServiceTypeLoadBalancer)
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		e.Create("create local", Services, s)
	}},
	{Name: "service-external-traffic-policy-invalid", Doc: "externalTrafficPolicy on a ClusterIP Service is 422; an unknown value on a NodePort one is 422.", Run: func(e *Env) {
		s := service("a", "")
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		e.Create("create ClusterIP with Local", Services, s)
		s = service("b", corev1.ServiceTypeNodePort)
		s.Spec.ExternalTrafficPolicy = "Sometimes"
		e.Create("create NodePort with Sometimes", Services, s)
	}},
	{Name: "service-headless-with-selector", Doc: "A headless Service with a selector: clusterIP None, clusterIPs [None], ipFamilies [IPv4], SingleStack.", Run: func(e *Env) {
		s := service("h", "")
		s.Spec.ClusterIP = corev1.ClusterIPNone
		e.Create("create headless h", Services, s)
	}},

	// --- ServiceAccount token ---
	{Name: "serviceaccount-token", Doc: "POST serviceaccounts/NAME/token issues a token (TokenRequest: audiences, expirationSeconds defaulted); a missing ServiceAccount is 404; expirationSeconds below 600 is 422.", Run: func(e *Env) {
		e.Clean(allocated())
		e.Create("create sa", ServiceAccounts, &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{Kind: "ServiceAccount", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "sa"}})
		tr := &authenticationv1.TokenRequest{TypeMeta: metav1.TypeMeta{Kind: "TokenRequest", APIVersion: "authentication.k8s.io/v1"}}
		e.request("request a token", "POST", ServiceAccounts.path(e.Namespace, "sa", "token"), nil, "", tr)
		e.request("request a token of a missing account", "POST", ServiceAccounts.path(e.Namespace, "missing", "token"), nil, "", tr)
		short := tr.DeepCopy()
		short.Spec.ExpirationSeconds = ptr(int64(60))
		e.request("request a 60 s token", "POST", ServiceAccounts.path(e.Namespace, "sa", "token"), nil, "", short)
		aud := tr.DeepCopy()
		aud.Spec.Audiences = []string{"vault"}
		aud.Spec.ExpirationSeconds = ptr(int64(7200))
		e.request("request a token for vault", "POST", ServiceAccounts.path(e.Namespace, "sa", "token"), nil, "", aud)
	}},
	{Name: "serviceaccount-token-get", Doc: "The token subresource takes POST only: GET is 405.", Run: func(e *Env) {
		e.Create("create sa", ServiceAccounts, &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{Kind: "ServiceAccount", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "sa"}})
		e.request("get the token", "GET", ServiceAccounts.path(e.Namespace, "sa", "token"), nil, "", nil)
	}},

	// --- server-side apply on a Deployment ---
	{Name: "ssa-deployment-shared-ownership", Doc: "A second manager applying the same Deployment shares every field (selector included): no conflict.", Run: func(e *Env) {
		e.ShowManagers()
		e.apply("alice applies web", Deployments, "web", "alice", false, deployApply)
		e.apply("bob applies the same web", Deployments, "web", "bob", false, deployApply)
		e.apply("alice applies replicas 3", Deployments, "web", "alice", false, deployHeader+"spec:\n  replicas: 3\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: c\n        image: registry.example/app:1.0\n")
	}},
	{Name: "ssa-deployment-partial-apply", Doc: "A manager applying only spec.replicas of an existing Deployment owns replicas alone; the selector and template stay.", Run: func(e *Env) {
		e.ShowManagers()
		e.apply("alice applies web", Deployments, "web", "alice", false, deployApply)
		e.apply("scaler applies replicas 4 with force", Deployments, "web", "scaler", true, deployHeader+"spec:\n  replicas: 4\n")
		e.apply("carol applies an annotation", Deployments, "web", "carol", false, deployHeader+"  annotations:\n    note: x\n")
		e.Get("get web", Deployments, "web")
	}},
	{Name: "ssa-deployment-partial-create", Doc: "An apply creating a Deployment without a selector or template is 422.", Run: func(e *Env) {
		e.apply("apply replicas only", Deployments, "web", "alice", false, deployHeader+"spec:\n  replicas: 1\n")
	}},
	{Name: "ssa-service-ports", Doc: "Apply of a Service: ports merge by port and protocol; allocated fields stay; a second manager's same port shares it.", Run: func(e *Env) {
		e.Clean(allocated())
		h := "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n  ports:\n  - name: http\n    port: 80\n"
		e.apply("alice applies web", Services, "web", "alice", false, h)
		e.apply("bob applies the same port", Services, "web", "bob", false, h)
		e.apply("bob adds a port", Services, "web", "bob", false, h+"  - name: https\n    port: 443\n")
	}},

	// --- PersistentVolumeClaim ---
	{Name: "pvc-create-defaults", Doc: "A PVC gets volumeMode Filesystem and status phase Pending; no generation.", Run: func(e *Env) {
		e.Create("create data", PersistentVolumeClaims, pvc("data"))
		e.Get("get data", PersistentVolumeClaims, "data")
	}},
	{Name: "pvc-validation", Doc: "A PVC without access modes, without a storage request, with an unknown access mode or volumeMode is 422.", Run: func(e *Env) {
		c := pvc("a")
		c.Spec.AccessModes = nil
		e.Create("create without access modes", PersistentVolumeClaims, c)
		c = pvc("b")
		c.Spec.Resources.Requests = nil
		e.Create("create without storage", PersistentVolumeClaims, c)
		c = pvc("c")
		c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{"ReadSometimes"}
		e.Create("create with access mode ReadSometimes", PersistentVolumeClaims, c)
		c = pvc("d")
		c.Spec.VolumeMode = ptr(corev1.PersistentVolumeMode("Tape"))
		e.Create("create with volumeMode Tape", PersistentVolumeClaims, c)
		c = pvc("e")
		c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("0")
		e.Create("create with storage 0", PersistentVolumeClaims, c)
	}},
	{Name: "pvc-spec-immutable", Doc: "A pending PVC's spec cannot change (422); its status can, through /status.", Run: func(e *Env) {
		e.Create("create data", PersistentVolumeClaims, pvc("data"))
		e.Patch("grow the request", PersistentVolumeClaims, "data", "", types.MergePatchType, `{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`)
		e.Patch("change access modes", PersistentVolumeClaims, "data", "", types.MergePatchType, `{"spec":{"accessModes":["ReadWriteMany"]}}`)
		e.Patch("bind through status", PersistentVolumeClaims, "data", "status", types.MergePatchType, `{"status":{"phase":"Bound","accessModes":["ReadWriteOnce"],"capacity":{"storage":"1Gi"}}}`)
		e.Patch("label data", PersistentVolumeClaims, "data", "", types.MergePatchType, `{"metadata":{"labels":{"x":"y"}}}`)
	}},
	{Name: "pvc-storage-class-and-selector", Doc: "A PVC keeps its storageClassName and selector; an invalid selector is 422.", Run: func(e *Env) {
		c := pvc("a")
		c.Spec.StorageClassName = ptr("fast")
		c.Spec.Selector = selector("db")
		e.Create("create with class and selector", PersistentVolumeClaims, c)
		c = pvc("b")
		c.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}
		e.Create("create with a bad selector", PersistentVolumeClaims, c)
	}},

	// --- ReplicationController ---
	{Name: "rc-create-defaults", Doc: "A ReplicationController: replicas 1, the pod template defaults, generation 1; /scale reads and writes replicas.", Run: func(e *Env) {
		e.Create("create rc", ReplicationControllers, replicationController("rc"))
		e.request("get /scale", "GET", ReplicationControllers.path(e.Namespace, "rc", "scale"), nil, "", nil)
		e.Patch("merge patch /scale", ReplicationControllers, "rc", "scale", types.MergePatchType, `{"spec":{"replicas":3}}`)
		e.Get("get rc", ReplicationControllers, "rc")
	}},
	{Name: "rc-selector-from-template", Doc: "An RC without a selector takes its template's labels as selector and labels.", Run: func(e *Env) {
		rc := replicationController("rc")
		rc.Spec.Selector = nil
		e.Create("create rc without selector", ReplicationControllers, rc)
	}},
	{Name: "rc-validation", Doc: "An RC whose selector does not match its template, or with restartPolicy Never, or negative replicas, is 422; status ready above replicas is 422.", Run: func(e *Env) {
		rc := replicationController("a")
		rc.Spec.Selector = map[string]string{"app": "other"}
		e.Create("create with a mismatched selector", ReplicationControllers, rc)
		rc = replicationController("b")
		rc.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
		e.Create("create with restartPolicy Never", ReplicationControllers, rc)
		rc = replicationController("c")
		rc.Spec.Replicas = ptr(int32(-1))
		e.Create("create with replicas -1", ReplicationControllers, rc)
		e.Create("create d", ReplicationControllers, replicationController("d"))
		e.Patch("status ready 2 of 1", ReplicationControllers, "d", "status", types.MergePatchType, `{"status":{"replicas":1,"readyReplicas":2}}`)
	}},

	// --- RBAC ---
	{Name: "role-create", Doc: "A Role is stored as sent (no generation); its rules need verbs, apiGroups and resources.", Run: func(e *Env) {
		e.Create("create reader", Roles, role("reader"))
		e.Create("create without verbs", Roles, role("a", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}}))
		e.Create("create without apiGroups", Roles, role("b", rbacv1.PolicyRule{Resources: []string{"pods"}, Verbs: []string{"get"}}))
		e.Create("create with nonResourceURLs", Roles, role("c", rbacv1.PolicyRule{NonResourceURLs: []string{"/healthz"}, Verbs: []string{"get"}}))
	}},
	{Name: "role-names", Doc: "RBAC names are path segments: system:reader is fine, a slash is 422.", Run: func(e *Env) {
		e.Create("create system:reader", Roles, role("system:reader"))
		e.Create("create a/b", Roles, role("a/b"))
		e.Create("create Upper", Roles, role("Upper"))
	}},
	{Name: "rolebinding-create", Doc: "A RoleBinding defaults roleRef.apiGroup and a User subject's apiGroup; its roleRef cannot change.", Run: func(e *Env) {
		e.Create("create reader", Roles, role("reader"))
		e.Create("create binding", RoleBindings, roleBinding("binding", "reader"))
		e.Patch("change roleRef", RoleBindings, "binding", "", types.MergePatchType, `{"roleRef":{"name":"writer"}}`)
		e.Patch("change subjects", RoleBindings, "binding", "", types.MergePatchType, `{"subjects":[{"kind":"Group","name":"devs","apiGroup":"rbac.authorization.k8s.io"}]}`)
	}},
	{Name: "rolebinding-validation", Doc: "A RoleBinding to a kind other than Role or ClusterRole, a subject of an unknown kind, or a ServiceAccount with an apiGroup, is 422.", Run: func(e *Env) {
		b := roleBinding("a", "reader")
		b.RoleRef.Kind = "Deployment"
		e.Create("create with roleRef kind Deployment", RoleBindings, b)
		b = roleBinding("b", "reader")
		b.Subjects = []rbacv1.Subject{{Kind: "Robot", Name: "r2"}}
		e.Create("create with subject kind Robot", RoleBindings, b)
		b = roleBinding("c", "reader")
		b.Subjects = []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default", APIGroup: "rbac.authorization.k8s.io"}}
		e.Create("create with a ServiceAccount in the RBAC group", RoleBindings, b)
		b = roleBinding("d", "reader")
		b.RoleRef.Name = ""
		e.Create("create without roleRef name", RoleBindings, b)
	}},
	{Name: "clusterrole-and-binding", Doc: "A ClusterRole takes nonResourceURLs; a ClusterRoleBinding's ServiceAccount subject needs a namespace; both are cluster-scoped.", Run: func(e *Env) {
		name := e.Namespace + "-viewer"
		cr := &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{Kind: "ClusterRole", APIVersion: "rbac.authorization.k8s.io/v1"}, ObjectMeta: metav1.ObjectMeta{Name: name},
			Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/healthz"}, Verbs: []string{"get"}}, {APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"list"}}}}
		e.Create("create the cluster role", ClusterRoles, cr)
		crb := &rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{Kind: "ClusterRoleBinding", APIVersion: "rbac.authorization.k8s.io/v1"}, ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: name}, Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default"}}}
		e.Create("create a binding without the account's namespace", ClusterRoleBindings, crb)
		crb.Subjects[0].Namespace = e.Namespace
		e.Create("create the binding", ClusterRoleBindings, crb)
		crb2 := crb.DeepCopy()
		crb2.Name = name + "-2"
		crb2.RoleRef.Kind = "Role"
		e.Create("create a binding to a Role", ClusterRoleBindings, crb2)
		e.Delete("delete the binding", ClusterRoleBindings, name, metav1.DeleteOptions{})
		e.Delete("delete the cluster role", ClusterRoles, name, metav1.DeleteOptions{})
	}},
	{Name: "clusterrole-aggregation", Doc: "A ClusterRole with an aggregationRule is stored; one with an empty selector list is 422.", Run: func(e *Env) {
		name := e.Namespace + "-agg"
		cr := &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{Kind: "ClusterRole", APIVersion: "rbac.authorization.k8s.io/v1"}, ObjectMeta: metav1.ObjectMeta{Name: name},
			AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"agg": e.Namespace}}}}}
		e.Create("create the aggregated role", ClusterRoles, cr)
		bad := cr.DeepCopy()
		bad.Name = name + "-bad"
		bad.AggregationRule.ClusterRoleSelectors = nil
		e.Create("create with no selectors", ClusterRoles, bad)
		e.Delete("delete the aggregated role", ClusterRoles, name, metav1.DeleteOptions{})
	}},

	// --- PodDisruptionBudget ---
	{Name: "pdb-create", Doc: "A PDB: generation 1, minAvailable kept, status fields as the server sets them.", Run: func(e *Env) {
		e.Create("create web", PodDisruptionBudgets, pdb("web"))
		e.Get("get web", PodDisruptionBudgets, "web")
		e.Patch("change minAvailable", PodDisruptionBudgets, "web", "", types.MergePatchType, `{"spec":{"minAvailable":2}}`)
	}},
	{Name: "pdb-validation", Doc: "A PDB with both minAvailable and maxUnavailable, a percentage above 100%, or a negative value is 422.", Run: func(e *Env) {
		p := pdb("a")
		p.Spec.MaxUnavailable = ptr(intstr.FromInt32(1))
		e.Create("create with both", PodDisruptionBudgets, p)
		p = pdb("b")
		p.Spec.MinAvailable = ptr(intstr.FromString("150%"))
		e.Create("create with 150%", PodDisruptionBudgets, p)
		p = pdb("c")
		p.Spec.MinAvailable = ptr(intstr.FromInt32(-1))
		e.Create("create with -1", PodDisruptionBudgets, p)
		p = pdb("d")
		p.Spec.UnhealthyPodEvictionPolicy = ptr(policyv1.UnhealthyPodEvictionPolicyType("Never"))
		e.Create("create with eviction policy Never", PodDisruptionBudgets, p)
	}},
	{Name: "pdb-status", Doc: "A PDB's /status takes counts and conditions; negative counts are 422.", Run: func(e *Env) {
		e.Create("create web", PodDisruptionBudgets, pdb("web"))
		e.Patch("status", PodDisruptionBudgets, "web", "status", types.MergePatchType, `{"status":{"currentHealthy":2,"desiredHealthy":1,"expectedPods":2,"disruptionsAllowed":1,"observedGeneration":1}}`)
		e.Patch("status negative", PodDisruptionBudgets, "web", "status", types.MergePatchType, `{"status":{"currentHealthy":-1}}`)
	}},

	// --- networking.k8s.io/v1 ---
	{Name: "ingress-create", Doc: "An Ingress: generation 1, an empty status; a rule without pathType is 422.", Run: func(e *Env) {
		e.Create("create web", Ingresses, ingress("web"))
		bad := ingress("bad")
		bad.Spec.Rules[0].HTTP.Paths[0].PathType = nil
		e.Create("create without pathType", Ingresses, bad)
	}},
	{Name: "ingress-validation", Doc: "An Ingress without rules or backend, with an IP host, a relative path, or a backend with port name and number is 422.", Run: func(e *Env) {
		e.Create("create empty", Ingresses, &networkingv1.Ingress{TypeMeta: metav1.TypeMeta{Kind: "Ingress", APIVersion: "networking.k8s.io/v1"}, ObjectMeta: metav1.ObjectMeta{Name: "a"}})
		b := ingress("b")
		b.Spec.Rules[0].Host = "10.0.0.1"
		e.Create("create with an IP host", Ingresses, b)
		c := ingress("c")
		c.Spec.Rules[0].HTTP.Paths[0].Path = "relative"
		e.Create("create with a relative path", Ingresses, c)
		d := ingress("d")
		d.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Port.Name = "http"
		e.Create("create with port name and number", Ingresses, d)
	}},
	{Name: "networkpolicy-defaults", Doc: "A NetworkPolicy's ports default to TCP and policyTypes to [Ingress] (plus Egress with egress rules).", Run: func(e *Env) {
		e.Create("create db", NetworkPolicies, networkPolicy("db"))
		np := networkPolicy("db-egress")
		np.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}}}}}}
		e.Create("create db-egress", NetworkPolicies, np)
	}},
	{Name: "networkpolicy-validation", Doc: "A NetworkPolicy with protocol BOGUS, a bad CIDR, an except outside its CIDR, or endPort below port is 422.", Run: func(e *Env) {
		np := networkPolicy("a")
		np.Spec.Ingress[0].Ports[0].Protocol = ptr(corev1.Protocol("BOGUS"))
		e.Create("create with protocol BOGUS", NetworkPolicies, np)
		np = networkPolicy("b")
		np.Spec.Ingress[0].From = []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/33"}}}
		e.Create("create with CIDR /33", NetworkPolicies, np)
		np = networkPolicy("c")
		np.Spec.Ingress[0].From = []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/16", Except: []string{"192.168.0.0/24"}}}}
		e.Create("create with an except outside", NetworkPolicies, np)
		np = networkPolicy("d")
		np.Spec.Ingress[0].Ports[0].EndPort = ptr(int32(100))
		e.Create("create with endPort below port", NetworkPolicies, np)
	}},

	// --- autoscaling/v2 ---
	{Name: "hpa-defaults", Doc: "An HPA gets minReplicas 1 and a CPU target of 80% when it names no metric; a given behavior's missing rules are filled in.", Run: func(e *Env) {
		e.Create("create web", HorizontalPodAutoscalers, hpa("web"))
		h := hpa("api")
		h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr(int32(60))}}
		e.Create("create api with a scale-down window", HorizontalPodAutoscalers, h)
	}},
	{Name: "hpa-validation", Doc: "An HPA with minReplicas 0, maxReplicas below minReplicas, no target name, or a metric without its source is 422.", Run: func(e *Env) {
		h := hpa("a")
		h.Spec.MinReplicas = ptr(int32(0))
		e.Create("create with minReplicas 0", HorizontalPodAutoscalers, h)
		h = hpa("b")
		h.Spec.MinReplicas, h.Spec.MaxReplicas = ptr(int32(3)), 2
		e.Create("create with max below min", HorizontalPodAutoscalers, h)
		h = hpa("c")
		h.Spec.ScaleTargetRef.Name = ""
		e.Create("create without a target name", HorizontalPodAutoscalers, h)
		h = hpa("d")
		h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType}}
		e.Create("create a Resource metric without source", HorizontalPodAutoscalers, h)
	}},
	{Name: "hpa-generation-and-status", Doc: "An HPA's generation grows on a spec change; /status takes replica counts.", Run: func(e *Env) {
		e.Create("create web", HorizontalPodAutoscalers, hpa("web"))
		e.Patch("raise maxReplicas", HorizontalPodAutoscalers, "web", "", types.MergePatchType, `{"spec":{"maxReplicas":8}}`)
		e.Patch("status", HorizontalPodAutoscalers, "web", "status", types.MergePatchType, `{"status":{"currentReplicas":2,"desiredReplicas":3}}`)
		e.Patch("status negative", HorizontalPodAutoscalers, "web", "status", types.MergePatchType, `{"status":{"currentReplicas":-1,"desiredReplicas":3}}`)
	}},

	// --- CRDs created through the API ---
	{Name: "crd-created-at-run-time", Doc: "A CRD created through the API becomes NamesAccepted and Established; its resource is served (schema validated); deleting the CRD removes the resource and its objects.", Run: func(e *Env) {
		e.Clean(allocated())
		group := e.Namespace + ".cachelab.dev"
		crd := widgetCRD(group)
		name := "widgets." + group
		e.Create("create the CRD", CustomResourceDefinitions, crd)
		e.WaitUntil(CustomResourceDefinitions, name, established)
		e.Get("get the CRD", CustomResourceDefinitions, name)
		widgets := Resource{GVR: schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}, Namespaced: true}
		e.waitServed(widgets)
		w := map[string]any{"apiVersion": group + "/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}, "spec": map[string]any{"size": int64(1)}}
		e.Create("create a widget", widgets, w)
		e.Create("create a widget of size -1", widgets, with(with(w, "bad", "metadata", "name"), int64(-1), "spec", "size"))
		e.Delete("delete the CRD", CustomResourceDefinitions, name, metav1.DeleteOptions{})
		e.WaitGone(CustomResourceDefinitions, name)
		e.Get("get the widget after", widgets, "w")
	}},
	{Name: "crd-invalid-through-api", Doc: "A CRD whose name is not plural.group, or without versions, is 422.", Run: func(e *Env) {
		group := e.Namespace + ".cachelab.dev"
		crd := widgetCRD(group)
		e.Create("create with a wrong name", CustomResourceDefinitions, with(crd, "gadgets."+group, "metadata", "name"))
		e.Create("create without versions", CustomResourceDefinitions, with(crd, []any{}, "spec", "versions"))
	}},
	// --- more of the same kinds ---
	{Name: "service-session-affinity", Doc: "ClientIP session affinity gets a sessionAffinityConfig of 10800 s; a timeout above a day is 422.", Run: func(e *Env) {
		e.Clean(allocated())
		s := service("a", "")
		s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		e.Create("create with ClientIP", Services, s)
		s = service("b", "")
		s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr(int32(86401))}}
		e.Create("create with a timeout of 86401 s", Services, s)
	}},
	{Name: "ingress-default-backend-and-tls", Doc: "An Ingress with only a defaultBackend and a TLS section is stored as sent; its /status takes a load balancer address.", Run: func(e *Env) {
		in := &networkingv1.Ingress{TypeMeta: metav1.TypeMeta{Kind: "Ingress", APIVersion: "networking.k8s.io/v1"}, ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: networkingv1.IngressSpec{IngressClassName: ptr("nginx"), DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Name: "http"}}},
				TLS: []networkingv1.IngressTLS{{Hosts: []string{"web.example.com"}, SecretName: "web-tls"}}}}
		e.Create("create web", Ingresses, in)
		e.Patch("status", Ingresses, "web", "status", types.MergePatchType, `{"status":{"loadBalancer":{"ingress":[{"ip":"192.0.2.1"}]}}}`)
	}},
	{Name: "pvc-watch", Doc: "PVCs list and watch like any resource; a status write is a MODIFIED event.", Run: func(e *Env) {
		l := e.List("list", PersistentVolumeClaims, metav1.ListOptions{})
		w := e.Watch("watch", PersistentVolumeClaims, metav1.ListOptions{ResourceVersion: l.RV()})
		e.Create("create data", PersistentVolumeClaims, pvc("data"))
		e.Patch("bind through status", PersistentVolumeClaims, "data", "status", types.MergePatchType, `{"status":{"phase":"Bound"}}`)
		e.Delete("delete data", PersistentVolumeClaims, "data", metav1.DeleteOptions{})
		e.Collect("events", w, 3)
	}},
	{Name: "hpa-autoscaling-v1", Doc: "An HPA created as autoscaling/v2 is also served as autoscaling/v1 (targetCPUUtilizationPercentage).", Run: func(e *Env) {
		e.Create("create web", HorizontalPodAutoscalers, hpa("web"))
		v1 := Resource{GVR: schema.GroupVersionResource{Group: "autoscaling", Version: "v1", Resource: "horizontalpodautoscalers"}, Namespaced: true}
		e.Get("get web as v1", v1, "web")
	}},
	{Name: "discovery-issue29-kinds", Doc: "Aggregated discovery of the RBAC, policy, networking and autoscaling kinds: scope, short names, categories, verbs, subresources.", Run: func(e *Env) {
		e.Discovery("core", "/api", "", "persistentvolumeclaims", "replicationcontrollers")
		e.Discovery("rbac", "/apis", "rbac.authorization.k8s.io", "roles", "rolebindings", "clusterroles", "clusterrolebindings")
		e.Discovery("policy", "/apis", "policy", "poddisruptionbudgets")
		e.Discovery("networking", "/apis", "networking.k8s.io", "ingresses", "networkpolicies")
		e.Discovery("autoscaling", "/apis", "autoscaling", "horizontalpodautoscalers")
	}},
}

func init() { Cases = append(Cases, issue29Cases...) }
