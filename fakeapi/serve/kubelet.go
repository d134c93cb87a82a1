package serve

import (
	"context"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/fakeapi"
)

// KubeletClient is the client name the kubelet's requests carry (in the
// trace and in /metrics). Its requests are faulted like everyone's.
const KubeletClient = "kubelet"

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// kubelet is serve's pod-readiness actor, the real-time twin of the sim's:
// a real informer on every Pod of the in-process server and a workqueue
// whose worker, readyAfter after it first sees a Pod that is not Running
// and Ready, sets status.phase=Running and the Ready condition through
// UpdateStatus, retrying with backoff (the fault profile reaches it too).
// Without it no Pod ever becomes Ready: the fake server runs no containers.
type kubelet struct {
	queue workqueue.TypedRateLimitingInterface[cache.ObjectName]
	wg    sync.WaitGroup
}

// startKubelet runs the kubelet until ctx ends; wait returns once every
// goroutine of it has.
func startKubelet(ctx context.Context, api *fakeapi.Server, readyAfter time.Duration, log *slog.Logger) *kubelet {
	c := api.Client(KubeletClient)
	k := &kubelet{
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: KubeletClient}),
	}
	inf := cache.NewSharedIndexInformerWithOptions(c.ListerWatcher(podsGVR, ""), &corev1.Pod{}, cache.SharedIndexInformerOptions{})
	enqueue := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.DeletionTimestamp != nil || fakeapi.PodRunningReady(pod) {
			return
		}
		k.queue.AddAfter(cache.MetaObjectToName(pod), readyAfter)
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	})
	kube := c.Clientset()
	k.wg.Go(func() { inf.RunWithContext(ctx) })
	k.wg.Go(func() {
		<-ctx.Done()
		k.queue.ShutDown()
	})
	k.wg.Go(func() {
		if !cache.WaitFor(ctx, "", inf.HasSyncedChecker()) {
			return
		}
		for k.process(ctx, inf.GetIndexer(), kube, log) {
		}
	})
	return k
}

// wait blocks until the kubelet's goroutines have returned.
func (k *kubelet) wait() { k.wg.Wait() }

// process handles one queued Pod; false once the queue is shut down.
func (k *kubelet) process(ctx context.Context, idx cache.Indexer, kube kubernetes.Interface, log *slog.Logger) bool {
	name, shutdown := k.queue.Get()
	if shutdown {
		return false
	}
	defer k.queue.Done(name)
	obj, exists, err := idx.GetByKey(name.String())
	if err != nil || !exists {
		k.queue.Forget(name)
		return true
	}
	pod := obj.(*corev1.Pod)
	if pod.DeletionTimestamp != nil || fakeapi.PodRunningReady(pod) {
		k.queue.Forget(name)
		return true
	}
	pod = fakeapi.MarkPodRunningReady(pod, metav1.Now())
	_, err = kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	switch {
	case err == nil:
		log.Debug("kubelet: pod ready", "pod", name.String())
		k.queue.Forget(name)
	case apierrors.IsNotFound(err):
		k.queue.Forget(name)
	case ctx.Err() != nil:
	default:
		log.Debug("kubelet: setting Running/Ready failed, will retry", "pod", name.String(), "err", err)
		k.queue.AddRateLimited(name)
	}
	return true
}
