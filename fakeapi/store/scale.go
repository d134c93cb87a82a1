package store

import (
	"encoding/json"
	"fmt"
	"reflect"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	return ok && r.scale
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
	if !r.scale {
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
	if sc.Spec.Replicas < 0 {
		return nil, nil, apierrors.NewInvalid(schema.GroupKind{Group: "autoscaling", Kind: "Scale"}, sc.Name,
			field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), sc.Spec.Replicas, "must be greater than or equal to 0")})
	}
	m := mustAccessor(cur)
	if sc.ResourceVersion != "" && sc.ResourceVersion != m.GetResourceVersion() {
		return nil, nil, apierrors.NewConflict(r.groupResource(), sc.Name, fmt.Errorf("%s", optimisticLockErrorMsg))
	}
	o := cur.DeepCopyObject()
	n := sc.Spec.Replicas
	replicasField(o).Set(reflect.ValueOf(&n))
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
	res, err := scaleOf(out)
	return res, events, err
}

// PatchScale applies a JSON merge or JSON patch to the Scale of ns/name
// and writes it as UpdateScale does.
func (s *Store) PatchScale(gvr schema.GroupVersionResource, ns, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions) (*autoscalingv1.Scale, []Event, error) {
	cur, err := s.GetScale(gvr, ns, name)
	if err != nil {
		return nil, nil, err
	}
	curJSON, err := json.Marshal(cur)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	var patched []byte
	switch pt {
	case types.MergePatchType, types.StrategicMergePatchType:
		// Scale has no patch strategies: a strategic merge is a merge.
		if patched, err = jsonpatch.MergePatch(curJSON, data); err != nil {
			return nil, nil, apierrors.NewBadRequest(err.Error())
		}
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(data)
		if err != nil {
			return nil, nil, apierrors.NewBadRequest(err.Error())
		}
		if patched, err = p.Apply(curJSON); err != nil {
			return nil, nil, unprocessablePatch(err)
		}
	default:
		return nil, nil, unsupportedMediaType([]string{string(types.JSONPatchType), string(types.MergePatchType), string(types.StrategicMergePatchType)})
	}
	var sc autoscalingv1.Scale
	if err := json.Unmarshal(patched, &sc); err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	sc.Name = name
	return s.UpdateScale(gvr, ns, &sc, metav1.UpdateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager})
}
