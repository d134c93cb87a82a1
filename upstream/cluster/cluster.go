// Package cluster runs kube-controller-manager's real workload controllers
// (k8s.io/kubernetes v1.37.1: Deployment, ReplicaSet, StatefulSet, Job)
// and its garbage collector beside a user's controller under the lab, so that the Deployments,
// StatefulSets and Jobs an operator creates make ReplicaSets and Pods and
// get a status, as in a cluster. With a plan that runs the lab's kubelet
// actor (sim.Plan.Kubelet; Random plans over a user's kinds run it), the
// Pods become Running and Ready and the status counts them.
//
// One line in a user's test:
//
//	cachelabtest.Test(t, cluster.Beside(cachelabtest.Controller{Start: ..., Desired: ...}), plans)
//
// The cluster's controllers are helper actors, not subjects: each writes
// under its own client name (DeploymentController, ...), as
// kube-controller-manager's controllers write under their own service
// accounts, and watches through one shared informer factory named
// Informers. The invariants judge the user's controller only; the
// cluster's writes are another writer's, and the faults a plan aims at the
// controller (held watches, failed writes) leave the cluster alone.
// Plan-wide faults (watch latency, request errors) reach it as any client.
//
// Two ways to run it:
//
//   - Beside(c) runs the cluster for the whole run, beside the controller
//     (cachelabtest.Controller.Beside): a plan's crash of the controller
//     leaves it running, as a cluster outlives an operator's crash. Its
//     default is every controller of All and kube-controller-manager's
//     real garbage collector (GarbageCollector, with
//     cachelabtest.Controller.ExternalGC set): a deleted owner's
//     dependents go when the collector has seen the delete through its own
//     watch, not in the same write.
//   - Around(c), the first mode and still the one of the upstream HPA
//     subject, runs the cluster in each process of the controller: it
//     stops at a crash of the controller and starts afresh, relisting, at
//     the restart (a crash never followed by a restart stops it too). The
//     garbage collector is then the fake API server's (dependents go in the
//     same write as their owner); GarbageCollector is refused there.
//
// Users who do not want k8s.io/kubernetes in their build write a stand-in
// for the status they need instead (docs/cluster.md).
package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/controller-manager/pkg/informerfactory"
	dcontroller "k8s.io/kubernetes/pkg/controller/deployment"
	"k8s.io/kubernetes/pkg/controller/garbagecollector"
	jobcontroller "k8s.io/kubernetes/pkg/controller/job"
	rscontroller "k8s.io/kubernetes/pkg/controller/replicaset"
	sscontroller "k8s.io/kubernetes/pkg/controller/statefulset"
	"k8s.io/kubernetes/pkg/features"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/cachelab/cachelab/cachelabtest"
	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/internal/wiring"
)

// The controllers of the cluster, by the client name each writes under
// (kube-controller-manager's service account names).
const (
	// DeploymentController is pkg/controller/deployment.
	DeploymentController = "deployment-controller"
	// ReplicaSetController is pkg/controller/replicaset, KEP-5647 gate on.
	ReplicaSetController = "replicaset-controller"
	// StatefulSetController is pkg/controller/statefulset, KEP-5647 gate
	// on.
	StatefulSetController = "statefulset-controller"
	// JobController is pkg/controller/job, KEP-5647 gate on.
	JobController = "job-controller"
	// GarbageCollector is pkg/controller/garbagecollector, kube-controller-
	// manager's collector of dependents whose owners are gone: it watches
	// every deletable resource the server's discovery lists (metadata only,
	// Events ignored) and deletes, orphans and releases through the API. It
	// runs only beside the run (Beside), with the server's own collection
	// off (cachelabtest.Controller.ExternalGC).
	GarbageCollector = "generic-garbage-collector"
)

// Informers is the client name of the informer factory the cluster's
// controllers share (their lists and watches), as kube-controller-manager
// shares one.
const Informers = "kube-controller-manager"

// All is every controller of the cluster, the default of Start and Around.
var All = []string{DeploymentController, ReplicaSetController, StatefulSetController, JobController}

// Workers is the number of sync workers of each controller,
// kube-controller-manager's default (--concurrent-*-syncs=5).
const Workers = 5

// GCWorkers is the garbage collector's number of workers,
// kube-controller-manager's default (--concurrent-gc-syncs=20).
const GCWorkers = 20

// GCSyncPeriod is how often the garbage collector asks discovery for the
// deletable resources and starts monitors for new ones, as
// kube-controller-manager does (30 s).
const GCSyncPeriod = 30 * time.Second

// Beside returns c with the cluster (names, default All and
// GarbageCollector) run beside it for the whole run, as c.Beside (after a
// Beside c already had): started once, before the controller's first
// process, on clients of its own names; a plan's crash of the controller
// does not stop it, the run's end does. With GarbageCollector among names
// it sets c.ExternalGC: the fake API server leaves the collection of
// dependents to kube-controller-manager's collector. A name not in All
// nor GarbageCollector makes every run fail at its start with an error
// naming the known ones.
func Beside(c cachelabtest.Controller, names ...string) cachelabtest.Controller {
	if len(names) == 0 {
		names = append(slices.Clone(All), GarbageCollector)
	}
	names = slices.Clone(names)
	before := c.Beside
	c.Beside = func(ctx context.Context, env *cachelabtest.Env) error {
		if before != nil {
			if err := before(ctx, env); err != nil {
				return err
			}
		}
		return Start(ctx, env, names...)
	}
	if slices.Contains(names, GarbageCollector) {
		c.ExternalGC = true
	}
	return c
}

// Around returns c with the cluster's controllers (names, default All)
// started beside it in each of its processes: before c.Start, or, for a
// controller-runtime controller, as a runnable of the manager c.Setup is
// given. Everything else of c (Name, Desired, CRDs, ...) is kept. A name
// not in All makes the run fail at its start with an error naming the
// known ones.
func Around(c cachelabtest.Controller, names ...string) cachelabtest.Controller {
	if start := c.Start; start != nil {
		c.Start = func(ctx context.Context, env *cachelabtest.Env) error {
			if err := Start(ctx, env, names...); err != nil {
				return err
			}
			return start(ctx, env)
		}
	}
	if setup := c.Setup; setup != nil {
		c.Setup = func(mgr ctrl.Manager) error {
			run, err := build(mgr.GetConfig(), names, false)
			if err != nil {
				return err
			}
			if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
				if err := run(ctx); err != nil {
					return err
				}
				<-ctx.Done()
				return nil
			})); err != nil {
				return fmt.Errorf("cluster: %w", err)
			}
			return setup(mgr)
		}
	}
	return c
}

// Start starts the cluster's controllers (names, default All) from a
// client-go controller's Start, beside it, or from a Controller.Beside:
// they run until ctx ends. It returns once they are started.
// GarbageCollector is accepted from a Beside only (env.Name
// sim.ClientBeside): in a process of the controller a crash would stop
// it, and the server would collect too.
func Start(ctx context.Context, env *cachelabtest.Env, names ...string) error {
	if env == nil || env.RESTConfig == nil {
		return errors.New("cluster: Start needs the Env of a run (its RESTConfig is nil)")
	}
	run, err := build(env.RESTConfig, names, env.Name == sim.ClientBeside)
	if err != nil {
		return err
	}
	return run(ctx)
}

// build checks names and returns the func that builds and starts the
// controllers over cfg until its ctx ends; beside says it runs for the
// whole run (Beside), where the garbage collector may run.
func build(cfg *rest.Config, names []string, beside bool) (func(ctx context.Context) error, error) {
	if len(names) == 0 {
		names = All
	}
	want := map[string]bool{}
	for _, n := range names {
		if !slices.Contains(All, n) && n != GarbageCollector {
			return nil, fmt.Errorf("cluster: no controller %q (known: %v and %s)", n, All, GarbageCollector)
		}
		want[n] = true
	}
	if want[GarbageCollector] && !beside {
		return nil, fmt.Errorf("cluster: %s runs only beside the run (cluster.Beside, which also turns the server's own collection off), not in a process of the controller (cluster.Around, cluster.Start from Start)", GarbageCollector)
	}
	if cfg == nil {
		return nil, errors.New("cluster: no RESTConfig to reach the fake API server")
	}
	return func(ctx context.Context) error {
		shared, err := clientAs(cfg, Informers)
		if err != nil {
			return err
		}
		factory := informers.NewSharedInformerFactory(shared, 0)
		var runs []func(context.Context)
		for _, n := range All {
			if !want[n] {
				continue
			}
			client, err := clientAs(cfg, n)
			if err != nil {
				return err
			}
			run, err := newController(ctx, n, client, factory)
			if err != nil {
				return fmt.Errorf("cluster: %s: %w", n, err)
			}
			runs = append(runs, run)
		}
		started := make(chan struct{})
		if want[GarbageCollector] {
			run, err := newGarbageCollector(ctx, cfg, factory, started)
			if err != nil {
				return fmt.Errorf("cluster: %s: %w", GarbageCollector, err)
			}
			runs = append(runs, run)
		}
		factory.Start(ctx.Done())
		close(started) // kube-controller-manager's InformersStarted
		for _, run := range runs {
			go run(ctx)
		}
		return nil
	}, nil
}

// newController builds the controller named n on client and factory, its
// KEP-5647 gate on (the v1.36+ default), and returns its Run.
func newController(ctx context.Context, n string, client kubernetes.Interface, f informers.SharedInformerFactory) (func(context.Context), error) {
	run := func(r wiring.Runner, err error) (func(context.Context), error) {
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) { r.Run(ctx, Workers) }, nil
	}
	switch n {
	case DeploymentController:
		return run(dcontroller.NewDeploymentController(ctx, f.Apps().V1().Deployments(), f.Apps().V1().ReplicaSets(), f.Core().V1().Pods(), client))
	case ReplicaSetController:
		return run(wiring.WithGate(features.StaleControllerConsistencyReplicaSet, true, func() (wiring.Runner, error) {
			return rscontroller.NewReplicaSetController(ctx, f.Apps().V1().ReplicaSets(), f.Core().V1().Pods(), client, rscontroller.BurstReplicas), nil
		}))
	case StatefulSetController:
		return run(wiring.WithGate(features.StaleControllerConsistencyStatefulSet, true, func() (wiring.Runner, error) {
			return sscontroller.NewStatefulSetController(ctx, f.Core().V1().Pods(), f.Apps().V1().StatefulSets(),
				f.Core().V1().PersistentVolumeClaims(), f.Apps().V1().ControllerRevisions(), client), nil
		}))
	case JobController:
		return run(wiring.WithGate(features.StaleControllerConsistencyJob, true, func() (wiring.Runner, error) {
			return jobcontroller.NewController(ctx, client, f.Core().V1().Pods(), f.Batch().V1().Jobs(), nil, nil)
		}))
	}
	return nil, fmt.Errorf("no controller %q", n)
}

// newGarbageCollector builds kube-controller-manager's garbage collector as
// its newGarbageCollectorController and NewControllerInitializers do: a
// dependency graph over the shared typed informers where they serve a
// resource and metadata informers elsewhere, a RESTMapper over cached
// discovery, and its own discovery client for the periodic sync. started
// is closed once the shared informers are started (InformersStarted).
func newGarbageCollector(ctx context.Context, cfg *rest.Config, shared informers.SharedInformerFactory, started <-chan struct{}) (func(context.Context), error) {
	kube, err := clientAs(cfg, GarbageCollector)
	if err != nil {
		return nil, err
	}
	// Sync's discovery is not the mapper's (the mapper's is reset at
	// every change, garbagecollector.Sync's comment).
	disc, err := clientAs(cfg, GarbageCollector)
	if err != nil {
		return nil, err
	}
	md, err := metadata.NewForConfig(fakehttp.ConfigAs(cfg, GarbageCollector))
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kube.Discovery()))
	objects := informerfactory.NewInformerFactory(shared, metadatainformer.NewSharedInformerFactory(md, 0))
	graph := garbagecollector.NewDependencyGraphBuilder(ctx, md, mapper, garbagecollector.DefaultIgnoredResources(), objects, started)
	gc, err := garbagecollector.NewComposedGarbageCollector(ctx, kube, md, mapper, graph)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) {
		go gc.Sync(ctx, disc.Discovery(), GCSyncPeriod)
		gc.Run(ctx, GCWorkers, GCSyncPeriod)
	}, nil
}

// clientAs returns a clientset over cfg whose requests the fake API server
// names name (fakeapi/http's client header), as cachelabtest.Env.Client
// does; it also serves a controller-runtime manager's config.
func clientAs(cfg *rest.Config, name string) (kubernetes.Interface, error) {
	c := fakehttp.ConfigAs(cfg, name)
	k, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("cluster: client %s: %w", name, err)
	}
	return k, nil
}
