package kubestrategies

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/randfill"

	"github.com/cachelab/cachelab/fakeapi/store"
)

// fieldSetsDiffer fills n random objects of every built-in kind the store
// serves and counts, per kind, those whose managed-field set (what
// server-side apply owns and merges by: associative list keys, atomic
// fields) differs between the two type converters.
func fieldSetsDiffer(t *testing.T, a, b managedfields.TypeConverter, n int) map[string]int {
	t.Helper()
	f := randfill.NewWithSeed(29).NilChance(0.3).NumElements(0, 3).MaxDepth(7).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewQuantity(c.Int63n(1000), resource.DecimalSI)
		},
		func(tm *metav1.Time, c randfill.Continue) { *tm = metav1.Unix(c.Int63n(2_000_000_000), 0) },
		func(tm *metav1.MicroTime, c randfill.Continue) {
			*tm = metav1.NewMicroTime(metav1.Unix(c.Int63n(2_000_000_000), 0).Time)
		},
		func(r *runtime.RawExtension, c randfill.Continue) { r.Raw = []byte(`{"a":1}`) },
		func(i *intstr.IntOrString, c randfill.Continue) { *i = intstr.FromInt32(c.Int31()) },
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			m.Name = "o"
			m.Labels = map[string]string{"a": c.String(3)}
		},
	)
	out := map[string]int{}
	s := store.New(store.Options{})
	for _, r := range s.Resources() {
		gvk := r.GVR.GroupVersion().WithKind(r.Kind)
		if !s.Typed(r.GVR) || !clientgoscheme.Scheme.Recognizes(gvk) {
			continue
		}
		proto, _ := clientgoscheme.Scheme.New(gvk)
		out[gvk.String()] = 0
		for range n {
			obj := reflect.New(reflect.TypeOf(proto).Elem()).Interface().(runtime.Object)
			f.Fill(obj)
			obj.GetObjectKind().SetGroupVersionKind(gvk)
			ta, errA := a.ObjectToTyped(obj)
			tb, errB := b.ObjectToTyped(obj)
			if errA != nil || errB != nil {
				if (errA == nil) != (errB == nil) {
					out[gvk.String()]++
				}
				continue
			}
			fa, errA := ta.ToFieldSet()
			fb, errB := tb.ToFieldSet()
			if errA != nil || errB != nil || !fa.Equals(fb) {
				out[gvk.String()]++
			}
		}
	}
	return out
}

// Server-side apply's models: the store's default (client-go's embedded
// models) and kube-apiserver's own (TypeConverter, registered by this
// package) give every built-in kind the same managed-field sets on random
// objects; a deduced converter (lists atomic) differs on every kind, so
// the comparison can tell them apart.
func TestApplyModelsAreKubeAPIServers(t *testing.T) {
	real, err := TypeConverter()
	if err != nil {
		t.Fatal(err)
	}
	clientGo := applyconfigurations.NewTypeConverter(clientgoscheme.Scheme)
	const n = 100
	differ := fieldSetsDiffer(t, real, clientGo, n)
	kinds := 0
	for kind, d := range differ {
		kinds++
		if d > 0 {
			t.Errorf("%s: %d of %d random objects get other managed fields from client-go's models than from kube-apiserver's", kind, d, n)
		}
	}
	if kinds < 30 {
		t.Errorf("compared %d kinds, want every built-in kind the store serves (30+)", kinds)
	}
	deduced := fieldSetsDiffer(t, real, managedfields.NewDeducedTypeConverter(), 5)
	same := 0
	for _, d := range deduced {
		if d == 0 {
			same++
		}
	}
	if same > 0 {
		t.Errorf("a deduced type converter gave kube-apiserver's managed fields on %d of %d kinds: the comparison cannot tell models apart", same, len(deduced))
	}
	t.Logf("%d kinds x %d random objects: kube-apiserver's and client-go's models agree on all", kinds, n)
}
