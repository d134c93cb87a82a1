// Package privatectl is a controller as a user imports it from another
// package: sample-controller's shape, its workqueue and informers private,
// built inside NewController. It keeps a ConfigMap "<name>-copy" with the
// data of each ConfigMap not named "*-copy". The lab's tests record it
// with Env.Record and nothing else.
package privatectl

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Controller copies ConfigMaps.
type Controller struct {
	kube   kubernetes.Interface
	lister corelisters.ConfigMapLister
	synced cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[cache.ObjectName]
}

// NewController builds the controller on f's ConfigMap informer.
func NewController(kube kubernetes.Interface, f informers.SharedInformerFactory) *Controller {
	inf := f.Core().V1().ConfigMaps()
	c := &Controller{kube: kube, lister: inf.Lister(), synced: inf.Informer().HasSynced,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]())}
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingObjectToName(obj); err == nil {
			if strings.HasSuffix(key.Name, "-copy") {
				key.Name = strings.TrimSuffix(key.Name, "-copy")
			}
			c.queue.Add(key)
		}
	}
	_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }, DeleteFunc: enqueue})
	return c
}

// Run runs workers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer c.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		return
	}
	for range workers {
		go func() {
			for c.processNextWorkItem(ctx) {
			}
		}()
	}
	<-ctx.Done()
}

func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx, key); err != nil {
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

func (c *Controller) sync(ctx context.Context, key cache.ObjectName) error {
	src, err := c.lister.ConfigMaps(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	cp, err := c.lister.ConfigMaps(key.Namespace).Get(key.Name + "-copy")
	switch {
	case apierrors.IsNotFound(err):
		cp = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name + "-copy"}, Data: src.Data}
		_, err = c.kube.CoreV1().ConfigMaps(key.Namespace).Create(ctx, cp, metav1.CreateOptions{})
		return err
	case err != nil:
		return err
	}
	if len(cp.Data) == len(src.Data) && cp.Data["n"] == src.Data["n"] {
		return nil
	}
	cp = cp.DeepCopy()
	cp.Data = src.Data
	_, err = c.kube.CoreV1().ConfigMaps(key.Namespace).Update(ctx, cp, metav1.UpdateOptions{})
	return err
}
