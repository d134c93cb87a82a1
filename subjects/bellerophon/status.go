package bellerophon

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/subjects/bellerophon/apis/lab/v1alpha1"
)

// This file computes and writes a Bellerophon's status.

// updateStatus computes b's status from pods and writes it if it changed.
// A conflict is retried from a fresh read; if the fresh object has another
// generation, its own event will bring the key back and nothing is written.
//
// The base of the write is the cached copy, or, when the controller's own
// last write of b is newer than the cache (its echo has not arrived yet),
// that write: comparing with a copy that predates it would take a status
// already replaced for the current one (read-your-writes). StaleStatus and
// NoReadYourWrites always use the cached copy.
func (c *Controller) updateStatus(ctx context.Context, b *v1alpha1.Bellerophon, pods []*corev1.Pod, manageErr error) error {
	base := b
	if c.bug != StaleStatus && c.bug != NoReadYourWrites {
		if lw := c.lastWrite(b); lw != nil {
			if lw.Generation != b.Generation {
				// The server holds a spec the cache has not shown yet; its
				// event will bring the key back.
				return nil
			}
			base = lw
		}
	}
	first := true
	return c.retryOnConflict(func() error {
		if !first {
			u, err := c.bellerophons.Namespace(b.Namespace).Get(ctx, b.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			fresh, err := decodeBellerophon(u)
			if err != nil {
				return nil // the object turned invalid: its event will follow
			}
			if fresh.UID != b.UID || fresh.Generation != b.Generation {
				return nil
			}
			base = fresh
		}
		first = false
		status := computeStatus(base, pods, manageErr)
		if equality.Semantic.DeepEqual(base.Status, status) {
			return nil
		}
		want := base.DeepCopy()
		want.Status = status
		if c.bug == StaleStatus {
			// The bug: no optimistic concurrency. (A PUT without
			// resourceVersion is refused for custom resources, 422, so the
			// unconditional write is a merge patch of the whole status.)
			if err := c.patchStatus(ctx, want); err != nil {
				return err
			}
		} else {
			u, err := toUnstructured(want)
			if err != nil {
				return err
			}
			if _, err := c.bellerophonWrite(ctx, u, true); err != nil {
				return err
			}
		}
		if meta.IsStatusConditionTrue(status.Conditions, v1alpha1.ConditionReady) &&
			!meta.IsStatusConditionTrue(base.Status.Conditions, v1alpha1.ConditionReady) {
			c.recorder.Eventf(b, corev1.EventTypeNormal, ReasonReady, "%d/%d replicas ready", status.ReadyReplicas, b.Spec.Replicas)
		}
		return nil
	})
}

// patchStatus writes b's status as a JSON merge patch of the status
// subresource: no resourceVersion precondition, and conditions (a list)
// replaced as a whole. Used by StaleStatus only.
func (c *Controller) patchStatus(ctx context.Context, b *v1alpha1.Bellerophon) error {
	data, err := json.Marshal(map[string]any{"status": b.Status})
	if err != nil {
		return err
	}
	out, err := c.bellerophons.Namespace(b.Namespace).Patch(ctx, b.Name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: controllerAgentName}, "status")
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.lastWritten[cache.MetaObjectToName(out).String()] = out
	c.mu.Unlock()
	c.signals.wrote(ResourceBellerophons, out.GetResourceVersion())
	return nil
}

// lastWrite returns the controller's own last write of b if it is newer
// than b (same UID), else nil.
func (c *Controller) lastWrite(b *v1alpha1.Bellerophon) *v1alpha1.Bellerophon {
	c.mu.Lock()
	lw := c.lastWritten[cache.MetaObjectToName(b).String()]
	c.mu.Unlock()
	if lw == nil || lw.GetUID() != b.UID || parseRV(lw.GetResourceVersion()) <= parseRV(b.ResourceVersion) {
		return nil
	}
	out, err := decodeBellerophon(lw)
	if err != nil {
		return nil
	}
	return out
}

// computeStatus returns b's status given its owned pods: readyReplicas
// counts the ready, live Pods of the wanted version; conditions other than
// Ready, Progressing and Degraded (someone else's) are kept.
func computeStatus(b *v1alpha1.Bellerophon, pods []*corev1.Pod, manageErr error) v1alpha1.BellerophonStatus {
	var ready, current, old int32
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if len(p.Spec.Containers) == 1 && p.Spec.Containers[0].Image == Image(b.Spec.Version) {
			current++
			if podReady(p) {
				ready++
			}
		} else {
			old++
		}
	}
	s := *b.Status.DeepCopy()
	s.ObservedGeneration = b.Generation
	s.ReadyReplicas = ready
	now := metav1.Now().Rfc3339Copy()
	set := func(t string, st metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&s.Conditions, metav1.Condition{
			Type: t, Status: st, Reason: reason, Message: msg,
			ObservedGeneration: b.Generation, LastTransitionTime: now,
		})
	}
	want := b.Spec.Replicas
	if ready == want {
		set(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonAllReady, fmt.Sprintf("%d/%d replicas ready", ready, want))
	} else {
		set(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonWaitingForPods, fmt.Sprintf("%d/%d replicas ready", ready, want))
	}
	switch {
	case old > 0:
		set(v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonRollingVersion, fmt.Sprintf("replacing %d Pods of another version", old))
	case current != want:
		set(v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonScaling, fmt.Sprintf("%d Pods, want %d", current, want))
	case ready != want:
		set(v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonWaitingForPods, fmt.Sprintf("%d/%d replicas ready", ready, want))
	default:
		set(v1alpha1.ConditionProgressing, metav1.ConditionFalse, v1alpha1.ReasonStable, "nothing to do")
	}
	if manageErr != nil {
		set(v1alpha1.ConditionDegraded, metav1.ConditionTrue, v1alpha1.ReasonReconcileFailed, manageErr.Error())
	} else {
		set(v1alpha1.ConditionDegraded, metav1.ConditionFalse, v1alpha1.ReasonReconciled, "last reconcile succeeded")
	}
	return s
}
