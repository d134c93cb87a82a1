package bellerophon

import (
	"fmt"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/subjects/bellerophon/apis/lab/v1alpha1"
)

// childIndex maps an owner to the keys of the Pods it controls. It is fed by
// the Pod event handler, not by an Indexer on the informer's store, on
// purpose: it is state that only the controller's handler maintains, like
// kube-scheduler's cache, and it is why the workers must wait for the
// handler registration's HasSynced rather than the informer's (README.md).
// Owners are keyed by UID (by namespace/name under NoUIDCheck).
type childIndex struct {
	mu      sync.Mutex
	byOwner map[string]map[string]struct{}
	ownerOf map[string]string
}

func newChildIndex() *childIndex {
	return &childIndex{byOwner: map[string]map[string]struct{}{}, ownerOf: map[string]string{}}
}

// set records that pod (namespace/name) is controlled by owner; "" removes
// the pod.
func (x *childIndex) set(pod, owner string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if old, ok := x.ownerOf[pod]; ok {
		delete(x.byOwner[old], pod)
		if len(x.byOwner[old]) == 0 {
			delete(x.byOwner, old)
		}
		delete(x.ownerOf, pod)
	}
	if owner == "" {
		return
	}
	x.ownerOf[pod] = owner
	if x.byOwner[owner] == nil {
		x.byOwner[owner] = map[string]struct{}{}
	}
	x.byOwner[owner][pod] = struct{}{}
}

// children returns the pod keys of owner, sorted.
func (x *childIndex) children(owner string) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]string, 0, len(x.byOwner[owner]))
	for k := range x.byOwner[owner] {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// bellerophonLister reads Bellerophons from the unstructured informer's
// indexer. It is the small typed lister the lab writes instead of a
// generated one (there is no generated clientset for the CRD).
type bellerophonLister struct {
	indexer cache.Indexer
}

// Get returns the cached object namespace/name, or a NotFound error.
func (l bellerophonLister) Get(namespace, name string) (*unstructured.Unstructured, error) {
	obj, exists, err := l.indexer.GetByKey(cache.NewObjectName(namespace, name).String())
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, apierrors.NewNotFound(v1alpha1.Resource.GroupResource(), name)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("bellerophon: the Bellerophon cache holds a %T, want *unstructured.Unstructured", obj)
	}
	return u, nil
}

// decodeBellerophon converts u into the typed object and checks it against
// the CRD's schema rules (v1alpha1.ValidateObject). The error says which
// field is wrong: a Bellerophon that passed no server-side validation (a
// server without it, or an object written before it) must not crash the
// controller.
func decodeBellerophon(u *unstructured.Unstructured) (*v1alpha1.Bellerophon, error) {
	if errs := v1alpha1.ValidateObject(u.Object); len(errs) > 0 {
		return nil, fmt.Errorf("invalid spec: %v (fix the object; it is ignored until then)", errs.ToAggregate())
	}
	b := &v1alpha1.Bellerophon{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, b); err != nil {
		return nil, fmt.Errorf("cannot decode: %v (fix the object; it is ignored until then)", err)
	}
	return b, nil
}

// toUnstructured converts b for the dynamic client.
func toUnstructured(b *v1alpha1.Bellerophon) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(v1alpha1.GroupVersionKind)
	return u, nil
}

// bellerophonRef returns obj's controller ownerReference if it points to a
// Bellerophon, else nil.
func bellerophonRef(obj metav1.Object) *metav1.OwnerReference {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != v1alpha1.Kind {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != v1alpha1.GroupName {
		return nil
	}
	return ref
}

// podReady reports whether pod's Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Image returns the container image of a Bellerophon's Pods for version.
func Image(version string) string { return "bellerophon:" + version }

// ConfigMapName returns the name of the ConfigMap owned by the Bellerophon
// named name.
func ConfigMapName(name string) string { return name + "-config" }

// Labels set on every child of a Bellerophon.
const (
	// LabelName holds the owning Bellerophon's name.
	LabelName = "lab.cachelab.dev/bellerophon"
	// LabelVersion holds the Pod's version.
	LabelVersion = "lab.cachelab.dev/version"
)

// newPod returns a Pod for b, named by the server from generateName (so two
// creates never collide: a duplicate create is a real second Pod).
func newPod(b *v1alpha1.Bellerophon) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: b.Name + "-",
			Namespace:    b.Namespace,
			Labels:       map[string]string{"app": "bellerophon", LabelName: b.Name, LabelVersion: b.Spec.Version},
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(b, v1alpha1.GroupVersionKind),
			},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "bellerophon", Image: Image(b.Spec.Version)}},
		},
	}
}

// newConfigMap returns b's ConfigMap: data is spec.config.
func newConfigMap(b *v1alpha1.Bellerophon) *corev1.ConfigMap {
	data := make(map[string]string, len(b.Spec.Config))
	for k, v := range b.Spec.Config {
		data[k] = v
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      ConfigMapName(b.Name),
			Namespace: b.Namespace,
			Labels:    map[string]string{"app": "bellerophon", LabelName: b.Name},
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(b, v1alpha1.GroupVersionKind),
			},
		},
		Data: data,
	}
}

// sameData compares ConfigMap data, nil equal to empty.
func sameData(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
