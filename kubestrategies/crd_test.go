package kubestrategies

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/cachelab/cachelab/fakeapi/store"
)

// badColumnCRD is a CRD the hand-written subset accepts and
// apiextensions-apiserver refuses: a printer column of an unknown type.
const badColumnCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.cachelab.dev}
spec:
  group: cachelab.dev
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns: [{name: Size, type: bogus, jsonPath: .spec.size}]
    schema:
      openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}
`

// With this package registered, a CRD created through the API is
// validated by apiextensions-apiserver's own ValidateCustomResourceDefinition.
func TestCRDsAreValidatedByApiextensions(t *testing.T) {
	create := func() error {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(badColumnCRD), &m); err != nil {
			t.Fatal(err)
		}
		_, _, err := store.New(store.Options{}).Create(store.CRDsResource, "", &unstructured.Unstructured{Object: m}, metav1.CreateOptions{})
		return err
	}
	err := create()
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "additionalPrinterColumns[0].type") {
		t.Errorf("create with a printer column of type bogus: %v; want 422 on its type", err)
	}
	Unregister()
	defer Register()
	t.Logf("with the hand-written subset: %v", create())
}
