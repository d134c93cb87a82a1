package store

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// This file is the store's garbage collector and finalizer bookkeeping.
// kube-apiserver only adds the orphan / foregroundDeletion finalizers and
// sets deletionTimestamp; kube-controller-manager's garbage collector then
// deletes or orphans dependents and removes those finalizers. The store does
// the collector's work inside the call that made it necessary, so every
// write it causes is one more revision, marked Event.ByGC. With
// Options.ExternalGC it does not: processTerminating, releaseOwners and
// collectIfOrphaned (every entry to the collector's work) return at once,
// and a collector running as a client does it, with its own watch's lag.

// deleteObject deletes ref with a propagation policy, appending the events
// to events. It returns the object as the caller should see it: the marked
// object when finalizers keep it, else its last state.
func (s *Store) deleteObject(ref objRef, policy metav1.DeletionPropagation, byGC bool, events []Event) (runtime.Object, []Event) {
	return s.deleteObjectGrace(ref, policy, nil, byGC, events)
}

// deleteObjectGrace is deleteObject for a delete asking grace seconds
// (nil: none asked), which matters to kinds deleted gracefully (pods):
// they are marked first (a MODIFIED event) and go at once (a DELETED
// event) only when the period is 0 and no finalizer holds them, as
// kube-apiserver's updateForGracefulDeletionAndFinalizers does.
func (s *Store) deleteObjectGrace(ref objRef, policy metav1.DeletionPropagation, grace *int64, byGC bool, events []Event) (runtime.Object, []Event) {
	cur, _ := s.load(ref.res, ref.key)
	if ref.res.rules.gracePeriod != nil {
		o, marked := s.markedGracefully(ref.res, cur, policy, grace)
		if !marked {
			return cur, events
		}
		ev := s.commit(ref.res, ref.key, o, cur, "delete", "", byGC)
		events = append(events, ev)
		om := mustAccessor(o)
		if g := om.GetDeletionGracePeriodSeconds(); len(om.GetFinalizers()) == 0 && g != nil && *g == 0 {
			gone := s.commit(ref.res, ref.key, nil, nil, "delete", "", byGC)
			events = append(events, gone)
			return gone.Object, s.afterRemoval(gone, events)
		}
		return o, s.processTerminating(ref, events)
	}
	m := mustAccessor(cur)
	if m.GetDeletionTimestamp() != nil {
		return cur, events
	}
	o, marked := s.markedForDeletion(cur, policy)
	if !marked {
		ev := s.commit(ref.res, ref.key, nil, cur, "delete", "", byGC)
		events = append(events, ev)
		return ev.Object, s.afterRemoval(ev, events)
	}
	ev := s.commit(ref.res, ref.key, o, cur, "delete", "", byGC)
	events = append(events, ev)
	events = s.processTerminating(ref, events)
	if isNamespaces(ref.res) {
		events = s.emptyNamespace(ref, events)
	}
	return o, events
}

// markedForDeletion returns a copy of cur as a delete with policy marks
// it (markAsDeleting: the policy's finalizer added, deletionTimestamp set,
// grace 0, generation bumped), or false when no finalizer keeps it and it
// goes at once.
func (s *Store) markedForDeletion(cur runtime.Object, policy metav1.DeletionPropagation) (runtime.Object, bool) {
	finalizers := withPolicyFinalizer(mustAccessor(cur).GetFinalizers(), policy)
	if len(finalizers) == 0 && !namespaceHoldsDeletion(cur) {
		return nil, false
	}
	o := cur.DeepCopyObject()
	markNamespaceTerminating(o)
	om := mustAccessor(o)
	om.SetFinalizers(finalizers)
	if om.GetGeneration() > 0 {
		om.SetGeneration(om.GetGeneration() + 1)
	}
	now := s.now()
	om.SetDeletionTimestamp(&now)
	var zero int64
	om.SetDeletionGracePeriodSeconds(&zero)
	return o, true
}

// withPolicyFinalizer returns a copy of finalizers with the garbage
// collector's finalizer of policy added (orphan, foregroundDeletion), as
// deletionFinalizersForGarbageCollection does.
func withPolicyFinalizer(finalizers []string, policy metav1.DeletionPropagation) []string {
	finalizers = slices.Clone(finalizers)
	add := ""
	switch policy {
	case metav1.DeletePropagationOrphan:
		add = metav1.FinalizerOrphanDependents
	case metav1.DeletePropagationForeground:
		add = metav1.FinalizerDeleteDependents
	}
	if add != "" && !slices.Contains(finalizers, add) {
		finalizers = append(finalizers, add)
	}
	return finalizers
}

// processTerminating does the garbage collector's work for a terminating
// object carrying the orphan or foregroundDeletion finalizer.
func (s *Store) processTerminating(ref objRef, events []Event) []Event {
	if s.externalGC {
		return events
	}
	cur, ok := s.load(ref.res, ref.key)
	if !ok {
		return events
	}
	m := mustAccessor(cur)
	if m.GetDeletionTimestamp() == nil {
		return events
	}
	uid := m.GetUID()
	switch {
	case slices.Contains(m.GetFinalizers(), metav1.FinalizerOrphanDependents):
		for _, d := range s.dependentsOf(uid) {
			dep, ok := s.load(d.res, d.key)
			if !ok {
				continue
			}
			dm := mustAccessor(dep)
			dm.SetOwnerReferences(slices.DeleteFunc(slices.Clone(dm.GetOwnerReferences()), func(o metav1.OwnerReference) bool { return o.UID == uid }))
			events = append(events, s.commit(d.res, d.key, dep, nil, "update", "", true))
		}
		events = s.removeFinalizer(ref, uid, metav1.FinalizerOrphanDependents, events)
	case slices.Contains(m.GetFinalizers(), metav1.FinalizerDeleteDependents):
		for _, d := range s.dependentsOf(uid) {
			dep, ok := s.load(d.res, d.key)
			if !ok {
				continue // gone meanwhile, collected with an earlier dependent
			}
			policy := metav1.DeletePropagationBackground
			if len(s.dependents[mustAccessor(dep).GetUID()]) > 0 {
				policy = metav1.DeletePropagationForeground
			}
			_, events = s.deleteObject(d, policy, true, events)
		}
		events = s.finishForeground(ref, uid, events)
	}
	return events
}

// finishForeground removes the foregroundDeletion finalizer of a
// terminating owner once no dependent blocks it.
func (s *Store) finishForeground(ref objRef, uid types.UID, events []Event) []Event {
	for _, d := range s.dependentsOf(uid) {
		dep, ok := s.load(d.res, d.key)
		if !ok {
			continue
		}
		for _, o := range mustAccessor(dep).GetOwnerReferences() {
			if o.UID == uid && o.BlockOwnerDeletion != nil && *o.BlockOwnerDeletion {
				return events
			}
		}
	}
	return s.removeFinalizer(ref, uid, metav1.FinalizerDeleteDependents, events)
}

// removeFinalizer removes one finalizer from ref (if it is still the
// object with this uid and carries it), deleting the object if it was the
// last one.
func (s *Store) removeFinalizer(ref objRef, uid types.UID, finalizer string, events []Event) []Event {
	cur, ok := s.load(ref.res, ref.key)
	if !ok || mustAccessor(cur).GetUID() != uid || !slices.Contains(mustAccessor(cur).GetFinalizers(), finalizer) {
		return events
	}
	o := cur.DeepCopyObject()
	om := mustAccessor(o)
	om.SetFinalizers(slices.DeleteFunc(slices.Clone(om.GetFinalizers()), func(f string) bool { return f == finalizer }))
	if len(om.GetFinalizers()) == 0 && om.GetDeletionTimestamp() != nil {
		ev := s.commit(ref.res, ref.key, nil, cur, "update", "", true)
		events = append(events, ev)
		return s.afterRemoval(ev, events)
	}
	events = append(events, s.commit(ref.res, ref.key, o, cur, "update", "", true))
	return events
}

// afterRemoval runs the collector after an object is gone: its dependents
// whose owners are all gone are deleted, and owners in foreground deletion
// waiting for it may finish.
func (s *Store) afterRemoval(ev Event, events []Event) []Event {
	last := mustAccessor(ev.Object)
	for _, d := range s.dependentsOf(last.GetUID()) {
		events = s.collectIfOrphaned(d, events)
	}
	events = s.releaseOwners(last, events)
	return s.finalizeNamespace(last.GetNamespace(), events)
}

// afterUpdate runs the collector after an update: a terminating object
// with GC finalizers is processed, and owners in foreground deletion whose
// dependent dropped its reference may finish.
func (s *Store) afterUpdate(ref objRef, events []Event) []Event {
	ev := events[len(events)-1]
	if mustAccessor(ev.Object).GetDeletionTimestamp() != nil {
		// ev.Object is ref's state as just committed: only a terminating
		// object has collector work (processTerminating would load and
		// decode it to find that out).
		events = s.processTerminating(ref, events)
	}
	if ev.Prev != nil {
		events = s.releaseOwners(mustAccessor(ev.Prev), events)
	}
	return events
}

// releaseOwners lets owners (of m's ownerReferences) waiting in foreground
// deletion finish if nothing blocks them any more.
func (s *Store) releaseOwners(m metav1.Object, events []Event) []Event {
	if s.externalGC {
		return events
	}
	for _, o := range m.GetOwnerReferences() {
		owner, ok := s.owner(m.GetNamespace(), o)
		if !ok {
			continue
		}
		cur, exists := s.load(owner.res, owner.key)
		if !exists || mustAccessor(cur).GetDeletionTimestamp() == nil || !slices.Contains(mustAccessor(cur).GetFinalizers(), metav1.FinalizerDeleteDependents) {
			continue
		}
		events = s.finishForeground(owner, o.UID, events)
	}
	return events
}

// collectIfOrphaned deletes d if every owner it names (of a served kind) is
// gone, and drops references to gone owners if some owner remains.
func (s *Store) collectIfOrphaned(d objRef, events []Event) []Event {
	if s.externalGC {
		return events
	}
	cur, ok := s.load(d.res, d.key)
	if !ok {
		return events
	}
	m := mustAccessor(cur)
	refs := m.GetOwnerReferences()
	if len(refs) == 0 {
		return events
	}
	var solid, dangling int
	keep := make([]metav1.OwnerReference, 0, len(refs))
	for _, o := range refs {
		owner, known := s.owner(m.GetNamespace(), o)
		if !known {
			solid++ // a kind the store does not serve: the collector cannot tell
			keep = append(keep, o)
			continue
		}
		if obj, exists := s.load(owner.res, owner.key); exists && mustAccessor(obj).GetUID() == o.UID {
			solid++
			keep = append(keep, o)
			continue
		}
		dangling++
	}
	switch {
	case dangling == 0:
		return events
	case solid == 0:
		if m.GetDeletionTimestamp() != nil {
			return events
		}
		_, events = s.deleteObject(d, metav1.DeletePropagationBackground, true, events)
		return events
	default:
		o := cur.DeepCopyObject()
		mustAccessor(o).SetOwnerReferences(keep)
		events = append(events, s.commit(d.res, d.key, o, cur, "update", "", true))
		return events
	}
}

// owner resolves an ownerReference of an object in namespace ns to the
// owner's place in the store; false if the kind is not served.
func (s *Store) owner(ns string, o metav1.OwnerReference) (objRef, bool) {
	gv, err := schema.ParseGroupVersion(o.APIVersion)
	if err != nil {
		return objRef{}, false
	}
	r, ok := s.byGK[schema.GroupKind{Group: gv.Group, Kind: o.Kind}]
	if !ok {
		return objRef{}, false
	}
	if !r.Namespaced {
		ns = ""
	}
	return objRef{r, objectKey(ns, o.Name)}, true
}

// dependentsOf returns the objects naming uid as an owner, in a stable
// order (resource, then key).
func (s *Store) dependentsOf(uid types.UID) []objRef {
	set := s.dependents[uid]
	out := make([]objRef, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b objRef) int {
		if c := strings.Compare(a.res.GVR.String(), b.res.GVR.String()); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	return out
}
