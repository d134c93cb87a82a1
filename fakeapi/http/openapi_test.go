package http_test

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/fakeapi"
	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
)

// TestOpenAPIV3ServesACustomResourceSchemaAsKubeAPIServerShapesIt: with
// Options.OpenAPISchemas, a CRD's group version document holds the kind's
// schema under kube-apiserver's name (reversed group, version, kind) with
// x-kubernetes-group-version-kind, apiVersion, kind and a metadata $ref that
// resolves in the same document, and a List schema; the root index's hash
// changes with the document; a kind without a schema gets paths only.
func TestOpenAPIV3ServesACustomResourceSchemaAsKubeAPIServerShapesIt(t *testing.T) {
	srv := fakeapi.NewServer(fakeapi.Options{})
	gizmos := schema.GroupVersionResource{Group: "toys.example.com", Version: "v1", Resource: "gizmos"}
	widgets := schema.GroupVersionResource{Group: "toys.example.com", Version: "v1", Resource: "widgets"}
	for _, r := range []fakeapi.ResourceInfo{
		{GVR: gizmos, Kind: "Gizmo", ListKind: "GizmoList", Namespaced: true},
		{GVR: widgets, Kind: "Widget", ListKind: "WidgetList", Namespaced: true},
	} {
		if err := srv.RegisterCRD(r); err != nil {
			t.Fatal(err)
		}
	}
	gizmoSchema := `{"type":"object","properties":{"spec":{"type":"object","description":"what the gizmo does","properties":{"size":{"type":"integer"}}}}}`
	h := fakehttp.NewHandler(srv, fakehttp.Options{OpenAPISchemas: map[schema.GroupVersionKind]json.RawMessage{
		gizmos.GroupVersion().WithKind("Gizmo"): json.RawMessage(gizmoSchema),
	}})
	plain := fakehttp.NewHandler(srv, fakehttp.Options{})

	w := do(h, "GET", "/openapi/v3/apis/toys.example.com/v1", "", "", "")
	if w.Code != 200 {
		t.Fatalf("GET document: %d %s", w.Code, w.Body)
	}
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	g := doc.Components.Schemas["com.example.toys.v1.Gizmo"]
	if g == nil {
		t.Fatalf("no schema com.example.toys.v1.Gizmo; have %v", schemaNames(doc.Components.Schemas))
	}
	gvk, _ := json.Marshal(g["x-kubernetes-group-version-kind"])
	if string(gvk) != `[{"group":"toys.example.com","kind":"Gizmo","version":"v1"}]` {
		t.Errorf("Gizmo x-kubernetes-group-version-kind = %s", gvk)
	}
	props := g["properties"].(map[string]any)
	for _, p := range []string{"apiVersion", "kind", "metadata", "spec"} {
		if props[p] == nil {
			t.Errorf("Gizmo schema lacks property %s", p)
		}
	}
	if d := props["spec"].(map[string]any)["description"]; d != "what the gizmo does" {
		t.Errorf("spec description = %v, want the CRD's", d)
	}
	meta, _ := json.Marshal(props["metadata"])
	if !strings.Contains(string(meta), `"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"`) {
		t.Errorf("metadata = %s, want a $ref to ObjectMeta", meta)
	}
	for _, name := range []string{"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta", "com.example.toys.v1.GizmoList"} {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("the document lacks schema %s (a $ref would not resolve)", name)
		}
	}
	if doc.Components.Schemas["com.example.toys.v1.Widget"] != nil {
		t.Error("Widget has a schema, but none was given")
	}
	if doc.Paths["/apis/toys.example.com/v1/namespaces/{namespace}/widgets/{name}"] == nil {
		t.Error("Widget's paths are missing")
	}

	rootOf := func(body string) string {
		var root struct {
			Paths map[string]struct {
				URL string `json:"serverRelativeURL"`
			} `json:"paths"`
		}
		_ = json.Unmarshal([]byte(body), &root)
		return root.Paths["apis/toys.example.com/v1"].URL
	}
	withSchema := rootOf(do(h, "GET", "/openapi/v3", "", "", "").Body.String())
	without := rootOf(do(plain, "GET", "/openapi/v3", "", "", "").Body.String())
	if !strings.HasPrefix(withSchema, "/openapi/v3/apis/toys.example.com/v1?hash=") || withSchema == without {
		t.Errorf("root index URLs %q (with schema) and %q (without): want a hash that changes with the document", withSchema, without)
	}
}

func schemaNames[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
