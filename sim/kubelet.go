package sim

import (
	"context"
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

// podsResource is core/v1 pods.
var podsResource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// kubelet is the pod-readiness actor: a real informer on every Pod, and a
// worker that, ReadyAfter after it first sees a Pod that is not Running and
// Ready, sets status.phase=Running and the Ready condition through
// UpdateStatus (retrying on conflict with the informer's fresher copy).
type kubelet struct {
	cancel context.CancelFunc
	queue  workqueue.TypedRateLimitingInterface[cache.ObjectName]
	once   sync.Once
}

func startKubelet(ctx context.Context, c *fakeapi.Client, after time.Duration, rec Recorder) *kubelet {
	ctx, cancel := context.WithCancel(ctx)
	k := &kubelet{
		cancel: cancel,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "kubelet"}),
	}
	inf := cache.NewSharedIndexInformerWithOptions(c.ListerWatcher(podsResource, ""), &corev1.Pod{}, cache.SharedIndexInformerOptions{})
	enqueue := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.DeletionTimestamp != nil || fakeapi.PodRunningReady(pod) {
			return
		}
		k.queue.AddAfter(cache.MetaObjectToName(pod), after)
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	})
	kube := c.Clientset()
	go inf.RunWithContext(ctx)
	go func() {
		defer k.queue.ShutDown()
		<-ctx.Done()
	}()
	go func() {
		if !cache.WaitFor(ctx, "", inf.HasSyncedChecker()) {
			return
		}
		for k.process(ctx, inf.GetIndexer(), kube, rec) {
		}
	}()
	return k
}

// process handles one queued Pod; false once the queue is shut down.
func (k *kubelet) process(ctx context.Context, idx cache.Indexer, kube kubernetes.Interface, rec Recorder) bool {
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
	pod = fakeapi.MarkPodRunningReady(pod, metav1.NewTime(time.Now()))
	_, err = kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	switch {
	case err == nil, apierrors.IsNotFound(err):
		k.queue.Forget(name)
	case ctx.Err() != nil:
	default:
		rec.Record(Record{Kind: RecNote, Key: name.String(), Detail: "kubelet: set Running/Ready: " + err.Error()})
		k.queue.AddRateLimited(name)
	}
	return true
}

// stop ends the kubelet's goroutines.
func (k *kubelet) stop() {
	k.once.Do(func() {
		k.cancel()
		k.queue.ShutDown()
	})
}
