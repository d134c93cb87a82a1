package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"
)

// roundTripMergePatch is Patch's general path for a JSON merge patch:
// encode, merge, strict decode.
func roundTripMergePatch(s *Store, r *resState, cur runtime.Object, data []byte, strict bool) (runtime.Object, error) {
	curJSON, err := json.Marshal(cur)
	if err != nil {
		return nil, err
	}
	patched, err := jsonpatch.MergePatch(curJSON, data)
	if err != nil {
		return nil, err
	}
	return s.decodePatched(r, patched, strict)
}

// Strings a generated object or patch draws from: plain, empty, HTML
// escapes, non-ASCII, invalid UTF-8.
var patchFastStrings = []string{"v", "", "x y", "<&>", "é", "\u2028", "\xff", "a\x00b"}

// mostly draws from common seven times in eight, else from rare: the
// shapes a fast path takes most of the time, the ones it must refuse
// often enough.
func mostly[V any](t *rapid.T, label string, common, rare []V) V {
	if rapid.IntRange(0, 7).Draw(t, label+"-rare") > 0 {
		return rapid.SampledFrom(common).Draw(t, label)
	}
	return rapid.SampledFrom(rare).Draw(t, label)
}

func drawStringMap(t *rapid.T, label string) map[string]string {
	switch rapid.IntRange(0, 9).Draw(t, label+"-shape") {
	case 0, 1, 2:
		return nil
	case 3:
		return map[string]string{} // not what a decode gives: left to the general path
	}
	m := map[string]string{}
	for i := range rapid.IntRange(1, 3).Draw(t, label+"-n") {
		k := mostly(t, fmt.Sprintf("%s-k%d", label, i), []string{"a", "b", "k"}, []string{"<x>", "\xfe"})
		m[k] = mostly(t, fmt.Sprintf("%s-v%d", label, i), patchFastStrings[:5], patchFastStrings)
	}
	return m
}

func drawTime(t *rapid.T, label string) metav1.Time {
	sec := rapid.Int64Range(0, 1e6).Draw(t, label+"-s")
	ns := int64(0)
	if rapid.IntRange(0, 9).Draw(t, label+"-frac") == 0 {
		ns = rapid.Int64Range(1, 999999999).Draw(t, label+"-ns")
	}
	return metav1.NewTime(epoch.Add(time.Duration(sec)*time.Second + time.Duration(ns)))
}

// drawStoredConfigMap draws a ConfigMap as the store hands it to Patch:
// through its protobuf encoding and back.
func drawStoredConfigMap(t *rapid.T, r *resState) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "c", Namespace: "ns", UID: "u1", ResourceVersion: "7", Generation: 1,
		CreationTimestamp: drawTime(t, "created"),
		Labels:            drawStringMap(t, "labels"),
		Annotations:       drawStringMap(t, "annotations"),
	}, Data: drawStringMap(t, "data")}
	if rapid.IntRange(0, 9).Draw(t, "binary") == 0 {
		cm.BinaryData = map[string][]byte{"b": []byte(rapid.SampledFrom(patchFastStrings).Draw(t, "binary-v"))}
	}
	if rapid.IntRange(0, 4).Draw(t, "deleting") == 0 {
		dt := drawTime(t, "deleted")
		cm.DeletionTimestamp = &dt
		cm.Finalizers = []string{mostly(t, "finalizer", []string{"lab/f"}, []string{"\xff"})}
	}
	for i := range rapid.IntRange(0, 2).Draw(t, "managers") {
		mt := drawTime(t, fmt.Sprintf("managed%d", i))
		raw := mostly(t, fmt.Sprintf("fields%d", i), []string{`{"f:data":{".":{},"f:i":{}}}`}, []string{`{ "f:data": {} }`, `{"f:metadata":{"f:labels":{"f:<x>":{}}}}`, `null`, `[]`})
		cm.ManagedFields = append(cm.ManagedFields, metav1.ManagedFieldsEntry{
			Manager: mostly(t, fmt.Sprintf("manager%d", i), []string{"kubectl"}, []string{"m\xff"}), Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: "v1", Time: &mt, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(raw)},
		})
	}
	return r.decode(r.encode(cm)).(*corev1.ConfigMap)
}

// drawMapPatch draws a merge patch's value for a map of strings, valid or
// not.
func drawMapPatch(t *rapid.T, label string) string {
	switch rapid.IntRange(0, 9).Draw(t, label+"-shape") {
	case 0:
		return "null"
	case 1:
		return "{}"
	case 2:
		return rapid.SampledFrom([]string{`5`, `"s"`, `[]`, `{"a":5}`, `{"a":{}}`, `{"a":["x"]}`}).Draw(t, label+"-bad")
	}
	var parts []string
	for i := range rapid.IntRange(1, 4).Draw(t, label+"-n") {
		k := mostly(t, fmt.Sprintf("%s-k%d", label, i), []string{"a", "b", "k"}, []string{"<x>", "A", "\\u0061"})
		v := mostly(t, fmt.Sprintf("%s-v%d", label, i), []string{`null`, `"v"`, `""`}, []string{`"\u003c"`, `"\ud800"`, `"é"`, "\"\xff\"", `"a\nb"`, `"\u2028"`})
		parts = append(parts, fmt.Sprintf("%q: %s", k, v))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// drawMergePatch draws a JSON merge patch for a ConfigMap: mostly the
// shapes the fast path takes, with keys, cases and values it must leave
// to the general path.
func drawMergePatch(t *rapid.T) []byte {
	if rapid.IntRange(0, 9).Draw(t, "whole") == 0 {
		return []byte(rapid.SampledFrom([]string{`null`, `[]`, `5`, `"x"`, `{}`, `{"data":{"a":"b"}`}).Draw(t, "odd"))
	}
	var parts []string
	for i := range rapid.IntRange(1, 2).Draw(t, "keys") {
		switch k := mostly(t, fmt.Sprintf("key%d", i), []string{"data", "metadata"}, []string{"Data", "binaryData", "immutable"}); k {
		case "data", "Data":
			parts = append(parts, fmt.Sprintf("%q:%s", k, drawMapPatch(t, fmt.Sprintf("p%d", i))))
		case "binaryData":
			parts = append(parts, `"binaryData":{"b":"eA=="}`)
		case "immutable":
			parts = append(parts, `"immutable":false`)
		case "metadata":
			if rapid.IntRange(0, 9).Draw(t, fmt.Sprintf("meta-null%d", i)) == 0 {
				parts = append(parts, `"metadata":null`)
				continue
			}
			var mp []string
			for j := range rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("meta-keys%d", i)) {
				mk := mostly(t, fmt.Sprintf("meta-key%d-%d", i, j), []string{"labels", "annotations", "resourceVersion"}, []string{"Labels", "finalizers"})
				switch mk {
				case "resourceVersion":
					mp = append(mp, `"resourceVersion":`+rapid.SampledFrom([]string{`"7"`, `"3"`, `null`, `7`}).Draw(t, fmt.Sprintf("rv%d-%d", i, j)))
				case "finalizers":
					mp = append(mp, `"finalizers":["lab/g"]`)
				default:
					mp = append(mp, fmt.Sprintf("%q:%s", mk, drawMapPatch(t, fmt.Sprintf("m%d-%d", i, j))))
				}
			}
			parts = append(parts, `"metadata":{`+strings.Join(mp, ",")+"}")
		}
	}
	return []byte("{" + strings.Join(parts, ", ") + "}")
}

// TestMergePatchFastPathMatchesTheRoundTrip: wherever the fast path takes
// a merge patch, the general path (encode, merge, strict decode, strict
// or not) gives an identical object; and it takes a good share of them.
func TestMergePatchFastPathMatchesTheRoundTrip(t *testing.T) {
	s, _ := newTestStore(t, 0)
	r, err := s.resource(configmapsGVR)
	if err != nil {
		t.Fatal(err)
	}
	var taken, draws int
	rapid.Check(t, func(t *rapid.T) {
		cur := drawStoredConfigMap(t, r)
		data := drawMergePatch(t)
		before := cur.DeepCopy()
		fast, ok := mergePatchFast(r, cur, types.MergePatchType, data, "")
		draws++
		if !reflect.DeepEqual(before, cur) {
			t.Fatalf("the fast path changed cur")
		}
		if !ok {
			return
		}
		taken++
		for _, strict := range []bool{false, true} {
			slow, err := roundTripMergePatch(s, r, cur, data, strict)
			if err != nil {
				t.Fatalf("patch %s on %+v: fast path took it, round trip (strict %v) refuses it: %v", data, cur, strict, err)
			}
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("patch %s (strict %v): fast and round trip differ (-round trip +fast):\n%s", data, strict, cmp.Diff(slow, fast))
			}
		}
	})
	if taken*10 < draws {
		t.Errorf("the fast path took %d of %d patches; the generator should give it at least a tenth", taken, draws)
	}
	t.Logf("fast path took %d of %d patches", taken, draws)
}

// TestMergePatchFastPathGivesTheSameAnswers: the same valid ConfigMaps
// patched by the same merge patches in two stores, one without the fast
// path, answer the same (object, events, error) and store the same bytes.
func TestMergePatchFastPathGivesTheSameAnswers(t *testing.T) {
	defer mergePatchFastOff.Store(false)
	rapid.Check(t, func(t *rapid.T) {
		fastS, _ := newTestStore(t, 0)
		slowS, _ := newTestStore(t, 0)
		n := rapid.IntRange(1, 3).Draw(t, "objects")
		for i := range n {
			c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("c", i),
				Labels: map[string]string{"app": "x"}}, Data: map[string]string{"k": "v"}}
			if rapid.Bool().Draw(t, fmt.Sprint("nolabels", i)) {
				c.Labels = nil
			}
			for _, st := range []*Store{fastS, slowS} {
				if _, _, err := st.Create(configmapsGVR, "ns", c.DeepCopy(), metav1.CreateOptions{}); err != nil {
					t.Fatalf("create: %v", err)
				}
			}
		}
		for step := range rapid.IntRange(1, 6).Draw(t, "patches") {
			name := fmt.Sprint("c", rapid.IntRange(0, n-1).Draw(t, fmt.Sprint("target", step)))
			data := drawMergePatch(t)
			opts := metav1.PatchOptions{FieldManager: rapid.SampledFrom([]string{"", "m1", "m2"}).Draw(t, fmt.Sprint("manager", step))}
			if rapid.Bool().Draw(t, fmt.Sprint("strict", step)) {
				opts.FieldValidation = metav1.FieldValidationStrict
			}
			mergePatchFastOff.Store(false)
			fo, fe, ferr := fastS.Patch(configmapsGVR, "ns", name, types.MergePatchType, data, opts, "")
			mergePatchFastOff.Store(true)
			so, se, serr := slowS.Patch(configmapsGVR, "ns", name, types.MergePatchType, data, opts, "")
			mergePatchFastOff.Store(false)
			if errorAnswer(ferr) != errorAnswer(serr) {
				t.Fatalf("patch %s: error %v with the fast path, %v without", data, ferr, serr)
			}
			if !reflect.DeepEqual(fo, so) || !reflect.DeepEqual(fe, se) {
				t.Fatalf("patch %s: answers differ (-without +with):\n%s\nevents:\n%s", data, cmp.Diff(so, fo), cmp.Diff(se, fe))
			}
		}
		fr, _ := fastS.resource(configmapsGVR)
		sr, _ := slowS.resource(configmapsGVR)
		if !reflect.DeepEqual(fr.objects, sr.objects) {
			t.Fatalf("stored bytes differ")
		}
	})
}

// errorAnswer is what a client reads of an error: the status code,
// reason and causes, the latter as a set (validation walks maps, in no
// order, on both paths as in kube-apiserver).
func errorAnswer(err error) string {
	if err == nil {
		return ""
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return err.Error()
	}
	s := st.Status()
	var causes []string
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			causes = append(causes, fmt.Sprintf("%s %s %s", c.Type, c.Field, c.Message))
		}
	}
	sort.Strings(causes)
	return fmt.Sprintf("%d %s %q", s.Code, s.Reason, causes)
}
