package fakeapi

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// schemaGVKEmpty: typed clients decode built-ins without apiVersion and
// kind (see asTypedClientSees).
var schemaGVKEmpty = schema.GroupVersionKind{}

// asTypedForScheme converts an object the server keeps unstructured (a
// resource registered with RegisterCRD) into its Go type when the
// server's scheme knows its kind (coordination.k8s.io/v1 Lease,
// policy/v1 PodDisruptionBudget...), as kube-apiserver serves every
// built-in kind typed; typed clients then get what they expect instead of
// panicking on an *unstructured.Unstructured. Other objects are returned
// as they are. A kind whose content does not fit its Go type is a 500
// naming both.
func (s *Server) asTypedForScheme(obj runtime.Object) (runtime.Object, error) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		gvk := o.GroupVersionKind()
		if !s.scheme.Recognizes(gvk) {
			return obj, nil
		}
		typed, err := s.scheme.New(gvk)
		if err != nil {
			return obj, nil
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, typed); err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("the stored %s %s does not fit its Go type %T: %w", gvk.Kind, o.GetName(), typed, err))
		}
		typed.GetObjectKind().SetGroupVersionKind(schemaGVKEmpty)
		return typed, nil
	case *unstructured.UnstructuredList:
		gvk := o.GroupVersionKind()
		if !s.scheme.Recognizes(gvk) {
			return obj, nil
		}
		typed, err := s.scheme.New(gvk)
		if err != nil {
			return obj, nil
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.UnstructuredContent(), typed); err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("the stored %s does not fit its Go type %T: %w", gvk.Kind, typed, err))
		}
		items := make([]runtime.Object, 0, len(o.Items))
		for i := range o.Items {
			it, err := s.asTypedForScheme(&o.Items[i])
			if err != nil {
				return nil, err
			}
			items = append(items, it)
		}
		if err := meta.SetList(typed, items); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		typed.GetObjectKind().SetGroupVersionKind(schemaGVKEmpty)
		return typed, nil
	}
	return obj, nil
}

// typedWatchConvert returns the conversion of a typed watch's objects:
// convert, then, for a resource served unstructured whose kind the
// scheme knows, asTypedForScheme (a Status of an ERROR event stays).
func (s *Server) typedWatchConvert(gvr schema.GroupVersionResource, convert func(runtime.Object) runtime.Object) func(runtime.Object) runtime.Object {
	if !s.servedUnstructuredAsTyped(gvr) {
		return convert
	}
	return func(obj runtime.Object) runtime.Object {
		out := convert(obj)
		if typed, err := s.asTypedForScheme(out); err == nil {
			return typed
		}
		return out
	}
}

// servedUnstructuredAsTyped reports whether gvr's objects are kept
// unstructured (RegisterCRD) but handed to typed clients as their Go type
// (typedWatchConvert): its kind is one the scheme knows. (For built-ins,
// kept typed, asTypedForScheme changes nothing.) Called with s.mu held.
func (s *Server) servedUnstructuredAsTyped(gvr schema.GroupVersionResource) bool {
	r, ok := s.st.Resource(gvr)
	return ok && !s.st.Typed(gvr) && s.scheme.Recognizes(gvr.GroupVersion().WithKind(r.Kind))
}
