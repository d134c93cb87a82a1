package fidelity

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func gadget(name string, spec map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "fidelity.cachelab.dev/v1",
		"kind":       "Gadget",
		"metadata":   map[string]any{"name": name},
		"spec":       normalizeJSON(spec),
	}
}

// crdCases are CRD schema validation, defaulting and pruning through the
// Gadget CRD (GadgetCRDManifest), as kube-apiserver applies them.
var crdCases = []Case{
	{Name: "crd-defaulting", Doc: "Defaults fill missing fields on create, in map list items, and again when an update drops a defaulted field.", Run: func(e *Env) {
		g := e.Create("create g", Gadgets, gadget("g", map[string]any{"size": 1, "ports": []any{map[string]any{"name": "http"}}}))
		e.Update("update without mode", Gadgets, "g", with(g.Body, nil, "spec", "mode"))
		e.Patch("merge patch mode null", Gadgets, "g", "", types.MergePatchType, `{"spec":{"mode":null}}`)
		e.Get("get g", Gadgets, "g")
	}},
	{Name: "crd-enum-pattern-length", Doc: "enum, pattern, maxLength, maximum and maxItems refusals (422, one cause each).", Run: func(e *Env) {
		e.Create("mode not in enum", Gadgets, gadget("a", map[string]any{"size": 1, "mode": "turbo"}))
		e.Create("name against the pattern", Gadgets, gadget("b", map[string]any{"size": 1, "name": "Bad1"}))
		e.Create("name too long", Gadgets, gadget("c", map[string]any{"size": 1, "name": "abcdefghijk"}))
		e.Create("size above maximum", Gadgets, gadget("d", map[string]any{"size": 101}))
		e.Create("too many tags", Gadgets, gadget("e", map[string]any{"size": 1, "tags": []any{"a", "b", "c", "d"}}))
		e.List("list", Gadgets, metav1.ListOptions{})
	}},
	{Name: "crd-list-types", Doc: "A set with a duplicate and a map list with a duplicate key are 422 Duplicate.", Run: func(e *Env) {
		e.Create("duplicate tag", Gadgets, gadget("a", map[string]any{"size": 1, "tags": []any{"x", "x"}}))
		e.Create("duplicate port name", Gadgets, gadget("b", map[string]any{"size": 1, "ports": []any{map[string]any{"name": "p"}, map[string]any{"name": "p", "port": 81}}}))
	}},
	{Name: "crd-nullable-and-null", Doc: "null on a nullable field is kept; null on a non-nullable field without default is dropped.", Run: func(e *Env) {
		e.Create("create with nulls", Gadgets, gadget("a", map[string]any{"size": 1, "note": nil, "name": nil}))
		e.Get("get a", Gadgets, "a")
	}},
	{Name: "crd-preserve-unknown-fields", Doc: "x-kubernetes-preserve-unknown-fields keeps what the schema does not list there; elsewhere unknown fields are pruned.", Run: func(e *Env) {
		e.Create("create with extras", Gadgets, gadget("a", map[string]any{"size": 1, "extra": map[string]any{"anything": map[string]any{"deep": true}}, "unknown": "x"}))
		e.Create("create with extras, strict", Gadgets, gadget("b", map[string]any{"size": 1, "unknown": "x"}), metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
	}},
	{Name: "crd-cel-rule", Doc: "An x-kubernetes-validations rule (minSize <= size) refuses with 422 on the object it is set on.", Run: func(e *Env) {
		e.Create("minSize above size", Gadgets, gadget("a", map[string]any{"size": 1, "minSize": 2}))
		g := e.Create("create b", Gadgets, gadget("b", map[string]any{"size": 3, "minSize": 2}))
		e.Update("shrink below minSize", Gadgets, "b", with(g.Body, int64(1), "spec", "size"))
	}},
	{Name: "crd-cel-transition-rule", Doc: "A transition rule (mode is immutable) refuses an update that changes it; other changes pass.", Run: func(e *Env) {
		e.Create("create fast", Gadgets, gadget("a", map[string]any{"size": 1, "mode": "fast"}))
		e.Patch("switch to safe", Gadgets, "a", "", types.MergePatchType, `{"spec":{"mode":"safe"}}`)
		e.Patch("grow", Gadgets, "a", "", types.MergePatchType, `{"spec":{"size":5}}`)
		e.Get("get a", Gadgets, "a")
	}},
	{Name: "crd-status-validation", Doc: "/status writes are validated against the schema too; spec rules still hold.", Run: func(e *Env) {
		e.Create("create a", Gadgets, gadget("a", map[string]any{"size": 1}))
		e.Patch("status phase as a number", Gadgets, "a", "status", types.MergePatchType, `{"status":{"phase":3}}`)
		e.Patch("status phase", Gadgets, "a", "status", types.MergePatchType, `{"status":{"phase":"Ready"}}`)
		e.Get("get a", Gadgets, "a")
	}},
}

func init() { Cases = append(Cases, crdCases...) }
