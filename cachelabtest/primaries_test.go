package cachelabtest

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/fakeapi/store"
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/sim"
)

// fooSample is config/samples' Foo.
const fooSample = `apiVersion: example.cachelab.dev/v1
kind: Foo
metadata:
  name: sample
  namespace: prod
  resourceVersion: "7"
spec:
  deploymentName: sample
  replicas: 2
  tier: gold
status:
  availableReplicas: 2
`

// fooSchemaPlans resolves Primary("foos") (and Examples when given)
// against the Foo CRD.
func fooSchemaPlans(t *testing.T, examples bool) (Plans, *store.Schema) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"crd/foos.yaml": fooCRD, "samples/foo.yaml": fooSample})
	crds := CRDs(filepath.Join(dir, "crd"))
	opts := []RandomOption{Primary("foos")}
	if examples {
		opts = append(opts, Examples(filepath.Join(dir, "samples")))
	}
	ps := Random(opts...)
	if err := checkSetup(Controller{CRDs: crds}, []Plans{ps}); err != nil {
		t.Fatal(err)
	}
	s, err := store.CompileSchema(crds.kinds[0].versions[0].OpenAPIV3Schema)
	if err != nil {
		t.Fatal(err)
	}
	return ps, s
}

// validFoo checks obj against the Foo schema as the server would (defaults
// first), nil if valid.
func validFoo(s *store.Schema, obj map[string]any) error {
	b, _ := json.Marshal(obj)
	var cp map[string]any
	if err := utiljson.Unmarshal(b, &cp); err != nil {
		return err
	}
	s.Default(cp)
	if errs := s.Validate(cp, nil); len(errs) > 0 {
		return errs.ToAggregate()
	}
	return nil
}

// mergePatch applies a merge patch to obj (test side, by hand: nested
// maps merge, anything else replaces, null deletes).
func mergePatch(obj, p map[string]any) {
	for k, v := range p {
		pm, isMap := v.(map[string]any)
		om, objMap := obj[k].(map[string]any)
		switch {
		case v == nil:
			delete(obj, k)
		case isMap && objMap:
			mergePatch(om, pm)
		case isMap:
			nm := map[string]any{}
			mergePatch(nm, pm)
			obj[k] = nm
		default:
			obj[k] = v
		}
	}
}

// TestPrimaryPlansDrawFoosTheSchemaAccepts draws 300 plans over Foo with
// and without the sample, and checks every object created, and every
// object after each change the user patches into it, against the CRD's
// schema with apiextensions-apiserver's validation; and that the plans
// vary every field, both enum values, scale, and act on children.
func TestPrimaryPlansDrawFoosTheSchemaAccepts(t *testing.T) {
	for _, examples := range []bool{false, true} {
		ps, s := fooSchemaPlans(t, examples)
		// Judge the generator itself: no fallback to the example.
		ps.schema.kinds[0].Validate = nil
		gen := ps.planGen("foo-controller")
		seen := map[string]bool{}
		objects, changes := 0, 0
		for seed := range 300 {
			p := gen.Example(seed)
			cur := map[string]map[string]any{}
			check := func(what string, obj map[string]any) {
				if err := validFoo(s, obj); err != nil {
					t.Fatalf("examples %v, seed %d: %s is invalid: %v\n%v", examples, seed, what, err, obj)
				}
			}
			for _, raw := range p.Objects {
				var obj map[string]any
				_ = json.Unmarshal(raw, &obj)
				name := obj["metadata"].(map[string]any)["name"].(string)
				check("initial object "+name, obj)
				cur[name] = obj
				objects++
			}
			for _, st := range p.Steps {
				switch {
				case st.Op == "create":
					var obj map[string]any
					_ = json.Unmarshal(st.Object, &obj)
					md := obj["metadata"].(map[string]any)
					if md["namespace"] != "default" || md["resourceVersion"] != nil || obj["status"] != nil {
						t.Fatalf("seed %d: created object keeps the sample's namespace, resourceVersion or status: %v", seed, obj)
					}
					check("created "+md["name"].(string), obj)
					cur[md["name"].(string)] = obj
					objects++
				case st.Op == "patch" && st.Child != (sim.ChildRef{}):
					seen["child-patch"] = true
				case st.Op == "delete" && st.Child != (sim.ChildRef{}):
					seen["child-delete"] = true
				case st.Op == "patch" && st.Actor == "user" && cur[st.Name] != nil:
					var patch map[string]any
					_ = json.Unmarshal(st.Patch, &patch)
					if spec, ok := patch["spec"].(map[string]any); ok {
						for f, v := range spec {
							seen["spec."+f] = true
							if f == "tier" {
								seen[fmt.Sprint("tier=", v)] = true
							}
						}
						mergePatch(cur[st.Name], patch)
						check("after the change "+string(st.Patch), cur[st.Name])
						changes++
					}
				}
			}
		}
		for _, want := range []string{"spec.deploymentName", "spec.replicas", "spec.tier", "spec.ports", "tier=gold", "tier=silver", "child-patch", "child-delete"} {
			if !seen[want] {
				t.Errorf("examples %v: no plan of 300 has %s", examples, want)
			}
		}
		if objects < 100 || changes < 100 {
			t.Errorf("examples %v: %d objects and %d changes in 300 plans: want the plans to act on Foos", examples, objects, changes)
		}
	}
}

func TestPrimaryPlansAreTheSameForTheSameSeed(t *testing.T) {
	ps, _ := fooSchemaPlans(t, true)
	for seed := range 20 {
		a, _ := json.Marshal(ps.planGen("x").Example(seed))
		b, _ := json.Marshal(ps.planGen("x").Example(seed))
		if string(a) != string(b) {
			t.Fatalf("seed %d drew two plans:\n%s\n%s", seed, a, b)
		}
	}
}

func TestPrimaryAndExamplesSayWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"crd/foos.yaml": fooCRD, "other/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "bad/x.yaml": "a: [\n"})
	crds := CRDs(filepath.Join(dir, "crd"))
	for _, tc := range []struct {
		opts []RandomOption
		want string
	}{
		{[]RandomOption{Primary("widgets")}, `Primary("widgets"): no such resource among the controller's CRDs (foos)`},
		{[]RandomOption{Primary("foos"), Examples(filepath.Join(dir, "other"))}, "holds no object of a primary kind (foos)"},
		{[]RandomOption{Primary("foos"), Examples(filepath.Join(dir, "bad"))}, "x.yaml: document 1"},
		{[]RandomOption{Primary("foos"), Examples(filepath.Join(dir, "missing"))}, "no such file"},
		{[]RandomOption{Examples(filepath.Join(dir, "other"))}, "Examples without Primary"},
		{[]RandomOption{Primary("services")}, `Primary("services")`},
	} {
		err := checkSetup(Controller{CRDs: crds}, []Plans{Random(tc.opts...)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("checkSetup: %v; want an error saying %q", err, tc.want)
		}
	}
	for _, name := range []string{"foos", "foos.example.cachelab.dev", "Foo", "configmaps", "deployments"} {
		if err := checkSetup(Controller{CRDs: crds}, []Plans{Random(Primary(name))}); err != nil {
			t.Errorf("Primary(%q): %v", name, err)
		}
	}
}

// fooGVR is the Foo resource.
var fooGVR = schema.GroupVersionResource{Group: "example.cachelab.dev", Version: "v1", Resource: "foos"}

// fooController keeps, for each Foo, two ConfigMaps it owns ("<name>-a"
// and "<name>-b") holding its spec.tier. With panicOnGold it panics on a
// Foo of tier gold: a bug only plans that create Foos can find.
func fooController(panicOnGold bool) Controller {
	return Controller{
		Name: "foo-controller",
		Start: func(ctx context.Context, env *Env) error {
			inf := env.DynamicInformers.ForResource(fooGVR).Informer()
			sync := func(obj any) {
				u, ok := obj.(*unstructured.Unstructured)
				if !ok {
					return
				}
				tier, _, _ := unstructured.NestedString(u.Object, "spec", "tier")
				if panicOnGold && tier == "gold" {
					panic("gold Foo")
				}
				for _, suffix := range []string{"-a", "-b"} {
					cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: u.GetNamespace(), Name: u.GetName() + suffix,
						OwnerReferences: []metav1.OwnerReference{{APIVersion: "example.cachelab.dev/v1", Kind: "Foo", Name: u.GetName(), UID: u.GetUID()}}},
						Data: map[string]string{"tier": tier}}
					_, _ = env.Kube.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
				}
			}
			if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: sync, UpdateFunc: func(_, o any) { sync(o) }}); err != nil {
				return err
			}
			env.DynamicInformers.Start(ctx.Done())
			return nil
		},
	}
}

// TestRandomPlansOverAPrimaryFindABugConfigMapPlansCannot: a Foo
// controller that panics on a gold Foo passes every ConfigMap plan (they
// never create a Foo) and fails plans over Primary("foos").
func TestRandomPlansOverAPrimaryFindABugConfigMapPlansCannot(t *testing.T) {
	t.Chdir(t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"foos.yaml": fooCRD})
	c := fooController(true)
	c.CRDs = CRDs(dir)
	checks := flag.Lookup("rapid.checks")
	old := checks.Value.String()
	defer checks.Value.Set(old)
	_ = checks.Value.Set("10")
	// The seed is pinned: with a fresh seed per run, 10 plans missed the
	// gold Foo once in three runs of go test -race -count=3 (the draws are
	// random; the test is about what plans over Foo can reach at all).
	seed := flag.Lookup("rapid.seed")
	oldSeed := seed.Value.String()
	defer seed.Value.Set(oldSeed)
	_ = seed.Value.Set("1")
	if f := Catch(t, c, Random()); len(f) != 0 {
		t.Fatalf("a ConfigMap plan failed a controller of Foos: %s", f[0].Report)
	}
	f := Catch(t, c, Random(Primary("foos")))
	if len(f) == 0 {
		t.Fatalf("10 plans over Foo did not find the panic on a gold Foo")
	}
	if !strings.Contains(f[len(f)-1].Report, "panic") {
		t.Errorf("the failure does not name the panic:\n%s", f[len(f)-1].Report)
	}
}

// TestChildStepsPickWhatTheControllerOwns plays a plan whose steps name
// objects by their owner: the user deletes child 1 of Foo a (of
// ConfigMaps a-a and a-b, in name order: a-b), a competitor patches child
// 2 (wrapping around: a-a), and a delete of a child of a Foo that does not
// exist fails with a note.
func TestChildStepsPickWhatTheControllerOwns(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"foos.yaml": fooCRD})
	c := fooController(false)
	c.CRDs = CRDs(dir)
	if err := sim.ReplaceSubject(sim.SubjectInfo{Name: c.Name, CRDs: c.CRDs.served(), New: func() sim.Subject { return newSubject(c) }}); err != nil {
		t.Fatal(err)
	}
	s := func(d int) sim.Duration { return sim.Duration(time.Duration(d) * time.Second) }
	owner := func(name string, i int) sim.ChildRef { return sim.ChildRef{Owner: "foos", OwnerName: name, Index: i} }
	p := &sim.Plan{Version: sim.PlanVersion, Name: "children", Seed: 1, Subject: c.Name,
		Objects: []json.RawMessage{json.RawMessage(`{"apiVersion":"example.cachelab.dev/v1","kind":"Foo","metadata":{"name":"a","namespace":"default"},"spec":{"deploymentName":"a"}}`)},
		Steps: []sim.Step{
			{At: s(2), Actor: "user", Op: "delete", Namespace: "default", Child: owner("a", 1)},
			{At: s(3), Actor: "competitor", Op: "patch", Namespace: "default", Child: owner("a", 2), Patch: json.RawMessage(`{"metadata":{"labels":{"x":"y"}}}`)},
			{At: s(4), Actor: "user", Op: "delete", Namespace: "default", Resource: "configmaps", Child: owner("zz", 0)},
		},
		Deadline: sim.Duration(time.Minute), Quiet: sim.Duration(5 * time.Second)}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	tr, err := lab.RunPlan(t, p)
	if err != nil {
		t.Fatal(err)
	}
	var deleted, patched, missing bool
	for _, r := range tr.Records {
		switch {
		case r.Kind == sim.RecWrite && r.Actor == "user" && r.Verb == "delete" && r.Name == "a-b":
			deleted = true
		case r.Kind == sim.RecWrite && r.Actor == "competitor" && r.Name == "a-a":
			patched = true
		case r.Kind == sim.RecNote && strings.Contains(r.Detail, "child of foos.example.cachelab.dev default/zz: the owner does not exist"):
			missing = true
		}
	}
	if !deleted || !patched || !missing {
		t.Errorf("deleted a-b %v, competitor patched a-a %v, noted the missing owner %v: want all", deleted, patched, missing)
	}
	bad := p.Clone()
	bad.Steps = []sim.Step{{At: s(1), Actor: "user", Op: "delete", Name: "x", Child: owner("a", -1)}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "either name or child") {
		t.Errorf("Validate of a step with name and child: %v", err)
	}
}

// TestPrimaryPlansDrawBellerophonsTheSchemaAccepts draws 200 plans over
// the lab's own Bellerophon CRD (nested objects, conditions lists, CEL-free)
// with no example, and checks every created object with its schema.
func TestPrimaryPlansDrawBellerophonsTheSchemaAccepts(t *testing.T) {
	crds := CRDs("../subjects/bellerophon/config/crd.yaml")
	ps := Random(Primary("bellerophons"))
	if err := checkSetup(Controller{CRDs: crds}, []Plans{ps}); err != nil {
		t.Fatal(err)
	}
	s, err := store.CompileSchema(crds.kinds[0].versions[0].OpenAPIV3Schema)
	if err != nil {
		t.Fatal(err)
	}
	// Judge the generator itself: no fallback to a minimal object.
	ps.schema.kinds[0].Validate = nil
	gen := ps.planGen("x")
	created := 0
	for seed := range 200 {
		p := gen.Example(seed)
		objs := p.Objects
		for _, st := range p.Steps {
			if st.Op == "create" {
				objs = append(objs, st.Object)
			}
		}
		for _, raw := range objs {
			var obj map[string]any
			_ = json.Unmarshal(raw, &obj)
			if err := validFoo(s, obj); err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, raw)
			}
			created++
		}
	}
	if created < 100 {
		t.Errorf("%d objects in 200 plans", created)
	}
}
