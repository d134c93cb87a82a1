package fidelity

import (
	"encoding/json"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Pruner returns a fakeapi.ResourceInfo.Prune for a CRD version's
// openAPIV3Schema (as a JSON-compatible map): apiextensions-apiserver's
// own structural-schema pruning, which kube-apiserver runs on every custom
// resource it decodes.
func Pruner(openAPIV3Schema map[string]any) (func(*unstructured.Unstructured) []string, error) {
	raw, err := json.Marshal(openAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("fidelity: openAPIV3Schema: %w", err)
	}
	var v1props apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(raw, &v1props); err != nil {
		return nil, fmt.Errorf("fidelity: openAPIV3Schema: %w", err)
	}
	var props apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&v1props, &props, nil); err != nil {
		return nil, fmt.Errorf("fidelity: openAPIV3Schema: %w", err)
	}
	ss, err := structuralschema.NewStructural(&props)
	if err != nil {
		return nil, fmt.Errorf("fidelity: openAPIV3Schema is not structural: %w", err)
	}
	return func(u *unstructured.Unstructured) []string {
		return pruning.PruneWithOptions(u.Object, ss, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	}, nil
}
