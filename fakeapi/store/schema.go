package store

import (
	"context"
	"encoding/json"
	"fmt"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuralcel "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	structuralobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// Schema is one custom resource version's openAPIV3Schema, compiled by
// apiextensions-apiserver's own code: the structural schema kube-apiserver
// prunes and defaults custom resources with, and its OpenAPI schema
// validator (types, required, minimum, patterns, enums, list types...) and
// its CEL rules (x-kubernetes-validations, transition rules included),
// with kube-apiserver's cost limits.
type Schema struct {
	source     map[string]any
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	// cel evaluates the schema's x-kubernetes-validations rules (nil
	// without any).
	cel *structuralcel.Validator
}

// CompileSchema compiles an openAPIV3Schema given as a JSON-compatible map
// (as read from a CRD manifest). It refuses a schema that is not
// structural, as kube-apiserver refuses such a CRD.
func CompileSchema(openAPIV3Schema map[string]any) (*Schema, error) {
	raw, err := json.Marshal(openAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("store: openAPIV3Schema: %w", err)
	}
	var v1props apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(raw, &v1props); err != nil {
		return nil, fmt.Errorf("store: openAPIV3Schema: %w", err)
	}
	var props apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&v1props, &props, nil); err != nil {
		return nil, fmt.Errorf("store: openAPIV3Schema: %w", err)
	}
	ss, err := structuralschema.NewStructural(&props)
	if err != nil {
		return nil, fmt.Errorf("store: openAPIV3Schema is not structural: %w", err)
	}
	if errs := structuralschema.ValidateStructural(field.NewPath("openAPIV3Schema"), ss); len(errs) > 0 {
		return nil, fmt.Errorf("store: openAPIV3Schema is not structural: %w", errs.ToAggregate())
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(&props)
	if err != nil {
		return nil, fmt.Errorf("store: openAPIV3Schema: %w", err)
	}
	return &Schema{source: openAPIV3Schema, structural: ss, validator: validator,
		cel: structuralcel.NewValidator(ss, true, celconfig.PerCallLimit)}, nil
}

// Source returns the openAPIV3Schema the Schema was compiled from (shared:
// do not modify it).
func (s *Schema) Source() map[string]any { return s.source }

// Prune drops, in place, the fields of obj (a custom resource's JSON map)
// the schema does not know, and returns their paths; metadata is coerced
// to ObjectMeta's fields as kube-apiserver does.
func (s *Schema) Prune(obj map[string]any) []string {
	return pruning.PruneWithOptions(obj, s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
}

// Default applies the schema's defaults to obj in place (and drops the
// nulls of non-nullable fields without a default), as kube-apiserver does
// to every custom resource it decodes.
func (s *Schema) Default(obj map[string]any) {
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, s.structural)
	structuraldefaulting.Default(obj, s.structural)
}

// Validate checks obj against the schema, as the custom resource
// strategy's validator does: OpenAPI validation (with ratcheting on
// update when old is set: unchanged invalid fields stay allowed),
// x-kubernetes-list-type sets and maps, and embedded ObjectMeta.
func (s *Schema) Validate(obj, old map[string]any) field.ErrorList {
	var errs field.ErrorList
	if old != nil {
		errs = apiservervalidation.ValidateCustomResourceUpdate(nil, obj, old, s.validator)
	} else {
		errs = apiservervalidation.ValidateCustomResource(nil, obj, s.validator)
	}
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, obj)...)
	if s.cel != nil {
		// The custom resource strategy's hasBlockingErr: rules are not
		// evaluated over an object that fails its types, enums, lengths or
		// required fields, and a cause says so.
		if blocking(errs) {
			return append(errs, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"))
		}
		var oldSelf any
		if old != nil {
			oldSelf = old
		}
		celErrs, _ := s.cel.Validate(context.Background(), nil, s.structural, obj, oldSelf, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	errs = append(errs, structuralobjectmeta.Validate(context.Background(), nil, obj, s.structural, false)...)
	return errs
}

// typeConverter is the server-side apply type converter of the custom
// resource gvk: the structural schema as OpenAPI, tagged with its kind.
func (s *Schema) typeConverter(gvk schema.GroupVersionKind) (managedfields.TypeConverter, error) {
	ks := s.structural.ToKubeOpenAPI()
	// As kube-apiserver's CRD OpenAPI builder: apiVersion, kind and
	// metadata are part of every object (metadata as a free-form object).
	if ks.Properties == nil {
		ks.Properties = map[string]spec.Schema{}
	}
	str := spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}}}
	md := spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}
	md.AddExtension("x-kubernetes-preserve-unknown-fields", true)
	ks.Properties["apiVersion"], ks.Properties["kind"], ks.Properties["metadata"] = str, str, md
	ks.AddExtension("x-kubernetes-group-version-kind", []any{map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}})
	name := gvk.Group + "." + gvk.Version + "." + gvk.Kind
	return managedfields.NewTypeConverter(map[string]*spec.Schema{name: ks}, false)
}

// blocking reports whether errs hold an error that keeps CEL rules from
// running (hasBlockingErr).
func blocking(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}
