package serve_test

import (
	"context"
	"path/filepath"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cachelab/cachelab/fakeapi/serve"
	"github.com/cachelab/cachelab/subjects/bellerophon/config"
)

// TestServeValidatesCustomResourcesAgainstTheirCRDSchema: `serve --crd`
// refuses, with kube-apiserver's 422 causes, every invalid Bellerophon the
// independent corpus of issue 18 created (201 each before), prunes
// unknown fields, and accepts a valid one.
func TestServeValidatesCustomResourcesAgainstTheirCRDSchema(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := serve.Serve(ctx, serve.Options{
		KubeconfigPath: filepath.Join(dir, "kubeconfig"),
		CRDFiles:       []string{write(t, dir, "crd.yaml", string(config.CRDManifest))},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", r.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	bph := dc.Resource(schema.GroupVersionResource{Group: "lab.cachelab.dev", Version: "v1alpha1", Resource: "bellerophons"}).Namespace("default")
	obj := func(name string, spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "lab.cachelab.dev/v1alpha1", "kind": "Bellerophon",
			"metadata": map[string]any{"name": name}, "spec": spec}}
	}
	for _, c := range []struct {
		name  string
		spec  map[string]any
		field string
		cause metav1.CauseType
	}{
		{"negative", map[string]any{"replicas": int64(-1), "version": "1"}, "spec.replicas", metav1.CauseTypeFieldValueInvalid},
		{"string", map[string]any{"replicas": "three", "version": "1"}, "spec.replicas", "FieldValueTypeInvalid"},
		{"missing", map[string]any{"version": "1"}, "spec.replicas", metav1.CauseTypeFieldValueRequired},
		{"empty-version", map[string]any{"replicas": int64(1), "version": ""}, "spec.version", metav1.CauseTypeFieldValueInvalid},
	} {
		_, err := bph.Create(ctx, obj(c.name, c.spec), metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Errorf("%s: err = %v, want 422 Invalid", c.name, err)
			continue
		}
		causes := err.(apierrors.APIStatus).Status().Details.Causes
		if len(causes) != 1 || causes[0].Field != c.field || causes[0].Type != c.cause {
			t.Errorf("%s: causes = %+v, want one %s on %s", c.name, causes, c.cause, c.field)
		}
	}
	ok, err := bph.Create(ctx, obj("ok", map[string]any{"replicas": int64(1), "version": "1", "unknown": "x"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("valid Bellerophon: %v", err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(ok.Object, "spec", "unknown"); found {
		t.Errorf("spec.unknown was kept, want it pruned: %v", ok.Object["spec"])
	}
}
