// Package job puts the real Job controller of kube-controller-manager
// (k8s.io/kubernetes v1.37.1, pkg/controller/job) under the lab, wired to
// the lab's recorded typed informers over the fake API server, with the
// KEP-5647 feature gate StaleControllerConsistencyJob on (upstream/job, the
// default since v1.36) or off (upstream/job-nogate).
package job

import (
	"context"
	"fmt"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	jobcontroller "k8s.io/kubernetes/pkg/controller/job"
	"k8s.io/kubernetes/pkg/features"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/upstream/internal/wiring"
)

// Names of the two subjects.
const (
	// Name is the controller with KEP-5647's gate on (the v1.36+ default).
	Name = "upstream/job"
	// NameNoGate is the controller with the gate off.
	NameNoGate = "upstream/job-nogate"
)

// Workers is kube-controller-manager's default --concurrent-job-syncs.
const Workers = 5

// Controller returns the real Job controller as a lab controller with the
// KEP-5647 gate set to gate. The scheduling informers (WorkloadWithJob,
// alpha, off) are not given.
func Controller(gate bool) cachelabtest.Controller {
	return wiring.Controller([2]string{Name, NameNoGate}, features.StaleControllerConsistencyJob, gate, Workers,
		func(ctx context.Context, env *cachelabtest.Env) (*jobcontroller.Controller, error) {
			return jobcontroller.NewController(ctx, env.Kube, env.Informers.Core().V1().Pods(), env.Informers.Batch().V1().Jobs(), nil, nil)
		}, Desired)
}

// Desired holds when every Job that is neither being deleted nor finished
// controls as many active Pods (not terminating, not Succeeded or Failed)
// as it wants: parallelism, or fewer when the completions left are fewer
// (no Pod ever succeeds here: there is no kubelet).
func Desired(s *cachelabtest.State) error {
	active := map[string]int32{}
	succeeded := map[string]int32{}
	for _, p := range cachelabtest.List[corev1.Pod](s, "") {
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			continue
		}
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			succeeded[string(ref.UID)]++
		case p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed:
		default:
			active[string(ref.UID)]++
		}
	}
	var why []string
	for _, j := range cachelabtest.List[batchv1.Job](s, "") {
		if j.DeletionTimestamp != nil || finished(j) || (j.Spec.Suspend != nil && *j.Spec.Suspend) {
			continue
		}
		want := int32(1)
		if j.Spec.Parallelism != nil {
			want = *j.Spec.Parallelism
		}
		if j.Spec.Completions != nil {
			if left := *j.Spec.Completions - succeeded[string(j.UID)]; left < want {
				want = left
			}
		}
		if got := active[string(j.UID)]; got != want {
			why = append(why, fmt.Sprintf("Job %s/%s wants %d active pods and controls %d", j.Namespace, j.Name, want, got))
		}
	}
	if len(why) > 0 {
		sort.Strings(why)
		return fmt.Errorf("%s", strings.Join(why, "; "))
	}
	return nil
}

func finished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
