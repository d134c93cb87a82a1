package cachelabtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"pgregory.net/rapid"

	"github.com/cachelab/cachelab/fakeapi/store"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// schemaPlans are what Primary and Examples ask of Random: the primary
// resources as named, the example paths, and (once checkSetup resolved
// them against the controller's CRDs) the kinds to generate from.
type schemaPlans struct {
	primaries []string
	examples  []string
	kinds     []scenarios.Kind
}

// Primary makes Random's plans act on the controller's own kinds instead
// of ConfigMaps: objects of each named resource (a custom resource of
// Controller.CRDs, "foos" or "foos.example.com"; or a built-in one,
// "configmaps", "deployments", or any other given Examples) are created,
// changed (one field, or several in a burst), scaled (with a scale
// subresource), deleted and recreated, with values drawn from the CRD's
// OpenAPI schema (types, enums, bounds, lengths, patterns, required
// fields, defaults, nested objects, lists), and their children (whatever
// the controller creates with an ownerReference to them, of any kind) are
// deleted and changed by another writer, and faulted: see
// scenarios.SchemaPlanGen.
func Primary(resources ...string) RandomOption {
	return func(p *Plans) {
		if p.schema == nil {
			p.schema = &schemaPlans{}
		}
		p.schema.primaries = append(p.schema.primaries, resources...)
	}
}

// Examples gives Primary's plans example objects to start from: manifests
// (YAML, possibly several documents, or JSON) or directories of them, such
// as kubebuilder's config/samples. Created objects are examples of their
// kind (their names replaced) with a few drawn changes. Objects of kinds
// that are not primaries are ignored; a path with no object of a primary
// is an error.
func Examples(paths ...string) RandomOption {
	return func(p *Plans) {
		if p.schema == nil {
			p.schema = &schemaPlans{}
		}
		p.schema.examples = append(p.schema.examples, paths...)
	}
}

// checkSetup checks what Test and Catch are given before any plan runs:
// ManagerOptions comes with the Setup it configures, the CRDs could be
// read, and the primaries and examples of random plans resolve.
func checkSetup(c Controller, plans []Plans) error {
	if c.ManagerOptions != nil && c.Setup == nil {
		return errors.New("cachelabtest: Controller.ManagerOptions is set without Setup: the options are those of the manager Setup registers on (a Start controller builds its own clients)")
	}
	if err := c.CRDs.Err(); err != nil {
		return err
	}
	for _, ps := range plans {
		if ps.schema == nil {
			continue
		}
		if err := ps.schema.resolve(c.CRDs); err != nil {
			return err
		}
	}
	return nil
}

// planGen returns the generator of ps's random plans for subject.
func (ps Plans) planGen(subject string) *rapid.Generator[sim.Plan] {
	if ps.schema == nil || len(ps.schema.kinds) == 0 {
		return scenarios.PlanGenWith(subject, ps.gen)
	}
	return scenarios.SchemaPlanGen(subject, scenarios.SchemaGenOptions{Kinds: ps.schema.kinds})
}

// builtinExamples are the objects plans start from for the built-in
// primaries that need no Examples.
var builtinExamples = map[string]func() (scenarios.Kind, map[string]any){
	"configmaps": func() (scenarios.Kind, map[string]any) {
		return scenarios.Kind{Resource: "configmaps", APIVersion: "v1", Kind: "ConfigMap", Namespaced: true},
			map[string]any{"data": map[string]any{"n": "0"}}
	},
	"deployments": func() (scenarios.Kind, map[string]any) {
		labels := map[string]any{"app": "sample"}
		return scenarios.Kind{Resource: "deployments.apps", APIVersion: "apps/v1", Kind: "Deployment", Namespaced: true, ScaleReplicasPath: ".spec.replicas"},
			map[string]any{"spec": map[string]any{
				"replicas": 1,
				"selector": map[string]any{"matchLabels": labels},
				"template": map[string]any{
					"metadata": map[string]any{"labels": labels},
					"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx:1.27"}}},
				},
			}}
	},
}

// resolve finds each primary among crds (by plural, plural.group or kind)
// or the built-in resources, compiles its schema, and reads the examples.
func (sp *schemaPlans) resolve(crds CRDSet) error {
	if len(sp.primaries) == 0 {
		return errors.New("cachelabtest: Examples without Primary: name the primary resources (Primary(\"foos\"))")
	}
	examples, err := readExamples(sp.examples)
	if err != nil {
		return err
	}
	sp.kinds = nil
	used := make([]bool, len(examples))
	for _, name := range sp.primaries {
		k, err := primaryKind(crds, name)
		if err != nil {
			return err
		}
		for i, ex := range examples {
			u := unstructured.Unstructured{Object: ex.obj}
			if u.GetKind() == k.Kind && groupOf(u.GetAPIVersion()) == groupOf(k.APIVersion) {
				k.Examples = append(k.Examples, ex.obj)
				used[i] = true
			}
		}
		if len(k.Examples) == 0 && k.Schema == nil {
			mk, ok := builtinExamples[strings.SplitN(name, ".", 2)[0]]
			if !ok {
				return fmt.Errorf("cachelabtest: Primary(%q): a built-in kind without a schema needs Examples (objects to start from); without: %s", name, strings.Join(sortedNames(builtinExamples), ", "))
			}
			bk, ex := mk()
			k.ScaleReplicasPath = bk.ScaleReplicasPath
			k.Examples = []map[string]any{ex}
		}
		sp.kinds = append(sp.kinds, k)
	}
	for _, p := range sp.examples {
		found := false
		for i, ex := range examples {
			found = found || (ex.path == p && used[i])
		}
		if !found {
			return fmt.Errorf("cachelabtest: Examples: %s holds no object of a primary kind (%s)", p, strings.Join(sp.primaries, ", "))
		}
	}
	return nil
}

// primaryKind resolves one primary resource name.
func primaryKind(crds CRDSet, name string) (scenarios.Kind, error) {
	for _, ck := range crds.kinds {
		v := ck.versions[0]
		full := sim.ResourceName(v.GVR)
		if name != v.GVR.Resource && name != full && !strings.EqualFold(name, v.Kind) {
			continue
		}
		k := scenarios.Kind{Resource: full, APIVersion: v.GVR.GroupVersion().String(), Kind: v.Kind, Namespaced: v.Namespaced,
			Schema: v.OpenAPIV3Schema, ScaleReplicasPath: ck.scaleReplicas}
		if v.OpenAPIV3Schema != nil {
			s, err := store.CompileSchema(v.OpenAPIV3Schema)
			if err != nil {
				return k, fmt.Errorf("cachelabtest: Primary(%q): %w", name, err)
			}
			k.Validate = func(obj map[string]any) error {
				cp, err := copyJSON(obj)
				if err != nil {
					return err
				}
				s.Default(cp)
				if errs := s.Validate(cp, nil); len(errs) > 0 {
					return errs.ToAggregate()
				}
				return nil
			}
		}
		return k, nil
	}
	if gvr, kind, ok := builtinResource(name); ok {
		return scenarios.Kind{Resource: sim.ResourceName(gvr), APIVersion: gvr.GroupVersion().String(), Kind: kind, Namespaced: true}, nil
	}
	var known []string
	for _, ck := range crds.kinds {
		known = append(known, ck.versions[0].GVR.Resource)
	}
	return scenarios.Kind{}, fmt.Errorf("cachelabtest: Primary(%q): no such resource among the controller's CRDs (%s) or the built-in kinds the lab can draw (%s)",
		name, strings.Join(known, ", "), strings.Join(sortedNames(builtinExamples), ", "))
}

// builtinResource resolves a built-in resource the lab serves with a
// sample: "configmaps", "deployments" or "deployments.apps".
func builtinResource(name string) (schema.GroupVersionResource, string, bool) {
	switch name {
	case "configmaps":
		return schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "ConfigMap", true
	case "deployments", "deployments.apps":
		return schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "Deployment", true
	}
	return schema.GroupVersionResource{}, "", false
}

// example is one example object and the path it came from.
type example struct {
	path string
	obj  map[string]any
}

// readExamples reads every object of the example manifests.
func readExamples(paths []string) ([]example, error) {
	var out []example
	for _, p := range paths {
		files, err := manifestFiles(p)
		if err != nil {
			return nil, fmt.Errorf("cachelabtest: Examples: %w", err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("cachelabtest: Examples: %w", err)
			}
			dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
			for doc := 1; ; doc++ {
				var obj map[string]any
				if err := dec.Decode(&obj); err != nil {
					if errors.Is(err, io.EOF) {
						break
					}
					return nil, fmt.Errorf("cachelabtest: Examples: %s: document %d: %w", f, doc, err)
				}
				if obj != nil {
					out = append(out, example{path: p, obj: obj})
				}
			}
		}
	}
	return out, nil
}

func groupOf(apiVersion string) string {
	g, _, found := strings.Cut(apiVersion, "/")
	if !found {
		return ""
	}
	return g
}

func sortedNames[V any](m map[string]V) []string {
	out := slices.Collect(maps.Keys(m))
	slices.Sort(out)
	return out
}

// copyJSON copies a JSON-compatible map through JSON (numbers come back
// as int64 or float64, as the API server decodes them).
func copyJSON(m map[string]any) (map[string]any, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	err = utiljson.Unmarshal(b, &out)
	return out, err
}
