package bellerophon

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/subjects/bellerophon/apis/lab/v1alpha1"
)

// controllerAgentName is the Events' source component and the field manager.
const controllerAgentName = "bellerophon"

// FinalizerName is the finalizer the controller puts on every Bellerophon:
// it removes the object's backup from the BackupStore before the object
// goes.
const FinalizerName = "lab.cachelab.dev/backup"

// Event reasons, as in sample-controller: Normal for what the controller
// did, Warning for what it could not do.
const (
	// ReasonCreatedPod: a Pod was created.
	ReasonCreatedPod = "CreatedPod"
	// ReasonDeletedPod: a Pod was deleted (excess or old version).
	ReasonDeletedPod = "DeletedPod"
	// ReasonCreatedConfigMap: the ConfigMap was created.
	ReasonCreatedConfigMap = "CreatedConfigMap"
	// ReasonUpdatedConfigMap: the ConfigMap was re-rendered.
	ReasonUpdatedConfigMap = "UpdatedConfigMap"
	// ReasonBackupCleaned: the finalizer removed the external backup.
	ReasonBackupCleaned = "BackupCleaned"
	// ReasonReady: every wanted Pod became Ready.
	ReasonReady = "Ready"
	// ReasonInvalidSpec: the object does not match the CRD schema; it is
	// ignored until fixed.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonResourceExists: a ConfigMap of the wanted name exists and is
	// not controlled by this Bellerophon.
	ReasonResourceExists = "ErrResourceExists"
	// ReasonSyncFailed: a reconcile failed and will be retried.
	ReasonSyncFailed = "SyncFailed"
)

// The resources the controller watches, as the trace names them.
const (
	ResourceBellerophons = v1alpha1.Plural + "." + v1alpha1.GroupName
	ResourcePods         = "pods"
	ResourceConfigMaps   = "configmaps"
)

// The GroupVersionResources of the children.
var (
	podsGVR       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// Controller is the Bellerophon operator: informers on Bellerophons, Pods
// and ConfigMaps feed a rate-limited workqueue of Bellerophon keys that
// workers drain through syncHandler.
type Controller struct {
	// rec records handler calls, queue operations, reconciles, signals and
	// notes into the sim trace under the controller's actor name.
	rec recorder
	// bug is the single deliberate bug this controller carries (NoBug for
	// the correct controller).
	bug Bug
	// workers is how many workers drain the queue.
	workers int
	// handlerDelay is slept in every event handler call (a slow handler,
	// the recipe of EDGE 1).
	handlerDelay time.Duration
	// sleep waits out handlerDelay: the run's Env.Sleep, time.Sleep
	// outside the sim; ctx is the controller's, for it.
	sleep func(ctx context.Context, name string, d time.Duration)
	ctx   context.Context

	// kubeclientset writes Pods, ConfigMaps and Events.
	kubeclientset kubernetes.Interface
	// bellerophons writes Bellerophons (the dynamic client: the lab has no
	// generated clientset for its CRD).
	bellerophons dynamic.NamespaceableResourceInterface

	// bphInformer caches Bellerophons as *unstructured.Unstructured.
	bphInformer cache.SharedIndexInformer
	// bphLister reads bphInformer's indexer.
	bphLister bellerophonLister
	// podInformer caches Pods (typed).
	podInformer cache.SharedIndexInformer
	// podLister reads podInformer's indexer.
	podLister corelisters.PodLister
	// cmInformer caches ConfigMaps (typed).
	cmInformer cache.SharedIndexInformer
	// cmLister reads cmInformer's indexer.
	cmLister corelisters.ConfigMapLister
	// registrations are the controller's handler registrations, per
	// resource: their HasSyncedChecker is what the workers wait for.
	registrations map[string]cache.ResourceEventHandlerRegistration

	// children is the handler-fed index owner -> Pod keys.
	children *childIndex
	// expectations hold the Pod creates and deletes not yet observed.
	expectations *expectations
	// signals tracks and records the sync signals.
	signals *signals
	// backups is the external backup store of this run.
	backups *BackupStore

	// mu guards lastWritten and cmWrites.
	mu sync.Mutex
	// lastWritten is, per Bellerophon (namespace/name), the object as the
	// server returned it after the controller's last write of it: the base
	// of the next status write while the cache has not caught up with it
	// (read-your-writes), and the status whose echo needs no reconcile.
	lastWritten map[string]*unstructured.Unstructured
	// cmWrites is the resourceVersion of the controller's last write of each
	// ConfigMap (namespace/name): read-your-writes for the ConfigMap.
	cmWrites map[string]int64
	// vanished counts, per Bellerophon key, the children deleted by someone
	// else since its last reconcile (see childVanished).
	vanished map[string]int
	// holds delays the re-creation of children deleted by someone else
	// (see holdCreates).
	holds map[string]createHold

	// workqueue is a rate limited work queue of Bellerophon keys: a key is
	// processed by one worker at a time and retried with backoff on error.
	// Every operation on it is recorded.
	workqueue workqueue.TypedRateLimitingInterface[cache.ObjectName]
	// broadcaster sends the recorder's Events to the API server.
	broadcaster record.EventBroadcaster
	// recorder records Events on Bellerophons.
	recorder record.EventRecorder
}

// Run starts the informers, waits for the sync signal the controller trusts
// (every handler registration's HasSynced; the mutants InformerSynced and
// QuiescenceSynced wait for another), then starts the workers. It blocks
// until ctx is cancelled, then shuts the queue down and waits for the
// workers and informers to return.
func (c *Controller) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.workqueue.ShutDown()

	c.startInformers(ctx, &wg)

	var waitedFor string
	switch c.bug {
	case InformerSynced:
		waitedFor = SignalInformerSynced
		if !cache.WaitFor(ctx, "", c.bphInformer.HasSyncedChecker(), c.podInformer.HasSyncedChecker(), c.cmInformer.HasSyncedChecker()) {
			return ctx.Err()
		}
	case QuiescenceSynced:
		waitedFor = SignalQuiescenceSynced
		select {
		case <-c.signals.quietCh:
		case <-ctx.Done():
			return ctx.Err()
		}
	default:
		waitedFor = SignalHandlerSynced
		checkers := make([]cache.DoneChecker, 0, len(c.registrations))
		for _, r := range []string{ResourceBellerophons, ResourcePods, ResourceConfigMaps} {
			checkers = append(checkers, c.registrations[r].HasSyncedChecker())
		}
		if !cache.WaitFor(ctx, "", checkers...) {
			return ctx.Err()
		}
	}
	c.signals.check()
	c.rec.note("starting %d workers after %s", c.workers, waitedFor)
	for range c.workers {
		wg.Go(func() { wait.UntilWithContext(ctx, c.runWorker, time.Second) })
	}
	<-ctx.Done()
	return nil
}

// startInformers records the initial sync signals and starts the informers
// and the signal watchers, each in a goroutine of wg that returns when ctx
// is cancelled.
func (c *Controller) startInformers(ctx context.Context, wg *sync.WaitGroup) {
	c.signals.start()
	for _, inf := range []cache.SharedIndexInformer{c.bphInformer, c.podInformer, c.cmInformer} {
		wg.Go(func() { inf.RunWithContext(ctx) })
	}
	wg.Go(func() { c.signals.watchDone(ctx.Done()) })
	wg.Go(func() { c.signals.watchQuiescence(ctx.Done()) })
}

// runWorker processes work items until the queue shuts down.
func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// processNextWorkItem takes one key, runs syncHandler on it, and forgets it
// on success or requeues it with backoff on error.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.workqueue.Get()
	if shutdown {
		return false
	}
	defer c.workqueue.Done(key)

	c.rec.record(sim.Record{Kind: sim.RecReconcile, Op: "start", Key: key.String()})
	err := c.syncHandler(ctx, key)
	result := "ok"
	if err != nil {
		result = err.Error()
	}
	c.rec.record(sim.Record{Kind: sim.RecReconcile, Op: "end", Key: key.String(), Result: result})
	c.signals.check()

	if err == nil {
		c.workqueue.Forget(key)
		return true
	}
	if c.bug == DropsConflicts && (apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)) {
		// The bug: "someone else changed it, an event will bring us back".
		c.rec.note("dropping %s after a 409: %v", key, err)
		c.workqueue.Forget(key)
		return true
	}
	// sample-controller reports the error with utilruntime.HandleError; the
	// reconcile record above carries it instead. HandleError rate-limits
	// with a process-wide clock reading (rudimentaryErrorBackoff) that
	// sleeps for as long as time "went backwards": every synctest bubble
	// restarts the clock at 2000-01-01, so a call after another bubble's
	// sleeps for that bubble's whole run and outlives this one.
	c.workqueue.AddRateLimited(key)
	return true
}

// syncHandler compares the actual state of one Bellerophon's world with the
// desired one and converges them: finalizer, backup, ConfigMap, Pods, then
// status. It reads only listers (and, to retry a conflict, the server).
func (c *Controller) syncHandler(ctx context.Context, key cache.ObjectName) (err error) {
	defer func() {
		if r := recover(); r != nil {
			c.rec.note("reconcile of %s panicked: %v\n%s", key, r, debug.Stack())
			err = fmt.Errorf("bellerophon: reconcile of %s panicked: %v", key, r)
		}
	}()

	if n := c.takeVanished(key); n > 0 {
		c.holdCreates(key, n)
	}
	u, err := c.bphLister.Get(key.Namespace, key.Name)
	if apierrors.IsNotFound(err) {
		// Gone: forget its expectations and clean what the finalizer could
		// not (a finalizer removed by someone else, a delete missed).
		c.expectations.Delete(key.String())
		c.cleanBackups(key, "")
		return nil
	}
	if err != nil {
		return err
	}
	if c.bug != NoReadYourWrites && c.bug != StaleStatus {
		// Read your writes: the controller's own last write of this
		// incarnation is newer than the cached copy (its echo has not
		// arrived yet): act on it, not on the copy it replaced.
		c.mu.Lock()
		lw := c.lastWritten[key.String()]
		c.mu.Unlock()
		if lw != nil && lw.GetUID() == u.GetUID() && parseRV(lw.GetResourceVersion()) > parseRV(u.GetResourceVersion()) {
			u = lw.DeepCopy()
		}
	}
	uid := u.GetUID()
	if c.bug != NoUIDCheck {
		// Backups of earlier incarnations of this name are leftovers.
		c.cleanBackups(key, uid)
	}

	if u.GetDeletionTimestamp() != nil {
		if c.bug == ChildrenUnderTerminating {
			if b, err := decodeBellerophon(u); err == nil {
				if _, err := c.manageChildren(ctx, b); err != nil {
					return err
				}
			}
		}
		return c.finalize(ctx, u)
	}

	b, err := decodeBellerophon(u)
	if err != nil {
		c.recorder.Event(u, corev1.EventTypeWarning, ReasonInvalidSpec, err.Error())
		c.rec.note("%s: %v", key, err)
		return nil
	}

	if u, err = c.ensureFinalizer(ctx, u); err != nil {
		return err
	}
	if u == nil {
		return nil // gone or replaced meanwhile; its event will follow
	}
	if b, err = decodeBellerophon(u); err != nil {
		return err
	}
	c.putBackup(b)

	pods, manageErr := c.manageChildren(ctx, b)
	statusErr := c.updateStatus(ctx, b, pods, manageErr)
	if manageErr != nil {
		c.recorder.Event(b, corev1.EventTypeWarning, ReasonSyncFailed, manageErr.Error())
	}
	return errors.Join(manageErr, statusErr)
}

// manageChildren converges the ConfigMap and, when the expectations allow,
// the Pods. It returns the Pods owned before any change (for status).
//
// The expectations are checked before the Pods are listed, as the ReplicaSet
// controller does: the Pod handler indexes a Pod before it observes it, so
// expectations found satisfied at time t guarantee that a listing after t
// shows every Pod the controller created or deleted. Listing first could
// miss Pods observed between the listing and the check, and create them
// again.
func (c *Controller) manageChildren(ctx context.Context, b *v1alpha1.Bellerophon) ([]*corev1.Pod, error) {
	key := cache.MetaObjectToName(b).String()
	ok, expired := c.expectations.Satisfied(key, b.UID)
	if expired {
		c.rec.note("%s: expectations expired after %v; trusting the cache", key, ExpectationsTimeout)
	}
	pods := c.ownedPods(b)
	if wait := c.createsHeld(cache.MetaObjectToName(b)); wait > 0 {
		c.workqueue.AddAfter(cache.MetaObjectToName(b), wait)
		return pods, nil
	}
	cmErr := c.manageConfigMap(ctx, b)
	var podErr error
	if ok || c.bug == NoExpectations {
		podErr = c.managePods(ctx, b, pods)
	}
	return pods, errors.Join(cmErr, podErr)
}

// holdCreates starts or lengthens the hold on re-creating key's children
// after n of them were deleted by someone else: 100ms, doubling up to 30s
// while deletions keep coming, back to 100ms after a quiet minute.
//
// A child deleted by someone else is recreated, but not at once: when the
// cached owner is a ghost (deleted on the server, not yet in the cache),
// the garbage collector deletes each new child as soon as it is created,
// and "create, collected, create" would loop as fast as events flow; in
// virtual time, where the loop takes no time, time would never advance and
// the cache would never catch up.
func (c *Controller) holdCreates(key cache.ObjectName, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	h := c.holds[key.String()]
	switch {
	case h.next == 0 || now.Sub(h.until) > time.Minute:
		h.next = 100 * time.Millisecond
	default:
		h.next = min(2*h.next, 30*time.Second)
	}
	h.until = now.Add(h.next)
	c.holds[key.String()] = h
	c.rec.note("%d children of %s deleted by someone else: creating again in %v", n, key, h.next)
}

// createsHeld returns how long key's creates are still held (0: not held).
func (c *Controller) createsHeld(key cache.ObjectName) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return max(time.Until(c.holds[key.String()].until), 0)
}

// createHold is the hold of one key's creates (see holdCreates).
type createHold struct {
	until time.Time
	next  time.Duration
}

// ownedPods returns the Pods of b from the child index and the Pod lister,
// sorted by name.
func (c *Controller) ownedPods(b *v1alpha1.Bellerophon) []*corev1.Pod {
	var out []*corev1.Pod
	for _, k := range c.children.children(c.ownerIndexKey(b.Namespace, b.Name, b.UID)) {
		ns, name, err := cache.SplitMetaNamespaceKey(k)
		if err != nil {
			continue
		}
		pod, err := c.podLister.Pods(ns).Get(name)
		if err != nil {
			continue
		}
		if ref := bellerophonRef(pod); ref == nil || !c.owns(b, ref) {
			continue
		}
		out = append(out, pod)
	}
	return out
}

// owns reports whether ref designates b: same UID (same name under
// NoUIDCheck).
func (c *Controller) owns(b *v1alpha1.Bellerophon, ref *metav1.OwnerReference) bool {
	if c.bug == NoUIDCheck {
		return ref.Name == b.Name
	}
	return ref.UID == b.UID
}

// ownerIndexKey is the child index's key of an owner.
func (c *Controller) ownerIndexKey(namespace, name string, uid types.UID) string {
	if c.bug == NoUIDCheck {
		return namespace + "/" + name
	}
	return string(uid)
}

// managePods creates missing Pods of the wanted version and deletes Pods of
// other versions and excess ones, setting expectations first.
func (c *Controller) managePods(ctx context.Context, b *v1alpha1.Bellerophon, pods []*corev1.Pod) error {
	var current, toDelete []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if len(p.Spec.Containers) == 1 && p.Spec.Containers[0].Image == Image(b.Spec.Version) {
			current = append(current, p)
		} else {
			toDelete = append(toDelete, p)
		}
	}
	want := int(b.Spec.Replicas)
	if excess := len(current) - want; excess > 0 {
		// Delete not-ready Pods first, then the newest names.
		sort.SliceStable(current, func(i, j int) bool {
			ri, rj := podReady(current[i]), podReady(current[j])
			if ri != rj {
				return !ri
			}
			return current[i].Name > current[j].Name
		})
		toDelete = append(toDelete, current[:excess]...)
	}
	create := max(want-len(current), 0)
	if create == 0 && len(toDelete) == 0 {
		return nil
	}
	key := cache.MetaObjectToName(b).String()
	if c.bug != NoExpectations {
		c.expectations.Expect(key, b.UID, create, len(toDelete))
	}

	var errs []error
	// Delete first: the number of live Pods never exceeds the wanted one,
	// not even while a version change replaces them.
	for _, p := range toDelete {
		uid := p.UID
		err := c.kubeclientset.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil {
			c.expectations.DeletionObserved(key, b.UID)
			if !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting Pod %s/%s: %w", p.Namespace, p.Name, err))
			}
			continue
		}
		c.recorder.Eventf(b, corev1.EventTypeNormal, ReasonDeletedPod, "Deleted Pod %s", p.Name)
	}
	if len(errs) > 0 {
		// A Pod that should have gone is still there: creating its
		// replacement now would exceed the wanted count. Retry later.
		for range create {
			c.expectations.CreationObserved(key, b.UID)
		}
		return errors.Join(errs...)
	}
	for i := range create {
		pod, err := c.kubeclientset.CoreV1().Pods(b.Namespace).Create(ctx, newPod(b), metav1.CreateOptions{FieldManager: controllerAgentName})
		if err != nil {
			// The creates not made will never be observed. A timeout is a
			// write with unknown outcome: the server may have applied it, so
			// its expectation stays, as the DaemonSet controller does, and
			// the informer tells (EDGE 28). If it was not applied, the
			// expectation expires and the next sync creates it.
			notMade := create - i
			if apierrors.IsTimeout(err) && c.bug != TimeoutAsFailure {
				notMade--
			}
			for range notMade {
				c.expectations.CreationObserved(key, b.UID)
			}
			errs = append(errs, fmt.Errorf("creating a Pod for %s: %w", key, err))
			break
		}
		c.signals.wrote(ResourcePods, pod.ResourceVersion)
		c.recorder.Eventf(b, corev1.EventTypeNormal, ReasonCreatedPod, "Created Pod %s (%s)", pod.Name, Image(b.Spec.Version))
	}
	return errors.Join(errs...)
}

// retryOnConflict runs fn, retrying 409 Conflicts with DefaultBackoff
// (fn reads afresh on retries). DropsConflicts runs it once.
func (c *Controller) retryOnConflict(fn func() error) error {
	if c.bug == DropsConflicts {
		return fn()
	}
	return retry.RetryOnConflict(retry.DefaultBackoff, fn)
}

// putBackup writes b's backup (under NoUIDCheck: only if no backup of that
// name exists, whatever its UID).
func (c *Controller) putBackup(b *v1alpha1.Bellerophon) {
	if c.bug == NoUIDCheck && len(c.backups.ByName(b.Namespace, b.Name)) > 0 {
		return
	}
	if c.backups.Put(BackupEntry{Namespace: b.Namespace, Name: b.Name, UID: b.UID, Version: b.Spec.Version, Config: b.Spec.Config}) {
		c.snapshotBackups()
	}
}

// deleteBackup removes the backup of uid (under NoUIDCheck: every backup of
// the name).
func (c *Controller) deleteBackup(namespace, name string, uid types.UID) bool {
	removed := false
	if c.bug == NoUIDCheck {
		for _, e := range c.backups.ByName(namespace, name) {
			removed = c.backups.Delete(e.UID) || removed
		}
	} else {
		removed = c.backups.Delete(uid)
	}
	if removed {
		c.snapshotBackups()
	}
	return removed
}

// cleanBackups removes the backups of key's name whose UID is not keep (""
// removes all).
func (c *Controller) cleanBackups(key cache.ObjectName, keep types.UID) {
	removed := false
	for _, e := range c.backups.ByName(key.Namespace, key.Name) {
		if e.UID != keep && c.backups.Delete(e.UID) {
			removed = true
			c.rec.note("removed the leftover backup of %s (UID %s)", key, e.UID)
		}
	}
	if removed {
		c.snapshotBackups()
	}
}

func (c *Controller) snapshotBackups() {
	c.rec.record(sim.Record{Kind: sim.RecCache, Handler: BackupCacheName, Objects: c.backups.objectStates()})
}

// enqueue adds a Bellerophon key to the queue.
func (c *Controller) enqueue(key cache.ObjectName) {
	c.workqueue.Add(key)
}
