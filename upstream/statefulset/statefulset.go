// Package statefulset puts the real StatefulSet controller of
// kube-controller-manager (k8s.io/kubernetes v1.37.1,
// pkg/controller/statefulset) under the lab, wired to the lab's recorded
// typed informers over the fake API server, with the KEP-5647 feature gate
// StaleControllerConsistencyStatefulSet on (upstream/statefulset, the
// default since v1.36) or off (upstream/statefulset-nogate).
//
// The fake API server serves no PersistentVolumeClaims: the controller's
// PVC informer is an empty one over client-go's fake clientset, so the
// plans use no volumeClaimTemplates (PVC retention is not exercised). The
// Recreate update strategy is behind the alpha gate
// StatefulSetRecreateStrategy (off by default in v1.37.1) and is not
// drawn. The plans run the lab's kubelet actor, which makes Pods Running
// and Ready, so that OrderedReady sets progress.
package statefulset

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	sscontroller "k8s.io/kubernetes/pkg/controller/statefulset"
	"k8s.io/kubernetes/pkg/features"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/upstream/internal/wiring"
)

// Names of the two subjects.
const (
	// Name is the controller with KEP-5647's gate on (the v1.36+ default).
	Name = "upstream/statefulset"
	// NameNoGate is the controller with the gate off.
	NameNoGate = "upstream/statefulset-nogate"
)

// Workers is kube-controller-manager's default
// --concurrent-statefulset-syncs.
const Workers = 5

// Controller returns the real StatefulSet controller as a lab controller,
// with the KEP-5647 gate set to gate. It is named Name or NameNoGate.
func Controller(gate bool) cachelabtest.Controller {
	return wiring.Controller([2]string{Name, NameNoGate}, features.StaleControllerConsistencyStatefulSet, gate, Workers,
		func(ctx context.Context, env *cachelabtest.Env) (*sscontroller.StatefulSetController, error) {
			// No PVCs on the fake server: an empty informer that syncs at once.
			pvcs := informers.NewSharedInformerFactory(kubefake.NewClientset(), 0).Core().V1().PersistentVolumeClaims()
			go pvcs.Informer().Run(ctx.Done())
			return sscontroller.NewStatefulSetController(ctx, env.Informers.Core().V1().Pods(), env.Informers.Apps().V1().StatefulSets(),
				pvcs, env.Informers.Apps().V1().ControllerRevisions(), env.Kube), nil
		}, Desired)
}

// Desired holds when every StatefulSet that is not being deleted runs
// exactly its ordinals 0..spec.replicas-1, each Pod active (not
// terminating, not finished), Running and Ready, with the template's
// images when the update strategy is RollingUpdate (OnDelete leaves old
// Pods as they are; a partition, those below it), no Pod of a higher ordinal, and a status that says so
// (observedGeneration, replicas, readyReplicas; for RollingUpdate also
// updatedReplicas and currentRevision == updateRevision).
func Desired(s *cachelabtest.State) error {
	pods := map[string]map[int]*corev1.Pod{} // set uid -> ordinal -> active pod
	for _, p := range cachelabtest.List[corev1.Pod](s, "") {
		ref := metav1.GetControllerOf(p)
		if ref == nil || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		i := strings.LastIndex(p.Name, "-")
		ord, err := strconv.Atoi(p.Name[i+1:])
		if i < 0 || err != nil {
			continue
		}
		if pods[string(ref.UID)] == nil {
			pods[string(ref.UID)] = map[int]*corev1.Pod{}
		}
		pods[string(ref.UID)][ord] = p
	}
	var why []string
	for _, set := range cachelabtest.List[appsv1.StatefulSet](s, "") {
		if set.DeletionTimestamp == nil {
			if err := runs(set, pods[string(set.UID)]); err != nil {
				why = append(why, fmt.Sprintf("StatefulSet %s/%s %v", set.Namespace, set.Name, err))
			}
		}
	}
	if len(why) > 0 {
		sort.Strings(why)
		return fmt.Errorf("%s", strings.Join(why, "; "))
	}
	return nil
}

// runs says why set does not run as it should over its active Pods by
// ordinal, nil when it does. Under a RollingUpdate partition, the Pods of
// lower ordinals keep their revision.
func runs(set *appsv1.StatefulSet, pods map[int]*corev1.Pod) error {
	want := 1
	if set.Spec.Replicas != nil {
		want = int(*set.Spec.Replicas)
	}
	rolling := set.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType
	partition := 0
	if ru := set.Spec.UpdateStrategy.RollingUpdate; rolling && ru != nil && ru.Partition != nil {
		partition = int(*ru.Partition)
	}
	for ord := range want {
		p, ok := pods[ord]
		if !ok {
			return fmt.Errorf("wants %d pods and has no active pod %s-%d", want, set.Name, ord)
		}
		if !fakeapi.PodRunningReady(p) {
			return fmt.Errorf("has pod %s not Ready", p.Name)
		}
		if rolling && ord >= partition && !sameImages(p.Spec.Containers, set.Spec.Template.Spec.Containers) {
			return fmt.Errorf("has pod %s with an old template (images %s, want %s)", p.Name, imagesOf(p.Spec.Containers), imagesOf(set.Spec.Template.Spec.Containers))
		}
	}
	for ord, p := range pods {
		if ord >= want {
			return fmt.Errorf("wants %d pods and has pod %s", want, p.Name)
		}
	}
	st := set.Status
	if st.ObservedGeneration < set.Generation || int(st.Replicas) != want || int(st.ReadyReplicas) != want {
		return fmt.Errorf("wants %d pods and its status says observedGeneration=%d (generation %d), replicas=%d, ready=%d",
			want, st.ObservedGeneration, set.Generation, st.Replicas, st.ReadyReplicas)
	}
	if rolling && partition == 0 && (int(st.UpdatedReplicas) != want || st.CurrentRevision != st.UpdateRevision) {
		return fmt.Errorf("wants %d pods and its status says updated=%d, currentRevision=%s, updateRevision=%s",
			want, st.UpdatedReplicas, st.CurrentRevision, st.UpdateRevision)
	}
	return nil
}

// sameImages is whether two container lists run the same images in order.
func sameImages(a, b []corev1.Container) bool { return imagesOf(a) == imagesOf(b) }

// imagesOf is a container list's images, comma-separated.
func imagesOf(cs []corev1.Container) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Image)
	}
	return strings.Join(out, ",")
}
