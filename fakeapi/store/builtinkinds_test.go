package store

import (
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

var (
	pvcGVR    = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	rcGVR     = corev1.SchemeGroupVersion.WithResource("replicationcontrollers")
	roleGVR   = rbacv1.SchemeGroupVersion.WithResource("roles")
	crGVR     = rbacv1.SchemeGroupVersion.WithResource("clusterroles")
	rbGVR     = rbacv1.SchemeGroupVersion.WithResource("rolebindings")
	crbGVR    = rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings")
	pdbGVR    = policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets")
	ingGVR    = networkingv1.SchemeGroupVersion.WithResource("ingresses")
	netpolGVR = networkingv1.SchemeGroupVersion.WithResource("networkpolicies")
	hpaGVR    = autoscalingv2.SchemeGroupVersion.WithResource("horizontalpodautoscalers")
)

func om(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }

// validBuiltins returns one valid object of each kind of builtinkinds.go.
func validBuiltins() map[schema.GroupVersionResource]runtime.Object {
	podTmpl := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	return map[schema.GroupVersionResource]runtime.Object{
		pvcGVR: &corev1.PersistentVolumeClaim{ObjectMeta: om("default", "data"), Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		}},
		rcGVR: &corev1.ReplicationController{ObjectMeta: om("default", "rc"), Spec: corev1.ReplicationControllerSpec{Template: podTmpl}},
		roleGVR: &rbacv1.Role{ObjectMeta: om("default", "reader"), Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}}},
		crGVR: &rbacv1.ClusterRole{ObjectMeta: om("", "system:reader"), Rules: []rbacv1.PolicyRule{
			{NonResourceURLs: []string{"/healthz"}, Verbs: []string{"get"}}}},
		rbGVR: &rbacv1.RoleBinding{ObjectMeta: om("default", "reader"), RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "reader"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default"}, {Kind: "User", Name: "alice"}}},
		crbGVR: &rbacv1.ClusterRoleBinding{ObjectMeta: om("", "reader"), RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "system:reader"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default", Namespace: "default"}}},
		pdbGVR: &policyv1.PodDisruptionBudget{ObjectMeta: om("default", "pdb"), Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromString("50%")), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}}},
		ingGVR: &networkingv1.Ingress{ObjectMeta: om("default", "web"), Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
			Host: "*.example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix),
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}},
			}}}},
		}}}},
		netpolGVR: &networkingv1.NetworkPolicy{ObjectMeta: om("default", "deny"), Spec: networkingv1.NetworkPolicySpec{
			Egress: []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: ptr.To(intstr.FromInt32(53))}},
				To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}}}}}}}},
		hpaGVR: &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: om("default", "web"), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, MaxReplicas: 5}},
	}
}

// Each kind that was 404 is served with kube-apiserver's scope, and a
// valid object is created with its defaults and (where the real strategy
// has one) generation 1.
func TestBuiltinKindsOperatorsCreateAreServedWithScopeDefaultsAndGeneration(t *testing.T) {
	s, _ := newTestStore(t, 0)
	clusterScoped := map[schema.GroupVersionResource]bool{crGVR: true, crbGVR: true}
	withGeneration := map[schema.GroupVersionResource]bool{rcGVR: true, pdbGVR: true, ingGVR: true, netpolGVR: true, hpaGVR: true}
	for gvr, obj := range validBuiltins() {
		ns := "default"
		if clusterScoped[gvr] {
			ns = ""
		}
		out, _, err := s.Create(gvr, ns, obj, metav1.CreateOptions{})
		if err != nil {
			t.Errorf("create %s: %v", gvr.Resource, err)
			continue
		}
		m := mustAccessor(out)
		if m.GetNamespace() != ns || m.GetResourceVersion() == "" {
			t.Errorf("%s: namespace %q resourceVersion %q, want %q and stored", gvr.Resource, m.GetNamespace(), m.GetResourceVersion(), ns)
		}
		if want := map[bool]int64{true: 1}[withGeneration[gvr]]; m.GetGeneration() != want {
			t.Errorf("%s: generation %d, want %d", gvr.Resource, m.GetGeneration(), want)
		}
		switch o := out.(type) {
		case *corev1.PersistentVolumeClaim:
			if o.Status.Phase != corev1.ClaimPending || o.Spec.VolumeMode == nil || *o.Spec.VolumeMode != corev1.PersistentVolumeFilesystem {
				t.Errorf("PVC phase %q volumeMode %v, want Pending and Filesystem", o.Status.Phase, o.Spec.VolumeMode)
			}
		case *corev1.ReplicationController:
			if o.Spec.Selector["app"] != "a" || o.Labels["app"] != "a" || *o.Spec.Replicas != 1 || o.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
				t.Errorf("RC defaults: selector %v labels %v replicas %v restartPolicy %q", o.Spec.Selector, o.Labels, *o.Spec.Replicas, o.Spec.Template.Spec.RestartPolicy)
			}
		case *rbacv1.RoleBinding:
			if o.RoleRef.APIGroup != rbacv1.GroupName || o.Subjects[0].APIGroup != "" || o.Subjects[1].APIGroup != rbacv1.GroupName {
				t.Errorf("RoleBinding apiGroups: roleRef %q subjects %q %q", o.RoleRef.APIGroup, o.Subjects[0].APIGroup, o.Subjects[1].APIGroup)
			}
		case *networkingv1.NetworkPolicy:
			if len(o.Spec.PolicyTypes) != 2 || *o.Spec.Egress[0].Ports[0].Protocol != corev1.ProtocolTCP {
				t.Errorf("NetworkPolicy defaults: policyTypes %v protocol %v", o.Spec.PolicyTypes, *o.Spec.Egress[0].Ports[0].Protocol)
			}
		case *autoscalingv2.HorizontalPodAutoscaler:
			if *o.Spec.MinReplicas != 1 || len(o.Spec.Metrics) != 1 || *o.Spec.Metrics[0].Resource.Target.AverageUtilization != 80 {
				t.Errorf("HPA defaults: minReplicas %v metrics %+v", *o.Spec.MinReplicas, o.Spec.Metrics)
			}
		}
	}
}

// Objects missing what the real validation requires are 422 Invalid,
// naming the field.
func TestBuiltinKindsRefuseWhatTheRealValidationRefuses(t *testing.T) {
	for _, c := range []struct {
		name  string
		gvr   schema.GroupVersionResource
		ns    string
		obj   runtime.Object
		field string
	}{
		{"pvc without access modes", pvcGVR, "default", &corev1.PersistentVolumeClaim{ObjectMeta: om("default", "p"),
			Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}, "spec.accessModes"},
		{"pvc without storage", pvcGVR, "default", &corev1.PersistentVolumeClaim{ObjectMeta: om("default", "p"),
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}}, "spec.resources[storage]"},
		{"rc without template", rcGVR, "default", &corev1.ReplicationController{ObjectMeta: om("default", "r"),
			Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{"a": "b"}}}, "spec.template"},
		{"role rule without verbs", roleGVR, "default", &rbacv1.Role{ObjectMeta: om("default", "r"),
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}}}}, "rules[0].verbs"},
		{"role with a non-resource URL", roleGVR, "default", &rbacv1.Role{ObjectMeta: om("default", "r"),
			Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/x"}, Verbs: []string{"get"}}}}, "rules[0].nonResourceURLs"},
		{"role name with a slash", roleGVR, "default", &rbacv1.Role{ObjectMeta: om("default", "a/b")}, "metadata.name"},
		{"binding to a Pod", rbGVR, "default", &rbacv1.RoleBinding{ObjectMeta: om("default", "b"),
			RoleRef: rbacv1.RoleRef{Kind: "Pod", Name: "x"}}, "roleRef.kind"},
		{"cluster binding of a service account without namespace", crbGVR, "", &rbacv1.ClusterRoleBinding{ObjectMeta: om("", "b"),
			RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "x"}, Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "sa"}}}, "subjects[0].namespace"},
		{"pdb with both bounds", pdbGVR, "default", &policyv1.PodDisruptionBudget{ObjectMeta: om("default", "p"),
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}}, "spec"},
		{"pdb above 100%", pdbGVR, "default", &policyv1.PodDisruptionBudget{ObjectMeta: om("default", "p"),
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromString("150%"))}}, "spec.maxUnavailable"},
		{"empty ingress", ingGVR, "default", &networkingv1.Ingress{ObjectMeta: om("default", "i")}, "spec"},
		{"ingress path without pathType", ingGVR, "default", &networkingv1.Ingress{ObjectMeta: om("default", "i"), Spec: networkingv1.IngressSpec{
			Rules: []networkingv1.IngressRule{{IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: "/", Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "s", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}}},
			"spec.rules[0].http.paths[0].pathType"},
		{"ingress backend without port", ingGVR, "default", &networkingv1.Ingress{ObjectMeta: om("default", "i"), Spec: networkingv1.IngressSpec{
			DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "s"}}}}, "spec.defaultBackend"},
		{"netpol bad protocol", netpolGVR, "default", &networkingv1.NetworkPolicy{ObjectMeta: om("default", "n"), Spec: networkingv1.NetworkPolicySpec{
			Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.Protocol("BOGUS"))}}}}}},
			"spec.ingress[0].ports[0].protocol"},
		{"netpol empty peer", netpolGVR, "default", &networkingv1.NetworkPolicy{ObjectMeta: om("default", "n"), Spec: networkingv1.NetworkPolicySpec{
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{}}}}}}, "spec.ingress[0].from[0]"},
		{"hpa max below min", hpaGVR, "default", &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: om("default", "h"), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "d"}, MinReplicas: ptr.To[int32](3), MaxReplicas: 2}}, "spec.maxReplicas"},
		{"hpa without target", hpaGVR, "default", &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: om("default", "h"), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			MaxReplicas: 2}}, "spec.scaleTargetRef.kind"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := newTestStore(t, 0)
			_, _, err := s.Create(c.gvr, c.ns, c.obj, metav1.CreateOptions{})
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create: %v, want 422 Invalid", err)
			}
			var found bool
			for _, cause := range err.(apierrors.APIStatus).Status().Details.Causes {
				found = found || cause.Field == c.field
			}
			if !found {
				t.Errorf("error %v names no %s", err, c.field)
			}
		})
	}
}

// Updates follow the strategies: spec changes bump generation where the
// kind has one (not on RBAC), status is kept by a main update and written
// by the status subresource, where it is validated; roleRef is immutable;
// an unbound PVC's spec is immutable; an RC scales through /scale with its
// map selector.
func TestBuiltinKindsUpdateRules(t *testing.T) {
	s, _ := newTestStore(t, 0)
	objs := validBuiltins()
	for gvr, obj := range objs {
		ns := "default"
		if gvr == crGVR || gvr == crbGVR {
			ns = ""
		}
		if _, _, err := s.Create(gvr, ns, obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", gvr.Resource, err)
		}
	}
	get := func(gvr schema.GroupVersionResource, ns, name string) runtime.Object {
		t.Helper()
		o, err := s.Get(gvr, ns, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}

	// PDB: spec change bumps generation; status through /status only.
	pdb := get(pdbGVR, "default", "pdb").(*policyv1.PodDisruptionBudget)
	pdb.Spec.MinAvailable = ptr.To(intstr.FromInt32(1))
	pdb.Status.DisruptionsAllowed = 7
	out, _, err := s.Update(pdbGVR, "default", pdb, metav1.UpdateOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*policyv1.PodDisruptionBudget); got.Generation != 2 || got.Status.DisruptionsAllowed != 0 {
		t.Errorf("PDB after spec update: generation %d disruptionsAllowed %d, want 2 and status kept (0)", got.Generation, got.Status.DisruptionsAllowed)
	}
	pdb = out.(*policyv1.PodDisruptionBudget)
	pdb.Status.DisruptionsAllowed, pdb.Status.ObservedGeneration = 1, 2
	if out, _, err = s.Update(pdbGVR, "default", pdb, metav1.UpdateOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	if got := out.(*policyv1.PodDisruptionBudget); got.Generation != 2 || got.Status.DisruptionsAllowed != 1 {
		t.Errorf("PDB after status update: generation %d disruptionsAllowed %d, want 2 and 1", got.Generation, got.Status.DisruptionsAllowed)
	}
	pdb = out.(*policyv1.PodDisruptionBudget)
	pdb.Status.ExpectedPods = -1
	if _, _, err = s.Update(pdbGVR, "default", pdb, metav1.UpdateOptions{}, "status"); !apierrors.IsInvalid(err) {
		t.Errorf("PDB status expectedPods -1: %v, want 422", err)
	}

	// RC: status readyReplicas above replicas is refused.
	rc := get(rcGVR, "default", "rc").(*corev1.ReplicationController)
	rc.Status.Replicas, rc.Status.ReadyReplicas = 1, 2
	if _, _, err = s.Update(rcGVR, "default", rc, metav1.UpdateOptions{}, "status"); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "status.readyReplicas") {
		t.Errorf("RC status readyReplicas > replicas: %v, want 422 on status.readyReplicas", err)
	}
	sc, err := s.GetScale(rcGVR, "default", "rc")
	if err != nil || sc.Spec.Replicas != 1 || sc.Status.Selector != "app=a" {
		t.Fatalf("RC scale = %+v, %v; want replicas 1, selector app=a", sc, err)
	}
	sc.Spec.Replicas = 3
	if _, _, err = s.UpdateScale(rcGVR, "default", sc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := get(rcGVR, "default", "rc").(*corev1.ReplicationController); *got.Spec.Replicas != 3 || got.Generation != 2 {
		t.Errorf("RC after scale: replicas %d generation %d, want 3 and 2", *got.Spec.Replicas, got.Generation)
	}

	// Role: no generation, rules change freely.
	role := get(roleGVR, "default", "reader").(*rbacv1.Role)
	role.Rules[0].Verbs = append(role.Rules[0].Verbs, "watch")
	if out, _, err = s.Update(roleGVR, "default", role, metav1.UpdateOptions{}, ""); err != nil || out.(*rbacv1.Role).Generation != 0 {
		t.Errorf("Role update: %v generation %d, want no generation", err, mustAccessor(out).GetGeneration())
	}
	if _, _, err = s.Update(roleGVR, "default", role, metav1.UpdateOptions{}, "status"); !apierrors.IsNotFound(err) {
		t.Errorf("Role status update: %v, want 404 (no status subresource)", err)
	}

	// RoleBinding: roleRef immutable.
	rb := get(rbGVR, "default", "reader").(*rbacv1.RoleBinding)
	rb.RoleRef.Name = "writer"
	if _, _, err = s.Update(rbGVR, "default", rb, metav1.UpdateOptions{}, ""); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "cannot change roleRef") {
		t.Errorf("RoleBinding roleRef change: %v, want 422 cannot change roleRef", err)
	}

	// PVC: an unbound claim's request cannot change.
	pvc := get(pvcGVR, "default", "data").(*corev1.PersistentVolumeClaim)
	pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
	if _, _, err = s.Update(pvcGVR, "default", pvc, metav1.UpdateOptions{}, ""); !apierrors.IsInvalid(err) {
		t.Errorf("unbound PVC request change: %v, want 422", err)
	}
}
