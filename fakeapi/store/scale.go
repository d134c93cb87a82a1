package store

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// HasScale reports whether gvr has a scale subresource (apps/v1
// Deployments, ReplicaSets and StatefulSets, v1 ReplicationControllers).
func (s *Store) HasScale(gvr schema.GroupVersionResource) bool {
	r, ok := s.res[gvr]
	return ok && (r.scale || r.Scale != nil)
}

// ReturnsDeletedObject reports whether a delete of gvr answers the deleted
// object rather than a Status (the registry's ReturnDeletedObject:
// serviceaccounts).
func (s *Store) ReturnsDeletedObject(gvr schema.GroupVersionResource) bool {
	r, ok := s.res[gvr]
	return ok && r.returnDeleted
}

// scaleResource looks up a resource with a scale subresource (404 for
// others, as kube-apiserver has no route for them).
func (s *Store) scaleResource(gvr schema.GroupVersionResource) (*resState, error) {
	r, err := s.resource(gvr)
	if err != nil {
		return nil, err
	}
	if !r.scale && r.Scale == nil {
		return nil, checkSubresource(r, "scale")
	}
	return r, nil
}

// replicasField is the Spec.Replicas (*int32) of a workload object.
func replicasField(obj runtime.Object) reflect.Value {
	return reflect.ValueOf(obj).Elem().FieldByName("Spec").FieldByName("Replicas")
}

// scaleOf is the registry's scaleFromDeployment (and its ReplicaSet and
// StatefulSet twins): an autoscaling/v1 Scale with the object's metadata,
// spec.replicas, status.replicas and the selector as a string.
func scaleOf(obj runtime.Object) (*autoscalingv1.Scale, error) {
	m := mustAccessor(obj)
	sc := &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{Kind: "Scale", APIVersion: "autoscaling/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
			ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp()},
	}
	if p, ok := replicasField(obj).Interface().(*int32); ok && p != nil {
		sc.Spec.Replicas = *p
	}
	st := reflect.ValueOf(obj).Elem().FieldByName("Status")
	sc.Status.Replicas = int32(st.FieldByName("Replicas").Int())
	switch sel := reflect.ValueOf(obj).Elem().FieldByName("Spec").FieldByName("Selector").Interface().(type) {
	case *metav1.LabelSelector:
		if sel != nil {
			ls, err := metav1.LabelSelectorAsSelector(sel)
			if err != nil {
				return nil, apierrors.NewInternalError(fmt.Errorf("invalid label selector: %w", err))
			}
			sc.Status.Selector = ls.String()
		}
	case map[string]string: // ReplicationController: scaleFromRC
		sc.Status.Selector = labels.SelectorFromSet(sel).String()
	}
	return sc, nil
}

// GetScale returns the Scale of ns/name.
func (s *Store) GetScale(gvr schema.GroupVersionResource, ns, name string) (*autoscalingv1.Scale, error) {
	r, err := s.scaleResource(gvr)
	if err != nil {
		return nil, err
	}
	cur, ok := s.load(r, objectKey(requestNamespace(r, ns), name))
	if !ok {
		return nil, apierrors.NewNotFound(r.groupResource(), name)
	}
	if u, ok := cur.(*unstructured.Unstructured); ok && r.Scale != nil {
		sc, found, err := scaleOfCustomResource(u, r.Scale)
		if err == nil && !found {
			err = apierrors.NewInternalError(fmt.Errorf("the spec replicas field %q does not exist", r.Scale.SpecReplicasPath))
		}
		return sc, err
	}
	return scaleOf(cur)
}

// UpdateScale sets spec.replicas of ns/name from sc, as the scale
// subresource's update does: sc's resourceVersion, if set, must be the
// object's (409 Conflict), replicas must not be negative (422 on the
// Scale), and the object is written as an update (generation bumps). It
// answers the new Scale.
func (s *Store) UpdateScale(gvr schema.GroupVersionResource, ns string, sc *autoscalingv1.Scale, opts metav1.UpdateOptions) (*autoscalingv1.Scale, []Event, error) {
	r, err := s.scaleResource(gvr)
	if err != nil {
		return nil, nil, err
	}
	if err := checkOptions("UpdateOptions", metav1validation.ValidateUpdateOptions(&opts)); err != nil {
		return nil, nil, err
	}
	if sc == nil {
		return nil, nil, apierrors.NewBadRequest("no Scale object given")
	}
	key := objectKey(requestNamespace(r, ns), sc.Name)
	cur, ok := s.load(r, key)
	if !ok {
		return nil, nil, apierrors.NewNotFound(r.groupResource(), sc.Name)
	}
	if sc.Spec.Replicas < 0 && r.Scale == nil {
		// A custom resource's replicas are validated with the object
		// (validateScalePaths and its schema), as apiextensions does.
		return nil, nil, apierrors.NewInvalid(schema.GroupKind{Group: "autoscaling", Kind: "Scale"}, sc.Name,
			field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), sc.Spec.Replicas, "must be greater than or equal to 0")})
	}
	m := mustAccessor(cur)
	if sc.ResourceVersion != "" && sc.ResourceVersion != m.GetResourceVersion() {
		return nil, nil, apierrors.NewConflict(r.groupResource(), sc.Name, fmt.Errorf("%s", optimisticLockErrorMsg))
	}
	o := cur.DeepCopyObject()
	n := sc.Spec.Replicas
	if u, ok := o.(*unstructured.Unstructured); ok && r.Scale != nil {
		if err := unstructured.SetNestedField(u.Object, int64(n), splitReplicasPath(r.Scale.SpecReplicasPath)...); err != nil {
			return nil, nil, apierrors.NewBadRequest(err.Error())
		}
	} else {
		replicasField(o).Set(reflect.ValueOf(&n))
	}
	s.manager, s.trackSub = opts.FieldManager, "scale"
	defer func() { s.manager, s.trackSub = "", "" }()
	out, events, err := s.update(r, key, o, cur, "", "update", len(opts.DryRun) > 0)
	if err != nil {
		return nil, nil, err
	}
	for i := range events {
		if events[i].Verb == "update" && events[i].Subresource == "" {
			events[i].Subresource = "scale"
		}
	}
	if u, ok := out.(*unstructured.Unstructured); ok && r.Scale != nil {
		res, _, err := scaleOfCustomResource(u, r.Scale)
		if err != nil {
			return nil, nil, apierrors.NewBadRequest(err.Error())
		}
		return res, events, nil
	}
	res, err := scaleOf(out)
	return res, events, err
}

// splitReplicasPath splits a scale subresource's JSON path (".spec.replicas")
// into its fields, ignoring the leading period.
func splitReplicasPath(p string) []string {
	return strings.Split(strings.TrimPrefix(p, "."), ".")
}

// scaleOfCustomResource is apiextensions-apiserver's
// scaleFromCustomResource: the Scale of a custom resource from its CRD's
// scale paths (a missing replicas field reads 0; found says whether the
// spec's was there).
func scaleOfCustomResource(u *unstructured.Unstructured, sp *ScaleSubresource) (*autoscalingv1.Scale, bool, error) {
	spec, found, err := unstructured.NestedInt64(u.Object, splitReplicasPath(sp.SpecReplicasPath)...)
	if err != nil {
		return nil, false, apierrors.NewInternalError(err)
	}
	status, _, err := unstructured.NestedInt64(u.Object, splitReplicasPath(sp.StatusReplicasPath)...)
	if err != nil {
		return nil, false, apierrors.NewInternalError(err)
	}
	var selector string
	if sp.LabelSelectorPath != "" {
		if selector, _, err = unstructured.NestedString(u.Object, splitReplicasPath(sp.LabelSelectorPath)...); err != nil {
			return nil, false, apierrors.NewInternalError(err)
		}
	}
	return &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{Kind: "Scale", APIVersion: "autoscaling/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
			ResourceVersion: u.GetResourceVersion(), CreationTimestamp: u.GetCreationTimestamp()},
		Spec:   autoscalingv1.ScaleSpec{Replicas: int32(spec)},
		Status: autoscalingv1.ScaleStatus{Replicas: int32(status), Selector: selector},
	}, found, nil
}

// validateScalePaths is apiextensions' ValidateScaleSpec and
// ValidateScaleStatus: the replicas at a scale subresource's paths are
// integers from 0 to MaxInt32, the selector a string.
func validateScalePaths(sp *ScaleSubresource, u *unstructured.Unstructured) field.ErrorList {
	if sp == nil {
		return nil
	}
	var errs field.ErrorList
	for _, p := range []string{sp.SpecReplicasPath, sp.StatusReplicasPath} {
		n, _, err := unstructured.NestedInt64(u.Object, splitReplicasPath(p)...)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(field.NewPath(p), n, err.Error()))
		case n < 0:
			errs = append(errs, field.Invalid(field.NewPath(p), n, "should be a non-negative integer"))
		case n > math.MaxInt32:
			errs = append(errs, field.Invalid(field.NewPath(p), n, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32)))
		}
	}
	if p := sp.LabelSelectorPath; p != "" {
		if sel, _, err := unstructured.NestedString(u.Object, splitReplicasPath(p)...); err != nil {
			errs = append(errs, field.Invalid(field.NewPath(p), sel, err.Error()))
		}
	}
	return errs
}

// PatchScale applies a JSON merge or JSON patch to the Scale of ns/name
// and writes it as UpdateScale does.
func (s *Store) PatchScale(gvr schema.GroupVersionResource, ns, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions) (*autoscalingv1.Scale, []Event, error) {
	cur, err := s.GetScale(gvr, ns, name)
	if err != nil {
		return nil, nil, err
	}
	if pt != types.MergePatchType && pt != types.StrategicMergePatchType && pt != types.JSONPatchType {
		return nil, nil, unsupportedMediaType([]string{string(types.JSONPatchType), string(types.MergePatchType), string(types.StrategicMergePatchType)})
	}
	// Scale has no patch strategies: a strategic merge is a merge.
	patched, err := patchJSON(cur, pt, data, nil)
	if err != nil {
		return nil, nil, err
	}
	var sc autoscalingv1.Scale
	if err := json.Unmarshal(patched, &sc); err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	sc.Name = name
	return s.UpdateScale(gvr, ns, &sc, metav1.UpdateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager})
}
