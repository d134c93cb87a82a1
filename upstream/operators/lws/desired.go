package lws

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	leaderworkerset "sigs.k8s.io/lws/api/leaderworkerset/v1"

	"github.com/cachelab/cachelab/cachelabtest"
)

// Desired is LWS's documented contract at rest, read from its API and its
// reconcilers (sigs.k8s.io/lws v0.8.0), for every LeaderWorkerSet not
// being deleted:
//
//   - its leader StatefulSet (named as the set, controlled by it) has
//     spec.replicas = spec.replicas ("Number of leader-workers groups";
//     a rolling update surges above it, and is over at rest);
//   - for size > 1, each group i < replicas has a worker StatefulSet
//     <name>-<i> (named as its leader Pod) of size-1 replicas, and no
//     group i >= replicas has one ("On scale down, the leader pod as well
//     as the workers statefulset will be deleted");
//   - status.replicas is the leader StatefulSet's status.replicas
//     ("the number of leaders") and status.readyReplicas = spec.replicas
//     ("groups ready", the leader Pod and its worker StatefulSet ready:
//     the kubelet actor makes every Pod Ready), with condition Available
//     true.
//
// And no StatefulSet labelled with a LeaderWorkerSet's name outlives that
// set (the garbage collector deletes them through their owners).
//
// Nothing is desired of a set LWS cannot build (Unbuildable says why):
// a pod template with no container or a container with no image, or a
// volumeClaimTemplate without access modes or a storage request (the
// server refuses its StatefulSet, 422, at every try, as kube-apiserver
// does; LWS's webhook does not check the templates, so in a cluster too
// the set is accepted and never makes anything: class V in
// docs/real-operators.md), or a subGroupPolicy without subGroupSize
// (finding F1: LWS dereferences it). A set changed into one keeps the
// StatefulSets it had.
func Desired(s *cachelabtest.State) error {
	sets := cachelabtest.List[leaderworkerset.LeaderWorkerSet](s, "")
	live := map[string]*leaderworkerset.LeaderWorkerSet{}
	for _, l := range sets {
		live[l.Namespace+"/"+l.Name] = l
	}
	for _, sts := range cachelabtest.List[appsv1.StatefulSet](s, "") {
		name, ok := sts.Labels[leaderworkerset.SetNameLabelKey]
		if !ok {
			continue
		}
		l := live[sts.Namespace+"/"+name]
		if l == nil {
			return fmt.Errorf("StatefulSet %s/%s outlives LeaderWorkerSet %s", sts.Namespace, sts.Name, name)
		}
		if sts.Name == l.Name || l.Spec.Replicas == nil || Unbuildable(l) != "" {
			continue
		}
		if g, err := strconv.Atoi(sts.Labels[leaderworkerset.GroupIndexLabelKey]); err == nil && g >= int(*l.Spec.Replicas) {
			return fmt.Errorf("LeaderWorkerSet %s/%s has %d groups but worker StatefulSet %s (group %d) is left", l.Namespace, l.Name, *l.Spec.Replicas, sts.Name, g)
		}
	}
	for _, l := range sets {
		if l.DeletionTimestamp != nil || Unbuildable(l) != "" {
			continue
		}
		if err := desiredSet(s, l); err != nil {
			return fmt.Errorf("LeaderWorkerSet %s/%s: %w", l.Namespace, l.Name, err)
		}
	}
	return nil
}

// desiredSet checks one LeaderWorkerSet (see Desired).
func desiredSet(s *cachelabtest.State, l *leaderworkerset.LeaderWorkerSet) error {
	if l.Spec.Replicas == nil || l.Spec.LeaderWorkerTemplate.Size == nil {
		return fmt.Errorf("spec.replicas or spec.leaderWorkerTemplate.size unset (the CRD defaults both)")
	}
	replicas, size := *l.Spec.Replicas, *l.Spec.LeaderWorkerTemplate.Size
	leader, ok := cachelabtest.Get[appsv1.StatefulSet](s, l.Namespace, l.Name)
	if !ok {
		return fmt.Errorf("no leader StatefulSet")
	}
	if leader.Spec.Replicas == nil || *leader.Spec.Replicas != replicas {
		return fmt.Errorf("leader StatefulSet has spec.replicas %v, want %d", deref(leader.Spec.Replicas), replicas)
	}
	if size > 1 {
		for i := range replicas {
			name := fmt.Sprintf("%s-%d", l.Name, i)
			w, ok := cachelabtest.Get[appsv1.StatefulSet](s, l.Namespace, name)
			if !ok {
				return fmt.Errorf("no worker StatefulSet %s", name)
			}
			if w.Spec.Replicas == nil || *w.Spec.Replicas != size-1 {
				return fmt.Errorf("worker StatefulSet %s has spec.replicas %v, want size-1 = %d", name, deref(w.Spec.Replicas), size-1)
			}
		}
	}
	if l.Status.Replicas != leader.Status.Replicas {
		return fmt.Errorf("status.replicas %d, the leader StatefulSet's status.replicas %d", l.Status.Replicas, leader.Status.Replicas)
	}
	if l.Status.ReadyReplicas != replicas {
		return fmt.Errorf("status.readyReplicas %d, want %d", l.Status.ReadyReplicas, replicas)
	}
	if !meta.IsStatusConditionTrue(l.Status.Conditions, string(leaderworkerset.LeaderWorkerSetAvailable)) {
		return fmt.Errorf("condition Available not true")
	}
	return nil
}

// deref prints a *int32 for a message.
func deref(p *int32) any {
	if p == nil {
		return "unset"
	}
	return *p
}

// Unbuildable says why LWS cannot build l's StatefulSets ("" if it can):
// its leader or worker pod template has no container or a container
// without an image, or a volumeClaimTemplate has no access mode or no
// storage request (the API server refuses the StatefulSet), or its
// subGroupPolicy has no subGroupSize (LWS v0.8.0 dereferences it: F1 in
// docs/real-operators.md).
func Unbuildable(l *leaderworkerset.LeaderWorkerSet) string {
	t := l.Spec.LeaderWorkerTemplate
	if t.SubGroupPolicy != nil && t.SubGroupPolicy.SubGroupSize == nil {
		return "subGroupPolicy without subGroupSize"
	}
	for _, v := range t.VolumeClaimTemplates {
		if _, ok := v.Spec.Resources.Requests[corev1.ResourceStorage]; len(v.Spec.AccessModes) == 0 || !ok {
			return fmt.Sprintf("volumeClaimTemplate %q without access modes or a storage request", v.Name)
		}
	}
	templates := []*corev1.PodTemplateSpec{&t.WorkerTemplate}
	if t.LeaderTemplate != nil {
		templates = append(templates, t.LeaderTemplate)
	}
	for _, pt := range templates {
		if len(pt.Spec.Containers) == 0 {
			return "a pod template without containers"
		}
		for _, c := range pt.Spec.Containers {
			if c.Image == "" {
				return fmt.Sprintf("container %q without an image", c.Name)
			}
		}
	}
	return ""
}
