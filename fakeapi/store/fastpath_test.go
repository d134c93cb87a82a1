package store

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// metaUpdateCases are metadata updates, each changing one thing
// ValidateObjectMetaAccessorUpdate checks (or nothing).
func metaUpdateCases() map[string]func(m, old *metav1.ObjectMeta) {
	t0 := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	return map[string]func(m, old *metav1.ObjectMeta){
		"unchanged":        func(m, old *metav1.ObjectMeta) {},
		"new label":        func(m, old *metav1.ObjectMeta) { m.Labels = map[string]string{"a": "b", "c": "d"} },
		"bad label key":    func(m, old *metav1.ObjectMeta) { m.Labels = map[string]string{"-bad": "b"} },
		"bad label value":  func(m, old *metav1.ObjectMeta) { m.Labels = map[string]string{"a": strings.Repeat("x", 64)} },
		"bad annotation":   func(m, old *metav1.ObjectMeta) { m.Annotations = map[string]string{"/": "x"} },
		"huge annotations": func(m, old *metav1.ObjectMeta) { m.Annotations = map[string]string{"a": strings.Repeat("x", 300000)} },
		"owner reference": func(m, old *metav1.ObjectMeta) {
			m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "u"}}
		},
		"bad owner reference": func(m, old *metav1.ObjectMeta) { m.OwnerReferences = []metav1.OwnerReference{{Kind: "Pod", Name: "p"}} },
		"managed fields": func(m, old *metav1.ObjectMeta) {
			m.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", Operation: "Update", APIVersion: "v1"}}
		},
		"bad managed fields": func(m, old *metav1.ObjectMeta) {
			m.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", Operation: "Nope"}}
		},
		"no resourceVersion":        func(m, old *metav1.ObjectMeta) { m.ResourceVersion = "" },
		"negative generation":       func(m, old *metav1.ObjectMeta) { m.Generation = -1 },
		"generation decremented":    func(m, old *metav1.ObjectMeta) { old.Generation, m.Generation = 3, 2 },
		"generation incremented":    func(m, old *metav1.ObjectMeta) { m.Generation = 2 },
		"name changed":              func(m, old *metav1.ObjectMeta) { m.Name = "other" },
		"namespace changed":         func(m, old *metav1.ObjectMeta) { m.Namespace = "other" },
		"uid changed":               func(m, old *metav1.ObjectMeta) { m.UID = "other" },
		"creationTimestamp changed": func(m, old *metav1.ObjectMeta) { m.CreationTimestamp = metav1.NewTime(t0.Add(time.Second)) },
		"creationTimestamp other zone": func(m, old *metav1.ObjectMeta) {
			m.CreationTimestamp = metav1.NewTime(t0.In(time.FixedZone("x", 3600)))
		},
		"deletionTimestamp set": func(m, old *metav1.ObjectMeta) { m.DeletionTimestamp = &t0 },
		"terminating, same":     func(m, old *metav1.ObjectMeta) { m.DeletionTimestamp, old.DeletionTimestamp = &t0, &t0 },
		"terminating, new finalizer": func(m, old *metav1.ObjectMeta) {
			m.DeletionTimestamp, old.DeletionTimestamp = &t0, &t0
			m.Finalizers = []string{"x/y"}
		},
		"grace set": func(m, old *metav1.ObjectMeta) { m.DeletionGracePeriodSeconds = ptr.To[int64](1) },
		"grace same": func(m, old *metav1.ObjectMeta) {
			m.DeletionGracePeriodSeconds, old.DeletionGracePeriodSeconds = ptr.To[int64](1), ptr.To[int64](1)
		},
		"grace changed": func(m, old *metav1.ObjectMeta) {
			m.DeletionGracePeriodSeconds, old.DeletionGracePeriodSeconds = ptr.To[int64](2), ptr.To[int64](1)
		},
		"grace unset": func(m, old *metav1.ObjectMeta) { old.DeletionGracePeriodSeconds = ptr.To[int64](1) },
		"everything bad": func(m, old *metav1.ObjectMeta) {
			m.Name, m.ResourceVersion, m.Labels = "x", "", map[string]string{"-": "-"}
		},
	}
}

// TestValidateMetaUpdateAgreesWithApimachinery: the fast path answers
// what ValidateObjectMetaAccessorUpdate answers, error for error.
func TestValidateMetaUpdateAgreesWithApimachinery(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	failing := 0
	for name, change := range metaUpdateCases() {
		old := &metav1.ObjectMeta{Name: "n", Namespace: "ns", UID: "u", ResourceVersion: "5", Generation: 1,
			CreationTimestamp: t0, Labels: map[string]string{"a": "b"}}
		m := old.DeepCopy()
		change(m, old)
		want := apivalidation.ValidateObjectMetaAccessorUpdate(m, old, field.NewPath("metadata"))
		got := validateMetaUpdate(m, old)
		if len(want) > 0 {
			failing++
		}
		if !apiequality.Semantic.DeepEqual(got.ToAggregate(), want.ToAggregate()) {
			t.Errorf("%s: fast path answered %v, apimachinery %v", name, got.ToAggregate(), want.ToAggregate())
		}
	}
	if failing < 10 {
		t.Errorf("only %d cases fail validation: the table no longer tests the fallback", failing)
	}
}

// TestValidateUpdateOptionsAgreesWithApimachinery: the same for update
// options.
func TestValidateUpdateOptionsAgreesWithApimachinery(t *testing.T) {
	for _, opts := range []metav1.UpdateOptions{
		{}, {FieldManager: "m"}, {FieldManager: strings.Repeat("m", 200)}, {DryRun: []string{"All"}},
		{DryRun: []string{"Some"}}, {FieldValidation: "Strict"}, {FieldValidation: "Nope"},
	} {
		want := metav1validation.ValidateUpdateOptions(&opts)
		got := validateUpdateOptions(&opts)
		if got.ToAggregate() == nil != (want.ToAggregate() == nil) || (want.ToAggregate() != nil && got.ToAggregate().Error() != want.ToAggregate().Error()) {
			t.Errorf("%+v: fast path answered %v, apimachinery %v", opts, got.ToAggregate(), want.ToAggregate())
		}
	}
}

// TestUnchangedAgreesWithSemanticEquality: for built-in objects the
// stored-bytes comparison finds an update a no-op exactly when
// Semantic.DeepEqual does, on the changes a client makes (the one
// difference, a quantity written in another format, is etcd's: it
// compares bytes too).
func TestUnchangedAgreesWithSemanticEquality(t *testing.T) {
	s, _ := newTestStore(t, 0)
	r, err := s.resource(podsGVR)
	if err != nil {
		t.Fatal(err)
	}
	stored := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", ResourceVersion: "5", Labels: map[string]string{"a": "b"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": resource.MustParse("1")}}}}}}
	stored.SetGroupVersionKind(r.gvk)
	r.objects["ns/p"] = r.encode(stored)
	for name, change := range map[string]func(p *corev1.Pod){
		"nothing":             func(p *corev1.Pod) {},
		"empty maps for nil":  func(p *corev1.Pod) { p.Annotations, p.Spec.NodeSelector = map[string]string{}, map[string]string{} },
		"empty slice for nil": func(p *corev1.Pod) { p.Finalizers = []string{} },
		"label":               func(p *corev1.Pod) { p.Labels["c"] = "d" },
		"label removed":       func(p *corev1.Pod) { delete(p.Labels, "a") },
		"image":               func(p *corev1.Pod) { p.Spec.Containers[0].Image = "j" },
		"same quantity":       func(p *corev1.Pod) { p.Spec.Containers[0].Resources.Limits["cpu"] = resource.MustParse("1000m") },
		"other quantity":      func(p *corev1.Pod) { p.Spec.Containers[0].Resources.Limits["cpu"] = resource.MustParse("2") },
		"status":              func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning },
		"grace pointer":       func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0) },
	} {
		old := r.decode(r.objects["ns/p"])
		o := old.DeepCopyObject().(*corev1.Pod)
		change(o)
		want := apiequality.Semantic.DeepEqual(old, runtime.Object(o))
		if got := s.unchanged(r, "ns/p", old, o); got != want {
			t.Errorf("%s: unchanged = %v, Semantic.DeepEqual = %v", name, got, want)
		}
	}
}
