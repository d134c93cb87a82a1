package fakeapi_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/cachelab/cachelab/fakeapi"
	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
)

func podTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}},
	}
}

func deployment(name string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}, Template: podTemplate(name)}}
}

func job(name string) *batchv1.Job {
	t := podTemplate(name)
	t.Spec.RestartPolicy = corev1.RestartPolicyNever
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: batchv1.JobSpec{Template: t}}
}

// TestTypedWorkloadsOverTheFakeClientset: apps/v1 and batch/v1 are served
// typed (the issue 18 run panicked in the typed clientset's Create after
// RegisterCRD of apps/v1 Deployment): defaults, generation 1 bumped on spec
// changes only, status kept on update, the job's generated selector; a
// kind client-go knows but the server serves unstructured (RegisterCRD)
// comes back typed; an unserved kind is 404, never a panic.
func TestTypedWorkloadsOverTheFakeClientset(t *testing.T) {
	cs := fakeapi.NewSimpleClientset()
	ctx := context.Background()
	if err := cs.Server().RegisterCRD(fakeapi.ResourceInfo{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment", Namespaced: true}); err == nil {
		t.Error("RegisterCRD of apps/v1 deployments succeeded; want an error: they are served typed")
	}
	d, err := cs.AppsV1().Deployments("a").Create(ctx, deployment("web"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Generation != 1 || d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType ||
		d.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways || d.Spec.Template.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("created deployment = %+v, want generation 1 and the scheme's defaults", d.Spec)
	}
	d.Status.Replicas = 5
	d.Labels = map[string]string{"x": "y"}
	d, err = cs.AppsV1().Deployments("a").Update(ctx, d, metav1.UpdateOptions{})
	if err != nil || d.Generation != 1 || d.Status.Replicas != 0 {
		t.Errorf("metadata update: generation %d, status.replicas %d, %v; want 1, 0 (status kept from storage)", d.Generation, d.Status.Replicas, err)
	}
	d.Spec.Replicas = new(int32)
	if d, err = cs.AppsV1().Deployments("a").Update(ctx, d, metav1.UpdateOptions{}); err != nil || d.Generation != 2 {
		t.Errorf("spec update: generation %d, %v; want 2", d.Generation, err)
	}
	bad := deployment("bad")
	bad.Spec.Template.Labels = map[string]string{"app": "other"}
	if _, err := cs.AppsV1().Deployments("a").Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("a selector that does not match the template: %v, want 422", err)
	}
	j, err := cs.BatchV1().Jobs("a").Create(ctx, job("once"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Spec.Selector == nil || j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] != string(j.UID) || j.Spec.Template.Labels[batchv1.JobNameLabel] != "once" ||
		*j.Spec.Completions != 1 || *j.Spec.BackoffLimit != 6 {
		t.Errorf("created job = %+v, want the generated selector and defaults", j.Spec)
	}
	if err := cs.Server().RegisterCRD(fakeapi.ResourceInfo{GVR: schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}, Kind: "StorageClass"}); err != nil {
		t.Fatal(err)
	}
	sc, err := cs.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Provisioner: "x"}, metav1.CreateOptions{})
	if err != nil || sc.Name != "p" {
		t.Errorf("typed create of a kind registered with RegisterCRD: %v, %v", sc, err)
	}
	if _, err := cs.StorageV1().CSIDrivers().Get(ctx, "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an unserved kind: %v, want 404", err)
	}
}

// TestTypedInformersOverWorkloads: a typed informer factory over the fake
// server syncs and follows Deployments, ReplicaSets, Jobs and Pods, in
// process (the fake clientset) and over HTTP (the pipe): what the
// ReplicaSet and Job controllers of issue 19 need.
func TestTypedInformersOverWorkloads(t *testing.T) {
	for _, path := range []string{"direct", "http"} {
		t.Run(path, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := fakeapi.NewServer(fakeapi.Options{})
				var cs kubernetes.Interface = srv.Client("test").Clientset()
				if path == "http" {
					p := fakehttp.NewPipe(fakehttp.NewHandler(srv, fakehttp.Options{}))
					defer p.Close()
					var err error
					if cs, err = kubernetes.NewForConfig(p.RESTConfig("test")); err != nil {
						t.Fatal(err)
					}
				}
				defer srv.Close()
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				f := informers.NewSharedInformerFactory(cs, 0)
				deps := f.Apps().V1().Deployments()
				rss := f.Apps().V1().ReplicaSets()
				jobs := f.Batch().V1().Jobs()
				pods := f.Core().V1().Pods()
				deps.Informer()
				rss.Informer()
				jobs.Informer()
				pods.Informer()
				if _, err := cs.AppsV1().Deployments("a").Create(ctx, deployment("web"), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				f.Start(ctx.Done())
				for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
					if !ok {
						t.Fatalf("%v did not sync", typ)
					}
				}
				rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1"},
					Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Template: podTemplate("web")}}
				if _, err := cs.AppsV1().ReplicaSets("a").Create(ctx, rs, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				if _, err := cs.BatchV1().Jobs("a").Create(ctx, job("once"), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Second)
				synctest.Wait()
				if l, _ := deps.Lister().Deployments("a").List(labels.Everything()); len(l) != 1 {
					t.Errorf("deployments in the cache = %d, want 1", len(l))
				}
				if got, err := rss.Lister().ReplicaSets("a").Get("web-1"); err != nil || *got.Spec.Replicas != 1 {
					t.Errorf("replicaset in the cache: %v, %v", got, err)
				}
				if got, err := jobs.Lister().Jobs("a").Get("once"); err != nil || got.Spec.Selector == nil {
					t.Errorf("job in the cache: %v, %v", got, err)
				}
				cancel()
				f.Shutdown()
			})
		})
	}
}
