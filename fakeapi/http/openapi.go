package http

import (
	"encoding/json"
	nethttp "net/http"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/fakeapi"
)

// The OpenAPI v3 documents are the least kubectl needs: the root lists one
// document per group version, and each lists the resource paths with the
// x-kubernetes-group-version-kind extension and the fieldValidation query
// parameter on PATCH, which is how kubectl decides to let the server
// validate (so it needs no client-side schema). They carry no schemas:
// kubectl explain does not work, and kubectl apply computes strategic merge
// patches from its own scheme (merge patches for custom resources).

// openAPIRoot is /openapi/v3.
func (h *handler) openAPIRoot() map[string]any {
	paths := map[string]any{}
	seen := map[schema.GroupVersion]bool{}
	for _, res := range h.srv.Resources() {
		gv := res.GVR.GroupVersion()
		if seen[gv] {
			continue
		}
		seen[gv] = true
		p := gvPath(gv)
		paths[p] = map[string]string{"serverRelativeURL": "/openapi/v3/" + p + "?hash=cachelab"}
	}
	return map[string]any{"paths": paths}
}

// gvPath is "api/v1" or "apis/G/V".
func gvPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

// openAPIGroupVersion is /openapi/v3/api/v1 or /openapi/v3/apis/G/V.
func (h *handler) openAPIGroupVersion(gv schema.GroupVersion, resources []fakeapi.ResourceInfo) map[string]any {
	paths := map[string]any{}
	param := func(name string) map[string]any {
		return map[string]any{"name": name, "in": "query", "schema": map[string]string{"type": "string"}}
	}
	for _, res := range resources {
		gvk := map[string]string{"group": gv.Group, "version": gv.Version, "kind": res.Kind}
		op := func(verb string, params ...string) map[string]any {
			o := map[string]any{
				"operationId":                     verb + res.Kind,
				"x-kubernetes-action":             verb,
				"x-kubernetes-group-version-kind": gvk,
				"responses":                       map[string]any{"200": map[string]any{"description": "OK"}},
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
	return map[string]any{
		"openapi": "3.0.0",
		"info":    map[string]string{"title": "Kubernetes (cachelab fakeapi)", "version": h.version.GitVersion},
		"paths":   paths,
	}
}

// serveOpenAPI answers /openapi/v3[/...]; /openapi/v2 is 404, which kubectl
// tolerates once v3 answers.
func (h *handler) serveOpenAPI(w nethttp.ResponseWriter, r *nethttp.Request, rest []string) {
	var doc map[string]any
	switch {
	case len(rest) == 0:
		doc = h.openAPIRoot()
	case len(rest) == 2 && rest[0] == "api":
		gv := schema.GroupVersion{Version: rest[1]}
		if res := h.resourcesOf(gv); len(res) > 0 {
			doc = h.openAPIGroupVersion(gv, res)
		}
	case len(rest) == 3 && rest[0] == "apis":
		gv := schema.GroupVersion{Group: rest[1], Version: rest[2]}
		if res := h.resourcesOf(gv); len(res) > 0 {
			doc = h.openAPIGroupVersion(gv, res)
		}
	}
	if doc == nil {
		h.writeError(w, r, notFound())
		return
	}
	data, err := json.Marshal(doc)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(nethttp.StatusOK)
	_, _ = w.Write(data)
}
