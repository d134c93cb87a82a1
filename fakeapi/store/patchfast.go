package store

import (
	"bytes"
	"encoding/json"
	"sync/atomic"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// mergePatchFastOff turns the merge-patch fast path off (tests compare
// both paths with it).
var mergePatchFastOff atomic.Bool

// mergePatchFast applies a JSON merge patch to a ConfigMap without the
// encode, merge, strict-decode round trip Patch otherwise does, when the
// result is provably the object that round trip decodes; ok false means
// take the general path. cur is not changed.
//
// It takes only what it can prove:
//   - the patch is valid UTF-8, a JSON object whose keys are "data"
//     and "metadata", the latter an object of "labels", "annotations"
//     (each null or an object of string or null values) and
//     "resourceVersion" (a string or null); any other shape, key, case
//     or value type (which the general path drops, refuses or decodes
//     otherwise) goes the general path;
//   - cur survives a JSON round trip unchanged (jsonStable): every string
//     valid UTF-8, timestamps whole seconds within RFC 3339's years,
//     managed fields compact objects JSON does not re-escape, no
//     binaryData; otherwise the general path would also rewrite the
//     fields the patch does not touch.
//
// On such input the general path's merge (jsonpatch.MergePatch) sets each
// non-null value, deletes each null one, removes a map given as null,
// and turns a map given as an object into an object even when it ends
// empty (pruning nulls when cur had none), which decodes to a non-nil
// empty map; this function does the same on a deep copy.
// TestMergePatchFastPathMatchesTheRoundTrip checks it against the general
// path over random objects and patches.
func mergePatchFast(r *resState, cur runtime.Object, pt types.PatchType, data []byte, subresource string) (runtime.Object, bool) {
	if pt != types.MergePatchType || subresource != "" || !r.typed || mergePatchFastOff.Load() {
		return nil, false
	}
	cm, ok := cur.(*corev1.ConfigMap)
	if !ok || !utf8.Valid(data) {
		return nil, false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil || top == nil {
		return nil, false
	}
	var (
		meta        map[string]json.RawMessage
		dataP       map[string]*string
		dataNull    bool
		labels      map[string]*string
		labelsNull  bool
		annots      map[string]*string
		annotsNull  bool
		rv          *string
		rvSet       bool
		metaPresent bool
	)
	for k, v := range top {
		switch k {
		case "data":
			if !stringMapPatch(v, &dataP, &dataNull) {
				return nil, false
			}
		case "metadata":
			if json.Unmarshal(v, &meta) != nil || meta == nil {
				return nil, false
			}
			metaPresent = true
		default:
			return nil, false
		}
	}
	if metaPresent {
		for k, v := range meta {
			switch k {
			case "labels":
				if !stringMapPatch(v, &labels, &labelsNull) {
					return nil, false
				}
			case "annotations":
				if !stringMapPatch(v, &annots, &annotsNull) {
					return nil, false
				}
			case "resourceVersion":
				if json.Unmarshal(v, &rv) != nil {
					return nil, false
				}
				rvSet = true
			default:
				return nil, false
			}
		}
	}
	if !jsonStable(cm) {
		return nil, false
	}
	out := cm.DeepCopy()
	out.Data = mergeStringMap(out.Data, dataP, dataNull)
	out.Labels = mergeStringMap(out.Labels, labels, labelsNull)
	out.Annotations = mergeStringMap(out.Annotations, annots, annotsNull)
	if rvSet {
		out.ResourceVersion = ""
		if rv != nil {
			out.ResourceVersion = *rv
		}
	}
	return out, true
}

// stringMapPatch reads a merge patch's value for a map of strings: null
// (isNull) or an object of string or null values (into); false for
// anything else.
func stringMapPatch(v json.RawMessage, into *map[string]*string, isNull *bool) bool {
	if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		*into, *isNull = nil, true
		return true
	}
	var m map[string]*string
	if json.Unmarshal(v, &m) != nil || m == nil {
		return false
	}
	*into, *isNull = m, false
	return true
}

// mergeStringMap merges a map's patch into cur (owned by the caller): nil
// when the patch is null, cur unchanged when there is no patch, else a
// non-nil map with each null value deleted and each string set.
func mergeStringMap(cur map[string]string, p map[string]*string, isNull bool) map[string]string {
	switch {
	case isNull:
		return nil
	case p == nil:
		return cur
	}
	if cur == nil {
		cur = make(map[string]string, len(p))
	}
	for k, v := range p {
		if v == nil {
			delete(cur, k)
		} else {
			cur[k] = *v
		}
	}
	return cur
}

// jsonStable reports whether cm decodes from its own JSON encoding into
// an object equal to it (reflect.DeepEqual), as far as the fields a
// ConfigMap has can tell.
func jsonStable(cm *corev1.ConfigMap) bool {
	if len(cm.BinaryData) > 0 || !stableMeta(&cm.ObjectMeta) {
		return false
	}
	for k, v := range cm.Data {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return false
		}
	}
	return true
}

// stableMeta is jsonStable for ObjectMeta.
func stableMeta(m *metav1.ObjectMeta) bool {
	for _, s := range []string{m.Name, m.GenerateName, m.Namespace, m.SelfLink, string(m.UID), m.ResourceVersion} {
		if !utf8.ValidString(s) {
			return false
		}
	}
	if !stableTime(m.CreationTimestamp) || (m.DeletionTimestamp != nil && (m.DeletionTimestamp.IsZero() || !stableTime(*m.DeletionTimestamp))) {
		return false
	}
	for _, mp := range []map[string]string{m.Labels, m.Annotations} {
		if mp != nil && len(mp) == 0 {
			return false // {} decodes to an empty map, omitted to nil
		}
		for k, v := range mp {
			if !utf8.ValidString(k) || !utf8.ValidString(v) {
				return false
			}
		}
	}
	if m.Finalizers != nil && len(m.Finalizers) == 0 {
		return false
	}
	for _, f := range m.Finalizers {
		if !utf8.ValidString(f) {
			return false
		}
	}
	if m.OwnerReferences != nil && len(m.OwnerReferences) == 0 {
		return false
	}
	for _, o := range m.OwnerReferences {
		for _, s := range []string{o.APIVersion, o.Kind, o.Name, string(o.UID)} {
			if !utf8.ValidString(s) {
				return false
			}
		}
	}
	if m.ManagedFields != nil && len(m.ManagedFields) == 0 {
		return false
	}
	for _, f := range m.ManagedFields {
		for _, s := range []string{f.Manager, string(f.Operation), f.APIVersion, f.FieldsType, f.Subresource} {
			if !utf8.ValidString(s) {
				return false
			}
		}
		if f.Time != nil && (f.Time.IsZero() || !stableTime(*f.Time)) {
			return false
		}
		if f.FieldsV1 != nil && !stableRawObject(f.FieldsV1.Raw) {
			return false
		}
	}
	return true
}

// stableTime: metav1.Time's JSON is RFC 3339 in whole seconds, read back
// in the local zone (as its protobuf decoding does).
func stableTime(t metav1.Time) bool {
	if t.IsZero() {
		return true
	}
	y := t.UTC().Year()
	return t.Nanosecond() == 0 && y >= 1 && y <= 9999 && t.Location() == t.Local().Location()
}

// stableRawObject: FieldsV1's JSON is its raw bytes, which encoding/json
// compacts and HTML-escapes (and "null" would decode to no FieldsV1): a
// compact object with nothing to escape comes back the same.
func stableRawObject(raw []byte) bool {
	if len(raw) == 0 || raw[0] != '{' || !utf8.Valid(raw) {
		return false
	}
	if bytes.ContainsAny(raw, "<>&\u2028\u2029") {
		return false
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return false
	}
	return bytes.Equal(buf.Bytes(), raw)
}
