package v1alpha1_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/cachelab/cachelab/subjects/bellerophon/apis/lab/v1alpha1"
	"github.com/cachelab/cachelab/subjects/bellerophon/config"
)

func TestValidateAcceptsAWellFormedSpec(t *testing.T) {
	for name, spec := range map[string]map[string]any{
		"json numbers":     {"replicas": float64(3), "version": "1.0", "config": map[string]any{"a": "b"}},
		"int64 numbers":    {"replicas": int64(0), "version": "v"},
		"no config at all": {"replicas": int64(1), "version": "2"},
	} {
		if errs := v1alpha1.Validate(map[string]any{"spec": spec}); len(errs) != 0 {
			t.Errorf("%s: Validate(%v) = %q, want no error", name, spec, errs)
		}
	}
}

func TestValidateRejectsEachSchemaViolationNamingTheField(t *testing.T) {
	cases := []struct {
		name string
		obj  map[string]any
		want []string // substrings, one per expected error
	}{
		{"negative replicas", map[string]any{"spec": map[string]any{"replicas": float64(-1), "version": "1"}},
			[]string{"spec.replicas: Invalid value: -1: should be greater than or equal to 0"}},
		{"empty version", map[string]any{"spec": map[string]any{"replicas": float64(1), "version": ""}},
			[]string{"spec.version: Invalid value: \"\": should be at least 1 chars long"}},
		{"both", map[string]any{"spec": map[string]any{"replicas": int64(-5), "version": ""}},
			[]string{"spec.replicas", "spec.version"}},
		{"missing spec", map[string]any{}, []string{"spec: Required value"}},
		{"spec not an object", map[string]any{"spec": "three"}, []string{"spec: Invalid value: \"string\": must be of type object"}},
		{"replicas a string", map[string]any{"spec": map[string]any{"replicas": "3", "version": "1"}},
			[]string{"spec.replicas: Invalid value: \"string\": must be of type integer"}},
		{"replicas fractional", map[string]any{"spec": map[string]any{"replicas": 1.5, "version": "1"}},
			[]string{"spec.replicas", "must be of type integer"}},
		{"replicas too large", map[string]any{"spec": map[string]any{"replicas": float64(1 << 32), "version": "1"}},
			[]string{"spec.replicas", "less than or equal to 2147483647"}},
		{"missing replicas and version", map[string]any{"spec": map[string]any{}},
			[]string{"spec.replicas: Required value", "spec.version: Required value"}},
		{"version a number", map[string]any{"spec": map[string]any{"replicas": float64(1), "version": float64(2)}},
			[]string{"spec.version: Invalid value: \"integer\": must be of type string"}},
		{"config value not a string", map[string]any{"spec": map[string]any{"replicas": float64(1), "version": "1", "config": map[string]any{"k": true}}},
			[]string{"spec.config[k]", "must be of type string"}},
		{"config a list", map[string]any{"spec": map[string]any{"replicas": float64(1), "version": "1", "config": []any{"k"}}},
			[]string{"spec.config: Invalid value", "must be of type object"}},
	}
	for _, tc := range cases {
		got := v1alpha1.Validate(tc.obj)
		joined := strings.Join(got, "\n")
		for _, w := range tc.want {
			if !strings.Contains(joined, w) {
				t.Errorf("%s: Validate = %q, want an error containing %q", tc.name, got, w)
			}
		}
		if tc.name != "both" && tc.name != "missing replicas and version" && len(got) != 1 {
			t.Errorf("%s: Validate = %q, want exactly one error", tc.name, got)
		}
	}
}

// TestValidateMirrorsTheCRDSchema reads config/crd.yaml and checks that the
// constraints Validate enforces are the ones the manifest declares, so the
// two cannot drift apart silently.
func TestValidateMirrorsTheCRDSchema(t *testing.T) {
	var crd struct {
		Spec struct {
			Group string `json:"group"`
			Scope string `json:"scope"`
			Names struct {
				Kind     string `json:"kind"`
				ListKind string `json:"listKind"`
				Plural   string `json:"plural"`
			} `json:"names"`
			Versions []struct {
				Name         string         `json:"name"`
				Subresources map[string]any `json:"subresources"`
				Printer      []struct {
					Name     string `json:"name"`
					JSONPath string `json:"jsonPath"`
				} `json:"additionalPrinterColumns"`
				Schema struct {
					OpenAPIV3Schema struct {
						Required   []string `json:"required"`
						Properties struct {
							Spec struct {
								Required   []string `json:"required"`
								Properties struct {
									Replicas struct {
										Type    string `json:"type"`
										Minimum *int64 `json:"minimum"`
									} `json:"replicas"`
									Version struct {
										Type      string `json:"type"`
										MinLength *int64 `json:"minLength"`
									} `json:"version"`
									Config struct {
										Type                 string `json:"type"`
										AdditionalProperties struct {
											Type string `json:"type"`
										} `json:"additionalProperties"`
									} `json:"config"`
								} `json:"properties"`
							} `json:"spec"`
						} `json:"properties"`
					} `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(config.CRDManifest, &crd); err != nil {
		t.Fatalf("config/crd.yaml does not parse: %v", err)
	}
	s := crd.Spec
	if s.Group != v1alpha1.GroupName || s.Names.Kind != v1alpha1.Kind || s.Names.ListKind != v1alpha1.ListKind ||
		s.Names.Plural != v1alpha1.Plural || s.Scope != "Namespaced" {
		t.Errorf("crd.yaml names %s %s/%s/%s scope %s, want %s %s/%s/%s Namespaced",
			s.Group, s.Names.Kind, s.Names.ListKind, s.Names.Plural, s.Scope,
			v1alpha1.GroupName, v1alpha1.Kind, v1alpha1.ListKind, v1alpha1.Plural)
	}
	if len(s.Versions) != 1 || s.Versions[0].Name != v1alpha1.SchemeGroupVersion.Version {
		t.Fatalf("crd.yaml versions = %+v, want exactly v1alpha1", s.Versions)
	}
	v := s.Versions[0]
	if _, ok := v.Subresources["status"]; !ok {
		t.Errorf("crd.yaml has no status subresource")
	}
	if len(v.Printer) < 3 {
		t.Errorf("crd.yaml printer columns = %+v, want Replicas, Ready and Version at least", v.Printer)
	}
	schema := v.Schema.OpenAPIV3Schema
	spec := schema.Properties.Spec
	if strings.Join(schema.Required, ",") != "spec" || strings.Join(spec.Required, ",") != "replicas,version" {
		t.Errorf("required = %v / spec %v, want [spec] / [replicas version] (as Validate enforces)", schema.Required, spec.Required)
	}
	rep, ver, cfg := spec.Properties.Replicas, spec.Properties.Version, spec.Properties.Config
	if rep.Type != "integer" || rep.Minimum == nil || *rep.Minimum != 0 {
		t.Errorf("spec.replicas schema = %+v, want integer with minimum 0", rep)
	}
	if ver.Type != "string" || ver.MinLength == nil || *ver.MinLength != 1 {
		t.Errorf("spec.version schema = %+v, want string with minLength 1", ver)
	}
	if cfg.Type != "object" || cfg.AdditionalProperties.Type != "string" {
		t.Errorf("spec.config schema = %+v, want object of strings", cfg)
	}
	// The boundary values the schema names must be the ones Validate uses.
	at := func(replicas int64, version string) []string {
		return v1alpha1.Validate(map[string]any{"spec": map[string]any{"replicas": replicas, "version": version}})
	}
	if errs := at(*rep.Minimum, strings.Repeat("x", int(*ver.MinLength))); len(errs) != 0 {
		t.Errorf("Validate rejects the schema's minimum values: %q", errs)
	}
	if errs := at(*rep.Minimum-1, "x"); len(errs) != 1 {
		t.Errorf("Validate accepts replicas below the schema minimum: %q", errs)
	}
	if errs := at(0, strings.Repeat("x", int(*ver.MinLength)-1)); len(errs) != 1 {
		t.Errorf("Validate accepts a version shorter than the schema minLength: %q", errs)
	}
}

func TestDeepCopyIsDeep(t *testing.T) {
	in := &v1alpha1.Bellerophon{Spec: v1alpha1.BellerophonSpec{Replicas: 1, Version: "1", Config: map[string]string{"a": "1"}}}
	out := in.DeepCopy()
	out.Spec.Config["a"] = "2"
	if in.Spec.Config["a"] != "1" {
		t.Errorf("DeepCopy shares the config map")
	}
	if _, ok := in.DeepCopyObject().(*v1alpha1.Bellerophon); !ok {
		t.Errorf("DeepCopyObject does not return a *Bellerophon")
	}
}
