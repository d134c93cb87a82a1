package store

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// A Pod on a node is deleted gracefully (cases pod-delete-graceful and
// pod-delete-unscheduled): marked with the spec's grace period and kept;
// an update meanwhile (a kubelet's status) does not end it; only a delete
// with grace 0 does, marking then removing it. A Pod on no node goes at
// once, marked then removed.
func TestPodsAreDeletedGracefully(t *testing.T) {
	s, _ := newTestStore(t, 0)
	p := pod("", "p")
	p.Spec.NodeName = "n1"
	mustCreate(t, s, podsGVR, "ns", p) // rv 2
	out, evs, err := s.Delete(podsGVR, "ns", "p", metav1.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	if got.DeletionTimestamp == nil || ptr.Deref(got.DeletionGracePeriodSeconds, -1) != 30 || got.Generation != 2 {
		t.Errorf("first delete answered deletionTimestamp %v, grace %v, generation %d; want set, 30, 2", got.DeletionTimestamp, got.DeletionGracePeriodSeconds, got.Generation)
	}
	if diff := cmp.Diff([]eventSummary{{watch.Modified, "p", 3, false}}, summarize(t, evs)); diff != "" {
		t.Errorf("first delete events (-want +got):\n%s", diff)
	}
	if _, evs, err = s.Patch(podsGVR, "ns", "p", types.MergePatchType, []byte(`{"status":{"phase":"Running"}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]eventSummary{{watch.Modified, "p", 4, false}}, summarize(t, evs)); diff != "" {
		t.Errorf("a status update of a terminating Pod (-want +got):\n%s", diff)
	}
	if _, evs, _ = s.Delete(podsGVR, "ns", "p", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](60)}); len(evs) != 0 {
		t.Errorf("a longer grace period wrote %v, want nothing", summarize(t, evs))
	}
	if _, evs, err = s.Delete(podsGVR, "ns", "p", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]eventSummary{{watch.Modified, "p", 5, false}, {watch.Deleted, "p", 6, false}}, summarize(t, evs)); diff != "" {
		t.Errorf("grace 0 (-want +got):\n%s", diff)
	}

	mustCreate(t, s, podsGVR, "ns", pod("", "unscheduled")) // rv 7
	if _, evs, err = s.Delete(podsGVR, "ns", "unscheduled", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]eventSummary{{watch.Modified, "unscheduled", 8, false}, {watch.Deleted, "unscheduled", 9, false}}, summarize(t, evs)); diff != "" {
		t.Errorf("a Pod on no node (-want +got):\n%s", diff)
	}

	held := pod("", "held")
	held.Finalizers = []string{"example.com/hold"}
	mustCreate(t, s, podsGVR, "ns", held) // rv 10
	if _, evs, _ = s.Delete(podsGVR, "ns", "held", metav1.DeleteOptions{}); len(evs) != 1 || evs[0].Type != watch.Modified {
		t.Errorf("a held Pod's delete: %v, want one MODIFIED (kept by its finalizer)", summarize(t, evs))
	}
	if _, evs, _ = s.Patch(podsGVR, "ns", "held", types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{}, ""); len(evs) == 0 || evs[len(evs)-1].Type != watch.Deleted {
		t.Errorf("removing the last finalizer of a Pod marked with grace 0: %v, want it DELETED", summarize(t, evs))
	}
}

// Create admission (case pod-create-defaults): a PriorityClass the
// server does not have is refused; with DefaultServiceAccounts a new
// namespace gets its ServiceAccount "default", and a Pod whose
// ServiceAccount opts out of automounting gets no token volume.
func TestPodAdmission(t *testing.T) {
	s, _ := newTestStore(t, 0)
	p := pod("", "p")
	p.Spec.PriorityClassName = "gold"
	_, _, err := s.Create(podsGVR, "ns", p, metav1.CreateOptions{})
	assertStatus(t, err, 403, metav1.StatusReasonForbidden)

	s.defaultSAs = true
	_, evs, err := s.Create(namespacesGVR, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]eventSummary{{watch.Added, "team", 2, false}, {watch.Added, "default", 3, false}}, summarize(t, evs)); diff != "" {
		t.Errorf("namespace create with DefaultServiceAccounts (-want +got):\n%s", diff)
	}
	if _, _, err := s.Patch(coreServiceAccounts, "team", "default", types.MergePatchType, []byte(`{"automountServiceAccountToken":false}`), metav1.PatchOptions{}, ""); err != nil {
		t.Fatal(err)
	}
	out := mustCreate(t, s, podsGVR, "team", pod("", "quiet")).(*corev1.Pod)
	if len(out.Spec.Volumes) != 0 || out.Spec.ServiceAccountName != "default" || len(out.Spec.Tolerations) != 2 {
		t.Errorf("pod under an opted-out ServiceAccount: volumes %v, serviceAccountName %q, tolerations %v; want none, default, the two defaults", out.Spec.Volumes, out.Spec.ServiceAccountName, out.Spec.Tolerations)
	}
}
