package kubestrategies

import (
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/util/managedfields"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/builder3"
	openapiutil "k8s.io/kube-openapi/pkg/util"

	"k8s.io/kubernetes/pkg/api/legacyscheme"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"

	"github.com/cachelab/cachelab/fakeapi/store"
)

// TypeConverter is kube-apiserver's type converter for server-side apply
// of the built-in kinds the fake serves, built as GenericAPIServer's
// getOpenAPIModels builds it: the generated OpenAPI definitions
// (k8s.io/kubernetes/pkg/generated/openapi) of each kind's Go type through
// builder3.BuildOpenAPIDefinitionsForResources with kube-apiserver's
// definition namer, then managedfields.NewTypeConverter. Built once, on
// first use (a few hundred milliseconds).
var TypeConverter = sync.OnceValues(func() (managedfields.TypeConverter, error) {
	cfg := genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, openapinamer.NewDefinitionNamer(legacyscheme.Scheme))
	var names []string
	for _, r := range store.New(store.Options{}).Resources() {
		gvk := r.GVR.GroupVersion().WithKind(r.Kind)
		if !clientgoscheme.Scheme.Recognizes(gvk) {
			continue // custom resources (CRDs) have their own schema
		}
		obj, err := clientgoscheme.Scheme.New(gvk)
		if err != nil {
			return nil, err
		}
		names = append(names, openapiutil.GetCanonicalTypeName(obj))
	}
	sort.Strings(names)
	defs, err := builder3.BuildOpenAPIDefinitionsForResources(cfg, names...)
	if err != nil {
		return nil, fmt.Errorf("kubestrategies: OpenAPI models: %w", err)
	}
	return managedfields.NewTypeConverter(defs, false)
})

// typeConverter is TypeConverter for store.RegisterTypeConverter: a
// failure to build it (a programming error this package's tests catch)
// falls back to a deduced converter, which the store's apply answers with
// atomic lists rather than a panic.
func typeConverter() managedfields.TypeConverter {
	tc, err := TypeConverter()
	if err != nil {
		return managedfields.NewDeducedTypeConverter()
	}
	return tc
}
