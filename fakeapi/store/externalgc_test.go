package store

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
)

var (
	deploymentsGVR = appsv1.SchemeGroupVersion.WithResource("deployments")
	replicasetsGVR = appsv1.SchemeGroupVersion.WithResource("replicasets")
)

// newExternalGCStore returns a store with Options.ExternalGC: a Deployment
// d, its ReplicaSets d-1 and d-2 (controller references, blocking) and a
// Pod d-1-p of d-1 (RVs 2..5).
func newExternalGCStore(t *testing.T) *Store {
	t.Helper()
	s := New(Options{Clock: clocktesting.NewFakeClock(epoch), ExternalGC: true})
	labels := map[string]string{"app": "d"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	sel := &metav1.LabelSelector{MatchLabels: labels}
	d := mustCreate(t, s, deploymentsGVR, "ns", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec: appsv1.DeploymentSpec{Selector: sel, Template: tmpl}})
	for _, n := range []string{"d-1", "d-2"} {
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: labels, OwnerReferences: []metav1.OwnerReference{ownerRef(d, true)}},
			Spec: appsv1.ReplicaSetSpec{Selector: sel, Template: tmpl}}
		mustCreate(t, s, replicasetsGVR, "ns", rs)
	}
	rs1, err := s.Get(replicasetsGVR, "ns", "d-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := pod("", "d-1-p")
	p.OwnerReferences = []metav1.OwnerReference{ownerRef(rs1, true)}
	mustCreate(t, s, podsGVR, "ns", p)
	return s
}

// exists says whether ns/name of gvr is stored.
func exists(s *Store, gvr schema.GroupVersionResource, name string) bool {
	_, err := s.Get(gvr, "ns", name, metav1.GetOptions{})
	return err == nil
}

// TestExternalGCLeavesADeletedDeploymentsReplicaSetsToAClient: with
// Options.ExternalGC a Deployment's (background) delete is its own
// DELETED event only; its ReplicaSets stay, owner reference and all, until
// a client (the real garbage collector) deletes them, and that delete does
// not take the ReplicaSet's Pod either. The default store deletes them in
// the same call (TestBackgroundDeletionCollectsDependentsRecursively).
func TestExternalGCLeavesADeletedDeploymentsReplicaSetsToAClient(t *testing.T) {
	s := newExternalGCStore(t)
	_, evs, err := s.Delete(deploymentsGVR, "ns", "d", metav1.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]eventSummary{{watch.Deleted, "d", 6, false}}, summarize(t, evs)); diff != "" {
		t.Errorf("deployment delete events (-want +got):\n%s", diff)
	}
	for _, n := range []string{"d-1", "d-2"} {
		rs, err := s.Get(replicasetsGVR, "ns", n, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("replicaset %s gone with its deployment: %v", n, err)
		}
		if refs := metaOf(t, rs).GetOwnerReferences(); len(refs) != 1 || refs[0].Name != "d" {
			t.Errorf("replicaset %s ownerReferences = %v, want the gone deployment's still", n, refs)
		}
	}
	_, evs, err = s.Delete(replicasetsGVR, "ns", "d-1", metav1.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]eventSummary{{watch.Deleted, "d-1", 7, false}}, summarize(t, evs)); diff != "" {
		t.Errorf("replicaset delete events (-want +got):\n%s", diff)
	}
	if !exists(s, podsGVR, "d-1-p") {
		t.Error("the replicaset's pod went with it: the store collected it")
	}
	// A new object naming a gone owner is not collected either.
	orphan := cm("", "late", nil)
	orphan.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "gone-uid"}}
	if _, evs, err := s.Create(configmapsGVR, "ns", orphan, metav1.CreateOptions{}); err != nil || len(evs) != 1 {
		t.Errorf("create for a gone owner: %d events, %v; want just ADDED", len(evs), err)
	}
}

// TestExternalGCForegroundKeepsTheOwnerUntilAClientRemovesItsFinalizer:
// a foreground delete marks the owner (foregroundDeletion finalizer,
// deletionTimestamp) as kube-apiserver does and touches no dependent; the
// owner stays after its dependents are gone, until a client removes the
// finalizer, which deletes it.
func TestExternalGCForegroundKeepsTheOwnerUntilAClientRemovesItsFinalizer(t *testing.T) {
	s := newExternalGCStore(t)
	fg := metav1.DeletePropagationForeground
	out, evs, err := s.Delete(deploymentsGVR, "ns", "d", metav1.DeleteOptions{PropagationPolicy: &fg})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]eventSummary{{watch.Modified, "d", 6, false}}, summarize(t, evs)); diff != "" {
		t.Errorf("foreground delete events (-want +got):\n%s", diff)
	}
	m := metaOf(t, out)
	if m.GetDeletionTimestamp() == nil || !slices.Equal(m.GetFinalizers(), []string{metav1.FinalizerDeleteDependents}) {
		t.Errorf("owner after a foreground delete: deletionTimestamp %v, finalizers %v; want set and [foregroundDeletion]", m.GetDeletionTimestamp(), m.GetFinalizers())
	}
	for _, n := range []string{"d-1", "d-2"} {
		if _, _, err := s.Delete(replicasetsGVR, "ns", n, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if !exists(s, deploymentsGVR, "d") {
		t.Fatal("the owner went once its dependents were gone: the store removed the finalizer")
	}
	_, evs, err = s.Patch(deploymentsGVR, "ns", "d", types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]eventSummary{{watch.Deleted, "d", 9, false}}, summarize(t, evs)); diff != "" {
		t.Errorf("finalizer removal events (-want +got):\n%s", diff)
	}
}

// TestExternalGCOrphanLeavesTheReferencesToAClient: an orphan delete
// marks the owner with the orphan finalizer and leaves its dependents'
// ownerReferences as they are; the owner goes when a client removes the
// finalizer.
func TestExternalGCOrphanLeavesTheReferencesToAClient(t *testing.T) {
	s := newExternalGCStore(t)
	orphan := metav1.DeletePropagationOrphan
	out, evs, err := s.Delete(deploymentsGVR, "ns", "d", metav1.DeleteOptions{PropagationPolicy: &orphan})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]eventSummary{{watch.Modified, "d", 6, false}}, summarize(t, evs)); diff != "" {
		t.Errorf("orphan delete events (-want +got):\n%s", diff)
	}
	if f := metaOf(t, out).GetFinalizers(); !slices.Equal(f, []string{metav1.FinalizerOrphanDependents}) {
		t.Errorf("owner finalizers = %v, want [orphan]", f)
	}
	rs, _ := s.Get(replicasetsGVR, "ns", "d-1", metav1.GetOptions{})
	if refs := metaOf(t, rs).GetOwnerReferences(); len(refs) != 1 {
		t.Errorf("dependent ownerReferences = %v, want kept for the collector to drop", refs)
	}
}

// TestDefaultStoreStillCollectsInTheCall: without ExternalGC the same
// family goes in the Deployment's delete call (the lab's default).
func TestDefaultStoreStillCollectsInTheCall(t *testing.T) {
	s := newExternalGCStore(t)
	s.externalGC = false
	_, evs, err := s.Delete(deploymentsGVR, "ns", "d", metav1.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var gone []string
	for _, ev := range evs {
		if ev.Type == watch.Deleted {
			gone = append(gone, metaOf(t, ev.Object).GetName())
		}
	}
	slices.Sort(gone)
	if want := []string{"d", "d-1", "d-1-p", "d-2"}; !slices.Equal(gone, want) {
		t.Errorf("deleted in the call: %v, want %v", gone, want)
	}
}
