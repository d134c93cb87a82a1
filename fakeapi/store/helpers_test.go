package store

import (
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
)

var (
	podsGVR       = corev1.SchemeGroupVersion.WithResource("pods")
	configmapsGVR = corev1.SchemeGroupVersion.WithResource("configmaps")
	secretsGVR    = corev1.SchemeGroupVersion.WithResource("secrets")
	namespacesGVR = corev1.SchemeGroupVersion.WithResource("namespaces")
	eventsGVR     = corev1.SchemeGroupVersion.WithResource("events")
	widgetsGVR    = schema.GroupVersionResource{Group: "lab.example.com", Version: "v1", Resource: "widgets"}
)

// epoch is the fake clock's start.
var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newTestStore returns a store on a fake clock with the widgets CRD
// (status subresource, spec.size must be >= 0) registered.
func newTestStore(t fataler, window int64) (*Store, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(epoch)
	s := New(Options{Clock: clk, HistoryWindow: window})
	err := s.Register(Resource{
		GVR: widgetsGVR, Kind: "Widget", Namespaced: true, HasStatus: true,
		Validate: func(u *unstructured.Unstructured) field.ErrorList {
			size, found, _ := unstructured.NestedInt64(u.Object, "spec", "size")
			if found && size < 0 {
				return field.ErrorList{field.Invalid(field.NewPath("spec", "size"), size, "must be >= 0")}
			}
			return nil
		},
	})
	if err != nil {
		t.Fatalf("Register widgets: %v", err)
	}
	return s, clk
}

// fataler is what the helpers need of testing.TB and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// cm returns a ConfigMap.
func cm(ns, name string, lbls map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls},
		Data:       map[string]string{"k": "v"},
	}
}

// pod returns a valid Pod.
func pod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

// widget returns a Widget custom resource.
func widget(ns, name string, size int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "lab.example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"namespace": ns, "name": name},
		"spec":       map[string]any{"size": size},
	}}
	return u
}

// ownerRef returns a controller reference to obj.
func ownerRef(obj runtime.Object, block bool) metav1.OwnerReference {
	m, _ := meta.Accessor(obj)
	gvk := obj.GetObjectKind().GroupVersionKind()
	return metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: m.GetName(), UID: m.GetUID(), BlockOwnerDeletion: &block}
}

// mustCreate creates obj or fails the test.
func mustCreate(t testing.TB, s *Store, gvr schema.GroupVersionResource, ns string, obj runtime.Object) runtime.Object {
	t.Helper()
	out, _, err := s.Create(gvr, ns, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s %s: %v", gvr.Resource, ns, err)
	}
	return out
}

// metaOf returns obj's metadata.
func metaOf(t testing.TB, obj runtime.Object) metav1.Object {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatalf("accessor: %v", err)
	}
	return m
}

// rvOf returns obj's resourceVersion as a number.
func rvOf(t testing.TB, obj runtime.Object) int64 {
	t.Helper()
	n, err := strconv.ParseInt(metaOf(t, obj).GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", metaOf(t, obj).GetResourceVersion(), err)
	}
	return n
}

// assertStatus checks an error's HTTP code and reason.
func assertStatus(t testing.TB, err error, code int32, reason metav1.StatusReason) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %d %s", code, reason)
	}
	st, ok := err.(apierrors.APIStatus)
	if !ok {
		t.Fatalf("got %T %v, want an API status error %d %s", err, err, code, reason)
	}
	if got := st.Status().Code; got != code {
		t.Errorf("code = %d, want %d (error: %v)", got, code, err)
	}
	if got := apierrors.ReasonForError(err); got != reason {
		t.Errorf("reason = %q, want %q (error: %v)", got, reason, err)
	}
}

// eventSummary is an event reduced to what tests compare.
type eventSummary struct {
	Type watch.EventType
	Name string
	RV   int64
	ByGC bool
}

// summarize reduces events for comparison.
func summarize(t testing.TB, evs []Event) []eventSummary {
	t.Helper()
	out := make([]eventSummary, len(evs))
	for i, ev := range evs {
		out[i] = eventSummary{ev.Type, metaOf(t, ev.Object).GetName(), ev.RV, ev.ByGC}
	}
	return out
}
