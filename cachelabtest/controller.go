package cachelabtest

import (
	"context"
	"errors"
	"fmt"
	"github.com/cachelab/cachelab/invariants"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// Controller is a controller under the lab: how to start it, and what
// state it wants. Give exactly one of Start (a client-go controller) and
// Setup (controller-runtime reconcilers on a manager).
//
// The lab starts the controller once per process of a run: a plan's crash
// cancels the context of the running one and a restart starts a new one
// from scratch (new informers, caches, queue, manager), as a real
// controller process would restart.
type Controller struct {
	// Name is the controller's name in plans and traces; default: the
	// test's name.
	Name string

	// Start builds a client-go controller from env and starts it: its
	// informers (env.Informers, recorded), its workers. It may return
	// once started, or block until ctx ends; every goroutine it starts
	// must return after ctx ends. An error is a failed run.
	Start func(ctx context.Context, env *Env) error

	// Setup registers controller-runtime reconcilers (and their watches)
	// on mgr, as a main.go's SetupWithManager does. The lab makes the
	// manager: real cache, client, RESTMapper and workqueue, over the fake
	// API server; metrics, health probes and leader election off.
	Setup func(mgr ctrl.Manager) error

	// ManagerOptions, optional, sets the options of the manager the lab
	// makes for Setup, as the controller's main.go sets them: the client's
	// cache options (controller-runtime's read-your-own-writes client,
	// Client.Cache.EnableReadYourWritesConsistency; DisableFor), the
	// cache's (ByObject selectors and transforms, DefaultNamespaces,
	// SyncPeriod), the controllers' (MaxConcurrentReconciles, rate
	// limiters), leader election. The lab then sets what every run needs:
	// Scheme from the Controller's Scheme, no metrics, health probe or
	// pprof listener, and every informer recorded (a NewInformer set here
	// makes the informer the lab records). Called once per process, before
	// the manager is made; a panic in it is a failed start.
	ManagerOptions func(o *manager.Options)

	// Scheme, optional, is the manager's scheme (Setup) and the one State
	// decodes typed objects with, for the custom types a controller
	// uses; default client-go's scheme.
	Scheme *runtime.Scheme

	// CRDs are the custom resources the controller needs served: their
	// manifests, CRDs("config/crd/bases"), as envtest takes them.
	CRDs CRDSet

	// Desired, optional, says whether the server's state is the state the
	// controller wants: nil if it is, else an error saying why not. The lab
	// asks after every write; eventual-convergence then requires it to
	// hold at the end, and stable-reconciliation that the controller
	// writes nothing once it holds. It must only read s.
	Desired func(s *State) error

	// Expect, optional, names the failures the team knows and accepts on
	// purpose, each with its reason: a failed verdict of an invariant
	// named here does not fail the plan (Test) nor count as caught
	// (Catch), and is shown as an expected failure, with the reason, in
	// the failure text, the -v run line and the HTML report. It is never
	// dropped: the verdict stays failed. An entry naming no invariant,
	// a measurement (sync-soundness/...), or without a reason is an error
	// of the test.
	Expect []Expectation

	// Beside, optional, starts helper actors that run beside the
	// controller for the whole run and are not judged: the cluster around
	// an operator (upstream/cluster's Beside: kube-controller-manager's
	// controllers and garbage collector), a stand-in for a status the
	// controller reads. It is called once per run, before the
	// controller's first Start, with an Env of its own (Name "beside",
	// sim.ClientBeside; its informers, queues and Env.Record are not
	// recorded). The plan's crash steps do not stop it; the run's end
	// cancels ctx, and every goroutine it started must return then. It
	// returns once its actors are started; an error fails the run.
	Beside func(ctx context.Context, env *Env) error

	// ExternalGC leaves the garbage collection of dependents (objects
	// whose ownerReferences name a deleted owner) to a collector that
	// Beside runs, kube-controller-manager's (upstream/cluster's
	// GarbageCollector): a delete then sets deletionTimestamp and the
	// orphan / foregroundDeletion finalizer, and the dependents go when
	// the collector has seen it, as in a cluster. Default false: the fake
	// API server deletes dependents in the same write as their owner. Set
	// without Beside, every run is an error.
	ExternalGC bool

	// Webhooks, optional, serves the controller's admission webhooks in
	// the lab: the fake API server calls them on the writes their rules
	// match (everyone's: the plan's, the controller's, Beside's), as
	// kube-apiserver calls an operator's (see Webhooks). With Setup, what
	// the controller registers on its manager's webhook server is served;
	// &Webhooks{} is enough when it follows controller-runtime's path
	// convention. Without Webhooks, the lab's server calls none (a
	// manager's registrations are noted in the trace).
	Webhooks *Webhooks
}

// subjectInfo returns the registry entry that runs c as the subject
// c.Name, summary its line in `cachelab list`.
func (c Controller) subjectInfo(summary string) sim.SubjectInfo {
	info := sim.SubjectInfo{Name: c.Name, Summary: summary, CRDs: c.CRDs.served(),
		New: func() sim.Subject { return newSubject(c) }, ExternalGC: c.ExternalGC, SystemNamespaces: true}
	if c.Webhooks != nil {
		info.Webhooks = c.webhooksOf // webhooks.go
	}
	if c.Beside != nil {
		info.Beside = func(ctx context.Context, senv sim.Env) (err error) {
			env := &Env{Name: senv.Name, Kube: senv.Kube, Dynamic: senv.Dynamic, RESTConfig: senv.RESTConfig,
				Params: senv.Params, Sim: senv, kinds: crdKinds(c.CRDs),
				Informers:        informers.NewSharedInformerFactory(senv.Kube, 0),
				DynamicInformers: dynamicinformer.NewDynamicSharedInformerFactory(senv.Dynamic, 0)}
			defer func() {
				if x := recover(); x != nil {
					err = fmt.Errorf("the controller's Beside panicked: %v", x)
				}
			}()
			return c.Beside(ctx, env)
		}
	}
	return info
}

// Expectation is a failure a team accepts on purpose (Controller.Expect).
type Expectation struct {
	// Invariant is the failing invariant or health verdict, as reports
	// name it ("read-your-writes", "stable-reconciliation",
	// "informers-synced"); `cachelab list` lists the invariants.
	Invariant string
	// Reason says why the failure is accepted; required. Reports show it
	// beside the failure.
	Reason string
	// Matching, optional, narrows the expectation to the failures of
	// Invariant whose reason or detail (matches-reference's diff of the
	// end states) this regular expression (Go syntax) finds: name the
	// object or path a known bug leaves ("clusterqueues/a
	// status.pendingWorkloads"), and another failure of the same
	// invariant still fails the plan. Several expectations may name one
	// invariant with different Matching; empty: every failure of it.
	Matching string
}

// expectations checks c.Expect and returns it as the lab's acceptances.
func (c *Controller) expectations() ([]lab.Acceptance, error) {
	if len(c.Expect) == 0 {
		return nil, nil
	}
	var known []string
	for _, n := range append(lab.InvariantNames(), invariants.NameMatchesReference, lab.HealthNoPanics, lab.HealthStarted, lab.HealthSynced, lab.HealthReturns) {
		if !lab.IsMeasurement(n) {
			known = append(known, n)
		}
	}
	var out []lab.Acceptance
	seen := map[[2]string]bool{}
	var errs []error
	for i, e := range c.Expect {
		at := fmt.Sprintf("Controller.Expect[%d] (%q)", i, e.Invariant)
		switch {
		case e.Invariant == "run":
			errs = append(errs, fmt.Errorf("%s: a run that could not run is an error of the test, never an accepted failure", at))
		case lab.IsMeasurement(e.Invariant):
			errs = append(errs, fmt.Errorf("%s: a sync-soundness measurement is reported, never a failure of the plan: nothing to accept", at))
		case !slices.Contains(known, e.Invariant):
			errs = append(errs, fmt.Errorf("%s: no invariant or health verdict has this name%s", at, scenarios.Suggest(e.Invariant, known)))
		case strings.TrimSpace(e.Reason) == "":
			errs = append(errs, fmt.Errorf("%s: give the Reason the team accepts this failure, for whoever reads the report", at))
		default:
			a := lab.Acceptance{Invariant: e.Invariant, Reason: e.Reason}
			if e.Matching != "" {
				re, err := regexp.Compile(e.Matching)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: Matching %q is no regular expression: %v", at, e.Matching, err))
					continue
				}
				a.Match = re
			}
			k := [2]string{e.Invariant, e.Matching}
			switch {
			case seen[k] && e.Matching == "":
				errs = append(errs, fmt.Errorf("%s: named twice: give one Reason", at))
			case seen[k]:
				errs = append(errs, fmt.Errorf("%s: named twice with Matching %q: give one Reason", at, e.Matching))
			}
			seen[k] = true
			out = append(out, a)
		}
	}
	return out, errors.Join(errs...)
}

// Env is what a client-go controller is started with: clients of the fake
// API server under the controller's name, and informer factories whose
// informers are recorded (every handler call, sync signal and cache is in
// the trace, so that the invariants can judge them).
type Env struct {
	// Name is the controller's name (its client's, in the trace).
	Name string
	// Kube is a typed clientset for the fake API server.
	Kube kubernetes.Interface
	// Dynamic is a dynamic client for the fake API server.
	Dynamic dynamic.Interface
	// RESTConfig reaches the fake API server through its REST handler over
	// an in-memory pipe, for clients built with NewForConfig.
	RESTConfig *rest.Config
	// Informers is a shared informer factory over Kube (all namespaces, no
	// resync) whose informers are recorded. Start it with ctx.Done().
	Informers informers.SharedInformerFactory
	// DynamicInformers is a dynamic shared informer factory over Dynamic
	// whose informers are recorded.
	DynamicInformers dynamicinformer.DynamicSharedInformerFactory
	// Params are the plan's subject parameters.
	Params map[string]string
	// Sim is the environment the lab's simulator gives a subject (the
	// recorder of the trace, ListerWatchers), for what Env does not cover.
	Sim sim.Env

	rec *recording
	// kinds maps the Kinds of the controller's CRDs to their resources'
	// trace names (Record).
	kinds map[string]string
}

// WorkqueueMetrics is the metrics provider to give the controller's
// workqueue (workqueue.TypedRateLimitingQueueConfig.MetricsProvider, with a
// Name): client-go's queue metrics (depth, adds, retries, latencies) then
// go to the run's trace and report, in virtual time. nil outside a run.
// The informers of Informers report theirs without it.
func (e *Env) WorkqueueMetrics() workqueue.MetricsProvider {
	if e.Sim.Metrics == nil {
		return nil
	}
	return e.Sim.Metrics.Workqueue(e.Name)
}

// subject adapts a Controller to sim.Subject for one process.
type subject struct {
	c   Controller
	rec *recording
}

// convergingSubject is a subject with a desired-state predicate.
type convergingSubject struct{ *subject }

var (
	_ sim.Subject          = (*subject)(nil)
	_ sim.CacheSnapshotter = (*subject)(nil)
	_ sim.Converger        = convergingSubject{}
)

// newSubject returns a fresh subject of c.
func newSubject(c Controller) sim.Subject {
	s := &subject{c: c}
	if c.Desired != nil {
		return convergingSubject{s}
	}
	return s
}

// Start starts one process of the controller.
func (s *subject) Start(ctx context.Context, senv sim.Env) error {
	preparePanicHandling()
	s.rec = newRecording(senv.Rec, senv.Name)
	if senv.Turn != nil {
		s.rec.turns = func(what, object string) { senv.Turn(ctx, what, object) }
	}
	ctx = context.WithValue(ctx, runKey{}, s.rec)
	switch {
	case s.c.Start != nil && s.c.Setup != nil:
		return errors.New("cachelabtest: Controller has both Start and Setup: give one")
	case s.c.Start != nil:
		env := &Env{Name: senv.Name, Kube: senv.Kube, Dynamic: senv.Dynamic, RESTConfig: senv.RESTConfig,
			Params: senv.Params, Sim: senv, rec: s.rec, kinds: crdKinds(s.c.CRDs)}
		f, err := newRecordedFactory(senv, s.rec)
		if err != nil {
			return err
		}
		env.Informers = f
		env.DynamicInformers = newRecordedDynamicFactory(senv.Dynamic, s.rec)
		if s.c.Webhooks != nil {
			s.serveWebhooks(ctx, s.c.Webhooks.Handlers)
		}
		return s.guardStart("Start", func() error { return s.c.Start(ctx, env) })
	case s.c.Setup != nil:
		return s.startManager(ctx, senv)
	}
	return errors.New("cachelabtest: Controller has neither Start nor Setup: give one")
}

// guardStart calls start, turning a panic into an error with its stack.
func (s *subject) guardStart(what string, start func() error) (err error) {
	defer func() {
		if x := recover(); x != nil {
			s.rec.panicked("the controller's "+what, x)
			err = fmt.Errorf("the controller's %s panicked: %v", what, x)
		}
	}()
	return start()
}

// Desired asks the Controller's predicate.
func (s convergingSubject) Desired(objs []sim.ServerObject) (bool, string) {
	st := &State{objs: objs, scheme: s.c.Scheme}
	var err error
	func() {
		defer func() {
			if x := recover(); x != nil {
				err = fmt.Errorf("the Desired predicate panicked: %v", x)
			}
		}()
		err = s.c.Desired(st)
	}()
	if err == nil {
		err = st.Err()
	}
	if err != nil {
		return false, err.Error()
	}
	return true, ""
}

// SnapshotCaches returns the recorded informers' caches.
func (s *subject) SnapshotCaches() []sim.CacheSnapshot {
	if s.rec == nil {
		return nil
	}
	return s.rec.snapshots()
}
