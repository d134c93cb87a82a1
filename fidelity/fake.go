package fidelity

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/subjects/bellerophon/apis/lab/v1alpha1"
	"github.com/cachelab/cachelab/subjects/bellerophon/config"
)

// CRDManifest is the CustomResourceDefinition the corpus's custom
// resources use (Bellerophon's), applied as is to the real server.
var CRDManifest = config.CRDManifest

// NewFakeServer returns a fake API server serving what the corpus uses:
// the built-ins and Bellerophon's CRD, read from CRDManifest and validated
// by v1alpha1.ValidateObject (the fake has no OpenAPI schema engine; that
// function mirrors the schema, and a test in its package keeps the two in
// step).
func NewFakeServer(opts fakeapi.Options) (*fakeapi.Server, error) {
	srv := fakeapi.NewServer(opts)
	info, err := crdInfo(CRDManifest)
	if err != nil {
		return nil, err
	}
	info.Validate = func(u *unstructured.Unstructured) field.ErrorList { return v1alpha1.ValidateObject(u.Object) }
	if err := srv.RegisterCRD(info); err != nil {
		return nil, fmt.Errorf("fidelity: register the CRD: %w", err)
	}
	return srv, nil
}

// crdInfo reads the served resource of a one-version CRD manifest.
func crdInfo(manifest []byte) (fakeapi.ResourceInfo, error) {
	var crd map[string]any
	if err := yaml.Unmarshal(manifest, &crd); err != nil {
		return fakeapi.ResourceInfo{}, fmt.Errorf("fidelity: CRD manifest: %w", err)
	}
	u := unstructured.Unstructured{Object: crd}
	group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
	listKind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "listKind")
	plural, _, _ := unstructured.NestedString(u.Object, "spec", "names", "plural")
	scope, _, _ := unstructured.NestedString(u.Object, "spec", "scope")
	versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	shortNames, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "names", "shortNames")
	categories, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "names", "categories")
	if group == "" || kind == "" || plural == "" || len(versions) != 1 {
		return fakeapi.ResourceInfo{}, fmt.Errorf("fidelity: CRD manifest: want spec.group, spec.names.kind, spec.names.plural and one version")
	}
	v, _ := versions[0].(map[string]any)
	name, _, _ := unstructured.NestedString(v, "name")
	_, hasStatus, _ := unstructured.NestedMap(v, "subresources", "status")
	var prune func(*unstructured.Unstructured) []string
	if s, found, _ := unstructured.NestedMap(v, "schema", "openAPIV3Schema"); found {
		var err error
		if prune, err = Pruner(s); err != nil {
			return fakeapi.ResourceInfo{}, err
		}
	}
	return fakeapi.ResourceInfo{
		GVR:        schema.GroupVersionResource{Group: group, Version: name, Resource: plural},
		Kind:       kind,
		ListKind:   listKind,
		Namespaced: scope != "Cluster",
		HasStatus:  hasStatus,
		Prune:      prune,
		ShortNames: shortNames,
		Categories: categories,
	}, nil
}

// createNamespace creates ns through cfg (setup, not recorded).
func createNamespace(ctx context.Context, cfg *rest.Config, ns string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("fidelity: create namespace %s: %w", ns, err)
	}
	return nil
}
