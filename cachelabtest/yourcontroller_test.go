package cachelabtest_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	"github.com/cachelab/cachelab/cachelabtest"
)

// This file is the user's side of "Test your own controller"
// (docs/your-controller.md): a CRD operator in kubebuilder's layout (its
// CRD under config/crd/bases, a sample under config/samples) and its test.
// The operator (the "widget controller", below the test) keeps, for each
// Widget, a Deployment of spec.replicas and a ConfigMap holding
// spec.message. Its test is the lab code a user writes.

// widgetLab is the lab code: the whole of it.
func widgetLab(dir string) (cachelabtest.Controller, cachelabtest.Plans) {
	return cachelabtest.Controller{
			CRDs: cachelabtest.CRDs(filepath.Join(dir, "config/crd/bases")),
			Start: func(ctx context.Context, env *cachelabtest.Env) error {
				q := cachelabtest.RecordQueue(env, workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()))
				c := newWidgetController(env.Kube, env.Dynamic, env.Informers, env.DynamicInformers.ForResource(widgetGVR).Informer(), q)
				env.Informers.Start(ctx.Done())
				env.DynamicInformers.Start(ctx.Done())
				go c.run(ctx, 2)
				return nil
			},
		}, cachelabtest.Random(cachelabtest.Primary("widgets"),
			cachelabtest.Examples(filepath.Join(dir, "config/samples")))
}

// widgetLab's body is 12 lines, and TestYourController calls it in 2 (the
// rest of that test keeps its run short): 14 lines of lab code, the
// measure of issue 26 (sample-controller's took about 350, at least 90).

func TestYourController(t *testing.T) {
	dir := t.TempDir()
	writeLayout(t, dir)
	t.Chdir(t.TempDir())
	checks := flag.Lookup("rapid.checks")
	old := checks.Value.String()
	defer checks.Value.Set(old)
	if !testing.Short() {
		_ = checks.Value.Set("5")
	}
	c, plans := widgetLab(dir)
	cachelabtest.Test(t, c, plans)
}

// writeLayout writes the operator's manifests in kubebuilder's layout.
func writeLayout(t *testing.T, dir string) {
	t.Helper()
	for name, content := range map[string]string{
		"config/crd/bases/example.cachelab.dev_widgets.yaml": widgetCRD,
		"config/samples/example_v1_widget.yaml":              widgetSample,
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.cachelab.dev
spec:
  group: example.cachelab.dev
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [message]
            properties:
              message: {type: string, maxLength: 20}
              replicas: {type: integer, minimum: 0, maximum: 3, default: 1}
              tier: {type: string, enum: [gold, silver]}
          status:
            type: object
            properties:
              replicas: {type: integer}
`

const widgetSample = `apiVersion: example.cachelab.dev/v1
kind: Widget
metadata:
  name: widget-sample
spec:
  message: hello
  replicas: 2
`

var widgetGVR = schema.GroupVersionResource{Group: "example.cachelab.dev", Version: "v1", Resource: "widgets"}

// widgetController is the operator under test: sample-controller's shape
// (informers, listers, a workqueue of namespace/name keys, a sync that
// reads its caches and writes children with an ownerReference).
type widgetController struct {
	kube    kubernetes.Interface
	dyn     dynamic.Interface
	widgets cache.SharedIndexInformer
	deps    cache.SharedIndexInformer
	cms     cache.SharedIndexInformer
	queue   workqueue.TypedRateLimitingInterface[string]
}

func newWidgetController(kube kubernetes.Interface, dyn dynamic.Interface, f informers.SharedInformerFactory, widgets cache.SharedIndexInformer, q workqueue.TypedRateLimitingInterface[string]) *widgetController {
	c := &widgetController{kube: kube, dyn: dyn, widgets: widgets, deps: f.Apps().V1().Deployments().Informer(), cms: f.Core().V1().ConfigMaps().Informer(), queue: q}
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			q.Add(key)
		}
	}
	owner := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if m, ok := obj.(metav1.Object); ok {
			if ref := metav1.GetControllerOf(m); ref != nil && ref.Kind == "Widget" {
				q.Add(m.GetNamespace() + "/" + ref.Name)
			}
		}
	}
	_, _ = widgets.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }, DeleteFunc: enqueue})
	for _, inf := range []cache.SharedIndexInformer{c.deps, c.cms} {
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: owner, UpdateFunc: func(_, o any) { owner(o) }, DeleteFunc: owner})
	}
	return c
}

func (c *widgetController) run(ctx context.Context, workers int) {
	defer c.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), c.widgets.HasSynced, c.deps.HasSynced, c.cms.HasSynced) {
		return
	}
	for range workers {
		go func() {
			for c.next(ctx) {
			}
		}()
	}
	<-ctx.Done()
}

func (c *widgetController) next(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx, key); err != nil {
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// sync makes the Deployment and ConfigMap of Widget key match its spec.
func (c *widgetController) sync(ctx context.Context, key string) error {
	obj, exists, err := c.widgets.GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return err
	}
	w := obj.(*unstructured.Unstructured)
	msg, _, _ := unstructured.NestedString(w.Object, "spec", "message")
	replicas, found, _ := unstructured.NestedInt64(w.Object, "spec", "replicas")
	if !found {
		replicas = 1
	}
	ref := []metav1.OwnerReference{{APIVersion: "example.cachelab.dev/v1", Kind: "Widget", Name: w.GetName(), UID: w.GetUID(), Controller: ptr.To(true)}}
	labels := map[string]string{"widget": w.GetName()}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: w.GetNamespace(), Name: w.GetName(), OwnerReferences: ref},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(replicas)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}}}}}
	if cur, ok, _ := c.deps.GetIndexer().GetByKey(key); !ok {
		if _, err := c.kube.AppsV1().Deployments(dep.Namespace).Create(ctx, dep, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	} else if d := cur.(*appsv1.Deployment); *d.Spec.Replicas != int32(replicas) {
		d = d.DeepCopy()
		d.Spec.Replicas = ptr.To(int32(replicas))
		if _, err := c.kube.AppsV1().Deployments(d.Namespace).Update(ctx, d, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.GetNamespace(), Name: w.GetName() + "-message", OwnerReferences: ref},
		Data: map[string]string{"message": msg}}
	if cur, ok, _ := c.cms.GetIndexer().GetByKey(key + "-message"); !ok {
		if _, err := c.kube.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	} else if cc := cur.(*corev1.ConfigMap); cc.Data["message"] != msg {
		cc = cc.DeepCopy()
		cc.Data = cm.Data
		if _, err := c.kube.CoreV1().ConfigMaps(cc.Namespace).Update(ctx, cc, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}
