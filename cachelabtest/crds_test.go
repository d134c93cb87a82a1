package cachelabtest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/sim"
)

// fooCRD is a kubebuilder-style CRD manifest: Foo (namespaced, v1 the
// storage version, v1alpha1 served too), with a status and a scale
// subresource, defaults, an enum, bounds and a pattern.
const fooCRD = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.example.cachelab.dev
spec:
  group: example.cachelab.dev
  names:
    kind: Foo
    listKind: FooList
    plural: foos
    singular: foo
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.availableReplicas
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            required: [deploymentName]
            properties:
              deploymentName:
                type: string
                pattern: '^[a-z][a-z0-9-]{0,20}$'
              replicas:
                type: integer
                format: int32
                minimum: 0
                maximum: 5
                default: 1
              tier:
                type: string
                enum: [gold, silver]
              ports:
                type: array
                maxItems: 3
                items:
                  type: object
                  required: [port]
                  properties:
                    name: {type: string, maxLength: 10}
                    port: {type: integer, minimum: 1, maximum: 65535}
          status:
            type: object
            properties:
              availableReplicas: {type: integer, format: int32}
`

// barCRD is a cluster-scoped CRD with no subresource, in JSON.
const barCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"bars.example.cachelab.dev"},
 "spec":{"group":"example.cachelab.dev","scope":"Cluster",
  "names":{"kind":"Bar","plural":"bars"},
  "versions":[{"name":"v1","served":true,"storage":true,
   "schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"size":{"type":"string"}}}}}}}]}}`

// writeFiles writes name -> content under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCRDsReadsAKubebuilderDirectoryAsEnvtestDoes(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		// A multi-document file: a Namespace (skipped), the CRD.
		"config/crd/bases/example.cachelab.dev_foos.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n" + fooCRD,
		"config/crd/bases/example.cachelab.dev_bars.json": barCRD,
		"config/crd/bases/README.md":                      "not a manifest",
		"config/crd/bases/sub/ignored.yaml":               "apiVersion: v1\nkind: ConfigMap\n",
	})
	set := CRDs(filepath.Join(dir, "config/crd/bases"))
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range set.served() {
		got = append(got, c.GVR.String()+" "+c.Kind)
	}
	want := []string{
		"example.cachelab.dev/v1, Resource=bars Bar",
		"example.cachelab.dev/v1, Resource=foos Foo",
		"example.cachelab.dev/v1alpha1, Resource=foos Foo",
	}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("served %q, want %q (files in name order, the storage version first)", got, want)
	}
	foo := set.kinds[1]
	if foo.scaleReplicas != ".spec.replicas" || !foo.versions[0].HasStatus || !foo.versions[0].Namespaced || foo.versions[0].OpenAPIV3Schema == nil {
		t.Errorf("Foo v1: scale %q, status %v, namespaced %v, schema %v: want the manifest's", foo.scaleReplicas,
			foo.versions[0].HasStatus, foo.versions[0].Namespaced, foo.versions[0].OpenAPIV3Schema != nil)
	}
	if bar := set.kinds[0].versions[0]; bar.Namespaced || bar.HasStatus || bar.ListKind != "BarList" {
		t.Errorf("Bar: %+v, want cluster-scoped, no status, ListKind BarList", bar)
	}
}

func TestCRDsSaysWhatIsWrongWithABadManifest(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"beta.yaml":      strings.Replace(fooCRD, "apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1", 1),
		"broken.yaml":    fooCRD + "---\nkind: [unclosed\n",
		"nonstruct.yaml": strings.Replace(fooCRD, "deploymentName:\n                type: string", "deploymentName:\n                description: no type", 1),
		"nogroup.json":   strings.Replace(barCRD, `"group":"example.cachelab.dev",`, "", 1),
		"empty/x.yaml":   "apiVersion: v1\nkind: ConfigMap\n",
		"twice/a.yaml":   fooCRD,
		"twice/b.yaml":   fooCRD,
	})
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"missing", []string{"missing", "no such file"}},
		{"beta.yaml", []string{"beta.yaml: document 1 (CRD foos.example.cachelab.dev)", "v1beta1"}},
		{"broken.yaml", []string{"broken.yaml: document 2"}},
		{"nonstruct.yaml", []string{"nonstruct.yaml", "version v1", "not structural"}},
		{"nogroup.json", []string{"nogroup.json", "spec.group"}},
		{"empty", []string{"empty holds no CustomResourceDefinition"}},
		{"twice", []string{"defined twice", "a.yaml", "b.yaml"}},
	} {
		err := CRDs(filepath.Join(dir, tc.path)).Err()
		if err == nil {
			t.Errorf("CRDs(%s): no error", tc.path)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("CRDs(%s): %v; want it to say %q", tc.path, err, w)
			}
		}
	}
	if err := CRDs().Err(); err == nil {
		t.Errorf("CRDs(): no error for no path")
	}
}

// Foo and FooList are a generated-style Go type of the Foo CRD, with the
// DeepCopy deepcopy-gen writes.
type Foo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              FooSpec   `json:"spec"`
	Status            FooStatus `json:"status,omitempty"`
}

// FooSpec is Foo's spec.
type FooSpec struct {
	DeploymentName string `json:"deploymentName"`
	Replicas       *int32 `json:"replicas,omitempty"`
	Tier           string `json:"tier,omitempty"`
}

// FooStatus is Foo's status.
type FooStatus struct {
	AvailableReplicas int32 `json:"availableReplicas"`
}

// FooList is a list of Foos.
type FooList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Foo `json:"items"`
}

func (f *Foo) DeepCopyObject() runtime.Object {
	out := *f
	f.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if f.Spec.Replicas != nil {
		r := *f.Spec.Replicas
		out.Spec.Replicas = &r
	}
	return &out
}

func (l *FooList) DeepCopyObject() runtime.Object {
	out := *l
	out.Items = make([]Foo, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*Foo)
	}
	return &out
}

var fooGV = schema.GroupVersion{Group: "example.cachelab.dev", Version: "v1"}

// fooClient is what client-gen generates for Foo: a gentype client over a
// REST client for the group, built from a rest.Config.
func fooClient(cfg *rest.Config, ns string) (*gentype.ClientWithList[*Foo, *FooList], error) {
	sch := runtime.NewScheme()
	sch.AddKnownTypes(fooGV, &Foo{}, &FooList{})
	metav1.AddToGroupVersion(sch, fooGV)
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &fooGV
	c.APIPath = "/apis"
	c.NegotiatedSerializer = serializer.NewCodecFactory(sch).WithoutConversion()
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return gentype.NewClientWithList[*Foo, *FooList]("foos", rc, runtime.NewParameterCodec(sch), ns,
		func() *Foo { return &Foo{} }, func() *FooList { return &FooList{} }), nil
}

// TestCRDsAreServedToGeneratedClientsAndInformers puts a controller
// written against a generated-style typed client (gentype, as client-gen
// emits) under the lab with CRDs(dir): its informer lists and watches Foos
// through env.RESTConfig, the server defaults and validates them by the
// manifest's schema, the controller writes their status through the
// status subresource, and a helper actor from Env.Client writes as
// itself.
func TestCRDsAreServedToGeneratedClientsAndInformers(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"foos.yaml": fooCRD})
	c := Controller{
		Name: "foo-controller",
		CRDs: CRDs(dir),
		Start: func(ctx context.Context, env *Env) error {
			foos, err := fooClient(env.RESTConfig, "")
			if err != nil {
				return err
			}
			inf := RecordInformer(env, "foos.example.cachelab.dev", cache.NewSharedIndexInformer(&cache.ListWatch{
				ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
					return foos.List(ctx, o)
				},
				WatchFuncWithContext: foos.Watch,
			}, &Foo{}, 0, cache.Indexers{}))
			helper, err := env.Client("stand-in")
			if err != nil {
				return err
			}
			if _, err := env.Client(env.Name); err == nil {
				return apierrors.NewBadRequest("Env.Client accepted the controller's own name")
			}
			_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
				foo := obj.(*Foo).DeepCopy()
				go func() {
					foo.Status.AvailableReplicas = *foo.Spec.Replicas
					fc, _ := fooClient(env.RESTConfig, foo.Namespace)
					_, _ = fc.UpdateStatus(ctx, foo, metav1.UpdateOptions{})
					cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: foo.Namespace, Name: foo.Name + "-seen"}}
					_, _ = helper.Kube.CoreV1().ConfigMaps(foo.Namespace).Create(ctx, cm, metav1.CreateOptions{})
				}()
			}})
			if err != nil {
				return err
			}
			go inf.RunWithContext(ctx)
			return nil
		},
	}
	if err := sim.ReplaceSubject(sim.SubjectInfo{Name: c.Name, CRDs: c.CRDs.served(), New: func() sim.Subject { return newSubject(c) }}); err != nil {
		t.Fatal(err)
	}
	foo := func(name, spec string) json.RawMessage {
		return json.RawMessage(`{"apiVersion":"example.cachelab.dev/v1","kind":"Foo","metadata":{"name":"` + name + `","namespace":"default"},"spec":` + spec + `}`)
	}
	p := &sim.Plan{Version: sim.PlanVersion, Name: "crds", Seed: 1, Subject: c.Name,
		Steps: []sim.Step{
			{At: sim.Duration(time.Second), Actor: "user", Op: "create", Object: foo("a", `{"deploymentName":"a"}`)},
			{At: sim.Duration(time.Second), Actor: "user", Op: "create", Object: foo("bad", `{"deploymentName":"a","replicas":9}`)},
		},
		Deadline: sim.Duration(time.Minute), Quiet: sim.Duration(5 * time.Second)}
	tr, err := lab.RunPlan(t, p)
	if err != nil {
		t.Fatal(err)
	}
	var last json.RawMessage
	invalid, handled, helperWrote := false, false, false
	for _, r := range tr.Records {
		switch {
		case r.Kind == sim.RecNote && strings.Contains(r.Detail, "spec.replicas") && strings.Contains(r.Detail, "less than or equal to 5"):
			invalid = true
		case r.Kind == sim.RecHandler && r.Name == "a" && r.Actor == "foo-controller":
			handled = true
		case r.Kind == sim.RecWrite && r.Actor == "stand-in" && r.Name == "a-seen":
			helperWrote = true
		case r.Kind == sim.RecWrite && r.Name == "a" && strings.HasPrefix(r.Resource, "foos"):
			last = r.Object
		}
	}
	if !invalid {
		t.Errorf("the Foo with replicas 9 was not refused by the schema's maximum")
	}
	if !handled {
		t.Errorf("the typed informer's handler was not recorded for Foo a")
	}
	if !helperWrote {
		t.Errorf("no write by the helper client \"stand-in\" in the trace")
	}
	if last == nil {
		t.Fatalf("no write of Foo a in the trace")
	}
	var obj Foo
	if err := json.Unmarshal(last, &obj); err != nil {
		t.Fatal(err)
	}
	if obj.Spec.Replicas == nil || *obj.Spec.Replicas != 1 || obj.Status.AvailableReplicas != 1 {
		t.Errorf("Foo a: spec.replicas %v, status.availableReplicas %d: want the schema's default 1, written back through the status subresource", obj.Spec.Replicas, obj.Status.AvailableReplicas)
	}
}

// DeepCopy returns a copy of f.
func (f *Foo) DeepCopy() *Foo { return f.DeepCopyObject().(*Foo) }
