package scenarios

import "testing"

// Every schema plan gives the controller something to act on: an object
// at the start or a create. A plan that starts empty and creates nothing
// is a run that cannot find anything (about 1 in 13 of the 300 plans
// below before the generator added an object to such a plan), and its
// verdicts are all "nothing to judge".
func TestEverySchemaPlanGivesTheControllerAnObject(t *testing.T) {
	kind := Kind{Resource: "deployments.apps", APIVersion: "apps/v1", Kind: "Deployment", Namespaced: true,
		ScaleReplicasPath: ".spec.replicas",
		Examples: []map[string]any{{"spec": map[string]any{"replicas": 1,
			"selector": map[string]any{"matchLabels": map[string]any{"app": "x"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "x"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx"}}}}}}}}
	gen := SchemaPlanGen("s", SchemaGenOptions{Kinds: []Kind{kind}})
	empty, withObjects := 0, 0
	for seed := 1; seed <= 300; seed++ {
		p := gen.Example(seed)
		creates := 0
		for _, s := range p.Steps {
			if s.Op == "create" || s.Op == "apply" {
				creates++
			}
		}
		if len(p.Objects) == 0 && creates == 0 {
			empty++
		}
		if len(p.Objects) > 0 {
			withObjects++
		}
	}
	if empty > 0 {
		t.Errorf("%d of 300 schema plans start with no object and create none", empty)
	}
	if withObjects == 300 {
		t.Errorf("every plan starts with an object: the plans that create their objects are gone")
	}
}
