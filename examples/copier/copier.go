// Package copier is a client-go controller in sample-controller style: it
// keeps, for every ConfigMap, a Secret of the same name and namespace
// holding the same data, owned by the ConfigMap (so the API server's
// garbage collector removes it with its ConfigMap).
//
// It is an example of a controller tested under cachelab: see
// copier_test.go. Options.IgnoreSecrets plants a classic bug the lab
// catches.
package copier

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Options configure a Controller.
type Options struct {
	// IgnoreSecrets is a planted bug: the controller does not watch the
	// Secrets it makes, so one deleted or changed by someone else stays
	// so until its ConfigMap changes again.
	IgnoreSecrets bool
}

// Controller copies ConfigMaps into Secrets.
type Controller struct {
	kube       kubernetes.Interface
	configMaps corelisters.ConfigMapLister
	secrets    corelisters.SecretLister
	synced     []cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]
	opts       Options

	// secretStore is the Secret informer's store; written the
	// resourceVersion of the controller's last write of a Secret. A sync
	// waits until the store has caught up with it (KEP-5647): acting on an
	// older cache would recreate what it just created (409 AlreadyExists)
	// or update from a copy older than its own write (409 Conflict).
	secretStore cache.Store
	mu          sync.Mutex
	written     int64
}

// errCacheBehind asks for a retry once the cache has caught up.
var errCacheBehind = errors.New("copier: the Secret cache is older than our last write")

// New builds the controller on factory's ConfigMap and Secret informers;
// it reads its work from queue. Start factory after New.
func New(kube kubernetes.Interface, factory informers.SharedInformerFactory, queue workqueue.TypedRateLimitingInterface[string], opts Options) (*Controller, error) {
	cms := factory.Core().V1().ConfigMaps()
	secrets := factory.Core().V1().Secrets()
	c := &Controller{kube: kube, configMaps: cms.Lister(), secrets: secrets.Lister(), queue: queue, opts: opts,
		synced:      []cache.InformerSynced{cms.Informer().HasSynced, secrets.Informer().HasSynced},
		secretStore: secrets.Informer().GetStore()}
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
	}
	if _, err := cms.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
	}); err != nil {
		return nil, err
	}
	// A Secret's change or deletion re-syncs its ConfigMap (same key).
	if _, err := secrets.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			if !opts.IgnoreSecrets {
				enqueue(obj)
			}
		},
		DeleteFunc: func(obj any) {
			if !opts.IgnoreSecrets {
				enqueue(obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// NewQueue returns the controller's default queue.
func NewQueue() workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
}

// Run waits for the caches, runs workers until ctx ends, then shuts the
// queue down.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrashWithContext(ctx)
	defer c.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return fmt.Errorf("copier: caches did not sync")
	}
	for range workers {
		go wait.UntilWithContext(ctx, c.runWorker, time.Second)
	}
	<-ctx.Done()
	return nil
}

func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	err := c.sync(ctx, key)
	switch {
	case errors.Is(err, errCacheBehind):
		c.queue.AddAfter(key, 100*time.Millisecond)
		return true
	case err != nil:
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// sync makes the Secret of the ConfigMap named key match it.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cm, err := c.configMaps.ConfigMaps(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil // the garbage collector deletes its Secret
	}
	if err != nil {
		return err
	}
	if cm.DeletionTimestamp != nil {
		return nil
	}
	if !c.caughtUp() {
		return errCacheBehind
	}
	want := secretFor(cm)
	cur, err := c.secrets.Secrets(ns).Get(name)
	var got *corev1.Secret
	switch {
	case apierrors.IsNotFound(err):
		got, err = c.kube.CoreV1().Secrets(ns).Create(ctx, want, metav1.CreateOptions{})
	case err != nil:
		return err
	case ownedBy(cur, cm) && equalData(cur.Data, want.Data):
		return nil
	default:
		up := cur.DeepCopy()
		up.Data, up.OwnerReferences = want.Data, want.OwnerReferences
		got, err = c.kube.CoreV1().Secrets(ns).Update(ctx, up, metav1.UpdateOptions{})
	}
	if err == nil {
		c.wrote(got.ResourceVersion)
	}
	return err
}

// caughtUp reports whether the Secret cache shows the controller's last
// write (resourceVersions compared as the integers the server issues).
func (c *Controller) caughtUp() bool {
	rv, _ := strconv.ParseInt(c.secretStore.LastStoreSyncResourceVersion(), 10, 64)
	c.mu.Lock()
	defer c.mu.Unlock()
	return rv >= c.written
}

func (c *Controller) wrote(rv string) {
	n, _ := strconv.ParseInt(rv, 10, 64)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.written = max(c.written, n)
}

func ownedBy(s *corev1.Secret, cm *corev1.ConfigMap) bool {
	ref := metav1.GetControllerOf(s)
	return ref != nil && ref.UID == cm.UID
}

// secretFor is the Secret cm wants.
func secretFor(cm *corev1.ConfigMap) *corev1.Secret {
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	maps.Copy(data, cm.BinaryData)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cm, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}},
		Data: data,
	}
}

func equalData(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, func(x, y []byte) bool { return string(x) == string(y) })
}

// Desired reports whether the Secret of every ConfigMap holds its data and
// is owned by it: nil if so, else what is wrong. It is the controller's
// desired state, for tests.
func Desired(cms []*corev1.ConfigMap, secret func(ns, name string) (*corev1.Secret, bool)) error {
	for _, cm := range cms {
		if cm.DeletionTimestamp != nil {
			continue
		}
		s, ok := secret(cm.Namespace, cm.Name)
		if !ok {
			return fmt.Errorf("configmap %s/%s has no secret", cm.Namespace, cm.Name)
		}
		if !ownedBy(s, cm) {
			return fmt.Errorf("secret %s/%s is not owned by configmap uid %s", s.Namespace, s.Name, cm.UID)
		}
		if !equalData(s.Data, secretFor(cm).Data) {
			return fmt.Errorf("secret %s/%s does not hold its configmap's data", s.Namespace, s.Name)
		}
	}
	return nil
}
