package store

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func dsTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
}

// TestWorkloadStrategiesAsRecorded: what the fidelity corpus recorded
// from kube-apiserver for the workload built-ins (cases
// daemonset-create-defaults, statefulset-create-defaults,
// node-create-and-status, service-headless-defaults, service-validation,
// serviceaccount-create, deployment-validation).
func TestWorkloadStrategiesAsRecorded(t *testing.T) {
	s, _ := newTestStore(t, 0)
	dsGVR := appsv1.SchemeGroupVersion.WithResource("daemonsets")
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}, Template: dsTemplate()}}
	out := mustCreate(t, s, dsGVR, "ns", ds).(*appsv1.DaemonSet)
	if out.Annotations[daemonSetTemplateGeneration] != "1" || out.Generation != 1 {
		t.Errorf("created daemonset: annotations %v, generation %d; want template generation 1", out.Annotations, out.Generation)
	}
	p, _, err := s.Patch(dsGVR, "ns", "d", types.MergePatchType, []byte(`{"spec":{"template":{"metadata":{"annotations":{"v":"2"}}}}}`), metav1.PatchOptions{}, "")
	if err != nil || p.(*appsv1.DaemonSet).Annotations[daemonSetTemplateGeneration] != "2" {
		t.Errorf("template change: %v, %v; want template generation 2", p, err)
	}

	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}, Template: dsTemplate()}}
	st := mustCreate(t, s, appsv1.SchemeGroupVersion.WithResource("statefulsets"), "ns", sts).(*appsv1.StatefulSet)
	if ru := st.Spec.UpdateStrategy.RollingUpdate; ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 1 || *ru.Partition != 0 {
		t.Errorf("statefulset rollingUpdate = %+v, want partition 0, maxUnavailable 1", ru)
	}

	node := mustCreate(t, s, corev1.SchemeGroupVersion.WithResource("nodes"), "", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}).(*corev1.Node)
	if len(node.Spec.Taints) != 1 || node.Spec.Taints[0].Key != corev1.TaintNodeNotReady {
		t.Errorf("node taints = %v, want the not-ready NoSchedule taint", node.Spec.Taints)
	}

	svcGVR := corev1.SchemeGroupVersion.WithResource("services")
	svc := mustCreate(t, s, svcGVR, "ns", &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "1db"},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 80}}}}).(*corev1.Service)
	if *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicyRequireDualStack || len(svc.Spec.IPFamilies) != 2 || svc.Spec.Ports[0].TargetPort.IntValue() != 80 {
		t.Errorf("headless service without selector = %+v, want RequireDualStack, two families, targetPort 80", svc.Spec)
	}

	saGVR := corev1.SchemeGroupVersion.WithResource("serviceaccounts")
	mustCreate(t, s, saGVR, "ns", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa"}})
	if !s.ReturnsDeletedObject(saGVR) || s.ReturnsDeletedObject(configmapsGVR) {
		t.Error("serviceaccounts answer a delete with the object, configmaps with a Status")
	}

	depGVR := appsv1.SchemeGroupVersion.WithResource("deployments")
	_, _, err = s.Create(depGVR, "ns", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: appsv1.DeploymentSpec{Template: dsTemplate()}}, metav1.CreateOptions{})
	if got := causes(t, err); got["spec.selector"] != metav1.CauseTypeFieldValueRequired || got["spec.template.metadata.labels"] != metav1.CauseTypeFieldValueInvalid {
		t.Errorf("deployment without selector: causes %v, want selector required and template labels invalid", got)
	}
}

// TestNamespaceLifecycleRefusesCreatesInMissingNamespaces: with
// Options.NamespaceLifecycle a create in a namespace that does not exist
// is 404 naming the namespace, before validation (fidelity case
// create-in-missing-namespace); without it the create succeeds.
func TestNamespaceLifecycleRefusesCreatesInMissingNamespaces(t *testing.T) {
	s := New(Options{NamespaceLifecycle: true})
	_, _, err := s.Create(configmapsGVR, "missing", cm("", "Bad_Name", nil), metav1.CreateOptions{})
	assertStatus(t, err, 404, metav1.StatusReasonNotFound)
	if d := err.(interface{ Status() metav1.Status }).Status().Details; d == nil || d.Kind != "namespaces" || d.Name != "missing" {
		t.Errorf("details = %+v, want namespaces missing", d)
	}
	mustCreate(t, s, namespacesGVR, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "here"}})
	mustCreate(t, s, configmapsGVR, "here", cm("", "a", nil))
	mustCreate(t, s, namespacesGVR, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster-scoped-needs-none"}})

	off := New(Options{})
	mustCreate(t, off, configmapsGVR, "missing", cm("", "a", nil))
}
