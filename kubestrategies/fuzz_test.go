package kubestrategies

import (
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"

	"github.com/cachelab/cachelab/fakeapi/store"
)

// TestRandomObjectsGetAnAnswerNotAPanic writes randomly filled objects of
// every Kind through a store (create, update, status update): each write
// is stored or refused with a Status, and none panics, inside the
// strategy code (which the adapter would turn into an internal cause:
// reported here) or the store.
func TestRandomObjectsGetAnAnswerNotAPanic(t *testing.T) {
	const perKind = 40
	f := randfill.NewWithSeed(29).NilChance(0.3).NumElements(0, 2).MaxDepth(6).Funcs(
		// A ControllerRevision's data: JSON, as a client sends it.
		func(r *runtime.RawExtension, c randfill.Continue) { r.Raw = []byte(`{"a":1}`) },
	)
	for _, k := range Kinds {
		s := store.New(store.Options{})
		stored, refused := 0, 0
		for i := 0; i < perKind; i++ {
			obj := reflect.New(newAdapter(k).versioned.Elem()).Interface().(runtime.Object)
			f.Fill(obj)
			m := obj.(metav1.Object)
			// System fields a client cannot meaningfully send.
			m.SetResourceVersion("")
			m.SetName("o")
			m.SetGenerateName("")
			m.SetNamespace("")
			m.SetManagedFields(nil)
			m.SetOwnerReferences(nil)
			m.SetFinalizers(nil)
			m.SetDeletionTimestamp(nil)
			obj.GetObjectKind().SetGroupVersionKind(k.GVR.GroupVersion().WithKind(k.Kind))
			ns := "ns"
			check := func(verb string, err error) {
				t.Helper()
				switch {
				case err == nil:
					stored++
				default:
					if _, ok := err.(apierrors.APIStatus); !ok {
						t.Errorf("%s %s: an error without a Status: %v", k.Kind, verb, err)
					}
					if strings.Contains(err.Error(), "panicked") {
						t.Errorf("%s %s: the strategy panicked: %v", k.Kind, verb, err)
					}
					refused++
				}
			}
			_, _, err := s.Create(k.GVR, ns, obj, metav1.CreateOptions{})
			check("create", err)
			if err != nil {
				continue
			}
			upd := reflect.New(newAdapter(k).versioned.Elem()).Interface().(runtime.Object)
			f.Fill(upd)
			um := upd.(metav1.Object)
			um.SetName("o")
			um.SetNamespace("")
			um.SetResourceVersion("")
			um.SetUID("")
			um.SetGenerateName("")
			um.SetManagedFields(nil)
			um.SetOwnerReferences(nil)
			um.SetFinalizers(nil)
			um.SetDeletionTimestamp(nil)
			upd.GetObjectKind().SetGroupVersionKind(k.GVR.GroupVersion().WithKind(k.Kind))
			_, _, err = s.Update(k.GVR, ns, upd, metav1.UpdateOptions{}, "")
			check("update", err)
			if k.Status != nil {
				_, _, err = s.Update(k.GVR, ns, upd, metav1.UpdateOptions{}, "status")
				check("update status", err)
			}
			if _, _, err := s.Delete(k.GVR, ns, "o", metav1.DeleteOptions{}); err != nil {
				t.Fatalf("%s: delete: %v", k.Kind, err)
			}
		}
		t.Logf("%s: %d writes stored, %d refused", k.Kind, stored, refused)
	}
}
