package fakeapi

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
)

// podsGVR is core/v1 pods.
var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// Kubelet is a pod-readiness actor for a server that runs no containers:
// a real informer on every Pod, seen through its client c, and a workqueue
// whose worker, readyAfter after it first sees a Pod that is not Running
// and Ready, sets status.phase=Running and the Ready condition through
// UpdateStatus, retrying with backoff (on a conflict, with the informer's
// fresher copy). The sim runs it as its "kubelet" actor in virtual time,
// `cachelab serve --kubelet` in real time; its requests are faulted like
// any client's.
type Kubelet struct {
	cancel context.CancelFunc
	queue  workqueue.TypedRateLimitingInterface[cache.ObjectName]
	wg     sync.WaitGroup
	once   sync.Once
}

// StartKubelet runs a Kubelet until ctx ends or Stop is called. report,
// optional, hears of each status write: err nil when the Pod became Running
// and Ready, else the error of an attempt that will be retried.
func StartKubelet(ctx context.Context, c *Client, readyAfter time.Duration, report func(pod cache.ObjectName, err error)) *Kubelet {
	return StartKubeletWithOptions(ctx, c, KubeletOptions{ReadyAfter: readyAfter, Report: report})
}

// KubeletOptions configure StartKubeletWithOptions.
type KubeletOptions struct {
	// ReadyAfter is how long after the kubelet first sees a Pod it makes
	// it Running and Ready. Optional; default 0.
	ReadyAfter time.Duration
	// Report, optional, hears of each status write (see StartKubelet).
	Report func(pod cache.ObjectName, err error)
	// QueueMetrics, optional, is the metrics provider of the kubelet's
	// workqueue (named "kubelet"); default client-go's global one.
	QueueMetrics workqueue.MetricsProvider
	// InformerMetrics and InformerID, optional, are the Pod informer's
	// metrics provider and identity (client-go reports nothing without an
	// identity).
	InformerMetrics cache.InformerMetricsProvider
	InformerID      cache.InformerNameAndResource
}

// StartKubeletWithOptions is StartKubelet with metrics.
func StartKubeletWithOptions(ctx context.Context, c *Client, o KubeletOptions) *Kubelet {
	ctx, cancel := context.WithCancel(ctx)
	readyAfter, report := o.ReadyAfter, o.Report
	k := &Kubelet{
		cancel: cancel,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "kubelet", MetricsProvider: o.QueueMetrics}),
	}
	if report == nil {
		report = func(cache.ObjectName, error) {}
	}
	inf := cache.NewSharedIndexInformerWithOptions(c.ListerWatcher(podsGVR, ""), &corev1.Pod{},
		cache.SharedIndexInformerOptions{Identifier: o.InformerID, InformerMetricsProvider: o.InformerMetrics})
	enqueue := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.DeletionTimestamp != nil || PodRunningReady(pod) {
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
		for k.process(ctx, inf.GetIndexer(), kube, report) {
		}
	})
	return k
}

// process handles one queued Pod; false once the queue is shut down.
func (k *Kubelet) process(ctx context.Context, idx cache.Indexer, kube kubernetes.Interface, report func(cache.ObjectName, error)) bool {
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
	if pod.DeletionTimestamp != nil || PodRunningReady(pod) {
		k.queue.Forget(name)
		return true
	}
	pod = MarkPodRunningReady(pod, metav1.NewTime(time.Now()))
	_, err = kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	switch {
	case err == nil:
		report(name, nil)
		k.queue.Forget(name)
	case apierrors.IsNotFound(err):
		k.queue.Forget(name)
	case ctx.Err() != nil:
	default:
		report(name, err)
		k.queue.AddRateLimited(name)
	}
	return true
}

// Stop ends the Kubelet's work (as ending its context does); it may be
// called more than once.
func (k *Kubelet) Stop() {
	k.once.Do(func() {
		k.cancel()
		k.queue.ShutDown()
	})
}

// Wait blocks until every goroutine of the Kubelet has returned (after Stop
// or the end of its context).
func (k *Kubelet) Wait() { k.wg.Wait() }
