package store

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

func TestDeleteWithFinalizerMarksTerminatingAndLastFinalizerRemovalDeletes(t *testing.T) {
	s, clk := newTestStore(t, 0)
	c := cm("", "a", nil)
	c.Finalizers = []string{"lab.example.com/cleanup"}
	mustCreate(t, s, configmapsGVR, "ns", c)
	clk.Step(90 * time.Second)
	out, evs, err := s.Delete(configmapsGVR, "ns", "a", metav1.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.ConfigMap)
	if got.DeletionTimestamp == nil || !got.DeletionTimestamp.Time.Equal(epoch.Add(90*time.Second)) {
		t.Errorf("deletionTimestamp = %v, want the clock's %v", got.DeletionTimestamp, epoch.Add(90*time.Second))
	}
	if got.DeletionGracePeriodSeconds == nil || *got.DeletionGracePeriodSeconds != 0 {
		t.Errorf("deletionGracePeriodSeconds = %v, want 0", got.DeletionGracePeriodSeconds)
	}
	if diff := cmp.Diff([]eventSummary{{watch.Modified, "a", 3, false}}, summarize(t, evs)); diff != "" {
		t.Errorf("delete events (-want +got):\n%s", diff)
	}
	if _, err := s.Get(configmapsGVR, "ns", "a", metav1.GetOptions{}); err != nil {
		t.Errorf("terminating object gone: %v", err)
	}
	// Deleting again writes nothing.
	if _, evs, err := s.Delete(configmapsGVR, "ns", "a", metav1.DeleteOptions{}); err != nil || len(evs) != 0 {
		t.Errorf("second delete: %d events, %v; want none", len(evs), err)
	}
	// Adding a finalizer to a terminating object is refused.
	got.Finalizers = append(got.Finalizers, "lab.example.com/another")
	_, _, err = s.Update(configmapsGVR, "ns", got, metav1.UpdateOptions{}, "")
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	if !strings.Contains(err.Error(), `metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"lab.example.com/another"}`) {
		t.Errorf("message = %q", err.Error())
	}
	// Removing the last finalizer deletes it: one DELETED event with the
	// last stored state (finalizer still listed, as etcd held it).
	got.Finalizers = nil
	out, evs, err = s.Update(configmapsGVR, "ns", got, metav1.UpdateOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]eventSummary{{watch.Deleted, "a", 4, false}}, summarize(t, evs)); diff != "" {
		t.Errorf("finalizer removal events (-want +got):\n%s", diff)
	}
	if f := evs[0].Object.(*corev1.ConfigMap).Finalizers; len(f) != 1 {
		t.Errorf("DELETED object finalizers = %v, want the last stored one", f)
	}
	// The caller gets the state it asked for at the resourceVersion it
	// updated, as kube-apiserver answers (recorded by the fidelity corpus).
	if rvOf(t, out) != 3 || len(out.(*corev1.ConfigMap).Finalizers) != 0 {
		t.Errorf("returned object RV = %d, finalizers %v; want 3 (the updated one's) and none", rvOf(t, out), out.(*corev1.ConfigMap).Finalizers)
	}
	_, err = s.Get(configmapsGVR, "ns", "a", metav1.GetOptions{})
	assertStatus(t, err, 404, metav1.StatusReasonNotFound)
}

// family creates owner o (a ConfigMap), children c1, c2 (ConfigMaps owned by
// o) and grandchild g (a Pod owned by c1).
func family(t *testing.T, s *Store) {
	t.Helper()
	o := mustCreate(t, s, configmapsGVR, "ns", cm("", "o", nil))
	for _, n := range []string{"c1", "c2"} {
		c := cm("", n, nil)
		c.OwnerReferences = []metav1.OwnerReference{ownerRef(withGVK(o, "ConfigMap"), true)}
		mustCreate(t, s, configmapsGVR, "ns", c)
	}
	c1, _ := s.Get(configmapsGVR, "ns", "c1", metav1.GetOptions{})
	g := pod("", "g")
	g.OwnerReferences = []metav1.OwnerReference{ownerRef(withGVK(c1, "ConfigMap"), true)}
	mustCreate(t, s, podsGVR, "ns", g)
}

// withGVK sets a typed object's kind (the store returns objects with it set
// already; this keeps the helper honest).
func withGVK[T interface{ GetObjectKind() schema.ObjectKind }](obj T, kind string) T {
	obj.GetObjectKind().SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
	return obj
}

func TestBackgroundDeletionCollectsDependentsRecursively(t *testing.T) {
	s, _ := newTestStore(t, 0)
	family(t, s) // RVs 2..5
	_, evs, err := s.Delete(configmapsGVR, "ns", "o", metav1.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []eventSummary{
		{watch.Deleted, "o", 6, false},
		{watch.Deleted, "c1", 7, true},
		// g is a Pod: deleted gracefully, marked first, then gone at once
		// (on no node), as case pod-delete-unscheduled recorded.
		{watch.Modified, "g", 8, true},
		{watch.Deleted, "g", 9, true},
		{watch.Deleted, "c2", 10, true},
	}
	if diff := cmp.Diff(want, summarize(t, evs)); diff != "" {
		t.Errorf("background deletion events (-want +got):\n%s", diff)
	}
}

func TestForegroundDeletionRemovesDependentsBeforeTheOwner(t *testing.T) {
	s, _ := newTestStore(t, 0)
	family(t, s)
	fg := metav1.DeletePropagationForeground
	out, evs, err := s.Delete(configmapsGVR, "ns", "o", metav1.DeleteOptions{PropagationPolicy: &fg})
	if err != nil {
		t.Fatal(err)
	}
	if f := out.(*corev1.ConfigMap).Finalizers; len(f) != 1 || f[0] != metav1.FinalizerDeleteDependents {
		t.Errorf("returned owner finalizers = %v, want [foregroundDeletion]", f)
	}
	want := []eventSummary{
		{watch.Modified, "o", 6, false}, // deletionTimestamp + foregroundDeletion
		{watch.Modified, "c1", 7, true}, // c1 has a dependent: foreground too
		{watch.Modified, "g", 8, true},  // a Pod: marked, then gone
		{watch.Deleted, "g", 9, true},
		{watch.Deleted, "c1", 10, true},
		{watch.Deleted, "c2", 11, true},
		{watch.Deleted, "o", 12, true},
	}
	if diff := cmp.Diff(want, summarize(t, evs)); diff != "" {
		t.Errorf("foreground deletion events (-want +got):\n%s", diff)
	}
}

func TestForegroundOwnerWaitsForABlockingDependentWithFinalizers(t *testing.T) {
	s, _ := newTestStore(t, 0)
	o := mustCreate(t, s, configmapsGVR, "ns", cm("", "o", nil))
	c := cm("", "c", nil)
	c.Finalizers = []string{"lab.example.com/hold"}
	c.OwnerReferences = []metav1.OwnerReference{ownerRef(o, true)}
	mustCreate(t, s, configmapsGVR, "ns", c)
	fg := metav1.DeletePropagationForeground
	if _, _, err := s.Delete(configmapsGVR, "ns", "o", metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(configmapsGVR, "ns", "o", metav1.GetOptions{}); err != nil {
		t.Fatalf("owner gone while a blocking dependent remains: %v", err)
	}
	// Releasing the dependent's finalizer lets both go.
	_, evs, err := s.Patch(configmapsGVR, "ns", "c", types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []eventSummary{{watch.Deleted, "c", 6, false}, {watch.Deleted, "o", 7, true}}
	if diff := cmp.Diff(want, summarize(t, evs)); diff != "" {
		t.Errorf("events after releasing the dependent (-want +got):\n%s", diff)
	}
}

func TestOrphanDeletionRemovesOwnerReferencesAndKeepsDependents(t *testing.T) {
	s, _ := newTestStore(t, 0)
	family(t, s)
	orphan := metav1.DeletePropagationOrphan
	_, evs, err := s.Delete(configmapsGVR, "ns", "o", metav1.DeleteOptions{PropagationPolicy: &orphan})
	if err != nil {
		t.Fatal(err)
	}
	want := []eventSummary{
		{watch.Modified, "o", 6, false}, // orphan finalizer + deletionTimestamp
		{watch.Modified, "c1", 7, true},
		{watch.Modified, "c2", 8, true},
		{watch.Deleted, "o", 9, true},
	}
	if diff := cmp.Diff(want, summarize(t, evs)); diff != "" {
		t.Errorf("orphan deletion events (-want +got):\n%s", diff)
	}
	c1, err := s.Get(configmapsGVR, "ns", "c1", metav1.GetOptions{})
	if err != nil || len(metaOf(t, c1).GetOwnerReferences()) != 0 {
		t.Errorf("orphaned c1: %v, ownerRefs %v; want kept without owner", err, c1)
	}
	if _, err := s.Get(podsGVR, "ns", "g", metav1.GetOptions{}); err != nil {
		t.Errorf("grandchild g gone: %v", err)
	}
}

func TestObjectCreatedForAGoneOwnerIsCollected(t *testing.T) {
	s, _ := newTestStore(t, 0)
	c := cm("", "c", nil)
	c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "ghost", UID: "no-such-uid"}}
	_, evs, err := s.Create(configmapsGVR, "ns", c, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []eventSummary{{watch.Added, "c", 2, false}, {watch.Deleted, "c", 3, true}}
	if diff := cmp.Diff(want, summarize(t, evs)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	// An owner of a kind the store does not serve is left alone.
	d := cm("", "d", nil)
	d.OwnerReferences = []metav1.OwnerReference{{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass", Name: "x", UID: "u"}}
	if _, evs, _ := s.Create(configmapsGVR, "ns", d, metav1.CreateOptions{}); len(evs) != 1 {
		t.Errorf("object owned by an unserved kind: %d events, want just ADDED", len(evs))
	}
}
