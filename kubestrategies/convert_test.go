package kubestrategies

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/randfill"

	"github.com/cachelab/cachelab/fakeapi/store"
)

// The lab's hand-written HPA conversion (fakeapi/store/hpav1.go) answers
// what kube-apiserver's own does (legacyscheme, through the internal
// version) on random autoscaling/v2 objects, on the v1 objects that come
// out of them (annotations included) back to v2, and on random v1 objects.
func TestLabHPAConversionMatchesKubeAPIServers(t *testing.T) {
	lab, ok := store.LabConverter(schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"})
	if !ok {
		t.Fatal("store.LabConverter has no HorizontalPodAutoscaler conversion")
	}
	f := randfill.NewWithSeed(29).NilChance(0.3).NumElements(0, 3).MaxDepth(8).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewMilliQuantity(c.Int63n(100000), resource.DecimalSI)
		},
		// Times as the API carries them (whole seconds).
		func(tm *metav1.Time, c randfill.Continue) { *tm = metav1.Unix(c.Int63n(2_000_000_000), 0) },
		func(tm **metav1.Time, c randfill.Continue) {
			if c.Bool() {
				v := metav1.Unix(c.Int63n(2_000_000_000), 0)
				*tm = &v
			}
		},
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			m.Name = c.String(8)
			if c.Bool() {
				m.Annotations = map[string]string{"a": c.String(4)}
			}
		},
	)
	real := SchemeConverter{}
	const n = 500
	differ := 0
	for i := 0; i < n; i++ {
		in := &autoscalingv2.HorizontalPodAutoscaler{}
		f.Fill(in)
		want, got := &autoscalingv1.HorizontalPodAutoscaler{}, &autoscalingv1.HorizontalPodAutoscaler{}
		if err := real.Convert(in, want); err != nil {
			t.Fatalf("kube-apiserver's conversion to v1: %v", err)
		}
		if err := lab.Convert(in, got); err != nil {
			t.Fatalf("the lab's conversion to v1: %v", err)
		}
		got.TypeMeta = want.TypeMeta
		if !apiequality.Semantic.DeepEqual(want, got) {
			differ++
			if differ <= 3 {
				t.Errorf("v2 -> v1 (-kube-apiserver +lab):\n%s", cmp.Diff(want, got))
			}
			continue
		}
		back, labBack := &autoscalingv2.HorizontalPodAutoscaler{}, &autoscalingv2.HorizontalPodAutoscaler{}
		if err := real.Convert(want, back); err != nil {
			t.Fatalf("kube-apiserver's conversion to v2: %v", err)
		}
		if err := lab.Convert(want, labBack); err != nil {
			t.Fatalf("the lab's conversion to v2: %v", err)
		}
		labBack.TypeMeta = back.TypeMeta
		if !apiequality.Semantic.DeepEqual(back, labBack) {
			differ++
			if differ <= 3 {
				t.Errorf("v1 -> v2 (-kube-apiserver +lab):\n%s", cmp.Diff(back, labBack))
			}
		}
	}
	// Random v1 objects (their own fields; no round-trip annotations).
	for i := 0; i < n; i++ {
		in := &autoscalingv1.HorizontalPodAutoscaler{}
		f.Fill(in)
		want, got := &autoscalingv2.HorizontalPodAutoscaler{}, &autoscalingv2.HorizontalPodAutoscaler{}
		if err := real.Convert(in, want); err != nil {
			t.Fatalf("kube-apiserver's conversion of a v1 object: %v", err)
		}
		if err := lab.Convert(in, got); err != nil {
			t.Fatalf("the lab's conversion of a v1 object: %v", err)
		}
		got.TypeMeta = want.TypeMeta
		if !apiequality.Semantic.DeepEqual(want, got) {
			differ++
			if differ <= 3 {
				t.Errorf("random v1 -> v2 (-kube-apiserver +lab):\n%s", cmp.Diff(want, got))
			}
		}
	}
	t.Logf("%d random v2 and %d random v1 HPAs, %d converted differently", n, n, differ)
}
