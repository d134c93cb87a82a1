package http

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	nethttp "net/http"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/fakeapi"
)

// OpenAPI v3, as kube-apiserver serves it: /openapi/v3 lists one document
// per served group version (with a hash, so clients may cache), and each
// document lists the resource paths and the schemas of their kinds.
//
//   - Built-in group versions (core/v1, events.k8s.io/v1,
//     coordination.k8s.io/v1) are served from documents recorded from a
//     real kube-apiserver (openapi/*.json.gz, see openapi/README.md),
//     trimmed to the resources the fake serves. Without a recorded document
//     a group version gets the generated one below, without schemas.
//   - Custom resources get a generated document: their paths with
//     x-kubernetes-group-version-kind and the fieldValidation parameter
//     (which is how kubectl decides to leave validation to the server), and,
//     when Options.OpenAPISchemas holds the CRD version's openAPIV3Schema,
//     the kind's schema as kube-apiserver's CRD builder shapes it
//     (apiVersion, kind, metadata added, named <reversed group>.<version>.
//     <Kind>), with a List schema and the ObjectMeta/ListMeta schemas copied
//     from the recorded core/v1 document. That is what kubectl explain
//     reads.
//
// /openapi/v2 is 404, which kubectl tolerates once v3 answers.

// openAPIDoc returns the document of gv, or nil when gv is not served.
func (h *handler) openAPIDoc(gv schema.GroupVersion) ([]byte, error) {
	resources := h.resourcesOf(gv)
	if len(resources) == 0 {
		return nil, nil
	}
	if doc := recordedOpenAPI(gvPath(gv)); doc != nil {
		return doc, nil
	}
	return json.Marshal(h.generatedOpenAPI(gv, resources))
}

// openAPIRoot is /openapi/v3.
func (h *handler) openAPIRoot() (map[string]any, error) {
	paths := map[string]any{}
	seen := map[schema.GroupVersion]bool{}
	for _, res := range h.srv.Resources() {
		gv := res.GVR.GroupVersion()
		if seen[gv] {
			continue
		}
		seen[gv] = true
		doc, err := h.openAPIDoc(gv)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(doc)
		p := gvPath(gv)
		paths[p] = map[string]string{"serverRelativeURL": "/openapi/v3/" + p + "?hash=" + strings.ToUpper(hex.EncodeToString(sum[:]))}
	}
	return map[string]any{"paths": paths}, nil
}

// gvPath is "api/v1" or "apis/G/V".
func gvPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

// openAPISchemaName is the components/schemas name kube-apiserver gives a
// custom resource's kind: the group reversed, the version, the kind
// ("dev.cachelab.lab.v1alpha1.Bellerophon").
func openAPISchemaName(gvk schema.GroupVersionKind) string {
	parts := strings.Split(gvk.Group, ".")
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, ".") + "." + gvk.Version + "." + gvk.Kind
}

// The meta schemas a custom resource's document refers to.
const (
	objectMetaSchema = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	listMetaSchema   = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
)

// generatedOpenAPI builds the document of a group version with no recorded
// one (custom resources).
func (h *handler) generatedOpenAPI(gv schema.GroupVersion, resources []fakeapi.ResourceInfo) map[string]any {
	paths := map[string]any{}
	schemas := map[string]any{}
	param := func(name string) map[string]any {
		return map[string]any{"name": name, "in": "query", "schema": map[string]string{"type": "string"}}
	}
	needMeta := false
	for _, res := range resources {
		gvk := gv.WithKind(res.Kind)
		gvkExt := map[string]string{"group": gv.Group, "version": gv.Version, "kind": res.Kind}
		var ref map[string]any
		if raw, ok := h.openAPISchemas[gvk]; ok {
			var s map[string]any
			if err := json.Unmarshal(raw, &s); err == nil && s != nil {
				name := openAPISchemaName(gvk)
				schemas[name] = crdKindSchema(s, gvk)
				listGVK := gv.WithKind(res.ListKind)
				schemas[openAPISchemaName(listGVK)] = crdListSchema(name, listGVK)
				ref = map[string]any{"$ref": "#/components/schemas/" + name}
				needMeta = true
			}
		}
		op := func(verb string, params ...string) map[string]any {
			ok := map[string]any{"description": "OK"}
			if ref != nil && verb != "list" && verb != "deletecollection" {
				ok["content"] = map[string]any{"application/json": map[string]any{"schema": ref}}
			}
			o := map[string]any{
				"operationId":                     verb + res.Kind,
				"x-kubernetes-action":             verb,
				"x-kubernetes-group-version-kind": gvkExt,
				"responses":                       map[string]any{"200": ok},
			}
			var ps []any
			for _, p := range params {
				ps = append(ps, param(p))
			}
			if ps != nil {
				o["parameters"] = ps
			}
			return o
		}
		base := "/" + gvPath(gv)
		if res.Namespaced {
			base += "/namespaces/{namespace}"
		}
		base += "/" + res.GVR.Resource
		paths[base] = map[string]any{
			"get":    op("list"),
			"post":   op("post", "dryRun", "fieldManager", "fieldValidation"),
			"delete": op("deletecollection"),
		}
		paths[base+"/{name}"] = map[string]any{
			"get":    op("get"),
			"put":    op("put", "dryRun", "fieldManager", "fieldValidation"),
			"patch":  op("patch", "dryRun", "fieldManager", "fieldValidation", "force"),
			"delete": op("delete"),
		}
	}
	doc := map[string]any{
		"openapi": "3.0.0",
		"info":    map[string]string{"title": "Kubernetes (cachelab fakeapi)", "version": h.version.GitVersion},
		"paths":   paths,
	}
	if needMeta {
		for name, s := range metaSchemas() {
			schemas[name] = s
		}
	}
	if len(schemas) > 0 {
		doc["components"] = map[string]any{"schemas": schemas}
	}
	return doc
}

// crdKindSchema is a CRD's openAPIV3Schema with what kube-apiserver's CRD
// OpenAPI builder adds: apiVersion, kind and metadata, and the kind's
// x-kubernetes-group-version-kind.
func crdKindSchema(s map[string]any, gvk schema.GroupVersionKind) map[string]any {
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		s["properties"] = props
	}
	props["apiVersion"] = map[string]any{"type": "string", "description": apiVersionDoc}
	props["kind"] = map[string]any{"type": "string", "description": kindDoc}
	props["metadata"] = map[string]any{
		"description": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
		"allOf":       []any{map[string]any{"$ref": "#/components/schemas/" + objectMetaSchema}},
	}
	s["x-kubernetes-group-version-kind"] = []any{map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}}
	return s
}

// crdListSchema is the List kind's schema for item schema name.
func crdListSchema(item string, gvk schema.GroupVersionKind) map[string]any {
	return map[string]any{
		"description": fmt.Sprintf("%s is a list of %s", gvk.Kind, strings.TrimSuffix(gvk.Kind, "List")),
		"type":        "object",
		"required":    []any{"items"},
		"properties": map[string]any{
			"apiVersion": map[string]any{"type": "string", "description": apiVersionDoc},
			"items": map[string]any{
				"description": "List of " + strings.ToLower(strings.TrimSuffix(gvk.Kind, "List")) + "s. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
				"type":        "array",
				"items":       map[string]any{"$ref": "#/components/schemas/" + item},
			},
			"kind": map[string]any{"type": "string", "description": kindDoc},
			"metadata": map[string]any{
				"description": "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
				"allOf":       []any{map[string]any{"$ref": "#/components/schemas/" + listMetaSchema}},
			},
		},
		"x-kubernetes-group-version-kind": []any{map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}},
	}
}

const (
	apiVersionDoc = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
	kindDoc       = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)

// metaSchemas returns ObjectMeta and ListMeta and every schema they refer
// to, from the recorded core/v1 document; without one, bare objects.
func metaSchemas() map[string]any {
	out := map[string]any{}
	var core struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if doc := recordedOpenAPI("api/v1"); doc != nil {
		_ = json.Unmarshal(doc, &core)
	}
	var visit func(name string)
	visit = func(name string) {
		if _, done := out[name]; done {
			return
		}
		raw, ok := core.Components.Schemas[name]
		if !ok {
			out[name] = map[string]any{"type": "object"}
			return
		}
		var s any
		_ = json.Unmarshal(raw, &s)
		out[name] = s
		for _, ref := range schemaRefs(s) {
			visit(ref)
		}
	}
	visit(objectMetaSchema)
	visit(listMetaSchema)
	return out
}

// schemaRefs lists the components/schemas names that v refers to, sorted.
func schemaRefs(v any) []string {
	set := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if r, ok := x["$ref"].(string); ok {
				if name, ok := strings.CutPrefix(r, "#/components/schemas/"); ok {
					set[name] = true
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// serveOpenAPI answers /openapi/v3[/...].
func (h *handler) serveOpenAPI(w nethttp.ResponseWriter, r *nethttp.Request, rest []string) {
	var data []byte
	var err error
	switch {
	case len(rest) == 0:
		var root map[string]any
		if root, err = h.openAPIRoot(); err == nil {
			data, err = json.Marshal(root)
		}
	case len(rest) == 2 && rest[0] == "api":
		data, err = h.openAPIDoc(schema.GroupVersion{Version: rest[1]})
	case len(rest) == 3 && rest[0] == "apis":
		data, err = h.openAPIDoc(schema.GroupVersion{Group: rest[1], Version: rest[2]})
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if data == nil {
		h.writeError(w, r, notFound())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(nethttp.StatusOK)
	_, _ = w.Write(data)
}
