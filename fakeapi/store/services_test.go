package store

import (
	"net"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func svc(name string, typ corev1.ServiceType, ip string, nodePort int32) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: corev1.ServiceSpec{Type: typ, ClusterIP: ip, Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080), NodePort: nodePort}}}}
}

// TestServiceAllocatorsGiveReleaseAndRefuse: a ClusterIP Service gets a
// free address of 10.0.0.0/24 and the single-stack family fields; a
// NodePort one a node port of 30000-32767 and externalTrafficPolicy
// Cluster; an address or port already held, or outside its range, is 422
// on the field kube-apiserver names; a delete releases both, so the same
// request then succeeds; changing the type to NodePort allocates a port.
// (Issue 29: the fake allocated nothing.)
func TestServiceAllocatorsGiveReleaseAndRefuse(t *testing.T) {
	s, _ := newTestStore(t, 0)
	a := mustCreate(t, s, coreServices, "ns", svc("a", "", "", 0)).(*corev1.Service)
	if ip := net.ParseIP(a.Spec.ClusterIP); ip == nil || !serviceCIDR.Contains(ip) || a.Spec.ClusterIP == kubernetesServiceIP {
		t.Errorf("clusterIP %q, want a free address of %s", a.Spec.ClusterIP, serviceCIDRString)
	}
	if len(a.Spec.ClusterIPs) != 1 || a.Spec.ClusterIPs[0] != a.Spec.ClusterIP || *a.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack || len(a.Spec.IPFamilies) != 1 {
		t.Errorf("family fields: clusterIPs %v, policy %v, families %v", a.Spec.ClusterIPs, a.Spec.IPFamilyPolicy, a.Spec.IPFamilies)
	}
	b := mustCreate(t, s, coreServices, "ns", svc("b", "", "", 0)).(*corev1.Service)
	if b.Spec.ClusterIP == a.Spec.ClusterIP {
		t.Errorf("two Services got %s", a.Spec.ClusterIP)
	}
	_, _, err := s.Create(coreServices, "ns", svc("c", "", a.Spec.ClusterIP, 0), metav1.CreateOptions{})
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	assertCause(t, err, "spec.clusterIPs")
	_, _, err = s.Create(coreServices, "ns", svc("c", "", "10.1.0.5", 0), metav1.CreateOptions{})
	assertCause(t, err, "spec.clusterIPs")

	np := mustCreate(t, s, coreServices, "ns", svc("np", corev1.ServiceTypeNodePort, "", 0)).(*corev1.Service)
	if p := np.Spec.Ports[0].NodePort; p < nodePortLow || p > nodePortHigh || np.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster {
		t.Errorf("nodePort %d, externalTrafficPolicy %q", p, np.Spec.ExternalTrafficPolicy)
	}
	_, _, err = s.Create(coreServices, "ns", svc("np2", corev1.ServiceTypeNodePort, "", np.Spec.Ports[0].NodePort), metav1.CreateOptions{})
	assertCause(t, err, "spec.ports[0].nodePort")
	_, _, err = s.Create(coreServices, "ns", svc("np3", corev1.ServiceTypeNodePort, "", 80), metav1.CreateOptions{})
	assertCause(t, err, "spec.ports[0].nodePort")

	if _, _, err := s.Delete(coreServices, "ns", "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Delete(coreServices, "ns", "np", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, coreServices, "ns", svc("c", "", a.Spec.ClusterIP, 0))
	mustCreate(t, s, coreServices, "ns", svc("np2", corev1.ServiceTypeNodePort, "", np.Spec.Ports[0].NodePort))

	b.Spec.Type = corev1.ServiceTypeNodePort
	out, _, err := s.Update(coreServices, "ns", b, metav1.UpdateOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*corev1.Service); got.Spec.Ports[0].NodePort == 0 || got.Spec.ClusterIP != b.Spec.ClusterIP {
		t.Errorf("ClusterIP to NodePort: nodePort %d, clusterIP %s (was %s)", got.Spec.Ports[0].NodePort, got.Spec.ClusterIP, b.Spec.ClusterIP)
	}
}

// assertCause fails unless err is a 422 with a cause on field.
func assertCause(t *testing.T, err error, field string) {
	t.Helper()
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	st, ok := err.(interface{ Status() metav1.Status })
	if !ok || st.Status().Details == nil {
		t.Fatalf("%v has no details", err)
	}
	for _, c := range st.Status().Details.Causes {
		if c.Field == field {
			return
		}
	}
	t.Errorf("%v: no cause on %s", err, field)
}
