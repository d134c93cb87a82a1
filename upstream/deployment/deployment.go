// Package deployment puts the real Deployment controller of
// kube-controller-manager (k8s.io/kubernetes v1.37.1,
// pkg/controller/deployment) under the lab, wired to the lab's recorded
// typed informers over the fake API server. KEP-5647 has no gate for the
// Deployment controller in v1.37.1 (pkg/features lists ReplicaSet, Job,
// StatefulSet, DaemonSet and HPA), so there is one subject,
// upstream/deployment.
//
// The Deployment controller makes ReplicaSets, not Pods: beside it runs the
// real ReplicaSet controller (its KEP-5647 gate on, the v1.36+ default) as
// a helper actor named "replicaset-controller", on its own client and
// informers (cachelabtest.Env.Client), so its Pod creates and status writes
// are another writer's, not judged, and faults aimed at the subject leave
// it alone. The plans run the lab's kubelet actor, which makes Pods Running
// and Ready, so that ReplicaSets report available replicas and rollouts
// progress.
package deployment

import (
	"context"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	dcontroller "k8s.io/kubernetes/pkg/controller/deployment"
	rscontroller "k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/kubernetes/pkg/features"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/upstream/internal/wiring"
)

// Name is the subject's name.
const Name = "upstream/deployment"

// ReplicaSetActor is the client name of the ReplicaSet controller that runs
// beside the subject as a helper actor.
const ReplicaSetActor = "replicaset-controller"

// Workers is kube-controller-manager's default
// --concurrent-deployment-syncs (and --concurrent-replicaset-syncs, for
// the helper).
const Workers = 5

// Controller returns the real Deployment controller as a lab controller,
// with the real ReplicaSet controller beside it as the helper actor
// ReplicaSetActor.
func Controller() cachelabtest.Controller {
	return cachelabtest.Controller{
		Name: Name,
		Start: func(ctx context.Context, env *cachelabtest.Env) error {
			rsc, err := startReplicaSetActor(ctx, env)
			if err != nil {
				return fmt.Errorf("%s: %w", Name, err)
			}
			dc, err := dcontroller.NewDeploymentController(ctx, env.Informers.Apps().V1().Deployments(),
				env.Informers.Apps().V1().ReplicaSets(), env.Informers.Core().V1().Pods(), env.Kube)
			if err != nil {
				return fmt.Errorf("%s: %w", Name, err)
			}
			if err := wiring.RecordQueue(dc, env); err != nil {
				return fmt.Errorf("%s: %w", Name, err)
			}
			env.Informers.Start(ctx.Done())
			go rsc(ctx)
			go dc.Run(ctx, Workers)
			return nil
		},
		Desired: Desired,
	}
}

// startReplicaSetActor builds the real ReplicaSet controller on a client
// and informers of its own, named ReplicaSetActor, with its KEP-5647 gate
// on, and returns the func that runs it until ctx ends.
func startReplicaSetActor(ctx context.Context, env *cachelabtest.Env) (func(context.Context), error) {
	client, err := env.Client(ReplicaSetActor)
	if err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactory(client.Kube, 0)
	rsc, err := wiring.WithGate(features.StaleControllerConsistencyReplicaSet, true, func() (*rscontroller.ReplicaSetController, error) {
		return rscontroller.NewReplicaSetController(ctx, factory.Apps().V1().ReplicaSets(), factory.Core().V1().Pods(),
			client.Kube, rscontroller.BurstReplicas), nil
	})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) {
		factory.Start(ctx.Done())
		rsc.Run(ctx, Workers)
	}, nil
}

// Desired holds when every Deployment that is neither being deleted nor
// paused has rolled out: of the ReplicaSets it controls, exactly one runs
// spec.replicas Pods, Running and Ready, and has its Pod template (the
// pod-template-hash label aside); the others are scaled to 0 and control
// no active Pod, and its status says so (observedGeneration, replicas,
// updatedReplicas, readyReplicas and availableReplicas equal to
// spec.replicas).
func Desired(s *cachelabtest.State) error {
	pods := map[string][]*corev1.Pod{} // ReplicaSet uid -> active pods
	for _, p := range cachelabtest.List[corev1.Pod](s, "") {
		ref := metav1.GetControllerOf(p)
		if ref == nil || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		pods[string(ref.UID)] = append(pods[string(ref.UID)], p)
	}
	owned := map[string][]*appsv1.ReplicaSet{} // Deployment uid -> ReplicaSets
	for _, rs := range cachelabtest.List[appsv1.ReplicaSet](s, "") {
		if ref := metav1.GetControllerOf(rs); ref != nil && rs.DeletionTimestamp == nil {
			owned[string(ref.UID)] = append(owned[string(ref.UID)], rs)
		}
	}
	var why []string
	for _, d := range cachelabtest.List[appsv1.Deployment](s, "") {
		if d.DeletionTimestamp != nil || d.Spec.Paused {
			continue
		}
		if err := rolledOut(d, owned[string(d.UID)], pods); err != nil {
			why = append(why, fmt.Sprintf("Deployment %s/%s %v", d.Namespace, d.Name, err))
		}
	}
	if len(why) > 0 {
		sort.Strings(why)
		return fmt.Errorf("%s", strings.Join(why, "; "))
	}
	return nil
}

// rolledOut says why d has not rolled out over its ReplicaSets rss, nil
// when it has. Several ReplicaSets may carry d's template (a hash
// collision: d recreated while its old ReplicaSet, same template, still
// existed makes the controller bump collisionCount and create another, and
// then adopt the orphaned one); the controller keeps one of them and scales
// the others to 0, so exactly one of them must run want Pods.
func rolledOut(d *appsv1.Deployment, rss []*appsv1.ReplicaSet, pods map[string][]*corev1.Pod) error {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	withTemplate, running := 0, 0
	for _, rs := range rss {
		n := int32(1)
		if rs.Spec.Replicas != nil {
			n = *rs.Spec.Replicas
		}
		active := int32(len(pods[string(rs.UID)]))
		current := sameTemplate(&rs.Spec.Template, &d.Spec.Template)
		if current {
			withTemplate++
		}
		if n == 0 && active == 0 {
			continue
		}
		if !current {
			return fmt.Errorf("has old ReplicaSet %s with spec.replicas=%d and %d active pods, want 0", rs.Name, n, active)
		}
		if n != want || active != want {
			return fmt.Errorf("wants %d pods and its current ReplicaSet %s has spec.replicas=%d and %d active pods", want, rs.Name, n, active)
		}
		for _, p := range pods[string(rs.UID)] {
			if !fakeapi.PodRunningReady(p) {
				return fmt.Errorf("has pod %s not Ready", p.Name)
			}
		}
		running++
	}
	switch {
	case withTemplate == 0 && want > 0:
		return fmt.Errorf("wants %d pods and has no ReplicaSet with its template", want)
	case running > 1:
		return fmt.Errorf("has %d ReplicaSets with its template running pods, want 1", running)
	case running == 0 && want > 0:
		return fmt.Errorf("wants %d pods and no ReplicaSet with its template runs them", want)
	}
	st := d.Status
	if st.ObservedGeneration < d.Generation || st.Replicas != want || st.UpdatedReplicas != want ||
		st.ReadyReplicas != want || st.AvailableReplicas != want {
		return fmt.Errorf("wants %d pods and its status says observedGeneration=%d (generation %d), replicas=%d, updated=%d, ready=%d, available=%d",
			want, st.ObservedGeneration, d.Generation, st.Replicas, st.UpdatedReplicas, st.ReadyReplicas, st.AvailableReplicas)
	}
	return nil
}

// sameTemplate is whether a ReplicaSet's template is the Deployment's, the
// pod-template-hash label the controller adds aside.
func sameTemplate(rs, d *corev1.PodTemplateSpec) bool {
	a, b := rs.DeepCopy(), d.DeepCopy()
	delete(a.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	delete(b.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	if len(a.Labels) == 0 {
		a.Labels = nil
	}
	if len(b.Labels) == 0 {
		b.Labels = nil
	}
	return apiequality.Semantic.DeepEqual(a, b)
}
