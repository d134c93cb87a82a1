package http_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/cachelab/cachelab/fakeapi"
	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
)

// typedClient is what every typed client of client-go offers.
type typedClient[T runtime.Object, L runtime.Object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	List(context.Context, metav1.ListOptions) (L, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
}

// statusClient is a typed client of a kind with a status subresource.
type statusClient[T runtime.Object] interface {
	UpdateStatus(context.Context, T, metav1.UpdateOptions) (T, error)
}

// exercise creates obj, gets and lists it, watches from the list, updates
// a label and (with setStatus) the status through /status, and checks
// each answer and watch event.
func exercise[T runtime.Object, L runtime.Object](t *testing.T, c typedClient[T, L], obj T, setStatus func(T), hasStatus func(T) bool) {
	t.Helper()
	ctx := context.Background()
	name := mustMeta(t, obj).GetName()
	created, err := c.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %T: %v", obj, err)
	}
	got, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil || mustMeta(t, got).GetResourceVersion() != mustMeta(t, created).GetResourceVersion() {
		t.Fatalf("get %s = %v, %v; want the created object", name, got, err)
	}
	list, err := c.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if items, err := meta.ExtractList(list); err != nil || len(items) != 1 {
		t.Fatalf("list items %d, %v; want 1", len(items), err)
	}
	lm, _ := meta.ListAccessor(list)
	w, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: lm.GetResourceVersion()})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	next := func(what string) T {
		t.Helper()
		select {
		case ev := <-w.ResultChan():
			o, ok := ev.Object.(T)
			if ev.Type != watch.Modified || !ok {
				t.Fatalf("%s: watch event %s %T, want MODIFIED %T", what, ev.Type, ev.Object, obj)
			}
			return o
		case <-time.After(time.Minute):
			t.Fatalf("%s: no watch event", what)
		}
		panic("unreachable")
	}
	mustMeta(t, got).SetLabels(map[string]string{"touched": "yes"})
	updated, err := c.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if ev := next("update"); mustMeta(t, ev).GetResourceVersion() != mustMeta(t, updated).GetResourceVersion() || mustMeta(t, ev).GetLabels()["touched"] != "yes" {
		t.Errorf("update event %v, want the updated object", ev)
	}
	if setStatus == nil {
		return
	}
	setStatus(updated)
	st, err := any(c).(statusClient[T]).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	if ev := next("status"); !hasStatus(ev) || !hasStatus(st) {
		t.Errorf("status update answered %v, event %v; want the status written", st, ev)
	}
}

func mustMeta(t *testing.T, obj runtime.Object) metav1.Object {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// exerciseBuiltinKinds runs exercise on every kind of issue 29's "kinds
// 404" list in namespace ns.
func exerciseBuiltinKinds(t *testing.T, cs kubernetes.Interface, ns string) {
	mustNamespace(t, cs, ns)
	podTmpl := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	exercise(t, cs.CoreV1().PersistentVolumeClaims(ns), &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}},
		func(p *corev1.PersistentVolumeClaim) { p.Status.Phase = corev1.ClaimBound },
		func(p *corev1.PersistentVolumeClaim) bool { return p.Status.Phase == corev1.ClaimBound })
	exercise(t, cs.CoreV1().ReplicationControllers(ns), &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "rc"},
		Spec: corev1.ReplicationControllerSpec{Template: podTmpl}},
		func(r *corev1.ReplicationController) { r.Status.Replicas, r.Status.ReadyReplicas = 1, 1 },
		func(r *corev1.ReplicationController) bool { return r.Status.ReadyReplicas == 1 })
	exercise(t, cs.RbacV1().Roles(ns), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}}, nil, nil)
	exercise(t, cs.RbacV1().RoleBindings(ns), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "reader"}, Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default"}}}, nil, nil)
	exercise(t, cs.RbacV1().ClusterRoles(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}}, nil, nil)
	exercise(t, cs.RbacV1().ClusterRoleBindings(), &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-reader"},
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: ns + "-reader"}, Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default", Namespace: ns}}}, nil, nil)
	exercise(t, cs.PolicyV1().PodDisruptionBudgets(ns), &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pdb"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}}},
		func(p *policyv1.PodDisruptionBudget) { p.Status.DisruptionsAllowed, p.Status.ObservedGeneration = 1, 1 },
		func(p *policyv1.PodDisruptionBudget) bool { return p.Status.DisruptionsAllowed == 1 })
	exercise(t, cs.NetworkingV1().Ingresses(ns), &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Name: "http"}}}}},
		func(i *networkingv1.Ingress) {
			i.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "10.0.0.1"}}
		},
		func(i *networkingv1.Ingress) bool { return len(i.Status.LoadBalancer.Ingress) == 1 })
	exercise(t, cs.NetworkingV1().NetworkPolicies(ns), &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "deny"}}, nil, nil)
	exercise(t, cs.AutoscalingV2().HorizontalPodAutoscalers(ns), &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, MaxReplicas: 3}},
		func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Status.CurrentReplicas, h.Status.DesiredReplicas = 2, 3
		},
		func(h *autoscalingv2.HorizontalPodAutoscaler) bool { return h.Status.DesiredReplicas == 3 })
}

// The built-ins that were 404 (PVCs, ReplicationControllers, RBAC, PDBs,
// Ingresses, NetworkPolicies, HPAs) are served over HTTP to client-go's
// typed clientset: create, get, list, watch, update and status update,
// in JSON and in protobuf.
func TestBuiltinKindsServedToTypedClientsInJSONAndProtobuf(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		exerciseBuiltinKinds(t, e.clientset(t, "json"), "json")
		exerciseBuiltinKinds(t, e.clientset(t, "proto", func(c *rest.Config) {
			c.ContentType = runtime.ContentTypeProtobuf
			c.AcceptContentTypes = runtime.ContentTypeProtobuf
		}), "proto")
	})
}

// Discovery lists the kinds with their scope and subresources, so that
// controller-runtime's RESTMapper maps them and its client reads and
// writes them; ServerVersion is the emulated release.
func TestBuiltinKindsInDiscoveryRESTMapperAndControllerRuntimeClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		cs := e.clientset(t, "setup")
		v, err := cs.Discovery().ServerVersion()
		if err != nil || v.GitVersion != "v1.37.2-cachelab" || v.Minor != "37" || v.EmulationMinor != "37" {
			t.Errorf("ServerVersion = %+v, %v; want v1.37.2-cachelab emulating 1.37", v, err)
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
		for _, c := range []struct {
			gk         schema.GroupKind
			resource   string
			namespaced bool
			sub        []string
		}{
			{schema.GroupKind{Kind: "PersistentVolumeClaim"}, "persistentvolumeclaims", true, []string{"status"}},
			{schema.GroupKind{Kind: "ReplicationController"}, "replicationcontrollers", true, []string{"status", "scale"}},
			{schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Role"}, "roles", true, nil},
			{schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}, "rolebindings", true, nil},
			{schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, "clusterroles", false, nil},
			{schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}, "clusterrolebindings", false, nil},
			{schema.GroupKind{Group: "policy", Kind: "PodDisruptionBudget"}, "poddisruptionbudgets", true, []string{"status"}},
			{schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"}, "ingresses", true, []string{"status"}},
			{schema.GroupKind{Group: "networking.k8s.io", Kind: "NetworkPolicy"}, "networkpolicies", true, nil},
			{schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}, "horizontalpodautoscalers", true, []string{"status"}},
		} {
			m, err := mapper.RESTMapping(c.gk)
			if err != nil {
				t.Errorf("RESTMapping(%v): %v", c.gk, err)
				continue
			}
			if m.Resource.Resource != c.resource || (m.Scope.Name() == meta.RESTScopeNameNamespace) != c.namespaced {
				t.Errorf("%v maps to %v scope %s, want %s namespaced=%v", c.gk, m.Resource, m.Scope.Name(), c.resource, c.namespaced)
			}
			list, err := cs.Discovery().ServerResourcesForGroupVersion(m.Resource.GroupVersion().String())
			if err != nil {
				t.Fatal(err)
			}
			served := map[string]bool{}
			for _, r := range list.APIResources {
				served[r.Name] = true
			}
			for _, sub := range c.sub {
				if !served[c.resource+"/"+sub] {
					t.Errorf("discovery of %s has no %s subresource", c.resource, sub)
				}
			}
		}
		pcfg := rest.CopyConfig(cfg)
		pcfg.ContentType = runtime.ContentTypeProtobuf
		for _, c := range []*rest.Config{cfg, pcfg} {
			cl, err := client.New(c, client.Options{Mapper: mapper})
			if err != nil {
				t.Fatal(err)
			}
			ns := "cr-" + map[bool]string{true: "proto", false: "json"}[c.ContentType != ""]
			mustNamespace(t, cs, ns)
			pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pdb"},
				Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1))}}
			if err := cl.Create(context.Background(), pdb); err != nil {
				t.Fatalf("controller-runtime create PDB: %v", err)
			}
			var pdbs policyv1.PodDisruptionBudgetList
			var roles rbacv1.RoleList
			if err := cl.List(context.Background(), &pdbs, client.InNamespace(ns)); err != nil || len(pdbs.Items) != 1 || pdbs.Items[0].Generation != 1 {
				t.Errorf("controller-runtime list PDBs: %d items, %v; want the one created, generation 1", len(pdbs.Items), err)
			}
			if err := cl.List(context.Background(), &roles); err != nil {
				t.Errorf("controller-runtime list Roles: %v", err)
			}
		}
	})
}

// The in-process clientset's discovery answers the same version as
// /version (it answered client-go's unset v0.0.0-master+$Format:%H$).
func TestInProcessDiscoveryServerVersionIsTheEmulatedRelease(t *testing.T) {
	v, err := fakeapi.NewClientset().Discovery().ServerVersion()
	if err != nil || *v != fakehttp.DefaultVersion || v.GitVersion != "v1.37.2-cachelab" {
		t.Errorf("in-process ServerVersion = %+v, %v; want %+v", v, err, fakehttp.DefaultVersion)
	}
}

// A typed informer factory over HTTP (protobuf, as kube-controller-manager
// speaks) syncs and follows the added kinds; the in-process clientset
// serves them too.
func TestBuiltinKindsInInformersAndInProcess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		cs := e.clientset(t, "informers", func(c *rest.Config) {
			c.ContentType = runtime.ContentTypeProtobuf
			c.AcceptContentTypes = runtime.ContentTypeProtobuf
		})
		mustNamespace(t, cs, "a")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		f := informers.NewSharedInformerFactory(cs, 0)
		roles := f.Rbac().V1().Roles().Lister()
		pdbs := f.Policy().V1().PodDisruptionBudgets().Lister()
		hpas := f.Autoscaling().V2().HorizontalPodAutoscalers().Lister()
		f.Start(ctx.Done())
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				t.Fatalf("informer of %v did not sync", typ)
			}
		}
		if _, err := cs.RbacV1().Roles("a").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.PolicyV1().PodDisruptionBudgets("a").Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.AutoscalingV2().HorizontalPodAutoscalers("a").Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "h"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "d"}, MaxReplicas: 1}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if _, err := roles.Roles("a").Get("r"); err != nil {
			t.Errorf("role informer: %v", err)
		}
		if _, err := pdbs.PodDisruptionBudgets("a").Get("p"); err != nil {
			t.Errorf("PDB informer: %v", err)
		}
		if h, err := hpas.HorizontalPodAutoscalers("a").Get("h"); err != nil || *h.Spec.MinReplicas != 1 {
			t.Errorf("HPA informer: %v, %v; want it with minReplicas defaulted to 1", h, err)
		}
		cancel()
	})

	in := fakeapi.NewClientset()
	ctx := context.Background()
	if _, err := in.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	np, err := in.NetworkingV1().NetworkPolicies("a").Create(ctx, &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, metav1.CreateOptions{})
	if err != nil || np.Generation != 1 || len(np.Spec.PolicyTypes) != 1 {
		t.Errorf("in-process NetworkPolicy create = %v, %v; want generation 1, policyTypes [Ingress]", np, err)
	}
	if _, err := in.CoreV1().PersistentVolumeClaims("a").Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("in-process PVC without access modes or storage: %v, want 422", err)
	}
}
