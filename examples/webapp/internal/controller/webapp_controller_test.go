package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	webappv1alpha1 "github.com/cachelab/cachelab/examples/webapp/api/v1alpha1"
)

// These are plain unit tests of Reconcile on controller-runtime's fake
// client: one reconcile at a time, each planted bug shown on the state
// that exposes it. The lab's tests (lab_test.go) find the same bugs from
// random plans.

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := webappv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func newApp(name string, uid types.UID, replicas int32, greeting string) *webappv1alpha1.WebApp {
	return &webappv1alpha1.WebApp{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: uid, Generation: 1},
		Spec:       webappv1alpha1.WebAppSpec{Replicas: &replicas, Version: "v1", Port: 8080, Greeting: greeting, LogLevel: "info"},
	}
}

func newReconciler(t *testing.T, bug Bug, funcs *interceptor.Funcs, objs ...client.Object) *WebAppReconciler {
	t.Helper()
	s := testScheme(t)
	b := fake.NewClientBuilder().WithScheme(s).WithStatusSubresource(&webappv1alpha1.WebApp{}).WithObjects(objs...)
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	c := b.Build()
	return &WebAppReconciler{Client: c, APIReader: c, Scheme: s, Bug: bug}
}

func reconcile(t *testing.T, r *WebAppReconciler, name string) error {
	t.Helper()
	_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: name}})
	return err
}

func get[T client.Object](t *testing.T, c client.Client, name string, obj T) T {
	t.Helper()
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: name}, obj); err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return obj
}

func TestReconcileCreatesTheChildrenControlledByTheWebApp(t *testing.T) {
	app := newApp("a", "uid-a", 2, "hello")
	r := newReconciler(t, NoBug, nil, app)
	if err := reconcile(t, r, "a"); err != nil {
		t.Fatal(err)
	}
	got := get(t, r.Client, "a", &webappv1alpha1.WebApp{})
	cm := get(t, r.Client, "a-config", &corev1.ConfigMap{})
	dep := get(t, r.Client, "a", &appsv1.Deployment{})
	svc := get(t, r.Client, "a", &corev1.Service{})
	for _, child := range []client.Object{cm, dep, svc} {
		if !metav1.IsControlledBy(child, got) {
			t.Errorf("%T %s is not controlled by the WebApp: %v", child, child.GetName(), child.GetOwnerReferences())
		}
	}
	hash := ConfigHash(ConfigData(app))
	if cm.Data["GREETING"] != "hello" || cm.Annotations[ConfigHashAnnotation] != hash {
		t.Errorf("configmap: data %v annotations %v, want GREETING=hello and hash %s", cm.Data, cm.Annotations, hash)
	}
	if *dep.Spec.Replicas != 2 || dep.Spec.Template.Annotations[ConfigHashAnnotation] != hash || dep.Spec.Template.Spec.Containers[0].Image != Image+":v1" {
		t.Errorf("deployment: replicas %d, template annotations %v, image %s; want 2, hash %s, %s:v1",
			*dep.Spec.Replicas, dep.Spec.Template.Annotations, dep.Spec.Template.Spec.Containers[0].Image, hash, Image)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8080 || svc.Spec.Selector["app.kubernetes.io/instance"] != "a" {
		t.Errorf("service: ports %v selector %v", svc.Spec.Ports, svc.Spec.Selector)
	}
	if !meta.IsStatusConditionFalse(got.Status.Conditions, ConditionAvailable) || got.Status.ConfigHash != hash || got.Status.ObservedGeneration != 1 {
		t.Errorf("status %+v: want Available=False (0 of 2 available), configHash %s, observedGeneration 1", got.Status, hash)
	}
	if len(got.Finalizers) != 1 || got.Finalizers[0] != Finalizer {
		t.Errorf("finalizers %v, want [%s]", got.Finalizers, Finalizer)
	}
}

func TestReconcileCopiesTheDeploymentsAvailableReplicas(t *testing.T) {
	app := newApp("a", "uid-a", 2, "hello")
	r := newReconciler(t, NoBug, nil, app)
	if err := reconcile(t, r, "a"); err != nil {
		t.Fatal(err)
	}
	dep := get(t, r.Client, "a", &appsv1.Deployment{})
	dep.Status.Replicas, dep.Status.AvailableReplicas = 2, 2
	if err := r.Status().Update(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
	if err := reconcile(t, r, "a"); err != nil {
		t.Fatal(err)
	}
	got := get(t, r.Client, "a", &webappv1alpha1.WebApp{})
	if got.Status.AvailableReplicas != 2 || got.Status.Replicas != 2 || !meta.IsStatusConditionTrue(got.Status.Conditions, ConditionAvailable) {
		t.Errorf("status %+v: want 2 replicas, 2 available, Available=True", got.Status)
	}
}

// changeSpec applies change to the stored WebApp a.
func changeSpec(t *testing.T, c client.Client, change func(*webappv1alpha1.WebApp)) {
	t.Helper()
	app := get(t, c, "a", &webappv1alpha1.WebApp{})
	change(app)
	app.Generation++
	if err := c.Update(context.Background(), app); err != nil {
		t.Fatal(err)
	}
}

// A Deployment write that fails after the ConfigMap write: the correct
// reconciler rolls the Pods on its retry, RollOnConfigWrite never does.
func TestAReconcileStoppedBetweenConfigMapAndDeployment(t *testing.T) {
	for _, tc := range []struct {
		bug      Bug
		repaired bool
	}{{NoBug, true}, {RollOnConfigWrite, false}} {
		t.Run(string(tc.bug), func(t *testing.T) {
			failNext := false
			funcs := &interceptor.Funcs{Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				if _, ok := obj.(*appsv1.Deployment); ok && failNext {
					failNext = false
					return apierrors.NewServiceUnavailable("injected")
				}
				return c.Update(ctx, obj, opts...)
			}}
			r := newReconciler(t, tc.bug, funcs, newApp("a", "uid-a", 1, "hello"))
			if err := reconcile(t, r, "a"); err != nil {
				t.Fatal(err)
			}
			changeSpec(t, r.Client, func(a *webappv1alpha1.WebApp) { a.Spec.Greeting = "bonjour" })
			failNext = true
			if err := reconcile(t, r, "a"); err == nil {
				t.Fatal("the reconcile whose Deployment write failed returned no error")
			}
			if err := reconcile(t, r, "a"); err != nil {
				t.Fatal(err)
			}
			cm := get(t, r.Client, "a-config", &corev1.ConfigMap{})
			dep := get(t, r.Client, "a", &appsv1.Deployment{})
			want := cm.Annotations[ConfigHashAnnotation]
			got := dep.Spec.Template.Annotations[ConfigHashAnnotation]
			if cm.Data["GREETING"] != "bonjour" {
				t.Fatalf("configmap data %v, want GREETING=bonjour", cm.Data)
			}
			if (got == want) != tc.repaired {
				t.Errorf("deployment's config hash %s, configmap's %s: repaired=%v, want %v", got, want, got == want, tc.repaired)
			}
		})
	}
}

// A process that meets a WebApp for the first time after its replicas
// changed while the controller was down: the correct reconciler scales the
// Deployment, ScaleOnObservedChange does not.
func TestAScaleTheRestartedProcessNeverSawChange(t *testing.T) {
	for _, tc := range []struct {
		bug    Bug
		scaled bool
	}{{NoBug, true}, {ScaleOnObservedChange, false}} {
		t.Run(string(tc.bug), func(t *testing.T) {
			r := newReconciler(t, tc.bug, nil, newApp("a", "uid-a", 1, "hello"))
			if err := reconcile(t, r, "a"); err != nil {
				t.Fatal(err)
			}
			// A scale this process sees is applied by both.
			changeSpec(t, r.Client, func(a *webappv1alpha1.WebApp) { a.Spec.Replicas = ptrTo[int32](2) })
			if err := reconcile(t, r, "a"); err != nil {
				t.Fatal(err)
			}
			if got := *get(t, r.Client, "a", &appsv1.Deployment{}).Spec.Replicas; got != 2 {
				t.Fatalf("deployment replicas %d after a scale the process saw, want 2", got)
			}
			// The process crashes; the user scales to 3; a new process starts.
			changeSpec(t, r.Client, func(a *webappv1alpha1.WebApp) { a.Spec.Replicas = ptrTo[int32](3) })
			restarted := &WebAppReconciler{Client: r.Client, APIReader: r.APIReader, Scheme: r.Scheme, Bug: tc.bug}
			if err := reconcile(t, restarted, "a"); err != nil {
				t.Fatal(err)
			}
			got := *get(t, r.Client, "a", &appsv1.Deployment{}).Spec.Replicas
			if (got == 3) != tc.scaled {
				t.Errorf("deployment replicas %d after a scale made while down: scaled=%v, want %v", got, got == 3, tc.scaled)
			}
		})
	}
}

// A stale view: the cache shows the deleted predecessor (UID old) with
// its deletionTimestamp, while the children of that name belong to its
// successor (UID new). The correct reconciler leaves them; StaleDelete
// deletes them.
func TestTeardownFromAStaleViewOfADeletedPredecessor(t *testing.T) {
	for _, tc := range []struct {
		bug     Bug
		deletes bool
	}{{NoBug, false}, {StaleDelete, true}} {
		t.Run(string(tc.bug), func(t *testing.T) {
			old := newApp("a", "uid-old", 1, "hello")
			old.Finalizers = []string{Finalizer}
			old.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
			successor := newApp("a", "uid-new", 1, "hello")
			successor.APIVersion, successor.Kind = webappv1alpha1.GroupVersion.String(), "WebApp"
			ref := []metav1.OwnerReference{*metav1.NewControllerRef(successor, webappv1alpha1.GroupVersion.WithKind("WebApp"))}
			meta := func(name string) metav1.ObjectMeta {
				return metav1.ObjectMeta{Namespace: "default", Name: name, OwnerReferences: ref}
			}
			r := newReconciler(t, tc.bug, nil, old,
				&corev1.ConfigMap{ObjectMeta: meta("a-config")},
				&appsv1.Deployment{ObjectMeta: meta("a")},
				&corev1.Service{ObjectMeta: meta("a")})
			if err := reconcile(t, r, "a"); err != nil {
				t.Fatal(err)
			}
			for _, child := range []client.Object{&corev1.ConfigMap{}, &appsv1.Deployment{}, &corev1.Service{}} {
				name := "a"
				if _, ok := child.(*corev1.ConfigMap); ok {
					name = "a-config"
				}
				err := r.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: name}, child)
				if deleted := apierrors.IsNotFound(err); deleted != tc.deletes {
					t.Errorf("%T %s of the successor: deleted=%v (err %v), want %v", child, name, deleted, err, tc.deletes)
				}
			}
		})
	}
}

// The correct teardown deletes the WebApp's own children and releases it.
func TestTeardownDeletesOwnChildrenThenReleasesTheWebApp(t *testing.T) {
	app := newApp("a", "uid-a", 1, "hello")
	r := newReconciler(t, NoBug, nil, app)
	if err := reconcile(t, r, "a"); err != nil {
		t.Fatal(err)
	}
	if err := r.Delete(context.Background(), get(t, r.Client, "a", &webappv1alpha1.WebApp{})); err != nil {
		t.Fatal(err)
	}
	if err := reconcile(t, r, "a"); err != nil {
		t.Fatal(err)
	}
	for _, child := range []client.Object{&webappv1alpha1.WebApp{}, &corev1.Service{}, &appsv1.Deployment{}} {
		if err := r.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "a"}, child); !apierrors.IsNotFound(err) {
			t.Errorf("%T a: %v, want NotFound", child, err)
		}
	}
	if err := r.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "a-config"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("configmap a-config: %v, want NotFound", err)
	}
}

// A cache that still shows a WebApp the API server has replaced: the
// reconciler creates no child for the dead owner (the garbage collector
// would delete it at once, and the lagging cache would have it created
// again), and comes back later.
func TestNoChildIsCreatedForAWebAppGoneFromTheAPIServer(t *testing.T) {
	r := newReconciler(t, NoBug, nil, newApp("a", "uid-old", 1, "hello"))
	successor := newApp("a", "uid-new", 1, "hello")
	r.APIReader = fake.NewClientBuilder().WithScheme(r.Scheme).WithObjects(successor).Build()
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "a"}})
	if err != nil || res.RequeueAfter == 0 {
		t.Fatalf("reconcile: %+v, %v; want a requeue and no error", res, err)
	}
	for _, child := range []client.Object{&corev1.ConfigMap{}, &appsv1.Deployment{}, &corev1.Service{}} {
		var list client.ObjectList = &corev1.ConfigMapList{}
		switch child.(type) {
		case *appsv1.Deployment:
			list = &appsv1.DeploymentList{}
		case *corev1.Service:
			list = &corev1.ServiceList{}
		}
		if err := r.List(context.Background(), list); err != nil {
			t.Fatal(err)
		}
		if n := meta.LenList(list); n != 0 {
			t.Errorf("%T: %d created for a WebApp the API server no longer holds", list, n)
		}
	}
}

// The user emptied the greeting (greeting: "", which the CRD would
// default to "hello" if the field were left out): adding the finalizer
// must not send the object back without it.
func TestAddingTheFinalizerKeepsAnEmptyGreeting(t *testing.T) {
	app := newApp("a", "uid-a", 1, "")
	var sent []string
	funcs := &interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if _, ok := obj.(*webappv1alpha1.WebApp); ok {
				sent = append(sent, "update")
			}
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if _, ok := obj.(*webappv1alpha1.WebApp); ok {
				data, _ := patch.Data(obj)
				sent = append(sent, string(data))
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	}
	r := newReconciler(t, NoBug, funcs, app)
	if err := reconcile(t, r, "a"); err != nil {
		t.Fatal(err)
	}
	for _, s := range sent {
		if !strings.Contains(s, Finalizer) || strings.Contains(s, "spec") {
			t.Errorf("the reconciler sent %q for the WebApp: want a patch of its finalizers only (a whole typed object drops greeting: \"\")", s)
		}
	}
	if len(sent) == 0 {
		t.Error("the reconciler sent nothing to add its finalizer")
	}
}
