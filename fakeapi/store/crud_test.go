package store

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

func TestCreateAssignsDeterministicUIDRevisionTimestampAndGeneration(t *testing.T) {
	s, _ := newTestStore(t, 0)
	if s.RV() != 1 || s.CompactedRV() != 1 {
		t.Fatalf("new store at RV %d compacted %d, want 1 and 1", s.RV(), s.CompactedRV())
	}
	out, evs, err := s.Create(configmapsGVR, "default", cm("", "a", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.ConfigMap)
	if got.UID != "00000000-0000-0000-0000-000000000001" {
		t.Errorf("uid = %q, want the first counter UID", got.UID)
	}
	if got.ResourceVersion != "2" || s.RV() != 2 {
		t.Errorf("resourceVersion = %q, store RV %d; want 2 and 2", got.ResourceVersion, s.RV())
	}
	if !got.CreationTimestamp.Time.Equal(epoch) {
		t.Errorf("creationTimestamp = %v, want the clock's %v", got.CreationTimestamp, epoch)
	}
	if got.Namespace != "default" || got.Generation != 0 {
		t.Errorf("namespace %q generation %d, want default and 0 (ConfigMaps have no generation)", got.Namespace, got.Generation)
	}
	if len(evs) != 1 || evs[0].Type != watch.Added || evs[0].RV != 2 || evs[0].Verb != "create" {
		t.Errorf("events = %+v, want one ADDED at 2 by create", summarize(t, evs))
	}
	p := mustCreate(t, s, podsGVR, "default", pod("", "p")).(*corev1.Pod)
	if p.Generation != 1 || p.Status.Phase != corev1.PodPending {
		t.Errorf("pod generation %d phase %q, want 1 and Pending", p.Generation, p.Status.Phase)
	}
	w := mustCreate(t, s, widgetsGVR, "default", widget("default", "w", 1)).(*unstructured.Unstructured)
	if w.GetGeneration() != 1 {
		t.Errorf("custom resource generation = %d, want 1", w.GetGeneration())
	}
	g1 := mustCreate(t, s, configmapsGVR, "default", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}})
	if name := metaOf(t, g1).GetName(); name != "gen-bbbbc" {
		t.Errorf("generated name = %q, want gen-bbbbc (deterministic)", name)
	}
	// A second store fed the same requests gives the same identities.
	s2, _ := newTestStore(t, 0)
	out2 := mustCreate(t, s2, configmapsGVR, "default", cm("", "a", nil))
	if diff := cmp.Diff(out, out2); diff != "" {
		t.Errorf("same requests, different objects (-first +second):\n%s", diff)
	}
}

func TestEveryWriteBumpsTheGlobalRevisionByOneAcrossKinds(t *testing.T) {
	s, _ := newTestStore(t, 0)
	var rvs []int64
	_, evs, _ := s.Create(configmapsGVR, "ns", cm("", "a", nil), metav1.CreateOptions{})
	rvs = append(rvs, evs[0].RV)
	_, evs, _ = s.Create(podsGVR, "ns", pod("", "p"), metav1.CreateOptions{})
	rvs = append(rvs, evs[0].RV)
	_, evs, _ = s.Create(namespacesGVR, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, metav1.CreateOptions{})
	rvs = append(rvs, evs[0].RV)
	_, evs, _ = s.Patch(configmapsGVR, "ns", "a", types.MergePatchType, []byte(`{"data":{"k":"w"}}`), metav1.PatchOptions{}, "")
	rvs = append(rvs, evs[0].RV)
	_, evs, _ = s.Delete(podsGVR, "ns", "p", metav1.DeleteOptions{})
	rvs = append(rvs, evs[0].RV)
	if diff := cmp.Diff([]int64{2, 3, 4, 5, 6}, rvs); diff != "" {
		t.Errorf("revisions (-want +got):\n%s", diff)
	}
}

func TestUpdateWithStaleResourceVersionIsConflict(t *testing.T) {
	s, _ := newTestStore(t, 0)
	a := mustCreate(t, s, configmapsGVR, "ns", cm("", "a", nil)).(*corev1.ConfigMap)
	a.Data["k"] = "1"
	if _, _, err := s.Update(configmapsGVR, "ns", a, metav1.UpdateOptions{}, ""); err != nil {
		t.Fatal(err)
	}
	a.Data["k"] = "2" // still carries the old resourceVersion
	_, _, err := s.Update(configmapsGVR, "ns", a, metav1.UpdateOptions{}, "")
	assertStatus(t, err, 409, metav1.StatusReasonConflict)
	want := `Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again`
	if err.Error() != want {
		t.Errorf("message = %q, want %q", err.Error(), want)
	}
}

func TestUnconditionalUpdateIsAllowedForBuiltinsButNotCustomResources(t *testing.T) {
	s, _ := newTestStore(t, 0)
	mustCreate(t, s, configmapsGVR, "ns", cm("", "a", nil))
	b := cm("ns", "a", nil)
	b.Data["k"] = "x"
	out, _, err := s.Update(configmapsGVR, "ns", b, metav1.UpdateOptions{}, "")
	if err != nil || out.(*corev1.ConfigMap).Data["k"] != "x" {
		t.Fatalf("unconditional ConfigMap update: %v", err)
	}
	mustCreate(t, s, widgetsGVR, "ns", widget("ns", "w", 1))
	_, _, err = s.Update(widgetsGVR, "ns", widget("ns", "w", 2), metav1.UpdateOptions{}, "")
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	if !strings.Contains(err.Error(), "must be specified for an update") {
		t.Errorf("message = %q, want kube-apiserver's 'must be specified for an update'", err)
	}
}

func TestErrorPathsAnswerAsKubeAPIServer(t *testing.T) {
	s, _ := newTestStore(t, 0)
	mustCreate(t, s, configmapsGVR, "ns", cm("", "a", nil))
	existing, _ := s.Get(configmapsGVR, "ns", "a", metav1.GetOptions{})
	uid := types.UID("someone-else")
	staleRV := "1"
	cases := []struct {
		name   string
		do     func() error
		code   int32
		reason metav1.StatusReason
		msg    string
	}{
		{"get missing", func() error { _, err := s.Get(configmapsGVR, "ns", "nope", metav1.GetOptions{}); return err },
			404, metav1.StatusReasonNotFound, `configmaps "nope" not found`},
		{"unknown resource", func() error {
			_, err := s.Get(schema.GroupVersionResource{Version: "v1", Resource: "gizmos"}, "ns", "x", metav1.GetOptions{})
			return err
		}, 404, metav1.StatusReasonNotFound, "the server could not find the requested resource"},
		{"update missing", func() error {
			_, _, err := s.Update(configmapsGVR, "ns", cm("ns", "nope", nil), metav1.UpdateOptions{}, "")
			return err
		}, 404, metav1.StatusReasonNotFound, `configmaps "nope" not found`},
		{"delete missing", func() error { _, _, err := s.Delete(configmapsGVR, "ns", "nope", metav1.DeleteOptions{}); return err },
			404, metav1.StatusReasonNotFound, `configmaps "nope" not found`},
		{"patch missing", func() error {
			_, _, err := s.Patch(configmapsGVR, "ns", "nope", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{}, "")
			return err
		}, 404, metav1.StatusReasonNotFound, `configmaps "nope" not found`},
		{"create existing", func() error {
			_, _, err := s.Create(configmapsGVR, "ns", cm("", "a", nil), metav1.CreateOptions{})
			return err
		},
			409, metav1.StatusReasonAlreadyExists, `configmaps "a" already exists`},
		{"delete with wrong UID precondition", func() error {
			_, _, err := s.Delete(configmapsGVR, "ns", "a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			return err
		}, 409, metav1.StatusReasonConflict, "the UID in the precondition (someone-else) does not match the UID in record (" + string(metaOf(t, existing).GetUID()) + ")"},
		{"delete with stale RV precondition", func() error {
			_, _, err := s.Delete(configmapsGVR, "ns", "a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &staleRV}})
			return err
		}, 409, metav1.StatusReasonConflict, "the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (2)"},
		{"invalid name", func() error {
			_, _, err := s.Create(configmapsGVR, "ns", cm("", "Bad_Name", nil), metav1.CreateOptions{})
			return err
		},
			422, metav1.StatusReasonInvalid, `ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"`},
		{"missing name", func() error {
			_, _, err := s.Create(configmapsGVR, "ns", cm("", "", nil), metav1.CreateOptions{})
			return err
		},
			422, metav1.StatusReasonInvalid, "metadata.name: Required value: name or generateName is required"},
		{"namespace name too long for a label", func() error {
			_, _, err := s.Create(namespacesGVR, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a.b"}}, metav1.CreateOptions{})
			return err
		}, 422, metav1.StatusReasonInvalid, `Namespace "a.b" is invalid`},
		{"pod without containers", func() error {
			_, _, err := s.Create(podsGVR, "ns", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, metav1.CreateOptions{})
			return err
		}, 422, metav1.StatusReasonInvalid, "spec.containers: Required value"},
		{"custom resource failing its schema", func() error {
			_, _, err := s.Create(widgetsGVR, "ns", widget("ns", "w", -1), metav1.CreateOptions{})
			return err
		}, 422, metav1.StatusReasonInvalid, "spec.size: Invalid value: -1: must be >= 0"},
		{"resourceVersion set on create", func() error {
			c := cm("", "b", nil)
			c.ResourceVersion = "5"
			_, _, err := s.Create(configmapsGVR, "ns", c, metav1.CreateOptions{})
			return err
		}, 500, metav1.StatusReasonUnknown, "resourceVersion should not be set on objects to be created"},
		{"namespace mismatch", func() error {
			_, _, err := s.Create(configmapsGVR, "ns", cm("other", "b", nil), metav1.CreateOptions{})
			return err
		},
			400, metav1.StatusReasonBadRequest, "the namespace of the provided object does not match the namespace sent on the request"},
		{"wrong kind", func() error {
			_, _, err := s.Create(configmapsGVR, "ns", pod("", "p"), metav1.CreateOptions{})
			return err
		},
			400, metav1.StatusReasonBadRequest, "cannot be handled as a ConfigMap"},
		{"unstructured with a Go int", func() error {
			w := widget("ns", "w", 1)
			w.Object["spec"] = map[string]any{"size": 3} // int, not int64
			_, _, err := s.Create(widgetsGVR, "ns", w, metav1.CreateOptions{})
			return err
		}, 400, metav1.StatusReasonBadRequest, "not JSON-compatible"},
		{"status of a resource without status", func() error {
			_, _, err := s.Update(configmapsGVR, "ns", cm("ns", "a", nil), metav1.UpdateOptions{}, "status")
			return err
		}, 404, metav1.StatusReasonNotFound, "the server could not find the requested resource"},
		{"bad propagation policy", func() error {
			p := metav1.DeletionPropagation("Sideways")
			_, _, err := s.Delete(configmapsGVR, "ns", "a", metav1.DeleteOptions{PropagationPolicy: &p})
			return err
		}, 422, metav1.StatusReasonInvalid, "propagationPolicy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			assertStatus(t, err, c.code, c.reason)
			if err != nil && !strings.Contains(err.Error(), c.msg) {
				t.Errorf("message = %q, want it to contain %q", err.Error(), c.msg)
			}
		})
	}
	if s.RV() != 2 {
		t.Errorf("failed requests wrote: RV = %d, want 2", s.RV())
	}
}

func TestNoOpUpdateWritesNothing(t *testing.T) {
	s, _ := newTestStore(t, 0)
	a := mustCreate(t, s, configmapsGVR, "ns", cm("", "a", nil))
	out, evs, err := s.Update(configmapsGVR, "ns", a, metav1.UpdateOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 0 || s.RV() != 2 || rvOf(t, out) != 2 {
		t.Errorf("no-op update: %d events, store RV %d, object RV %d; want none, 2, 2", len(evs), s.RV(), rvOf(t, out))
	}
}

func TestReturnedObjectsAreCopiesTheCallerOwns(t *testing.T) {
	s, _ := newTestStore(t, 0)
	in := cm("", "a", nil)
	out := mustCreate(t, s, configmapsGVR, "ns", in).(*corev1.ConfigMap)
	in.Data["k"] = "changed-input"
	out.Data["k"] = "changed-output"
	got, _ := s.Get(configmapsGVR, "ns", "a", metav1.GetOptions{})
	if v := got.(*corev1.ConfigMap).Data["k"]; v != "v" {
		t.Errorf("stored data = %q, want v: the store must not share maps with callers", v)
	}
}

func TestGenerationBumpsOnSpecChangesOnly(t *testing.T) {
	s, _ := newTestStore(t, 0)
	w := mustCreate(t, s, widgetsGVR, "ns", widget("ns", "w", 1)).(*unstructured.Unstructured)
	// metadata change: no bump
	w.SetLabels(map[string]string{"a": "b"})
	w2, _, err := s.Update(widgetsGVR, "ns", w, metav1.UpdateOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	// status change through the status subresource: no bump
	u := w2.(*unstructured.Unstructured)
	_ = unstructured.SetNestedField(u.Object, "Ready", "status", "phase")
	w3, _, err := s.Update(widgetsGVR, "ns", u, metav1.UpdateOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	// spec change: bump
	u = w3.(*unstructured.Unstructured)
	_ = unstructured.SetNestedField(u.Object, int64(2), "spec", "size")
	w4, _, err := s.Update(widgetsGVR, "ns", u, metav1.UpdateOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	gens := []int64{w2.(*unstructured.Unstructured).GetGeneration(), w3.(*unstructured.Unstructured).GetGeneration(), w4.(*unstructured.Unstructured).GetGeneration()}
	if diff := cmp.Diff([]int64{1, 1, 2}, gens); diff != "" {
		t.Errorf("generations after label, status, spec changes (-want +got):\n%s", diff)
	}
	// A client cannot set generation itself.
	u = w4.(*unstructured.Unstructured)
	u.SetGeneration(40)
	_ = unstructured.SetNestedField(u.Object, int64(3), "spec", "size")
	w5, _, _ := s.Update(widgetsGVR, "ns", u, metav1.UpdateOptions{}, "")
	if g := w5.(*unstructured.Unstructured).GetGeneration(); g != 3 {
		t.Errorf("generation after a client set 40 and changed spec = %d, want 3", g)
	}
	// Pods bump on spec changes; ConfigMaps never have one.
	p := mustCreate(t, s, podsGVR, "ns", pod("", "p")).(*corev1.Pod)
	p.Spec.ActiveDeadlineSeconds = new(int64)
	p2, _, err := s.Update(podsGVR, "ns", p, metav1.UpdateOptions{}, "")
	if err != nil || p2.(*corev1.Pod).Generation != 2 {
		t.Errorf("pod generation after a spec change = %d (%v), want 2", p2.(*corev1.Pod).Generation, err)
	}
}

func TestStatusSubresourceSplitsSpecFromStatus(t *testing.T) {
	s, _ := newTestStore(t, 0)
	w := mustCreate(t, s, widgetsGVR, "ns", widget("ns", "w", 1)).(*unstructured.Unstructured)
	// A main-resource update cannot set status.
	_ = unstructured.SetNestedField(w.Object, "Ready", "status", "phase")
	out, _, err := s.Update(widgetsGVR, "ns", w, metav1.UpdateOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedString(out.(*unstructured.Unstructured).Object, "status", "phase"); found {
		t.Errorf("main update set status: %v", out.(*unstructured.Unstructured).Object["status"])
	}
	// A status update cannot change spec or labels.
	u := w.DeepCopy()
	_ = unstructured.SetNestedField(u.Object, int64(9), "spec", "size")
	u.SetLabels(map[string]string{"x": "y"})
	out, _, err = s.Update(widgetsGVR, "ns", u, metav1.UpdateOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*unstructured.Unstructured)
	size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size")
	phase, _, _ := unstructured.NestedString(got.Object, "status", "phase")
	if size != 1 || phase != "Ready" || len(got.GetLabels()) != 0 {
		t.Errorf("after status update: size %d phase %q labels %v; want 1, Ready, none", size, phase, got.GetLabels())
	}
	// Same for typed pods.
	p := mustCreate(t, s, podsGVR, "ns", pod("", "p")).(*corev1.Pod)
	p.Status.Phase = corev1.PodRunning
	p.Spec.Containers[0].Image = "other"
	out, _, err = s.Update(podsGVR, "ns", p, metav1.UpdateOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	gp := out.(*corev1.Pod)
	if gp.Status.Phase != corev1.PodRunning || gp.Spec.Containers[0].Image != "busybox" {
		t.Errorf("pod status update: phase %q image %q; want Running and busybox", gp.Status.Phase, gp.Spec.Containers[0].Image)
	}
}

func TestTooLargeResourceVersionIsWhatTheReflectorDetects(t *testing.T) {
	s, _ := newTestStore(t, 0)
	_, err := s.Get(configmapsGVR, "ns", "a", metav1.GetOptions{ResourceVersion: "99"})
	assertStatus(t, err, 504, metav1.StatusReasonTimeout)
	// client-go's reflector: isTooLargeResourceVersionError.
	if !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		t.Errorf("error %v lacks cause %s", err, metav1.CauseTypeResourceVersionTooLarge)
	}
	if !strings.Contains(err.Error(), "Too large resource version: 99, current: 1") {
		t.Errorf("message = %q", err.Error())
	}
	if secs, ok := apierrors.SuggestsClientDelay(err); !ok || secs != 1 {
		t.Errorf("retry-after = %d %v, want 1 s", secs, ok)
	}
}
