// Package cluster runs kube-controller-manager's real workload controllers
// (k8s.io/kubernetes v1.37.1: Deployment, ReplicaSet, StatefulSet, Job)
// beside a user's controller under the lab, so that the Deployments,
// StatefulSets and Jobs an operator creates make ReplicaSets and Pods and
// get a status, as in a cluster. With a plan that runs the lab's kubelet
// actor (sim.Plan.Kubelet; Random plans over a user's kinds run it), the
// Pods become Running and Ready and the status counts them.
//
// One line in a user's test:
//
//	cachelabtest.Test(t, cluster.Around(cachelabtest.Controller{Start: ..., Desired: ...}), plans)
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
// The cluster is part of the controller's process (cachelabtest.Env.Client):
// it stops at a crash of the controller and starts afresh, relisting, at
// the restart. A crash never followed by a restart stops the cluster too.
//
// The garbage collector is the fake API server's (dependents go in the
// same write as their owner), not kube-controller-manager's.
//
// Users who do not want k8s.io/kubernetes in their build write a stand-in
// for the status they need instead (docs/cluster.md).
package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	dcontroller "k8s.io/kubernetes/pkg/controller/deployment"
	jobcontroller "k8s.io/kubernetes/pkg/controller/job"
	rscontroller "k8s.io/kubernetes/pkg/controller/replicaset"
	sscontroller "k8s.io/kubernetes/pkg/controller/statefulset"
	"k8s.io/kubernetes/pkg/features"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/cachelab/cachelab/cachelabtest"
	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
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
			run, err := build(mgr.GetConfig(), names)
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
// client-go controller's Start, beside it: they run until ctx ends. It
// returns once they are started.
func Start(ctx context.Context, env *cachelabtest.Env, names ...string) error {
	if env == nil || env.RESTConfig == nil {
		return errors.New("cluster: Start needs the Env of a run (its RESTConfig is nil)")
	}
	run, err := build(env.RESTConfig, names)
	if err != nil {
		return err
	}
	return run(ctx)
}

// build checks names and returns the func that builds and starts the
// controllers over cfg until its ctx ends.
func build(cfg *rest.Config, names []string) (func(ctx context.Context) error, error) {
	if len(names) == 0 {
		names = All
	}
	want := map[string]bool{}
	for _, n := range names {
		if !slices.Contains(All, n) {
			return nil, fmt.Errorf("cluster: no controller %q (known: %v)", n, All)
		}
		want[n] = true
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
		factory.Start(ctx.Done())
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
