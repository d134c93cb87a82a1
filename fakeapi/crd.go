package fakeapi

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/cachelab/cachelab/fakeapi/store"
)

// CRDResources reads an apiextensions.k8s.io/v1 CustomResourceDefinition
// (as a JSON-compatible map) and returns one ResourceInfo per served
// version, ready for RegisterCRD: names, scope, status subresource, short
// names, categories and the version's openAPIV3Schema (so the server
// prunes, defaults and validates as kube-apiserver does).
func CRDResources(crd map[string]any) ([]ResourceInfo, error) {
	u := unstructured.Unstructured{Object: crd}
	if u.GetKind() != "CustomResourceDefinition" {
		return nil, fmt.Errorf("fakeapi: kind is %q, want CustomResourceDefinition", u.GetKind())
	}
	group, _, _ := unstructured.NestedString(crd, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd, "spec", "names", "kind")
	listKind, _, _ := unstructured.NestedString(crd, "spec", "names", "listKind")
	plural, _, _ := unstructured.NestedString(crd, "spec", "names", "plural")
	scope, _, _ := unstructured.NestedString(crd, "spec", "scope")
	shortNames, _, _ := unstructured.NestedStringSlice(crd, "spec", "names", "shortNames")
	categories, _, _ := unstructured.NestedStringSlice(crd, "spec", "names", "categories")
	versions, _, _ := unstructured.NestedSlice(crd, "spec", "versions")
	if group == "" || kind == "" || plural == "" || len(versions) == 0 {
		return nil, fmt.Errorf("fakeapi: CRD %s: spec.group, spec.names.kind, spec.names.plural and spec.versions are required", u.GetName())
	}
	if listKind == "" {
		listKind = kind + "List"
	}
	var out []ResourceInfo
	for _, v := range versions {
		vm, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("fakeapi: CRD %s: spec.versions holds a non-object", u.GetName())
		}
		name, _, _ := unstructured.NestedString(vm, "name")
		if served, found, _ := unstructured.NestedBool(vm, "served"); found && !served {
			continue
		}
		_, hasStatus, _ := unstructured.NestedMap(vm, "subresources", "status")
		info := ResourceInfo{
			GVR:        schema.GroupVersionResource{Group: group, Version: name, Resource: plural},
			Kind:       kind,
			ListKind:   listKind,
			Namespaced: scope != "Cluster",
			HasStatus:  hasStatus,
			ShortNames: shortNames,
			Categories: categories,
		}
		if sc, found, _ := unstructured.NestedMap(vm, "subresources", "scale"); found {
			spec, _, _ := unstructured.NestedString(sc, "specReplicasPath")
			status, _, _ := unstructured.NestedString(sc, "statusReplicasPath")
			sel, _, _ := unstructured.NestedString(sc, "labelSelectorPath")
			info.Scale = &store.ScaleSubresource{SpecReplicasPath: spec, StatusReplicasPath: status, LabelSelectorPath: sel}
		}
		if s, found, _ := unstructured.NestedMap(vm, "schema", "openAPIV3Schema"); found {
			info.OpenAPIV3Schema = s
		}
		out = append(out, info)
	}
	return out, nil
}

// RegisterCRDManifest registers every served version of the CRD in a YAML
// or JSON manifest (one document) with its schema.
func (s *Server) RegisterCRDManifest(manifest []byte) error {
	var crd map[string]any
	if err := yaml.Unmarshal(manifest, &crd); err != nil {
		return fmt.Errorf("fakeapi: CRD manifest: %w", err)
	}
	infos, err := CRDResources(crd)
	if err != nil {
		return err
	}
	for _, info := range infos {
		if err := s.RegisterCRD(info); err != nil {
			return err
		}
	}
	return nil
}
