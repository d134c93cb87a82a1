package bellerophon

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/subjects/bellerophon/apis/lab/v1alpha1"
)

// This file builds the controller: its informers, handlers, queue and Event
// recorder over the lab's environment (NewController), and the adapters they need.

// NewController builds the controller's informers, handlers, queue and
// event recorder from env. Nothing runs until Run. The Event broadcaster
// stops when ctx is cancelled.
func NewController(ctx context.Context, env sim.Env, opts Options) (*Controller, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if env.Kube == nil || env.Dynamic == nil || env.ListerWatcher == nil {
		return nil, errors.New("bellerophon: env needs Kube, Dynamic and ListerWatcher")
	}
	name := env.Name
	if name == "" {
		name = controllerAgentName
	}
	rec := recorder{actor: name, rec: env.Rec}
	if env.Turn != nil {
		rec.turns = func(what, object string) { env.Turn(ctx, what, object) }
	}

	// A private scheme: the built-in types plus Bellerophon, so the recorder
	// can reference a Bellerophon without touching client-go's global scheme.
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(generateNameSink{&typedcorev1.EventSinkImpl{Interface: env.Kube.CoreV1().Events("")}})
	eventRecorder := broadcaster.NewRecorder(scheme, corev1.EventSource{Component: name})

	lw := func(gvr schema.GroupVersionResource) cache.ListerWatcher {
		return listerWatcher{ListerWatcherWithContext: env.ListerWatcher(gvr, metav1.NamespaceAll), noWatchList: opts.Bug == ListsStaleReplica}
	}
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	// With env.Metrics, client-go's informer and workqueue metrics go to
	// the trace (sim.Trace.Metrics).
	newInformer := func(gvr schema.GroupVersionResource, obj runtime.Object) (cache.SharedIndexInformer, error) {
		o := cache.SharedIndexInformerOptions{Indexers: indexers}
		if env.Metrics != nil {
			id, err := env.Metrics.InformerID(name, "", gvr)
			if err != nil {
				return nil, fmt.Errorf("bellerophon: informer metrics: %w", err)
			}
			o.Identifier, o.InformerMetricsProvider = id, env.Metrics.Informer(name)
		}
		return cache.NewSharedIndexInformerWithOptions(lw(gvr), obj, o), nil
	}
	bphInformer, err := newInformer(v1alpha1.Resource, &unstructured.Unstructured{})
	if err != nil {
		return nil, err
	}
	podInformer, err := newInformer(podsGVR, &corev1.Pod{})
	if err != nil {
		return nil, err
	}
	cmInformer, err := newInformer(configMapsGVR, &corev1.ConfigMap{})
	if err != nil {
		return nil, err
	}

	queueConfig := workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: name}
	if env.Metrics != nil {
		queueConfig.MetricsProvider = env.Metrics.Workqueue(name)
	}
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](), queueConfig)

	c := &Controller{
		rec:           rec,
		bug:           opts.Bug,
		workers:       opts.Workers,
		handlerDelay:  opts.HandlerDelay,
		sleep:         env.Sleep,
		ctx:           ctx,
		kubeclientset: env.Kube,
		bellerophons:  env.Dynamic.Resource(v1alpha1.Resource),
		bphInformer:   bphInformer,
		bphLister:     bellerophonLister{bphInformer.GetIndexer()},
		podInformer:   podInformer,
		podLister:     corelisters.NewPodLister(podInformer.GetIndexer()),
		cmInformer:    cmInformer,
		cmLister:      corelisters.NewConfigMapLister(cmInformer.GetIndexer()),
		registrations: map[string]cache.ResourceEventHandlerRegistration{},
		children:      newChildIndex(),
		expectations:  newExpectations(opts.Bug == NoUIDCheck),
		signals:       newSignals(rec, 10*opts.LoopTime),
		backups:       opts.Backups,
		lastWritten:   map[string]*unstructured.Unstructured{},
		cmWrites:      map[string]int64{},
		vanished:      map[string]int{},
		holds:         map[string]createHold{},
		workqueue:     recordingQueue{TypedRateLimitingInterface: queue, rec: rec},
		broadcaster:   broadcaster,
		recorder:      eventRecorder,
	}
	if c.backups == nil {
		c.backups = BackupStoreFor(env.Rec)
	}

	for _, h := range []struct {
		resource string
		informer cache.SharedIndexInformer
		handler  handlerFuncs
	}{
		{ResourceBellerophons, bphInformer, handlerFuncs{c.addBellerophon, c.updateBellerophon, c.deleteBellerophon}},
		{ResourcePods, podInformer, handlerFuncs{c.addPod, c.updatePod, c.deletePod}},
		{ResourceConfigMaps, cmInformer, handlerFuncs{c.addConfigMap, c.updateConfigMap, c.deleteConfigMap}},
	} {
		reg, err := h.informer.AddEventHandler(c.recordingHandler(h.resource, h.handler))
		if err != nil {
			return nil, fmt.Errorf("bellerophon: adding the %s handler: %w", h.resource, err)
		}
		c.registrations[h.resource] = reg
		c.signals.add(h.resource, h.informer, reg)
	}
	if c.sleep == nil {
		c.sleep = func(_ context.Context, _ string, d time.Duration) { time.Sleep(d) }
	}
	return c, nil
}

// generateNameSink creates Events with generateName instead of the name
// the recorder picks ("<object>.<UnixNano hex>"): inside a synctest bubble
// the clock stands still during a reconcile, so every Event of one reconcile
// would get the same name and all but the first would be refused as
// AlreadyExists. Patches of aggregated Events keep using the recorder's name;
// when the server does not know it, the recorder falls back to a create.
type generateNameSink struct {
	*typedcorev1.EventSinkImpl
}

// Create creates e under a server-generated name.
func (s generateNameSink) Create(e *corev1.Event) (*corev1.Event, error) {
	if e.Name != "" {
		e = e.DeepCopy()
		e.GenerateName = e.Name + "-"
		e.Name = ""
	}
	return s.EventSinkImpl.Create(e)
}

// listerWatcher adapts a ListerWatcherWithContext to the ListerWatcher that
// NewSharedIndexInformer takes, keeping the context methods (the reflector
// uses them when present) and WatchList support.
type listerWatcher struct {
	cache.ListerWatcherWithContext
	// noWatchList opts the reflector out of WatchList (ListsStaleReplica):
	// its first list is then at resourceVersion "0".
	noWatchList bool
}

// List lists without a context.
func (l listerWatcher) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

// Watch watches without a context.
func (l listerWatcher) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

// IsWatchListSemanticsUnSupported is true for the ListsStaleReplica
// mutant, else forwards the wrapped ListerWatcher's answer (false when it
// does not say: WatchList is tried).
func (l listerWatcher) IsWatchListSemanticsUnSupported() bool {
	if l.noWatchList {
		return true
	}
	if u, ok := l.ListerWatcherWithContext.(interface{ IsWatchListSemanticsUnSupported() bool }); ok {
		return u.IsWatchListSemanticsUnSupported()
	}
	return false
}
