package v1alpha1

import (
	"math"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateObject checks a Bellerophon, given as the JSON-decoded map the
// API server stores, against the rules of the CRD's openAPIV3Schema
// (config/crd.yaml): spec is a required object; spec.replicas a required
// integer in [0, 2^31-1]; spec.version a required string of at least one
// character; spec.config an object of strings. It returns one field.Error
// per violation, in the words kube-apiserver uses, so the fake server can
// answer 422 Invalid as a real one would. Status is not checked: the schema
// leaves it open enough that the operator's own writes always pass.
func ValidateObject(obj map[string]any) field.ErrorList {
	var errs field.ErrorList
	specPath := field.NewPath("spec")
	rawSpec, found := obj["spec"]
	if !found || rawSpec == nil {
		return append(errs, field.Required(specPath, "a Bellerophon needs a spec with replicas and version"))
	}
	spec, ok := rawSpec.(map[string]any)
	if !ok {
		return append(errs, field.TypeInvalid(specPath, jsonType(rawSpec), "must be of type object"))
	}

	replicasPath := specPath.Child("replicas")
	switch r := spec["replicas"].(type) {
	case nil:
		errs = append(errs, field.Required(replicasPath, "the number of Pods to run, 0 or more"))
	default:
		n, isInt := asInteger(r)
		switch {
		case !isInt:
			errs = append(errs, field.TypeInvalid(replicasPath, jsonType(r), "must be of type integer"))
		case n < 0:
			errs = append(errs, field.Invalid(replicasPath, n, "should be greater than or equal to 0"))
		case n > math.MaxInt32:
			errs = append(errs, field.Invalid(replicasPath, n, "should be less than or equal to 2147483647"))
		}
	}

	versionPath := specPath.Child("version")
	switch v := spec["version"].(type) {
	case nil:
		errs = append(errs, field.Required(versionPath, "the application version, e.g. \"1.0\""))
	case string:
		if len(v) < 1 {
			errs = append(errs, field.Invalid(versionPath, v, "should be at least 1 chars long"))
		}
	default:
		errs = append(errs, field.TypeInvalid(versionPath, jsonType(v), "must be of type string"))
	}

	configPath := specPath.Child("config")
	switch c := spec["config"].(type) {
	case nil:
	case map[string]any:
		for k, v := range c {
			if _, isString := v.(string); !isString {
				errs = append(errs, field.TypeInvalid(configPath.Key(k), jsonType(v), "must be of type string"))
			}
		}
	default:
		errs = append(errs, field.TypeInvalid(configPath, jsonType(c), "must be of type object"))
	}
	return errs
}

// Validate is ValidateObject with each error as a string, the shape
// sim.CRD.Validate wants. An empty result means obj is valid.
func Validate(obj map[string]any) []string {
	errs := ValidateObject(obj)
	if len(errs) == 0 {
		return nil
	}
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// asInteger reports whether v, a JSON-decoded number, is an integer, and its
// value. encoding/json decodes to float64, apimachinery's unstructured
// decoding to int64; both are accepted.
func asInteger(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n != math.Trunc(n) || math.IsInf(n, 0) || n > math.MaxInt64 || n < math.MinInt64 {
			return 0, false
		}
		return int64(n), true
	}
	return 0, false
}

// jsonType names the JSON type of a decoded value, as kube-apiserver's
// schema validation reports it ("string", "number", "object", ...).
func jsonType(v any) string {
	switch n := v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case int, int32, int64:
		return "integer"
	case float64:
		if n == math.Trunc(n) {
			return "integer"
		}
		return "number"
	case nil:
		return "null"
	}
	return "unknown"
}
