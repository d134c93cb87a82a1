package fakeapi

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestDynamicSchemeIsBuiltOncePerSetOfCustomListKinds: clients of servers
// serving the same custom resources share one scheme (a fresh one per
// client cost 9% of the standard scenario), which knows their list kinds;
// another set of custom list kinds gets its own, and built-ins only the
// shared client-go scheme.
func TestDynamicSchemeIsBuiltOncePerSetOfCustomListKinds(t *testing.T) {
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	w := schema.GroupVersionResource{Group: "lab.example.com", Version: "v1", Resource: "widgets"}
	g := schema.GroupVersionResource{Group: "lab.example.com", Version: "v1", Resource: "gadgets"}
	a := dynamicScheme(map[schema.GroupVersionResource]string{cm: "ConfigMapList", w: "WidgetList"})
	b := dynamicScheme(map[schema.GroupVersionResource]string{w: "WidgetList", cm: "ConfigMapList"})
	if a != b {
		t.Errorf("two clients serving the same custom list kinds got two schemes")
	}
	if !a.Recognizes(w.GroupVersion().WithKind("WidgetList")) || !a.Recognizes(cm.GroupVersion().WithKind("ConfigMapList")) {
		t.Errorf("the scheme does not know WidgetList and ConfigMapList")
	}
	c := dynamicScheme(map[schema.GroupVersionResource]string{g: "GadgetList"})
	if c == a || !c.Recognizes(g.GroupVersion().WithKind("GadgetList")) || c.Recognizes(w.GroupVersion().WithKind("WidgetList")) {
		t.Errorf("another set of custom list kinds shares a scheme or its kinds")
	}
	if builtin := dynamicScheme(map[schema.GroupVersionResource]string{cm: "ConfigMapList"}); builtin != builtinScheme() {
		t.Errorf("built-in list kinds only: not the shared client-go scheme")
	}
}
