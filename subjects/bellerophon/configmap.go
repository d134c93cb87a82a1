package bellerophon

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/subjects/bellerophon/apis/lab/v1alpha1"
)

// This file keeps each Bellerophon's ConfigMap, reading its own writes.

// CatchUpRetry is how long a reconcile that found the ConfigMap informer
// behind its own last write waits before looking again.
const CatchUpRetry = time.Second

// manageConfigMap creates or re-renders b's ConfigMap. It does not act on a
// lister read that cannot yet show its own last write of that ConfigMap
// (read-your-writes), and looks again after CatchUpRetry: the write's watch
// event may never come (random-6956: the watch expired before the echo,
// someone deleted the ConfigMap, and the relist did not mention it).
func (c *Controller) manageConfigMap(ctx context.Context, b *v1alpha1.Bellerophon) error {
	name := ConfigMapName(b.Name)
	cmKey := b.Namespace + "/" + name
	caughtUp := c.bug == NoReadYourWrites || c.cmCaughtUp(cmKey)
	cm, err := c.cmLister.ConfigMaps(b.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		if !caughtUp {
			c.workqueue.AddAfter(cache.MetaObjectToName(b), CatchUpRetry)
			return nil
		}
		created, err := c.kubeclientset.CoreV1().ConfigMaps(b.Namespace).Create(ctx, newConfigMap(b), metav1.CreateOptions{FieldManager: controllerAgentName})
		if err != nil {
			return fmt.Errorf("creating ConfigMap %s: %w", cmKey, err)
		}
		c.wroteConfigMap(cmKey, created.ResourceVersion)
		c.recorder.Eventf(b, corev1.EventTypeNormal, ReasonCreatedConfigMap, "Created ConfigMap %s", name)
		return nil
	}
	if err != nil {
		return err
	}
	ref := bellerophonRef(cm)
	if ref == nil || !c.owns(b, ref) {
		if ref != nil && ref.Name == b.Name {
			return fmt.Errorf("ConfigMap %s still belongs to an earlier Bellerophon %s (UID %s); waiting for the garbage collector", cmKey, b.Name, ref.UID)
		}
		msg := fmt.Sprintf("ConfigMap %q already exists and is not managed by Bellerophon %s", name, b.Name)
		c.recorder.Event(b, corev1.EventTypeWarning, ReasonResourceExists, msg)
		return errors.New(msg)
	}
	if sameData(cm.Data, b.Spec.Config) {
		return nil
	}
	if !caughtUp {
		c.workqueue.AddAfter(cache.MetaObjectToName(b), CatchUpRetry)
		return nil
	}
	base := cm
	first := true
	return c.retryOnConflict(func() error {
		if !first {
			fresh, err := c.kubeclientset.CoreV1().ConfigMaps(b.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			base = fresh
		}
		first = false
		want := base.DeepCopy()
		want.Data = newConfigMap(b).Data
		updated, err := c.kubeclientset.CoreV1().ConfigMaps(b.Namespace).Update(ctx, want, metav1.UpdateOptions{FieldManager: controllerAgentName})
		if err != nil {
			return err
		}
		c.wroteConfigMap(cmKey, updated.ResourceVersion)
		c.recorder.Eventf(b, corev1.EventTypeNormal, ReasonUpdatedConfigMap, "Rendered ConfigMap %s", name)
		return nil
	})
}

// cmCaughtUp reports whether the ConfigMap informer's store has reached the
// controller's last write of cmKey.
func (c *Controller) cmCaughtUp(cmKey string) bool {
	c.mu.Lock()
	rv := c.cmWrites[cmKey]
	c.mu.Unlock()
	return storeRV(c.cmInformer) >= rv
}

func (c *Controller) wroteConfigMap(cmKey, rv string) {
	c.mu.Lock()
	c.cmWrites[cmKey] = parseRV(rv)
	c.mu.Unlock()
	c.signals.wrote(ResourceConfigMaps, rv)
}
