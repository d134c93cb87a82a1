// Package mirror is the small controller the naive cache and the informer
// subjects (legacy DeltaFIFO, modern RealFIFO) run on top of their caches, so
// that the caches, not the controllers, are what differs between them.
//
// The controller keeps, for every source ConfigMap `x`, a ConfigMap
// `x-mirror` in the same namespace with the same data and a controller
// ownerReference to `x` (by UID). A ConfigMap whose name ends in "-mirror" is
// never a source. The controller reads only through the cache it is given
// (a Getter) and writes to the API server directly, so its own writes come
// back through the watch and close the loop, as the origin notes describe.
//
// The package also holds what the three subjects record the same way: the
// trace identity of an object (Identity), cache snapshots (Snapshot) and the
// worker loop over a client-go workqueue (RunWorkers).
package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/sim"
)

// Suffix ends the name of every mirror ConfigMap.
const Suffix = "-mirror"

// Resource is the trace name of the resource the controller watches.
const Resource = "configmaps"

// GVR is the resource the controller watches and writes.
var GVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// IsMirrorName reports whether name is the name of a mirror (never a source).
func IsMirrorName(name string) bool { return strings.HasSuffix(name, Suffix) }

// SourceKey maps the key of any ConfigMap event to the key the controller
// reconciles: the source's own key, or for a mirror `x-mirror` the key of `x`.
func SourceKey(namespace, name string) string {
	name = strings.TrimSuffix(name, Suffix)
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// Getter reads one ConfigMap from a cache. ok is false when the cache has no
// object under that key. The returned object must not be modified.
type Getter func(namespace, name string) (cm *corev1.ConfigMap, ok bool, err error)

// Reconciler makes one source's mirror match it.
type Reconciler struct {
	// Client writes to the API server.
	Client kubernetes.Interface
	// Get reads the controller's cache.
	Get Getter
	// Wrote, optional, is told the resourceVersion of every object the
	// controller created or updated (deletes return none).
	Wrote func(rv int64)
}

// ErrStaleOwner is returned when a mirror is owned by another incarnation
// (UID) of its source: the mirror was taken over and the key must be
// reconciled again.
var ErrStaleOwner = errors.New("mirror: mirror owned by another UID of its source")

// Reconcile brings the mirror of the source named by key in line with the
// source as the cache shows it. It returns a short description of what it did
// ("created", "updated", "in sync", ...) or an error; the caller requeues on
// error.
func (r *Reconciler) Reconcile(ctx context.Context, key string) (string, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return "", fmt.Errorf("mirror: bad key %q: %w (want namespace/name)", key, err)
	}
	if IsMirrorName(name) {
		return "", fmt.Errorf("mirror: key %q names a mirror, not a source (enqueue SourceKey)", key)
	}
	src, srcOK, err := r.Get(ns, name)
	if err != nil {
		return "", err
	}
	mirrorName := name + Suffix
	m, mOK, err := r.Get(ns, mirrorName)
	if err != nil {
		return "", err
	}
	if !srcOK {
		// The source is gone (as far as the cache knows): remove the mirror
		// it owned. The server's garbage collector would too; doing it here
		// keeps the controller correct on a server without GC.
		if !mOK || controllerUID(m) == "" {
			return "source absent", nil
		}
		uid := m.UID
		err := r.Client.CoreV1().ConfigMaps(ns).Delete(ctx, mirrorName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if apierrors.IsNotFound(err) {
			return "orphan mirror already gone", nil
		}
		if err != nil {
			return "", err
		}
		return "deleted orphan mirror", nil
	}
	if src.DeletionTimestamp != nil {
		return "source terminating", nil
	}
	owner := metav1.OwnerReference{
		APIVersion: "v1", Kind: "ConfigMap", Name: src.Name, UID: src.UID,
		Controller: ptrTrue(), BlockOwnerDeletion: ptrTrue(),
	}
	if !mOK {
		want := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: mirrorName, OwnerReferences: []metav1.OwnerReference{owner}},
			Data:       maps.Clone(src.Data),
			BinaryData: maps.Clone(src.BinaryData),
		}
		got, err := r.Client.CoreV1().ConfigMaps(ns).Create(ctx, want, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		r.wrote(got)
		return "created", nil
	}
	ownerOK := controllerUID(m) == src.UID
	if ownerOK && sameData(src, m) {
		return "in sync", nil
	}
	// Update from the cached copy, with its resourceVersion: a stale cache
	// gets 409 Conflict and the key is retried.
	up := m.DeepCopy()
	up.Data = maps.Clone(src.Data)
	up.BinaryData = maps.Clone(src.BinaryData)
	up.OwnerReferences = replaceController(up.OwnerReferences, owner)
	got, err := r.Client.CoreV1().ConfigMaps(ns).Update(ctx, up, metav1.UpdateOptions{})
	if err != nil {
		return "", err
	}
	r.wrote(got)
	if !ownerOK {
		return "adopted", nil
	}
	return "updated", nil
}

func (r *Reconciler) wrote(obj *corev1.ConfigMap) {
	if r.Wrote != nil && obj != nil {
		r.Wrote(ParseRV(obj.ResourceVersion))
	}
}

func ptrTrue() *bool { t := true; return &t }

// controllerUID returns the UID of obj's controller ownerReference, if any.
func controllerUID(obj metav1.Object) types.UID {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return ref.UID
	}
	return ""
}

func replaceController(refs []metav1.OwnerReference, owner metav1.OwnerReference) []metav1.OwnerReference {
	out := []metav1.OwnerReference{owner}
	for _, r := range refs {
		if r.Controller != nil && *r.Controller {
			continue
		}
		out = append(out, r)
	}
	return out
}

// sameData treats nil and empty maps as equal.
func sameData(a, b *corev1.ConfigMap) bool {
	if len(a.Data) != len(b.Data) || len(a.BinaryData) != len(b.BinaryData) {
		return false
	}
	for k, v := range a.Data {
		if w, ok := b.Data[k]; !ok || w != v {
			return false
		}
	}
	for k, v := range a.BinaryData {
		if w, ok := b.BinaryData[k]; !ok || string(w) != string(v) {
			return false
		}
	}
	return true
}

// Desired reports whether the server's state is the controller's desired
// state: every source ConfigMap that is not terminating has a mirror with the
// same data whose controller ownerReference is the source's UID, and no
// mirror is controlled by a ConfigMap UID that no longer exists. It is the
// sim.Converger of the three subjects built on this controller.
func Desired(objs []sim.ServerObject) (bool, string) {
	type entry struct {
		cm  *corev1.ConfigMap
		key string
	}
	byKey := map[string]*corev1.ConfigMap{}
	uids := map[types.UID]bool{}
	var all []entry
	for i, o := range objs {
		if o.Resource != GVR {
			continue
		}
		cm := &corev1.ConfigMap{}
		if err := json.Unmarshal(o.Object, cm); err != nil {
			return false, fmt.Sprintf("server object %d (configmaps) is not a ConfigMap: %v", i, err)
		}
		key := cm.Namespace + "/" + cm.Name
		byKey[key] = cm
		uids[cm.UID] = true
		all = append(all, entry{cm, key})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].key < all[j].key })
	for _, e := range all {
		cm := e.cm
		if IsMirrorName(cm.Name) {
			ref := metav1.GetControllerOfNoCopy(cm)
			if ref != nil && ref.Kind == "ConfigMap" && !uids[ref.UID] {
				return false, fmt.Sprintf("mirror %s/%s is controlled by ConfigMap uid %s, which no longer exists", cm.Namespace, cm.Name, ref.UID)
			}
			continue
		}
		if cm.DeletionTimestamp != nil {
			continue
		}
		m, ok := byKey[cm.Namespace+"/"+cm.Name+Suffix]
		switch {
		case !ok:
			return false, fmt.Sprintf("source %s/%s has no mirror", cm.Namespace, cm.Name)
		case controllerUID(m) != cm.UID:
			return false, fmt.Sprintf("mirror %s/%s is not controlled by source uid %s (controller uid %q)", m.Namespace, m.Name, cm.UID, controllerUID(m))
		case !sameData(cm, m):
			return false, fmt.Sprintf("mirror %s/%s data differs from its source", m.Namespace, m.Name)
		}
	}
	return true, ""
}
