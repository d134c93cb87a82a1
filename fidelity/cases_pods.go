package fidelity

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Pods is core/v1 pods.
var Pods = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true}

// pod is a Pod named name with one container c running image, scheduled
// to node ("" leaves it unscheduled).
func pod(name, image, node string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: image}}},
	}
}

// waitDefaultServiceAccount waits for the namespace's default
// ServiceAccount (the serviceaccount controller makes it; ServiceAccount
// admission refuses Pods before it exists).
func waitDefaultServiceAccount(e *Env) {
	e.WaitUntil(ServiceAccounts, "default", func(map[string]any) bool { return true })
}

// podCases are the Pod cases: what admission and defaulting add on
// create, what may change, the status subresource, and graceful deletion.
var podCases = []Case{
	{Name: "pod-create-defaults", Doc: "A Pod gets the defaults (restartPolicy, dnsPolicy, schedulerName, grace period, enableServiceLinks, container pull policy and termination message), priority 0 and preemptionPolicy (Priority admission), the not-ready/unreachable tolerations (DefaultTolerationSeconds admission), the default ServiceAccount with its projected token volume (ServiceAccount admission), phase Pending and a QoS class.", Run: func(e *Env) {
		waitDefaultServiceAccount(e)
		e.Create("create p", Pods, pod("p", "busybox", ""))
		e.Get("get p", Pods, "p")
		tagged := pod("tagged", "busybox:1.36", "")
		tagged.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}}
		e.Create("create tagged", Pods, tagged)
	}},
	{Name: "pod-create-qos-and-no-token", Doc: "Limits alone are copied to requests (Guaranteed); requests alone are Burstable; automountServiceAccountToken false adds no token volume.", Run: func(e *Env) {
		waitDefaultServiceAccount(e)
		g := pod("guaranteed", "busybox", "")
		g.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
		e.Create("create guaranteed", Pods, g)
		b := pod("burstable", "busybox", "")
		b.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
		no := false
		b.Spec.AutomountServiceAccountToken = &no
		e.Create("create burstable without token", Pods, b)
	}},
	{Name: "pod-create-invalid", Doc: "Pod validation: containers required, unique container names, a known restartPolicy.", Run: func(e *Env) {
		waitDefaultServiceAccount(e)
		none := pod("none", "busybox", "")
		none.Spec.Containers = nil
		e.Create("create without containers", Pods, none)
		dup := pod("dup", "busybox", "")
		dup.Spec.Containers = append(dup.Spec.Containers, corev1.Container{Name: "c", Image: "nginx"})
		e.Create("create with duplicate container names", Pods, dup)
		bad := pod("bad", "busybox", "")
		bad.Spec.RestartPolicy = "Sometimes"
		e.Create("create with a bad restartPolicy", Pods, bad)
	}},
	{Name: "pod-update-spec", Doc: "A Pod's spec is immutable but for container images, activeDeadlineSeconds and added tolerations; an image change bumps generation.", Run: func(e *Env) {
		waitDefaultServiceAccount(e)
		e.Create("create p", Pods, pod("p", "busybox", ""))
		e.Patch("change the image", Pods, "p", "", types.StrategicMergePatchType, `{"spec":{"containers":[{"name":"c","image":"busybox:1.36"}]}}`)
		e.Patch("set activeDeadlineSeconds", Pods, "p", "", types.MergePatchType, `{"spec":{"activeDeadlineSeconds":60}}`)
		e.Patch("change restartPolicy", Pods, "p", "", types.MergePatchType, `{"spec":{"restartPolicy":"Never"}}`)
		e.Patch("change the labels", Pods, "p", "", types.MergePatchType, `{"metadata":{"labels":{"app":"x"}}}`)
		e.Get("get p", Pods, "p")
	}},
	{Name: "pod-status-subresource", Doc: "/status of a Pod changes only status (and generation stays); a spec change through the main resource leaves status.", Run: func(e *Env) {
		waitDefaultServiceAccount(e)
		e.Create("create p", Pods, pod("p", "busybox", "n1"))
		e.Patch("patch status Running", Pods, "p", "status", types.MergePatchType, `{"spec":{"activeDeadlineSeconds":5},"status":{"phase":"Running","podIP":"10.0.0.7","conditions":[{"type":"Ready","status":"True"}]}}`)
		e.Patch("patch status through the main resource", Pods, "p", "", types.MergePatchType, `{"status":{"phase":"Failed"}}`)
		e.List("list Running on n1", Pods, metav1.ListOptions{FieldSelector: "spec.nodeName=n1,status.phase=Running"})
		// No kubelet ends a scheduled Pod's graceful deletion here: the
		// case ends it, or its namespace would never go.
		e.Delete("delete p with grace 0", Pods, "p", metav1.DeleteOptions{GracePeriodSeconds: ptr[int64](0)})
	}},
	{Name: "pod-delete-unscheduled", Doc: "A Pod on no node is deleted at once.", Run: func(e *Env) {
		waitDefaultServiceAccount(e)
		e.Create("create p", Pods, pod("p", "busybox", ""))
		w := e.Watch("watch", Pods, metav1.ListOptions{ResourceVersion: "0"})
		e.Collect("initial", w, 1)
		e.Delete("delete p", Pods, "p", metav1.DeleteOptions{})
		e.Get("get p", Pods, "p")
		e.Collect("events", w, 2)
	}},
	{Name: "pod-delete-graceful", Doc: "A Pod on a node is deleted gracefully: deletionTimestamp and deletionGracePeriodSeconds (the spec's 30 s) set, the object kept; a shorter grace period shortens it, a longer one does not; grace 0 removes it.", Run: func(e *Env) {
		waitDefaultServiceAccount(e)
		e.Create("create p", Pods, pod("p", "busybox", "n1"))
		w := e.Watch("watch", Pods, metav1.ListOptions{ResourceVersion: "0"})
		e.Collect("initial", w, 1)
		e.Delete("delete p", Pods, "p", metav1.DeleteOptions{})
		e.Get("get p while terminating", Pods, "p")
		e.Delete("delete p with grace 10", Pods, "p", metav1.DeleteOptions{GracePeriodSeconds: ptr[int64](10)})
		e.Delete("delete p with grace 60", Pods, "p", metav1.DeleteOptions{GracePeriodSeconds: ptr[int64](60)})
		e.Delete("delete p with grace 0", Pods, "p", metav1.DeleteOptions{GracePeriodSeconds: ptr[int64](0)})
		e.Get("get p", Pods, "p")
		e.Collect("events", w, 4)
	}},
	{Name: "pod-delete-finished", Doc: "A Pod on a node that has finished (Succeeded) is deleted at once.", Run: func(e *Env) {
		waitDefaultServiceAccount(e)
		e.Create("create p", Pods, pod("p", "busybox", "n1"))
		e.Patch("patch status Succeeded", Pods, "p", "status", types.MergePatchType, `{"status":{"phase":"Succeeded"}}`)
		e.Delete("delete p", Pods, "p", metav1.DeleteOptions{})
		e.Get("get p", Pods, "p")
	}},
}

func init() { Cases = append(Cases, podCases...) }
