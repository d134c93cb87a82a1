package store

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"sync"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// Converter converts a built-in object between two served versions of its
// kind, as kube-apiserver's scheme does (through the internal version).
// in and out are versioned Go types (*autoscalingv2.HorizontalPodAutoscaler
// and *autoscalingv1.HorizontalPodAutoscaler); in must not be modified
// nor retained by out. A Converter must be safe for concurrent use (watch
// filters call it outside the store).
type Converter interface {
	Convert(in, out runtime.Object) error
}

// converters are the registered Converters by GroupKind.
var converters = struct {
	sync.RWMutex
	m map[schema.GroupKind]Converter
}{m: map[schema.GroupKind]Converter{}}

// RegisterConverter makes every store created afterwards convert gk's
// objects between its served versions with c instead of the lab's
// hand-written conversion (kubestrategies registers kube-apiserver's own);
// nil removes the registration. Safe for concurrent use.
func RegisterConverter(gk schema.GroupKind, c Converter) {
	converters.Lock()
	defer converters.Unlock()
	if c == nil {
		delete(converters.m, gk)
		return
	}
	converters.m[gk] = c
}

// LabConverter returns the lab's own Converter for gk (written out from
// kube-apiserver's conversion functions), the one stores use when none is
// registered; ok is false for a kind the lab serves in one version only.
func LabConverter(gk schema.GroupKind) (c Converter, ok bool) {
	if gk == (schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}) {
		return hpaConverter{}, true
	}
	return nil, false
}

// registeredConverter is the Converter registered for gk, else def.
func registeredConverter(gk schema.GroupKind, def Converter) Converter {
	converters.RLock()
	defer converters.RUnlock()
	if c, ok := converters.m[gk]; ok {
		return c
	}
	return def
}

// view is a resource served from another resource's storage through a
// conversion, as kube-apiserver serves one storage in several versions
// (HorizontalPodAutoscalers as autoscaling/v2, stored, and autoscaling/v1).
// Requests of the view are converted to the storage version, served by it
// (its strategy, validation, MVCC, events) and answered converted back;
// watches of the view see the storage resource's events, converted.
type view struct {
	Resource
	gvk     schema.GroupVersionKind
	storage *resState
	conv    Converter
	// newObj and newList make empty objects of the view's Go types.
	newObj  func() runtime.Object
	newList func() runtime.Object
	// defaults are the view version's defaulting functions, applied to a
	// body before it is converted (autoscaling/v1's minReplicas: 1).
	defaults func(runtime.Object)
}

// addViews serves the built-in versions that share another's storage.
func (s *Store) addViews() {
	s.views = map[schema.GroupVersionResource]*view{}
	v2 := s.res[autoscalingv2.SchemeGroupVersion.WithResource("horizontalpodautoscalers")]
	gvk := autoscalingv1.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler")
	if v2 == nil || !s.scheme.Recognizes(gvk) {
		return
	}
	r := v2.Resource
	r.GVR = autoscalingv1.SchemeGroupVersion.WithResource("horizontalpodautoscalers")
	s.views[r.GVR] = &view{
		Resource: r, gvk: gvk, storage: v2,
		conv:    registeredConverter(gvk.GroupKind(), hpaConverter{}),
		newObj:  func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscaler{} },
		newList: func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscalerList{} },
		defaults: func(obj runtime.Object) {
			if h := obj.(*autoscalingv1.HorizontalPodAutoscaler); h.Spec.MinReplicas == nil {
				one := int32(1)
				h.Spec.MinReplicas = &one
			}
		},
	}
}

// toView converts a stored object (nil stays nil) to the view's version.
func (v *view) toView(obj runtime.Object) (runtime.Object, error) {
	if obj == nil {
		return nil, nil
	}
	out := v.newObj()
	if err := v.conv.Convert(obj, out); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("converting %s to %s: %w", v.storage.gvk, v.gvk, err))
	}
	out.GetObjectKind().SetGroupVersionKind(v.gvk)
	return out, nil
}

// fromView defaults a body of the view's version and converts it to the
// storage version. A body of another Go type is a 400.
func (v *view) fromView(s *Store, obj runtime.Object) (runtime.Object, error) {
	if reflect.TypeOf(obj) != reflect.TypeOf(v.newObj()) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%s: the body is a %T, want %T", v.GVR, obj, v.newObj()))
	}
	obj = obj.DeepCopyObject()
	v.defaults(obj)
	out := v.storage.newObject(s)
	if err := v.conv.Convert(obj, out); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("converting %s to %s: %v", v.gvk, v.storage.gvk, err))
	}
	out.GetObjectKind().SetGroupVersionKind(v.storage.gvk)
	return out, nil
}

// answer converts what the storage resource answered.
func (v *view) answer(obj runtime.Object, evs []Event, err error) (runtime.Object, []Event, error) {
	if err != nil {
		return nil, nil, err
	}
	out, cerr := v.toView(obj)
	if cerr != nil {
		return nil, nil, cerr
	}
	return out, evs, nil
}

// event converts one event of the storage resource as a watch of the view
// sees it. It reads only ev.
func (v *view) event(ev Event) Event {
	ev.GVR = v.GVR
	if ev.Type == watch.Bookmark {
		b := v.newObj()
		m := mustAccessor(b)
		om := mustAccessor(ev.Object)
		m.SetResourceVersion(om.GetResourceVersion())
		m.SetAnnotations(om.GetAnnotations())
		b.GetObjectKind().SetGroupVersionKind(v.gvk)
		ev.Object = b
		return ev
	}
	if obj, err := v.toView(ev.Object); err == nil {
		ev.Object = obj
	}
	if ev.Prev != nil {
		if prev, err := v.toView(ev.Prev); err == nil {
			ev.Prev = prev
		}
	}
	return ev
}

// StorageResource is the resource whose events a watch of gvr sees: gvr
// itself, or the storage version of a resource served through another's
// storage (autoscaling/v1 HorizontalPodAutoscalers: autoscaling/v2).
func (s *Store) StorageResource(gvr schema.GroupVersionResource) schema.GroupVersionResource {
	if v := s.views[gvr]; v != nil {
		return v.storage.GVR
	}
	return gvr
}

func (v *view) create(s *Store, ns string, obj runtime.Object, opts metav1.CreateOptions) (runtime.Object, []Event, error) {
	in, err := v.fromView(s, obj)
	if err != nil {
		return nil, nil, err
	}
	return v.answer(s.Create(v.storage.GVR, ns, in, opts))
}

func (v *view) update(s *Store, ns string, obj runtime.Object, opts metav1.UpdateOptions, sub string) (runtime.Object, []Event, error) {
	in, err := v.fromView(s, obj)
	if err != nil {
		return nil, nil, err
	}
	return v.answer(s.Update(v.storage.GVR, ns, in, opts, sub))
}

func (v *view) get(s *Store, ns, name string, opts metav1.GetOptions) (runtime.Object, error) {
	obj, err := s.Get(v.storage.GVR, ns, name, opts)
	if err != nil {
		return nil, err
	}
	return v.toView(obj)
}

func (v *view) list(s *Store, ns string, opts metav1.ListOptions, replicaLag int64) (runtime.Object, ListInfo, error) {
	l, info, err := s.List(v.storage.GVR, ns, opts, replicaLag)
	if err != nil {
		return nil, info, err
	}
	out := v.newList()
	lm, err := meta.ListAccessor(l)
	if err != nil {
		return nil, info, apierrors.NewInternalError(err)
	}
	om, _ := meta.ListAccessor(out)
	om.SetResourceVersion(lm.GetResourceVersion())
	om.SetContinue(lm.GetContinue())
	om.SetRemainingItemCount(lm.GetRemainingItemCount())
	var items []runtime.Object
	err = meta.EachListItem(l, func(item runtime.Object) error {
		o, err := v.toView(item)
		items = append(items, o)
		return err
	})
	if err == nil {
		err = meta.SetList(out, items)
	}
	if err != nil {
		return nil, info, apierrors.NewInternalError(err)
	}
	out.GetObjectKind().SetGroupVersionKind(v.gvk.GroupVersion().WithKind(v.ListKind))
	return out, info, nil
}

// patch applies a JSON, merge or strategic merge patch to the object in
// the view's version, then writes the result as an update of the storage
// resource, as kube-apiserver's patch handler patches in the request's
// version. Server-side apply of a view is refused (415, naming the
// storage version to apply to).
func (v *view) patch(s *Store, ns, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub string) (runtime.Object, []Event, error) {
	accepted := []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.StrategicMergePatchType)}
	if !containsString(accepted, string(pt)) {
		if pt == types.ApplyYAMLPatchType || pt == types.ApplyCBORPatchType {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("server-side apply of %s is not served by the fake: apply it as %s", v.GVR, v.storage.GVR))
		}
		return nil, nil, unsupportedMediaType(accepted)
	}
	cur, err := v.get(s, ns, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	patched, err := patchJSON(cur, pt, data, v.newObj())
	if err != nil {
		return nil, nil, err
	}
	obj := v.newObj()
	if err := json.Unmarshal(patched, obj); err != nil {
		return nil, nil, unprocessablePatch(err)
	}
	m := mustAccessor(obj)
	if m.GetName() != name {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), name))
	}
	in, err := v.fromView(s, obj)
	if err != nil {
		return nil, nil, err
	}
	return v.answer(s.Update(v.storage.GVR, ns, in, metav1.UpdateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation}, sub))
}

func (v *view) delete(s *Store, ns, name string, opts metav1.DeleteOptions) (runtime.Object, []Event, error) {
	return v.answer(s.Delete(v.storage.GVR, ns, name, opts))
}

// filter is Filter of the storage resource, its events converted.
func (v *view) filter(s *Store, ns string, opts metav1.ListOptions) (func(Event) (Event, bool), error) {
	f, err := s.Filter(v.storage.GVR, ns, opts)
	if err != nil {
		return nil, err
	}
	return func(ev Event) (Event, bool) {
		seen, ok := f(ev)
		if !ok {
			return seen, false
		}
		return v.event(seen), true
	}, nil
}

func (v *view) watchStart(s *Store, ns string, opts metav1.ListOptions, replicaLag int64) ([]Event, int64, int64, error) {
	initial, startRV, servedRV, err := s.WatchStartServed(v.storage.GVR, ns, opts, replicaLag)
	for i := range initial {
		initial[i] = v.event(initial[i])
	}
	return initial, startRV, servedRV, err
}

func (v *view) bookmark(rv int64, initialEventsEnd bool) (Event, error) {
	if rv < 0 {
		return Event{}, fmt.Errorf("store: bookmark at negative revision %d", rv)
	}
	obj := v.newObj()
	m := mustAccessor(obj)
	m.SetResourceVersion(strconv.FormatInt(rv, 10))
	if initialEventsEnd {
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	obj.GetObjectKind().SetGroupVersionKind(v.gvk)
	return Event{Type: watch.Bookmark, GVR: v.GVR, Object: obj, RV: rv, Initial: initialEventsEnd}, nil
}
