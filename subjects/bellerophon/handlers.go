package bellerophon

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/sim"
)

// handlerFuncs are one informer's event handlers, before recording.
type handlerFuncs struct {
	add    func(obj any)
	update func(oldObj, newObj any)
	delete func(obj any)
}

// recordingHandler wraps fns: every call is recorded (RecHandler), sleeps
// the handler delay, recovers a panic (recorded as a note: the event is
// dropped, as client-go's processorListener does when
// utilruntime.ReallyCrash is false; the default would kill the process) and
// re-checks the sync signals.
func (c *Controller) recordingHandler(resource string, fns handlerFuncs) cache.ResourceEventHandler {
	call := func(r sim.Record, fn func()) {
		c.rec.turn("handler "+resource, r.EventType+" "+r.Namespace+"/"+r.Name)
		c.rec.record(r)
		defer c.signals.event()
		defer func() {
			if p := recover(); p != nil {
				c.rec.note("%s %s handler panicked, event dropped: %v", resource, r.EventType, p)
			}
		}()
		if c.handlerDelay > 0 {
			c.sleep(c.ctx, "handler "+resource, c.handlerDelay)
		}
		fn()
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			r := handlerRecord(resource, resource, "ADDED", obj)
			r.Initial = isInInitialList
			call(r, func() { fns.add(obj) })
		},
		UpdateFunc: func(oldObj, newObj any) {
			r := handlerRecord(resource, resource, "MODIFIED", newObj)
			if m, err := meta.Accessor(oldObj); err == nil {
				r.OldUID, r.OldRV = string(m.GetUID()), parseRV(m.GetResourceVersion())
			}
			call(r, func() { fns.update(oldObj, newObj) })
		},
		DeleteFunc: func(obj any) {
			call(handlerRecord(resource, resource, "DELETED", obj), func() { fns.delete(obj) })
		},
	}
}

// unwrap returns the object of a delete notification: obj itself, or the
// last known state inside a DeletedFinalStateUnknown tombstone (nil if the
// tombstone carries none). Under TombstoneNotUnwrapped it panics on a
// tombstone, as the buggy type assertion does.
func (c *Controller) unwrap(obj any) metav1.Object {
	if c.bug == TombstoneNotUnwrapped {
		// The bug: assume a delete always carries the object.
		return obj.(metav1.Object)
	}
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if obj == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		c.rec.note("delete of an object without metadata (%T) ignored", obj)
		return nil
	}
	return m
}

// keyOf is the queue key of a Bellerophon object.
func keyOf(m metav1.Object) cache.ObjectName {
	return cache.NewObjectName(m.GetNamespace(), m.GetName())
}

// addBellerophon enqueues a new Bellerophon.
func (c *Controller) addBellerophon(obj any) {
	m, err := meta.Accessor(obj)
	if err != nil {
		c.rec.note("Bellerophon add of a %T ignored", obj)
		return
	}
	c.enqueue(keyOf(m))
}

// updateBellerophon enqueues a changed Bellerophon. A UID change is a delete
// followed by a create (the relist after a watch gap delivers it as one
// update): the old incarnation's expectations are dropped, and only those:
// the handler may run after a reconcile of the new incarnation already
// recorded its creates (random-6342: dropping them all let the next
// reconcile create the same pods again).
//
// An update that changes nothing the controller acts on is not enqueued:
// same UID, generation, deletionTimestamp and finalizers, and a status equal
// to the old one (a label or annotation change) or to the one the
// controller itself last wrote (the echo of its own write). Such a filter is
// what controller authors add to avoid reconciling their own writes; it is
// safe because the controller never leaves a write undone on a 409: it
// retries from a fresh read. DropsConflicts shows what happens otherwise.
func (c *Controller) updateBellerophon(oldObj, newObj any) {
	oldU, ok1 := oldObj.(*unstructured.Unstructured)
	newU, ok2 := newObj.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		c.rec.note("Bellerophon update of a %T ignored", newObj)
		return
	}
	if oldU.GetResourceVersion() == newU.GetResourceVersion() {
		return // a resync: nothing changed
	}
	key := keyOf(newU)
	if oldU.GetUID() != newU.GetUID() {
		if c.bug != NoUIDCheck {
			c.expectations.DeleteFor(key.String(), oldU.GetUID())
			c.rec.note("%s was deleted and recreated (UID %s -> %s)", key, oldU.GetUID(), newU.GetUID())
		}
		c.enqueue(key)
		return
	}
	if c.nothingToDo(key.String(), oldU, newU) {
		return
	}
	c.enqueue(key)
}

// nothingToDo reports whether the update old -> new of one incarnation
// changes nothing the controller acts on (see updateBellerophon).
func (c *Controller) nothingToDo(key string, oldU, newU *unstructured.Unstructured) bool {
	if oldU.GetGeneration() != newU.GetGeneration() ||
		!equality.Semantic.DeepEqual(oldU.GetDeletionTimestamp(), newU.GetDeletionTimestamp()) ||
		!equality.Semantic.DeepEqual(oldU.GetFinalizers(), newU.GetFinalizers()) {
		return false
	}
	status := newU.Object["status"]
	if equality.Semantic.DeepEqual(oldU.Object["status"], status) {
		return true
	}
	c.mu.Lock()
	lw := c.lastWritten[key]
	c.mu.Unlock()
	return lw != nil && lw.GetUID() == newU.GetUID() && equality.Semantic.DeepEqual(lw.Object["status"], status)
}

// deleteBellerophon drops a deleted Bellerophon's expectations and enqueues
// it so that syncHandler cleans what is left (backups).
func (c *Controller) deleteBellerophon(obj any) {
	if c.bug == TombstoneNotUnwrapped {
		_ = obj.(*unstructured.Unstructured) // the bug: panics on a tombstone
	}
	m := c.unwrap(obj)
	if m == nil {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			if ns, name, err := cache.SplitMetaNamespaceKey(tomb.Key); err == nil {
				c.expectations.Delete(tomb.Key)
				c.enqueue(cache.NewObjectName(ns, name))
			}
		}
		return
	}
	key := keyOf(m)
	c.expectations.DeleteFor(key.String(), m.GetUID())
	c.mu.Lock()
	if lw := c.lastWritten[key.String()]; lw != nil && (c.bug == NoUIDCheck || lw.GetUID() == m.GetUID()) {
		delete(c.lastWritten, key.String())
	}
	c.mu.Unlock()
	c.enqueue(key)
}

// ownerKey returns the queue key of obj's Bellerophon controller, if any.
func ownerKey(obj metav1.Object) (cache.ObjectName, *metav1.OwnerReference) {
	ref := bellerophonRef(obj)
	if ref == nil {
		return cache.ObjectName{}, nil
	}
	return cache.NewObjectName(obj.GetNamespace(), ref.Name), ref
}

// addPod indexes a new Pod under its owner, observes an expected create and
// enqueues the owner.
func (c *Controller) addPod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		c.rec.note("Pod add of a %T ignored", obj)
		return
	}
	if pod.DeletionTimestamp != nil {
		c.deletePod(pod)
		return
	}
	key, ref := ownerKey(pod)
	if ref == nil {
		return
	}
	c.children.set(cache.MetaObjectToName(pod).String(), c.ownerIndexKey(pod.Namespace, ref.Name, ref.UID))
	c.expectations.CreationObserved(key.String(), ref.UID)
	c.enqueue(key)
}

// updatePod re-indexes a changed Pod and enqueues its owners (old and new,
// if the controller reference changed). A Pod that starts terminating counts
// as an observed delete, as in the ReplicaSet controller.
func (c *Controller) updatePod(oldObj, newObj any) {
	oldPod, ok1 := oldObj.(*corev1.Pod)
	newPod, ok2 := newObj.(*corev1.Pod)
	if !ok1 || !ok2 {
		c.rec.note("Pod update of a %T ignored", newObj)
		return
	}
	if oldPod.ResourceVersion == newPod.ResourceVersion {
		return
	}
	podKey := cache.MetaObjectToName(newPod).String()
	key, ref := ownerKey(newPod)
	if ref == nil {
		c.children.set(podKey, "")
	} else {
		c.children.set(podKey, c.ownerIndexKey(newPod.Namespace, ref.Name, ref.UID))
	}
	if oldKey, oldRef := ownerKey(oldPod); oldRef != nil && (ref == nil || oldRef.UID != ref.UID) {
		c.enqueue(oldKey)
	}
	if ref == nil {
		return
	}
	if newPod.DeletionTimestamp != nil && oldPod.DeletionTimestamp == nil {
		c.expectations.DeletionObserved(key.String(), ref.UID)
	}
	c.enqueue(key)
}

// deletePod removes a deleted Pod from the index, observes an expected
// delete and enqueues the owner.
func (c *Controller) deletePod(obj any) {
	if c.bug == TombstoneNotUnwrapped {
		_ = obj.(*corev1.Pod) // the bug: panics on a tombstone
	}
	m := c.unwrap(obj)
	if m == nil {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			c.children.set(tomb.Key, "")
		}
		return
	}
	c.children.set(cache.MetaObjectToName(m).String(), "")
	key, ref := ownerKey(m)
	if ref == nil {
		return
	}
	if !c.expectations.DeletionObserved(key.String(), ref.UID) {
		c.childVanished(key)
	}
	c.enqueue(key)
}

// childVanished notes that a child of key was deleted by someone else (a
// user, or the garbage collector because the owner the cache still shows
// is gone); the next reconcile holds re-creations (see holdCreates).
func (c *Controller) childVanished(key cache.ObjectName) {
	c.mu.Lock()
	c.vanished[key.String()]++
	c.mu.Unlock()
}

// takeVanished returns and resets the count of key's vanished children.
func (c *Controller) takeVanished(key cache.ObjectName) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.vanished[key.String()]
	delete(c.vanished, key.String())
	return n
}

// addConfigMap enqueues the owner of a ConfigMap.
func (c *Controller) addConfigMap(obj any) { c.enqueueConfigMapOwner(obj) }

// updateConfigMap enqueues the owner of a changed ConfigMap.
func (c *Controller) updateConfigMap(oldObj, newObj any) {
	if o, n := uidRV(oldObj), uidRV(newObj); o == n {
		return
	}
	c.enqueueConfigMapOwner(oldObj)
	c.enqueueConfigMapOwner(newObj)
}

// deleteConfigMap enqueues the owner of a deleted ConfigMap.
func (c *Controller) deleteConfigMap(obj any) {
	if c.bug == TombstoneNotUnwrapped {
		_ = obj.(*corev1.ConfigMap) // the bug: panics on a tombstone
	}
	if m := c.unwrap(obj); m != nil {
		// The controller never deletes its ConfigMap: someone else did.
		if key, ref := ownerKey(m); ref != nil {
			c.childVanished(key)
		}
		c.enqueueConfigMapOwner(m)
	}
}

func (c *Controller) enqueueConfigMapOwner(obj any) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	if key, ref := ownerKey(m); ref != nil {
		c.enqueue(key)
	}
}

func uidRV(obj any) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	return string(m.GetUID()) + "/" + m.GetResourceVersion()
}
