package store

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// gadgetSchema is an openAPIV3Schema with required fields, a minimum, an
// enum, a default and a map list.
var gadgetSchema = map[string]any{
	"type":     "object",
	"required": []any{"spec"},
	"properties": map[string]any{
		"spec": map[string]any{
			"type":     "object",
			"required": []any{"size"},
			"properties": map[string]any{
				"size":  map[string]any{"type": "integer", "minimum": int64(0)},
				"color": map[string]any{"type": "string", "enum": []any{"red", "blue"}, "default": "red"},
				"ports": map[string]any{"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"name"},
					"items": map[string]any{"type": "object", "required": []any{"name"}, "properties": map[string]any{"name": map[string]any{"type": "string"}}}},
			},
		},
	},
}

var gadgetsGVR = schema.GroupVersionResource{Group: "lab.example.com", Version: "v1", Resource: "gadgets"}

func gadget(spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "lab.example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g"}, "spec": spec}}
}

// TestSchemaValidatesDefaultsAndPrunesCustomResources: a CRD's compiled
// openAPIV3Schema refuses what kube-apiserver refuses (422, one cause per
// error, with its type), fills defaults and drops unknown fields, on
// create and on patch.
func TestSchemaValidatesDefaultsAndPrunesCustomResources(t *testing.T) {
	s, _ := newTestStore(t, 0)
	sch, err := CompileSchema(gadgetSchema)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Register(Resource{GVR: gadgetsGVR, Kind: "Gadget", Namespaced: true, Schema: sch}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		spec  map[string]any
		field string
		typ   metav1.CauseType
	}{
		{"below minimum", map[string]any{"size": int64(-1)}, "spec.size", metav1.CauseTypeFieldValueInvalid},
		{"wrong type", map[string]any{"size": "big"}, "spec.size", "FieldValueTypeInvalid"},
		{"missing", map[string]any{}, "spec.size", metav1.CauseTypeFieldValueRequired},
		{"not in enum", map[string]any{"size": int64(1), "color": "green"}, "spec.color", metav1.CauseTypeFieldValueNotSupported},
		{"duplicate map key", map[string]any{"size": int64(1), "ports": []any{map[string]any{"name": "a"}, map[string]any{"name": "a"}}}, "spec.ports[1]", metav1.CauseTypeFieldValueDuplicate},
	} {
		_, _, err := s.Create(gadgetsGVR, "ns", gadget(c.spec), metav1.CreateOptions{})
		assertStatus(t, err, 422, metav1.StatusReasonInvalid)
		if got := causes(t, err); got[c.field] != c.typ || len(got) != 1 {
			t.Errorf("%s: causes = %v, want %s on %s", c.name, got, c.typ, c.field)
		}
	}
	out, _, err := s.Create(gadgetsGVR, "ns", gadget(map[string]any{"size": int64(1), "extra": "x"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := out.(*unstructured.Unstructured).Object["spec"].(map[string]any)
	if spec["color"] != "red" || spec["extra"] != nil {
		t.Errorf("spec = %v, want color defaulted to red and extra pruned", spec)
	}
	_, _, err = s.Patch(gadgetsGVR, "ns", "g", types.MergePatchType, []byte(`{"spec":{"size":-5}}`), metav1.PatchOptions{}, "")
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)

	if _, err := CompileSchema(map[string]any{"type": "object", "properties": map[string]any{"spec": map[string]any{}}}); err == nil {
		t.Error("a schema without types compiled; want 'not structural'")
	}
}

// TestSchemaEvaluatesCELRules: x-kubernetes-validations rules refuse with
// 422 on the object they are set on, transition rules see oldSelf on
// update, and an object that fails its types skips the rules with
// kube-apiserver's "not checked" cause (fidelity cases crd-cel-rule,
// crd-cel-transition-rule, crd-enum-pattern-length).
func TestSchemaEvaluatesCELRules(t *testing.T) {
	sch, err := CompileSchema(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"spec": map[string]any{
				"type": "object",
				"x-kubernetes-validations": []any{
					map[string]any{"rule": "self.min <= self.size", "message": "min must not exceed size"},
					map[string]any{"rule": "!has(oldSelf.mode) || self.mode == oldSelf.mode", "message": "mode is immutable"},
				},
				"properties": map[string]any{
					"size": map[string]any{"type": "integer"},
					"min":  map[string]any{"type": "integer", "default": int64(0)},
					"mode": map[string]any{"type": "string", "enum": []any{"a", "b"}},
				},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newTestStore(t, 0)
	if err := s.Register(Resource{GVR: gadgetsGVR, Kind: "Gadget", Namespaced: true, Schema: sch}); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Create(gadgetsGVR, "ns", gadget(map[string]any{"size": int64(1), "min": int64(2)}), metav1.CreateOptions{})
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	if got := causes(t, err); got["spec"] != metav1.CauseTypeFieldValueInvalid || len(got) != 1 {
		t.Errorf("rule min <= size: causes %v, want one on spec", got)
	}
	if _, _, err := s.Create(gadgetsGVR, "ns", gadget(map[string]any{"size": int64(1), "mode": "a"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Patch(gadgetsGVR, "ns", "g", types.MergePatchType, []byte(`{"spec":{"mode":"b"}}`), metav1.PatchOptions{}, "")
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	if _, _, err := s.Patch(gadgetsGVR, "ns", "g", types.MergePatchType, []byte(`{"spec":{"size":5}}`), metav1.PatchOptions{}, ""); err != nil {
		t.Errorf("a change the transition rule allows: %v", err)
	}
	_, _, err = s.Patch(gadgetsGVR, "ns", "g", types.MergePatchType, []byte(`{"spec":{"mode":"c","min":9}}`), metav1.PatchOptions{}, "")
	if got := causes(t, err); got["spec.mode"] != metav1.CauseTypeFieldValueNotSupported || got["<nil>"] != metav1.CauseTypeFieldValueInvalid || len(got) != 2 {
		t.Errorf("an enum violation: causes %v, want spec.mode NotSupported and the rules-not-checked cause only", got)
	}
}
