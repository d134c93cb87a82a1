package fidelity

import (
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The built-in resources real controllers need (issue 18, for issue 19's
// ReplicaSet and Job controllers).
var (
	Deployments         = Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespaced: true}
	ReplicaSets         = Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, Namespaced: true}
	StatefulSets        = Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, Namespaced: true}
	DaemonSets          = Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, Namespaced: true}
	ControllerRevisions = Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}, Namespaced: true}
	Jobs                = Resource{GVR: schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, Namespaced: true}
	Services            = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "services"}, Namespaced: true}
	ServiceAccounts     = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, Namespaced: true}
	Nodes               = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}}
)

func template(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/app:1.0"}}},
	}
}

func selector(app string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
}

func deploymentObj(name string) *appsv1.Deployment {
	return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{Kind: "Deployment", APIVersion: "apps/v1"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Selector: selector(name), Template: template(name)}}
}

func replicaSetObj(name string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{TypeMeta: metav1.TypeMeta{Kind: "ReplicaSet", APIVersion: "apps/v1"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.ReplicaSetSpec{Selector: selector(name), Template: template(name)}}
}

func statefulSetObj(name string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{Kind: "StatefulSet", APIVersion: "apps/v1"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.StatefulSetSpec{Selector: selector(name), Template: template(name), ServiceName: name}}
}

func daemonSetObj(name string) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{TypeMeta: metav1.TypeMeta{Kind: "DaemonSet", APIVersion: "apps/v1"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DaemonSetSpec{Selector: selector(name), Template: template(name)}}
}

func jobObj(name string) *batchv1.Job {
	t := template(name)
	t.Spec.RestartPolicy = corev1.RestartPolicyNever
	return &batchv1.Job{TypeMeta: metav1.TypeMeta{Kind: "Job", APIVersion: "batch/v1"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{Template: t}}
}

// jobNote records whether the job strategy's generated selector and
// template labels carry the Job's own UID and name (the recorded bodies
// drop them: see sansJobUIDs).
func jobNote(e *Env, step string, r Result) {
	spec, _ := r.Body["spec"].(map[string]any)
	if spec == nil {
		e.Note(step, "no spec")
		return
	}
	uid := r.UID()
	sel, _ := spec["selector"].(map[string]any)
	ml, _ := sel["matchLabels"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	tl, _ := meta(tmpl)["labels"].(map[string]any)
	e.Note(step, "selector controller-uid is the job's uid: "+boolWord(ml[batchv1.ControllerUidLabel] == uid)+
		"; template controller-uid labels: "+boolWord(tl[batchv1.ControllerUidLabel] == uid && tl["controller-uid"] == uid)+
		"; template job-name labels: "+str(tl, batchv1.JobNameLabel)+"/"+str(tl, "job-name"))
}

func boolWord(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// sansJobUIDs is a Job's body without the labels that hold its UID (the
// normalizer ranks UIDs in metadata, not inside content).
func sansJobUIDs(body map[string]any) map[string]any {
	if _, ok := body["spec"]; !ok {
		return body
	}
	out := with(body, nil, "spec", "selector", "matchLabels", batchv1.ControllerUidLabel)
	for _, k := range []string{batchv1.ControllerUidLabel, "controller-uid"} {
		out = with(out, nil, "spec", "template", "metadata", "labels", k)
		if _, ok := meta(out)["labels"]; ok {
			out = with(out, nil, "metadata", "labels", k)
		}
	}
	// Back to encoding/json's numbers, as a recorded transcript reads them.
	data, err := json.Marshal(out)
	if err != nil {
		panic(caseFailure{err})
	}
	var back map[string]any
	if err := json.Unmarshal(data, &back); err != nil {
		panic(caseFailure{err})
	}
	return back
}

var workloadCases = []Case{
	{Name: "deployment-create-defaults", Doc: "A Deployment is created with generation 1, the scheme's defaults (replicas, strategy, pod template) and an empty status.", Run: func(e *Env) {
		e.Create("create web", Deployments, deploymentObj("web"))
		e.Get("get web", Deployments, "web")
	}},
	{Name: "deployment-generation", Doc: "A Deployment's generation grows on spec changes only; status is ignored by updates.", Run: func(e *Env) {
		d := e.Create("create web", Deployments, deploymentObj("web"))
		d = e.Update("label web", Deployments, "web", with(d.Body, map[string]any{"x": "y"}, "metadata", "labels"))
		d = e.Update("update with status", Deployments, "web", with(d.Body, map[string]any{"replicas": int64(3)}, "status"))
		d = e.Update("scale web in spec", Deployments, "web", with(d.Body, int64(4), "spec", "replicas"))
		e.Patch("patch the template", Deployments, "web", "", types.MergePatchType, `{"spec":{"template":{"metadata":{"annotations":{"v":"2"}}}}}`)
		e.Get("get web", Deployments, "web")
	}},
	{Name: "deployment-status-subresource", Doc: "/status of a Deployment changes only status; generation stays.", Run: func(e *Env) {
		e.Create("create web", Deployments, deploymentObj("web"))
		e.Patch("patch status", Deployments, "web", "status", types.MergePatchType, `{"status":{"replicas":1,"observedGeneration":1}}`)
		e.Patch("patch spec through status", Deployments, "web", "status", types.MergePatchType, `{"spec":{"replicas":9}}`)
		e.Get("get web", Deployments, "web")
	}},
	{Name: "deployment-scale-subresource", Doc: "/scale of a Deployment: an autoscaling/v1 Scale; updating it sets spec.replicas and bumps generation.", Run: func(e *Env) {
		e.Create("create web", Deployments, deploymentObj("web"))
		sc := e.request("get /scale", "GET", Deployments.path(e.Namespace, "web", "scale"), nil, "", nil)
		e.request("update /scale to 3", "PUT", Deployments.path(e.Namespace, "web", "scale"), nil, "", with(sc.Body, int64(3), "spec", "replicas"))
		e.request("update /scale with the old resourceVersion", "PUT", Deployments.path(e.Namespace, "web", "scale"), nil, "", with(sc.Body, int64(4), "spec", "replicas"))
		e.Patch("merge patch /scale", Deployments, "web", "scale", types.MergePatchType, `{"spec":{"replicas":5}}`)
		e.request("update /scale to -1", "PUT", Deployments.path(e.Namespace, "web", "scale"), nil, "", map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": map[string]any{"name": "web"}, "spec": map[string]any{"replicas": int64(-1)}})
		e.Get("get web", Deployments, "web")
	}},
	{Name: "deployment-validation", Doc: "A Deployment without a selector, with one that does not match the template, or with negative replicas is 422.", Run: func(e *Env) {
		d := deploymentObj("a")
		d.Spec.Selector = nil
		e.Create("create without selector", Deployments, d)
		d = deploymentObj("b")
		d.Spec.Template.Labels = map[string]string{"app": "other"}
		e.Create("create with a selector not matching the template", Deployments, d)
		d = deploymentObj("c")
		d.Spec.Replicas = ptr(int32(-1))
		e.Create("create with replicas -1", Deployments, d)
		d = deploymentObj("d")
		d.Spec.Template.Spec.Containers = nil
		e.Create("create without containers", Deployments, d)
	}},
	{Name: "deployment-selector-immutable", Doc: "A Deployment's selector cannot change (422 on spec.selector).", Run: func(e *Env) {
		e.Create("create web", Deployments, deploymentObj("web"))
		e.Patch("change the selector", Deployments, "web", "", types.MergePatchType, `{"spec":{"selector":{"matchLabels":{"app":"web","tier":"x"}},"template":{"metadata":{"labels":{"app":"web","tier":"x"}}}}}`)
	}},
	{Name: "deployment-watch-and-list", Doc: "Deployments list and watch like any resource.", Run: func(e *Env) {
		l := e.List("list", Deployments, metav1.ListOptions{})
		w := e.Watch("watch", Deployments, metav1.ListOptions{ResourceVersion: l.RV()})
		e.Create("create web", Deployments, deploymentObj("web"))
		e.Patch("scale web", Deployments, "web", "scale", types.MergePatchType, `{"spec":{"replicas":2}}`)
		e.Delete("delete web", Deployments, "web", metav1.DeleteOptions{})
		e.Collect("events", w, 3)
	}},
	{Name: "replicaset-create-and-scale", Doc: "A ReplicaSet: defaults, generation, /status and /scale.", Run: func(e *Env) {
		e.Create("create rs", ReplicaSets, replicaSetObj("rs"))
		e.Patch("patch status", ReplicaSets, "rs", "status", types.MergePatchType, `{"status":{"replicas":1,"readyReplicas":1}}`)
		e.request("get /scale", "GET", ReplicaSets.path(e.Namespace, "rs", "scale"), nil, "", nil)
		e.Patch("merge patch /scale", ReplicaSets, "rs", "scale", types.MergePatchType, `{"spec":{"replicas":3}}`)
		e.Get("get rs", ReplicaSets, "rs")
	}},
	{Name: "replicaset-owned-by-deployment-gc", Doc: "A ReplicaSet owned by a Deployment is garbage collected when the Deployment goes.", Run: func(e *Env) {
		d := e.Create("create web", Deployments, deploymentObj("web"))
		rs := replicaSetObj("web-1")
		rs.Spec.Selector, rs.Spec.Template = selector("web"), template("web")
		rs.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: types.UID(d.UID()), Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}
		e.Create("create web-1 owned by web", ReplicaSets, rs)
		e.Delete("delete web", Deployments, "web", metav1.DeleteOptions{})
		e.WaitGone(ReplicaSets, "web-1")
		e.Get("get web-1", ReplicaSets, "web-1")
	}},
	{Name: "statefulset-create-defaults", Doc: "A StatefulSet: defaults, generation, /scale.", Run: func(e *Env) {
		e.Create("create db", StatefulSets, statefulSetObj("db"))
		e.Patch("merge patch /scale", StatefulSets, "db", "scale", types.MergePatchType, `{"spec":{"replicas":2}}`)
		e.Get("get db", StatefulSets, "db")
	}},
	{Name: "daemonset-create-defaults", Doc: "A DaemonSet: defaults, generation, no /scale.", Run: func(e *Env) {
		e.Create("create agent", DaemonSets, daemonSetObj("agent"))
		e.request("get /scale", "GET", DaemonSets.path(e.Namespace, "agent", "scale"), nil, "", nil)
		e.Patch("patch the template", DaemonSets, "agent", "", types.MergePatchType, `{"spec":{"template":{"metadata":{"annotations":{"v":"2"}}}}}`)
		e.Get("get agent", DaemonSets, "agent")
	}},
	{Name: "controllerrevision-data-immutable", Doc: "A ControllerRevision's data cannot change; revision and labels can.", Run: func(e *Env) {
		cr := &appsv1.ControllerRevision{TypeMeta: metav1.TypeMeta{Kind: "ControllerRevision", APIVersion: "apps/v1"}, ObjectMeta: metav1.ObjectMeta{Name: "rev"},
			Data: runtime.RawExtension{Raw: []byte(`{"spec":{"x":1}}`)}, Revision: 1}
		e.Create("create rev", ControllerRevisions, cr)
		e.Patch("change data", ControllerRevisions, "rev", "", types.MergePatchType, `{"data":{"spec":{"x":2}}}`)
		e.Patch("change revision", ControllerRevisions, "rev", "", types.MergePatchType, `{"revision":2}`)
		e.Get("get rev", ControllerRevisions, "rev")
	}},
	{Name: "job-create-defaults-and-selector", Doc: "A Job gets the scheme's defaults and, without manualSelector, a selector and template labels generated from its UID.", Run: func(e *Env) {
		e.Clean(sansJobUIDs)
		j := e.Create("create once", Jobs, jobObj("once"))
		jobNote(e, "generated selector", j)
		e.Get("get once", Jobs, "once")
	}},
	{Name: "job-validation", Doc: "A Job with restartPolicy Always, or without containers, is 422; completions cannot change.", Run: func(e *Env) {
		e.Clean(sansJobUIDs)
		j := jobObj("always")
		j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		e.Create("create with restartPolicy Always", Jobs, j)
		j = jobObj("empty")
		j.Spec.Template.Spec.Containers = nil
		e.Create("create without containers", Jobs, j)
		e.Create("create once", Jobs, jobObj("once"))
		e.Patch("change completions", Jobs, "once", "", types.MergePatchType, `{"spec":{"completions":3}}`)
		e.Patch("change parallelism", Jobs, "once", "", types.MergePatchType, `{"spec":{"parallelism":2}}`)
	}},
	{Name: "job-status-subresource", Doc: "/status of a Job changes only status.", Run: func(e *Env) {
		e.Clean(sansJobUIDs)
		e.Create("create once", Jobs, jobObj("once"))
		e.Patch("suspend once", Jobs, "once", "", types.MergePatchType, `{"spec":{"suspend":true}}`)
		e.Patch("patch status", Jobs, "once", "status", types.MergePatchType, `{"status":{"active":1}}`)
	}},
	{Name: "service-headless-defaults", Doc: "A headless Service gets type ClusterIP, sessionAffinity None, clusterIPs [None], ipFamilies, ipFamilyPolicy, internalTrafficPolicy and targetPort = port.", Run: func(e *Env) {
		svc := &corev1.Service{TypeMeta: metav1.TypeMeta{Kind: "Service", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "db"},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "db"}, Ports: []corev1.ServicePort{{Name: "sql", Port: 5432}}}}
		e.Create("create db", Services, svc)
		e.Get("get db", Services, "db")
	}},
	{Name: "service-validation", Doc: "A Service name must be a DNS-1035 label; a ClusterIP Service needs ports.", Run: func(e *Env) {
		svc := &corev1.Service{TypeMeta: metav1.TypeMeta{Kind: "Service", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "1db"},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 80}}}}
		e.Create("create 1db", Services, svc)
		svc = &corev1.Service{TypeMeta: metav1.TypeMeta{Kind: "Service", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "noports"}}
		e.Create("create without ports", Services, svc)
	}},
	{Name: "serviceaccount-create", Doc: "A ServiceAccount is created as sent.", Run: func(e *Env) {
		e.Create("create robot", ServiceAccounts, &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{Kind: "ServiceAccount", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "robot"}})
		e.Get("get robot", ServiceAccounts, "robot")
		e.Delete("delete robot", ServiceAccounts, "robot", metav1.DeleteOptions{})
	}},
	{Name: "node-create-and-status", Doc: "A Node (cluster-scoped): create, /status, delete.", Run: func(e *Env) {
		name := e.Namespace + "-node"
		e.Create("create node", Nodes, &corev1.Node{TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: name}})
		e.Patch("cordon", Nodes, name, "", types.MergePatchType, `{"spec":{"unschedulable":true}}`)
		e.Patch("patch status", Nodes, name, "status", types.MergePatchType, `{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"ok","lastHeartbeatTime":null,"lastTransitionTime":null}]}}`)
		e.List("list unschedulable", Nodes, metav1.ListOptions{FieldSelector: "metadata.name=" + name + ",spec.unschedulable=true"})
		e.Delete("delete node", Nodes, name, metav1.DeleteOptions{})
	}},
	{Name: "discovery-workloads", Doc: "Aggregated discovery of the workload built-ins: short names, categories, verbs, status and scale subresources.", Run: func(e *Env) {
		e.Discovery("core", "/api", "", "nodes", "services", "serviceaccounts")
		e.Discovery("apps", "/apis", "apps", "controllerrevisions", "daemonsets", "deployments", "replicasets", "statefulsets")
		e.Discovery("batch", "/apis", "batch", "jobs")
	}},
}

func init() { Cases = append(Cases, workloadCases...) }
