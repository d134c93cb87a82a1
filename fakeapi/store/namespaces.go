package store

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// This file is namespace termination. kube-apiserver's namespace storage
// answers a delete of a namespace that still has spec.finalizers
// [kubernetes] by marking it (deletionTimestamp, status.phase
// Terminating); the NamespaceLifecycle admission plugin then refuses
// creates in it (403 Forbidden, cause NamespaceTerminating); and
// kube-controller-manager's namespace controller deletes everything in it,
// waits until nothing is left (objects held by finalizers included),
// removes the kubernetes finalizer (/finalize) and deletes the namespace.
// As with the garbage collector (gc.go), the store does the controller's
// work inside the call that made it possible, every write one more
// revision marked Event.ByGC: the namespace goes in the delete call when
// it is empty, else in the call that removes its last object.

// coreNamespaces is the core namespaces resource.
var coreNamespaces = corev1.SchemeGroupVersion.WithResource("namespaces")

// isNamespaces reports whether r is the namespaces resource.
func isNamespaces(r *resState) bool { return r.GVR == coreNamespaces }

// trackTerminating keeps Store.terminating up to date for a write of the
// namespace at key (obj nil: deleted).
func (s *Store) trackTerminating(key string, obj runtime.Object) {
	name := strings.TrimPrefix(key, "/")
	if obj != nil && mustAccessor(obj).GetDeletionTimestamp() != nil {
		if s.terminating == nil {
			s.terminating = map[string]bool{}
		}
		s.terminating[name] = true
		return
	}
	delete(s.terminating, name)
}

// markNamespaceTerminating sets the phase of a namespace marked for
// deletion, as the namespace storage's Delete does.
func markNamespaceTerminating(obj runtime.Object) {
	if ns, ok := obj.(*corev1.Namespace); ok {
		ns.Status.Phase = corev1.NamespaceTerminating
	}
}

// namespaceHoldsDeletion reports whether a namespace's spec.finalizers
// keep it after a delete (a namespace without them goes at once).
func namespaceHoldsDeletion(obj runtime.Object) bool {
	ns, ok := obj.(*corev1.Namespace)
	return ok && len(ns.Spec.Finalizers) > 0
}

// errIfNamespaceTerminating is NamespaceLifecycle's answer to a create in
// a terminating namespace.
func (s *Store) errIfNamespaceTerminating(r *resState, ns, name string) error {
	if !r.Namespaced || !s.terminating[ns] {
		return nil
	}
	msg := fmt.Sprintf("unable to create new content in namespace %s because it is being terminated", ns)
	err := apierrors.NewForbidden(r.groupResource(), name, fmt.Errorf("%s", msg))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    metav1.CauseType(corev1.NamespaceTerminatingCause),
		Message: msg,
		Field:   "metadata.namespace",
	})
	return err
}

// emptyNamespace is the namespace controller's work after ref (a
// namespace) was marked: it deletes every object in the namespace
// (background propagation; finalizers keep some marked), then finalizes
// the namespace if nothing is left.
func (s *Store) emptyNamespace(ref objRef, events []Event) []Event {
	name := strings.TrimPrefix(ref.key, "/")
	for _, r := range s.namespacedResources() {
		for _, key := range s.keysIn(r, name) {
			if cur, ok := s.load(r, key); ok && mustAccessor(cur).GetDeletionTimestamp() == nil {
				_, events = s.deleteObject(objRef{r, key}, metav1.DeletePropagationBackground, true, events)
			}
		}
	}
	return s.finalizeNamespace(name, events)
}

// finalizeNamespace removes the kubernetes finalizer of namespace name if
// it is terminating and empty, and deletes it if no other finalizer keeps
// it.
func (s *Store) finalizeNamespace(name string, events []Event) []Event {
	nr, ok := s.res[coreNamespaces]
	if !ok || !s.terminating[name] {
		return events
	}
	key := objectKey("", name)
	cur, ok := s.load(nr, key)
	if !ok || mustAccessor(cur).GetDeletionTimestamp() == nil {
		return events
	}
	for _, r := range s.namespacedResources() {
		if len(s.keysIn(r, name)) > 0 {
			return events
		}
	}
	ns := cur.DeepCopyObject().(*corev1.Namespace)
	if slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		ns.Spec.Finalizers = slices.DeleteFunc(slices.Clone(ns.Spec.Finalizers), func(f corev1.FinalizerName) bool { return f == corev1.FinalizerKubernetes })
		events = append(events, s.commit(nr, key, ns, cur, "update", "finalize", true))
	}
	if len(ns.Spec.Finalizers) > 0 || len(ns.Finalizers) > 0 {
		return events
	}
	ev := s.commit(nr, key, nil, ns, "delete", "", true)
	events = append(events, ev)
	return s.afterRemoval(ev, events)
}

// namespacedResources returns the namespaced resources in a stable order.
func (s *Store) namespacedResources() []*resState {
	var out []*resState
	for _, r := range s.res {
		if r.Namespaced {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *resState) int { return strings.Compare(gvrString(a.GVR), gvrString(b.GVR)) })
	return out
}

// gvrString orders resources by group, version and resource.
func gvrString(g schema.GroupVersionResource) string {
	return g.Group + "/" + g.Version + "/" + g.Resource
}

// keysIn returns the keys of r's objects in namespace ns, sorted.
func (s *Store) keysIn(r *resState, ns string) []string {
	prefix := ns + "/"
	var keys []string
	for k := range r.objects {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// errIfNamespaceMissing is NamespaceLifecycle admission's refusal of a
// create in a namespace that does not exist (with
// Options.NamespaceLifecycle): 404 NotFound naming the namespace.
func (s *Store) errIfNamespaceMissing(r *resState, ns string) error {
	if !s.nsLifecycle || !r.Namespaced || ns == "" {
		return nil
	}
	if _, ok := s.res[coreNamespaces].objects[objectKey("", ns)]; ok {
		return nil
	}
	return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, ns)
}
