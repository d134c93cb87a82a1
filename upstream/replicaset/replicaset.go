// Package replicaset puts the real ReplicaSet controller of
// kube-controller-manager (k8s.io/kubernetes v1.37.1,
// pkg/controller/replicaset) under the lab, wired to the lab's recorded
// typed informers over the fake API server, with the KEP-5647 feature gate
// StaleControllerConsistencyReplicaSet on (upstream/replicaset, the
// default since v1.36) or off (upstream/replicaset-nogate).
package replicaset

import (
	"context"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rscontroller "k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/kubernetes/pkg/features"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/upstream/internal/wiring"
)

// Names of the two subjects.
const (
	// Name is the controller with KEP-5647's gate on (the v1.36+ default).
	Name = "upstream/replicaset"
	// NameNoGate is the controller with the gate off (pre-v1.36 behaviour).
	NameNoGate = "upstream/replicaset-nogate"
)

// Workers is the number of sync workers, kube-controller-manager's default
// (--concurrent-replicaset-syncs=5).
const Workers = 5

// BurstReplicas is kube-controller-manager's default burst of creates or
// deletes per sync (replicaset.BurstReplicas).
const BurstReplicas = rscontroller.BurstReplicas

// Controller returns the real ReplicaSet controller as a lab controller,
// with the KEP-5647 gate set to gate. It is named Name or NameNoGate.
func Controller(gate bool) cachelabtest.Controller {
	return wiring.Controller([2]string{Name, NameNoGate}, features.StaleControllerConsistencyReplicaSet, gate, Workers,
		func(ctx context.Context, env *cachelabtest.Env) (*rscontroller.ReplicaSetController, error) {
			return rscontroller.NewReplicaSetController(ctx, env.Informers.Apps().V1().ReplicaSets(),
				env.Informers.Core().V1().Pods(), env.Kube, BurstReplicas), nil
		}, Desired)
}

// Desired holds when every ReplicaSet that is not being deleted controls
// exactly spec.replicas active Pods (not terminating, not Succeeded or
// Failed), as the controller counts them.
func Desired(s *cachelabtest.State) error {
	pods := cachelabtest.List[corev1.Pod](s, "")
	active := map[string]int32{} // controller uid -> active pods
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		active[string(ref.UID)]++
	}
	var why []string
	for _, rs := range cachelabtest.List[appsv1.ReplicaSet](s, "") {
		if rs.DeletionTimestamp != nil {
			continue
		}
		want := int32(1)
		if rs.Spec.Replicas != nil {
			want = *rs.Spec.Replicas
		}
		if got := active[string(rs.UID)]; got != want {
			why = append(why, fmt.Sprintf("ReplicaSet %s/%s wants %d pods and controls %d", rs.Namespace, rs.Name, want, got))
		}
	}
	if len(why) > 0 {
		sort.Strings(why)
		return fmt.Errorf("%s", strings.Join(why, "; "))
	}
	return nil
}
