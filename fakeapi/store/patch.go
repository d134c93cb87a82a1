package store

import (
	"encoding/json"
	"fmt"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxJSONPatchOperations is kube-apiserver's limit on JSON patch operations.
const maxJSONPatchOperations = 10000

// Patch applies a JSON patch, JSON merge patch or (built-ins only)
// strategic merge patch to ns/name, then updates as Update does (an empty
// resourceVersion in the result means the current one; a stale one set by
// the patch gets 409 Conflict). Errors as kube-apiserver's patch handler:
// 400 BadRequest for a malformed patch, 422 for a JSON patch that does not
// apply or a result that does not decode or validate, 415
// UnsupportedMediaType for other patch types (and strategic merge on a
// custom resource), 404 if the object does not exist.
func (s *Store) Patch(gvr schema.GroupVersionResource, ns, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresource string) (runtime.Object, []Event, error) {
	if v := s.views[gvr]; v != nil {
		return v.patch(s, ns, name, pt, data, opts, subresource)
	}
	r, err := s.resource(gvr)
	if err != nil {
		return nil, nil, err
	}
	accepted := []string{string(types.JSONPatchType), string(types.MergePatchType)}
	if r.typed {
		accepted = append(accepted, string(types.StrategicMergePatchType))
	}
	accepted = append(accepted, string(types.ApplyYAMLPatchType), string(types.ApplyCBORPatchType))
	if !containsString(accepted, string(pt)) || pt == types.ApplyCBORPatchType {
		return nil, nil, unsupportedMediaType(accepted)
	}
	if err := checkOptions("PatchOptions", metav1validation.ValidatePatchOptions(&opts, pt)); err != nil {
		return nil, nil, err
	}
	if err := checkSubresource(r, subresource); err != nil {
		return nil, nil, err
	}
	s.manager = opts.FieldManager
	defer func() { s.manager = "" }()
	if pt == types.ApplyYAMLPatchType {
		return s.apply(r, requestNamespace(r, ns), name, data, opts, subresource)
	}
	ns = requestNamespace(r, ns)
	key := objectKey(ns, name)
	cur, ok := s.load(r, key)
	if !ok {
		return nil, nil, apierrors.NewNotFound(r.groupResource(), name)
	}
	if obj, ok := mergePatchFast(r, cur, pt, data, subresource); ok {
		return s.update(r, key, obj, cur, subresource, "patch", len(opts.DryRun) > 0) // name and namespace untouched
	}
	patched, err := patchJSON(cur, pt, data, r.newObject(s))
	if err != nil {
		return nil, nil, err
	}
	obj, err := s.decodePatched(r, patched, opts.FieldValidation == metav1.FieldValidationStrict)
	if err != nil {
		return nil, nil, err
	}
	m := mustAccessor(obj)
	// The patched object keeps the URL's identity, as the handler checks.
	if m.GetName() != name {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), name))
	}
	if r.Namespaced && m.GetNamespace() != ns {
		return nil, nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return s.update(r, key, obj, cur, subresource, "patch", len(opts.DryRun) > 0)
}

// decodePatched decodes a patched object's JSON into r's representation;
// a result that does not decode gets 422 as the patch handler gives it.
// Field names are case-sensitive, as kube-apiserver's decoder
// (sigs.k8s.io/json) reads them: a wrongly cased field ("Data" for
// "data") is an unknown field, dropped, or with strict (fieldValidation
// Strict) a 422 naming it; custom resources are pruned as their
// Resource.Prune says.
func (s *Store) decodePatched(r *resState, patched []byte, strict bool) (runtime.Object, error) {
	invalid := func(err error) error {
		return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), string(patched), err.Error())})
	}
	if r.typed {
		obj := r.newObject(s)
		if s.strictJSON == nil {
			s.strictJSON = kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, s.scheme, s.scheme, kjson.SerializerOptions{Strict: true})
		}
		if _, _, err := s.strictJSON.Decode(patched, &r.gvk, obj); err != nil && (strict || !runtime.IsStrictDecodingError(err)) {
			return nil, invalid(err)
		}
		obj.GetObjectKind().SetGroupVersionKind(r.gvk)
		return obj, nil
	}
	var content map[string]any
	if err := utiljson.Unmarshal(patched, &content); err != nil {
		return nil, invalid(err)
	}
	u := &unstructured.Unstructured{Object: content}
	if err := validUnstructuredMeta(u); err != nil {
		return nil, invalid(err)
	}
	if unknown := pruneUnknown(r, u); len(unknown) > 0 && strict {
		return nil, invalid(strictUnknownFields(unknown))
	}
	u.SetGroupVersionKind(r.gvk)
	return u, nil
}

// validUnstructuredMeta checks that metadata has the shape the accessor
// expects, so a patch cannot smuggle a non-object metadata in.
func validUnstructuredMeta(u *unstructured.Unstructured) error {
	md, ok := u.Object["metadata"]
	if !ok {
		return nil
	}
	if _, ok := md.(map[string]any); !ok {
		return fmt.Errorf("metadata must be an object, got %T", md)
	}
	var om metav1.ObjectMeta
	return runtime.DefaultUnstructuredConverter.FromUnstructured(md.(map[string]any), &om)
}

// interpretStrategicMergePatchError is the patch handler's mapping.
func interpretStrategicMergePatchError(err error) error {
	switch err {
	case mergepatch.ErrBadJSONDoc, mergepatch.ErrBadPatchFormatForPrimitiveList, mergepatch.ErrBadPatchFormatForRetainKeys, mergepatch.ErrBadPatchFormatForSetElementOrderList, mergepatch.ErrUnsupportedStrategicMergePatchFormat:
		return apierrors.NewBadRequest(err.Error())
	case mergepatch.ErrNoListOfLists, mergepatch.ErrPatchContentNotMatchRetainKeys:
		return unprocessablePatch(err)
	}
	// Other errors (a patch of the wrong shape for the type) are the
	// client's: 400 rather than the handler's 500.
	return apierrors.NewBadRequest(err.Error())
}

// unprocessablePatch is the patch handler's 422 Invalid for a patch that
// does not apply, with no details, as kube-apiserver answers it. Its
// message says only "the server rejected our request due to an error in
// our request"; the store adds the reason after it.
func unprocessablePatch(err error) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    422,
		Reason:  metav1.StatusReasonInvalid,
		Message: "the server rejected our request due to an error in our request: " + err.Error(),
		Details: &metav1.StatusDetails{},
	}}
}

// unsupportedMediaType is negotiation.NewUnsupportedMediaTypeError.
func unsupportedMediaType(accepted []string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    415,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %v", strings.Join(accepted, ", ")),
	}}
}

// containsString reports whether list holds s.
func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// patchJSON applies data, a JSON patch, a JSON merge patch or a strategic
// merge patch, to cur and returns the patched object's JSON, with
// kube-apiserver's patcher's errors (400 for a malformed patch, 413 past
// maxJSONPatchOperations, 422 for a JSON patch that does not apply). A
// strategic merge patch follows schema's patch strategies; with schema nil
// (a type that has none, as Scale) it is a merge patch. pt must be one of
// the three.
func patchJSON(cur runtime.Object, pt types.PatchType, data []byte, schema runtime.Object) ([]byte, error) {
	if pt == types.StrategicMergePatchType && schema != nil {
		var patchMap map[string]any
		if err := utiljson.Unmarshal(data, &patchMap); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		orig, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cur)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		out, err := strategicpatch.StrategicMergeMapPatch(orig, patchMap, schema)
		if err != nil {
			return nil, interpretStrategicMergePatchError(err)
		}
		patched, err := json.Marshal(out)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return patched, nil
	}
	curJSON, err := json.Marshal(cur)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if pt == types.JSONPatchType {
		p, err := jsonpatch.DecodePatch(data)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if len(p) > maxJSONPatchOperations {
			return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(p)))
		}
		patched, err := p.Apply(curJSON)
		if err != nil {
			return nil, unprocessablePatch(err)
		}
		return patched, nil
	}
	patched, err := jsonpatch.MergePatch(curJSON, data)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return patched, nil
}
