package bellerophon

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// This file writes Bellerophons themselves: the finalizer, and the cleanup
// that removes it when a Bellerophon is deleted.

// bellerophonWrite writes a Bellerophon (update or status update) and
// records its resourceVersion as the controller's own.
func (c *Controller) bellerophonWrite(ctx context.Context, u *unstructured.Unstructured, status bool) (*unstructured.Unstructured, error) {
	client := c.bellerophons.Namespace(u.GetNamespace())
	var out *unstructured.Unstructured
	var err error
	if status {
		out, err = client.UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: controllerAgentName})
	} else {
		out, err = client.Update(ctx, u, metav1.UpdateOptions{FieldManager: controllerAgentName})
	}
	if err != nil {
		return nil, err
	}
	key := cache.MetaObjectToName(out).String()
	c.mu.Lock()
	c.lastWritten[key] = out
	c.mu.Unlock()
	c.signals.wrote(ResourceBellerophons, out.GetResourceVersion())
	return out, nil
}

// freshBellerophon reads u's object from the server for a conflict retry.
// It returns nil (and no error) when the object is gone or is another
// incarnation.
func (c *Controller) freshBellerophon(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	fresh, err := c.bellerophons.Namespace(u.GetNamespace()).Get(ctx, u.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if fresh.GetUID() != u.GetUID() {
		return nil, nil
	}
	return fresh, nil
}

// ensureFinalizer adds FinalizerName to u if missing and returns the
// object as written (u itself if nothing was needed; nil if the object went
// away meanwhile).
func (c *Controller) ensureFinalizer(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if hasFinalizer(u) {
		return u, nil
	}
	base := u
	first := true
	var out *unstructured.Unstructured
	err := c.retryOnConflict(func() error {
		if !first {
			fresh, err := c.freshBellerophon(ctx, u)
			if err != nil || fresh == nil {
				base = nil
				return err
			}
			base = fresh
		}
		first = false
		if hasFinalizer(base) {
			out = base
			return nil
		}
		want := base.DeepCopy()
		want.SetFinalizers(append(want.GetFinalizers(), FinalizerName))
		var err error
		out, err = c.bellerophonWrite(ctx, want, false)
		return err
	})
	if base == nil {
		return nil, err
	}
	return out, err
}

// finalize runs the finalizer of a terminating Bellerophon: remove its
// backup, then the finalizer.
func (c *Controller) finalize(ctx context.Context, u *unstructured.Unstructured) error {
	if !hasFinalizer(u) {
		return nil
	}
	if c.deleteBackup(u.GetNamespace(), u.GetName(), u.GetUID()) {
		c.recorder.Eventf(u, corev1.EventTypeNormal, ReasonBackupCleaned, "Removed the backup of %s", u.GetUID())
	}
	if c.bug == FinalizerNeverRemoved {
		return nil
	}
	base := u
	first := true
	return c.retryOnConflict(func() error {
		if !first {
			fresh, err := c.freshBellerophon(ctx, u)
			if err != nil || fresh == nil {
				return err
			}
			base = fresh
		}
		first = false
		if !hasFinalizer(base) {
			return nil
		}
		want := base.DeepCopy()
		var kept []string
		for _, f := range want.GetFinalizers() {
			if f != FinalizerName {
				kept = append(kept, f)
			}
		}
		want.SetFinalizers(kept)
		_, err := c.bellerophonWrite(ctx, want, false)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}

func hasFinalizer(u *unstructured.Unstructured) bool {
	for _, f := range u.GetFinalizers() {
		if f == FinalizerName {
			return true
		}
	}
	return false
}
