package cachelabtest

import (
	"fmt"
	"time"

	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/admissionregistration"
	"k8s.io/client-go/informers/apiserverinternal"
	"k8s.io/client-go/informers/apps"
	"k8s.io/client-go/informers/autoscaling"
	"k8s.io/client-go/informers/batch"
	"k8s.io/client-go/informers/certificates"
	"k8s.io/client-go/informers/coordination"
	"k8s.io/client-go/informers/core"
	"k8s.io/client-go/informers/discovery"
	"k8s.io/client-go/informers/events"
	"k8s.io/client-go/informers/extensions"
	"k8s.io/client-go/informers/flowcontrol"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/informers/lifecycle"
	"k8s.io/client-go/informers/networking"
	"k8s.io/client-go/informers/node"
	"k8s.io/client-go/informers/policy"
	"k8s.io/client-go/informers/rbac"
	"k8s.io/client-go/informers/resource"
	"k8s.io/client-go/informers/scheduling"
	"k8s.io/client-go/informers/storage"
	"k8s.io/client-go/informers/storagemigration"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/sim"
)

// recordedFactory is client-go's SharedInformerFactory whose informers are
// recorded (see RecordInformer). The typed accessors (Core().V1().Pods(),
// ...) are the generated ones, built on this factory so that every
// informer they make goes through InformerFor, which wraps it.
type recordedFactory struct {
	informers.SharedInformerFactory
	r *recording
}

var _ informers.SharedInformerFactory = (*recordedFactory)(nil)

// newRecordedFactory returns the factory; with senv.Metrics its informers
// report client-go's informer metrics to the run (their InformerName,
// "informers", is routed to the run's collector; see sim/metrics.go).
func newRecordedFactory(senv sim.Env, r *recording) (*recordedFactory, error) {
	var opts []informers.SharedInformerOption
	if senv.Metrics != nil {
		name, err := senv.Metrics.InformerName(senv.Name, "informers")
		if err != nil {
			return nil, fmt.Errorf("cachelabtest: informer metrics: %w", err)
		}
		opts = append(opts, informers.WithInformerName(name))
	}
	return &recordedFactory{SharedInformerFactory: informers.NewSharedInformerFactoryWithOptions(senv.Kube, 0, opts...), r: r}, nil
}

// InformerFor returns the factory's informer for obj's type, recorded.
func (f *recordedFactory) InformerFor(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc) cache.SharedIndexInformer {
	return f.SharedInformerFactory.InformerFor(obj, func(c kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		return f.r.informer(resourceOf(obj, nil), newFunc(c, resync))
	})
}

// ForResource returns the generic informer of a built-in resource,
// recorded.
func (f *recordedFactory) ForResource(gvr schema.GroupVersionResource) (informers.GenericInformer, error) {
	gi, err := f.SharedInformerFactory.ForResource(gvr)
	if err != nil {
		return nil, err
	}
	return genericInformer{informer: f.r.informer(sim.ResourceName(gvr), gi.Informer()), lister: gi.Lister()}, nil
}

func (f *recordedFactory) Admissionregistration() admissionregistration.Interface {
	return admissionregistration.New(f, metav1.NamespaceAll, nil)
}
func (f *recordedFactory) Internal() apiserverinternal.Interface {
	return apiserverinternal.New(f, metav1.NamespaceAll, nil)
}
func (f *recordedFactory) Apps() apps.Interface { return apps.New(f, metav1.NamespaceAll, nil) }
func (f *recordedFactory) Autoscaling() autoscaling.Interface {
	return autoscaling.New(f, metav1.NamespaceAll, nil)
}
func (f *recordedFactory) Batch() batch.Interface { return batch.New(f, metav1.NamespaceAll, nil) }
func (f *recordedFactory) Certificates() certificates.Interface {
	return certificates.New(f, metav1.NamespaceAll, nil)
}
func (f *recordedFactory) Coordination() coordination.Interface {
	return coordination.New(f, metav1.NamespaceAll, nil)
}
func (f *recordedFactory) Core() core.Interface { return core.New(f, metav1.NamespaceAll, nil) }
func (f *recordedFactory) Discovery() discovery.Interface {
	return discovery.New(f, metav1.NamespaceAll, nil)
}
func (f *recordedFactory) Events() events.Interface { return events.New(f, metav1.NamespaceAll, nil) }
func (f *recordedFactory) Extensions() extensions.Interface {
	return extensions.New(f, metav1.NamespaceAll, nil)
}
func (f *recordedFactory) Flowcontrol() flowcontrol.Interface {
	return flowcontrol.New(f, metav1.NamespaceAll, nil)
}
func (f *recordedFactory) Lifecycle() lifecycle.Interface {
	return lifecycle.New(f, metav1.NamespaceAll, nil)
}
func (f *recordedFactory) Networking() networking.Interface {
	return networking.New(f, metav1.NamespaceAll, nil)
}
func (f *recordedFactory) Node() node.Interface     { return node.New(f, metav1.NamespaceAll, nil) }
func (f *recordedFactory) Policy() policy.Interface { return policy.New(f, metav1.NamespaceAll, nil) }
func (f *recordedFactory) Rbac() rbac.Interface     { return rbac.New(f, metav1.NamespaceAll, nil) }
func (f *recordedFactory) Resource() resource.Interface {
	return resource.New(f, metav1.NamespaceAll, nil)
}
func (f *recordedFactory) Scheduling() scheduling.Interface {
	return scheduling.New(f, metav1.NamespaceAll, nil)
}
func (f *recordedFactory) Storage() storage.Interface {
	return storage.New(f, metav1.NamespaceAll, nil)
}
func (f *recordedFactory) Storagemigration() storagemigration.Interface {
	return storagemigration.New(f, metav1.NamespaceAll, nil)
}

// genericInformer is an informers.GenericInformer.
type genericInformer struct {
	informer cache.SharedIndexInformer
	lister   cache.GenericLister
}

func (g genericInformer) Informer() cache.SharedIndexInformer { return g.informer }
func (g genericInformer) Lister() cache.GenericLister         { return g.lister }

// recordedDynamicFactory is a DynamicSharedInformerFactory (all
// namespaces, no resync) whose informers are recorded.
type recordedDynamicFactory struct {
	client dynamic.Interface
	r      *recording

	mu       sync.Mutex
	informer map[schema.GroupVersionResource]informers.GenericInformer
	started  map[schema.GroupVersionResource]bool
	wg       sync.WaitGroup
	shutdown bool
}

var _ dynamicinformer.DynamicSharedInformerFactory = (*recordedDynamicFactory)(nil)

func newRecordedDynamicFactory(client dynamic.Interface, r *recording) *recordedDynamicFactory {
	return &recordedDynamicFactory{client: client, r: r,
		informer: map[schema.GroupVersionResource]informers.GenericInformer{}, started: map[schema.GroupVersionResource]bool{}}
}

// ForResource returns the informer of gvr, recorded.
func (f *recordedDynamicFactory) ForResource(gvr schema.GroupVersionResource) informers.GenericInformer {
	f.mu.Lock()
	defer f.mu.Unlock()
	if gi, ok := f.informer[gvr]; ok {
		return gi
	}
	inner := dynamicinformer.NewFilteredDynamicInformer(f.client, gvr, metav1.NamespaceAll, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil)
	inf := f.r.informer(sim.ResourceName(gvr), inner.Informer())
	gi := genericInformer{informer: inf, lister: cache.NewGenericLister(inf.GetIndexer(), gvr.GroupResource())}
	f.informer[gvr] = gi
	return gi
}

// Start starts the informers not started yet.
func (f *recordedDynamicFactory) Start(stop <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shutdown {
		return
	}
	for gvr, gi := range f.informer {
		if !f.started[gvr] {
			f.started[gvr] = true
			inf := gi.Informer()
			f.wg.Go(func() { inf.Run(stop) })
		}
	}
}

// WaitForCacheSync waits until every started informer synced or stop
// closes.
func (f *recordedDynamicFactory) WaitForCacheSync(stop <-chan struct{}) map[schema.GroupVersionResource]bool {
	f.mu.Lock()
	infs := map[schema.GroupVersionResource]cache.SharedIndexInformer{}
	for gvr, gi := range f.informer {
		if f.started[gvr] {
			infs[gvr] = gi.Informer()
		}
	}
	f.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	out := map[schema.GroupVersionResource]bool{}
	for gvr, inf := range infs {
		out[gvr] = cache.WaitFor(ctx, "", inf.HasSyncedChecker())
	}
	return out
}

// Shutdown stops starting informers and waits for the started ones to
// return.
func (f *recordedDynamicFactory) Shutdown() {
	f.mu.Lock()
	f.shutdown = true
	f.mu.Unlock()
	f.wg.Wait()
}
