package http

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
)

// crdCodecs decode CustomResourceDefinitions sent in protobuf, as
// apiextensions' own clientset sends them (its default content type).
// The store keeps CRDs unstructured (store/crds.go).
var crdCodecs = func() runtimeserializer.CodecFactory {
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		panic(fmt.Sprintf("fakeapi/http: apiextensions v1 scheme: %v", err))
	}
	return runtimeserializer.NewCodecFactory(s)
}()

// decodeCRDProtobuf decodes a protobuf CustomResourceDefinition body into
// the unstructured object the store takes.
func decodeCRDProtobuf(body []byte, gvk schema.GroupVersionKind) (runtime.Object, error) {
	into := &apiextensionsv1.CustomResourceDefinition{}
	obj, got, err := crdCodecs.UniversalDeserializer().Decode(body, &gvk, into)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot decode the body as %s: %v", gvk.Kind, err))
	}
	if got == nil || *got != gvk {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version and kind in the data (%v) do not match the URL's (%s)", got, gvk))
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot decode the body as %s: %v", gvk.Kind, err))
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u, nil
}
