package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/cluster"
	"github.com/cachelab/cachelab/upstream/internal/plangen"
)

// The operator under test: for every ConfigMap labelled app=web it keeps a
// Deployment of the same name (owned by the ConfigMap) at the replicas
// its data asks for, and writes the Deployment's status.readyReplicas
// back to the ConfigMap's data "ready". It does nothing else: without a
// Deployment controller, ReplicaSets and a kubelet, "ready" never gets
// past 0.
type operator struct {
	kube        kubernetes.Interface
	configMaps  corelisters.ConfigMapLister
	deployments appslisters.DeploymentLister
	synced      []cache.DoneChecker
	queue       workqueue.TypedRateLimitingInterface[cache.ObjectName]
}

func startOperator(ctx context.Context, env *cachelabtest.Env) error {
	cms := env.Informers.Core().V1().ConfigMaps()
	ds := env.Informers.Apps().V1().Deployments()
	o := &operator{
		kube: env.Kube, configMaps: cms.Lister(), deployments: ds.Lister(),
		queue: cachelabtest.RecordQueue(env,
			workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]())),
	}
	enqueue := func(obj any) {
		if m, err := metaOf(obj); err == nil {
			o.queue.Add(cache.ObjectName{Namespace: m.GetNamespace(), Name: m.GetName()})
		}
	}
	for _, inf := range []cache.SharedIndexInformer{cms.Informer(), ds.Informer()} {
		reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: enqueue, UpdateFunc: func(_, n any) { enqueue(n) }, DeleteFunc: enqueue})
		if err != nil {
			return err
		}
		o.synced = append(o.synced, reg.HasSyncedChecker())
	}
	env.Informers.Start(ctx.Done())
	go func() {
		defer o.queue.ShutDown()
		if !cache.WaitFor(ctx, "", o.synced...) {
			return
		}
		for i := 0; i < 2; i++ {
			go func() {
				for o.next(ctx) {
				}
			}()
		}
		<-ctx.Done()
	}()
	return nil
}

func metaOf(obj any) (metav1.Object, error) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T is not an object", obj)
	}
	return m, nil
}

func (o *operator) next(ctx context.Context) bool {
	key, quit := o.queue.Get()
	if quit {
		return false
	}
	defer o.queue.Done(key)
	if err := o.sync(ctx, key); err != nil {
		o.queue.AddRateLimited(key)
		return true
	}
	o.queue.Forget(key)
	return true
}

func (o *operator) sync(ctx context.Context, key cache.ObjectName) error {
	cm, err := o.configMaps.ConfigMaps(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) || (err == nil && cm.Labels["app"] != "web") {
		return nil // the server's collector deletes the owned Deployment
	}
	if err != nil {
		return err
	}
	want, err := strconv.Atoi(cm.Data["replicas"])
	if err != nil || want < 0 {
		return nil // nothing to do until the user fixes it
	}
	d, err := o.deployments.Deployments(key.Namespace).Get(key.Name)
	switch {
	case apierrors.IsNotFound(err):
		_, err = o.kube.AppsV1().Deployments(key.Namespace).Create(ctx, deploymentFor(cm, int32(want)), metav1.CreateOptions{})
		return err
	case err != nil:
		return err
	case !metav1.IsControlledBy(d, cm):
		return nil // not ours
	case d.Spec.Replicas == nil || *d.Spec.Replicas != int32(want):
		d = d.DeepCopy()
		d.Spec.Replicas = ptr.To(int32(want))
		_, err = o.kube.AppsV1().Deployments(key.Namespace).Update(ctx, d, metav1.UpdateOptions{})
		return err
	}
	if ready := strconv.Itoa(int(d.Status.ReadyReplicas)); cm.Data["ready"] != ready {
		cm = cm.DeepCopy()
		cm.Data["ready"] = ready
		_, err = o.kube.CoreV1().ConfigMaps(key.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
		return err
	}
	return nil
}

func deploymentFor(cm *corev1.ConfigMap, replicas int32) *appsv1.Deployment {
	sel := map[string]string{"app": "web", "instance": cm.Name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: cm.Name, Namespace: cm.Namespace,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cm, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
}

// desired: every ConfigMap app=web has its Deployment at the replicas it
// asks for, all of them Ready, and says so in data "ready".
func desired(s *cachelabtest.State) error {
	var why []string
	for _, cm := range cachelabtest.List[corev1.ConfigMap](s, "") {
		if !labels.SelectorFromSet(labels.Set{"app": "web"}).Matches(labels.Set(cm.Labels)) || cm.DeletionTimestamp != nil {
			continue
		}
		want := cm.Data["replicas"]
		d, ok := cachelabtest.Get[appsv1.Deployment](s, cm.Namespace, cm.Name)
		switch {
		case !ok:
			why = append(why, fmt.Sprintf("ConfigMap %s has no Deployment", cm.Name))
		case strconv.Itoa(int(d.Status.ReadyReplicas)) != want:
			why = append(why, fmt.Sprintf("Deployment %s has %d ready replicas, want %s", d.Name, d.Status.ReadyReplicas, want))
		case cm.Data["ready"] != want:
			why = append(why, fmt.Sprintf("ConfigMap %s says ready=%q, want %s", cm.Name, cm.Data["ready"], want))
		}
	}
	if len(why) > 0 {
		return fmt.Errorf("%s", strings.Join(why, "; "))
	}
	return nil
}

// webPlan: the user creates ConfigMap web asking for 3 replicas at 1 s and
// scales it to 5 at 20 s; the kubelet makes Pods Ready 500 ms after it
// sees them; watch events 100 ms late.
func webPlan(subject string) *sim.Plan {
	p := plangen.Story("web-operator", subject, 100*time.Millisecond, true)
	p.Quiet = sim.Duration(30 * time.Second)
	p.Steps = []sim.Step{
		{At: sim.Duration(time.Second), Actor: "user", Op: "create", Object: json.RawMessage(
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"default","labels":{"app":"web"}},"data":{"replicas":"3"}}`)},
		{At: sim.Duration(20 * time.Second), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "web",
			Patch: json.RawMessage(`{"data":{"replicas":"5"}}`)},
	}
	return p
}

func webOperator(name string) cachelabtest.Controller {
	return cachelabtest.Controller{Name: name, Start: startOperator, Desired: desired}
}

// With the cluster around it, the operator's Deployment makes a
// ReplicaSet and Pods, the Pods go Ready, and the operator sees
// status.readyReplicas reach 3, then 5: every invariant passes.
func TestOperatorSeesItsDeploymentBecomeReadyUnderTheRealControllers(t *testing.T) {
	c := cluster.Around(webOperator("web-operator"))
	cachelabtest.Test(t, c, cachelabtest.These(webPlan(c.Name)))
}

// Without the cluster the same operator's Deployment never gets a status:
// eventual-convergence fails with the predicate's reason. This is the
// test above failing on purpose (the cluster is what makes it pass).
func TestWithoutTheClusterTheDeploymentNeverBecomesReady(t *testing.T) {
	c := webOperator("web-operator-alone")
	failures := cachelabtest.Catch(t, c, cachelabtest.These(webPlan(c.Name)))
	if len(failures) != 1 || !strings.Contains(failures[0].Report, "Deployment web has 0 ready replicas, want 5") {
		var report string
		if len(failures) > 0 {
			report = failures[0].Report
		}
		t.Fatalf("got %d failures, want 1 whose eventual-convergence says the Deployment has 0 ready replicas:\n%s", len(failures), report)
	}
}

// A controller name the cluster does not have fails the run's start with
// an error naming the known ones, not a panic.
func TestAnUnknownControllerIsAClearError(t *testing.T) {
	c := cluster.Around(webOperator("web-operator-typo"), "deployments")
	failures := cachelabtest.Catch(t, c, cachelabtest.These(webPlan(c.Name)))
	if len(failures) != 1 || !strings.Contains(failures[0].Report, `cluster: no controller "deployments"`) {
		var report string
		if len(failures) > 0 {
			report = failures[0].Report
		}
		t.Fatalf("got %d failures, want 1 naming the unknown controller:\n%s", len(failures), report)
	}
}

// The StatefulSet and Job controllers run too: a StatefulSet of 2 and a
// Job of parallelism 2 created by the user get their Pods, the set's go
// Ready and its status says so, the Job counts 2 active. The controller
// under test does nothing; Desired reads the cluster's work.
func TestStatefulSetAndJobUnderTheCluster(t *testing.T) {
	p := webPlan("")
	p.Name = "statefulset-and-job"
	p.Steps = []sim.Step{
		{At: sim.Duration(time.Second), Actor: "user", Op: "create", Object: json.RawMessage(
			`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"default"},"spec":{"replicas":2,` +
				`"selector":{"matchLabels":{"app":"db"}},"template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[{"name":"c","image":"postgres:17"}]}}}}`)},
		{At: sim.Duration(time.Second), Actor: "user", Op: "create", Object: json.RawMessage(
			`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"batch","namespace":"default"},"spec":{"parallelism":2,"completions":4,` +
				`"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox:1.36"}]}}}}`)},
	}
	c := cluster.Around(cachelabtest.Controller{
		Name:  "idle",
		Start: func(context.Context, *cachelabtest.Env) error { return nil },
		Desired: func(s *cachelabtest.State) error {
			set, ok := cachelabtest.Get[appsv1.StatefulSet](s, "default", "db")
			if !ok {
				return fmt.Errorf("no StatefulSet db")
			}
			if st := set.Status; st.ReadyReplicas != 2 || st.ObservedGeneration != set.Generation {
				return fmt.Errorf("StatefulSet db has %d ready replicas (want 2), observedGeneration %d of %d", st.ReadyReplicas, st.ObservedGeneration, set.Generation)
			}
			for _, n := range []string{"db-0", "db-1"} {
				if _, ok := cachelabtest.Get[corev1.Pod](s, "default", n); !ok {
					return fmt.Errorf("no pod %s", n)
				}
			}
			job, ok := cachelabtest.Get[batchv1.Job](s, "default", "batch")
			if !ok {
				return fmt.Errorf("no Job batch")
			}
			if job.Status.Active != 2 {
				return fmt.Errorf("Job batch counts %d active pods, want 2", job.Status.Active)
			}
			return nil
		},
	})
	p.Subject = c.Name
	cachelabtest.Test(t, c, cachelabtest.These(p))
}
