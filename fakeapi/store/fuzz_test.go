package store

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// FuzzPatchAndListOptions feeds arbitrary patch bodies and list/watch
// options to the store: it must answer with an object or a typed API error,
// never panic, and a failed patch must write nothing.
// Run it with: go test ./fakeapi/store -run '^$' -fuzz FuzzPatchAndListOptions -fuzztime 60s
func FuzzPatchAndListOptions(f *testing.F) {
	f.Add(uint8(0), []byte(`{"data":{"k":"x"}}`), "app=x", "metadata.name=a", "", "", int64(0), "", false)
	f.Add(uint8(1), []byte(`[{"op":"replace","path":"/data/k","value":"y"}]`), "app in (x", "", "3", "Exact", int64(1), "", false)
	f.Add(uint8(2), []byte(`{"metadata":{"$patch":"delete"}}`), "", "spec.nodeName=n", "0", "NotOlderThan", int64(2), "", true)
	f.Add(uint8(3), []byte(`{"spec":{"size":"big"}}`), "!app", "", "99", "", int64(-1), "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6Miwic3RhcnQiOiJucy9hXHUwMDAwIn0", false)
	f.Add(uint8(4), []byte(`[{"op":"test","path":"/metadata/name","value":"zz"}]`), "", "", "x", "Bogus", int64(5), "!!", true)
	f.Add(uint8(5), []byte(`{"metadata":"oops"}`), "", "", "", "", int64(0), "", false)
	f.Add(uint8(6), []byte(`null`), "", "", "", "", int64(0), "", false)
	f.Fuzz(func(t *testing.T, which uint8, body []byte, labelSel, fieldSel, rv, rvm string, limit int64, cont string, sendInitial bool) {
		s, _ := newTestStore(t, 5)
		mustCreate(t, s, configmapsGVR, "ns", cm("", "a", map[string]string{"app": "x"}))
		mustCreate(t, s, podsGVR, "ns", pod("", "a"))
		mustCreate(t, s, widgetsGVR, "ns", widget("ns", "a", 1))
		gvrs := []schema.GroupVersionResource{configmapsGVR, podsGVR, widgetsGVR}
		pts := []types.PatchType{types.MergePatchType, types.JSONPatchType, types.StrategicMergePatchType, types.ApplyPatchType}
		gvr := gvrs[int(which)%len(gvrs)]
		pt := pts[int(which/3)%len(pts)]
		sub := ""
		if which&0x80 != 0 {
			sub = "status"
		}
		typedError := func(op string, err error) {
			if err == nil {
				return
			}
			if _, ok := err.(apierrors.APIStatus); !ok {
				t.Fatalf("%s: error %T %v is not an API status error", op, err, err)
			}
		}
		before := s.RV()
		_, evs, err := s.Patch(gvr, "ns", "a", pt, body, metav1.PatchOptions{}, sub)
		typedError("patch", err)
		if err != nil && (s.RV() != before || len(evs) != 0) {
			t.Fatalf("failed patch (%v) wrote: RV %d -> %d, %d events", err, before, s.RV(), len(evs))
		}
		opts := metav1.ListOptions{LabelSelector: labelSel, FieldSelector: fieldSel, ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatch(rvm), Limit: limit, Continue: cont}
		_, _, err = s.List(gvr, "ns", opts, int64(which%4))
		typedError("list", err)
		if sendInitial {
			opts.SendInitialEvents = ptr.To(true)
		}
		_, _, err = s.WatchStart(gvr, "", opts, int64(which%4))
		typedError("watch", err)
		_, err = s.Filter(gvr, "ns", opts)
		typedError("filter", err)
		_, err = s.DeleteCollection(gvr, "ns", metav1.DeleteOptions{}, opts)
		typedError("deletecollection", err)
	})
}
