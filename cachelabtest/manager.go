package cachelabtest

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/sim"
)

// startManager builds a controller-runtime manager over env.RESTConfig (the
// fake API server through its REST handler, in the run's bubble), lets the
// Controller's Setup register its reconcilers on it, and starts it.
//
// The manager's cache, client, RESTMapper (discovery through the pipe) and
// workqueues are controller-runtime's own. Metrics and health probes are
// off (no listener), leader election is off, controller names are not
// checked for uniqueness (every run of a process registers them again).
// Every informer the cache makes is recorded (RecordInformer) and every
// reconcile of a controller the builder adds is recorded as a reconcile
// (start, end with its result) and guarded: a panic is recorded with its
// stack, then left to controller-runtime (RecoverPanic, its default, turns
// it into an error and a requeue).
func (s *subject) startManager(ctx context.Context, env sim.Env) error {
	sch := s.c.Scheme
	if sch == nil {
		sch = scheme.Scheme
	}
	r := s.rec
	ws := newWebhookServer()
	var mgr *labManager
	if err := s.guardStart("ManagerOptions", func() (err error) { mgr, err = newLabManager(s.c, env, sch, r, ws); return err }); err != nil {
		return err
	}
	if err := s.guardStart("Setup", func() error { return s.c.Setup(mgr) }); err != nil {
		return err
	}
	var extra map[string]http.Handler
	if s.c.Webhooks != nil {
		extra = s.c.Webhooks.Handlers
	}
	s.serveWebhooks(ctx, ws.registered(extra)) // webhooks.go
	go func() {
		if err := mgr.Manager.Start(ctx); err != nil && ctx.Err() == nil {
			r.record(sim.Record{Kind: sim.RecNote, Op: lab.OpStartError, Detail: "the manager stopped: " + err.Error()})
		}
	}()
	return nil
}

// newLabManager makes the manager of one process of c (r nil: the manager
// Setup is called on to learn the webhooks, never started, recording
// nothing): the Controller's ManagerOptions, then the lab's, with ws as
// its webhook server.
func newLabManager(c Controller, env sim.Env, sch *runtime.Scheme, r *recording, ws *webhookServer) (*labManager, error) {
	opts := manager.Options{
		Scheme:                  sch,
		Logger:                  logr.Discard(),
		LeaderElection:          false,
		GracefulShutdownTimeout: ptr.To(30 * time.Second),
		Controller:              config.Controller{SkipNameValidation: ptr.To(true)},
	}
	if c.ManagerOptions != nil {
		c.ManagerOptions(&opts)
	}
	labManagerOptions(&opts, sch, r)
	opts.WebhookServer = ws
	mgr, err := ctrl.NewManager(env.RESTConfig, opts)
	if err != nil {
		return nil, fmt.Errorf("cachelabtest: new manager: %w", err)
	}
	return &labManager{Manager: mgr, r: r}, nil
}

// labManagerOptions sets what the lab needs of every manager, after the
// Controller's ManagerOptions: no metrics or health probe listener (the run
// has no network), the scheme the Controller gave, and every informer the
// cache makes recorded, around the controller's own NewInformer when it set
// one (its informer is the one recorded).
func labManagerOptions(o *manager.Options, sch *runtime.Scheme, r *recording) {
	o.Scheme = sch
	o.Metrics = metricsserver.Options{BindAddress: "0"}
	o.HealthProbeBindAddress = "0"
	o.PprofBindAddress = ""
	if r == nil {
		return
	}
	newInformer := o.Cache.NewInformer
	if newInformer == nil {
		newInformer = toolscache.NewSharedIndexInformer
	}
	o.Cache.NewInformer = func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, idx toolscache.Indexers) toolscache.SharedIndexInformer {
		return r.informer(resourceOf(obj, sch), newInformer(lw, obj, resync, idx))
	}
}

// labManager is the manager given to Setup: the real one, whose Add
// records the reconciles of the controllers added to it.
type labManager struct {
	manager.Manager
	r *recording
	// learned, when not nil, collects the runnables Setup adds to a
	// manager that is never started (the call that learns the webhooks).
	learned *[]manager.Runnable
}

// reconcilerType is reconcile.Reconciler, the type of the Do field of
// controller-runtime's internal controller.
var reconcilerType = reflect.TypeFor[reconcile.Reconciler]()

// Add adds a runnable; a controller's reconciler is recorded first. The
// builder's controllers are controller-runtime's internal Controller,
// whose exported field Do holds the reconciler: it is wrapped there. A
// runnable without such a field (a future controller-runtime, a custom
// runnable) is added unrecorded, and the invariants that need reconcile
// records say Unknown.
func (m *labManager) Add(run manager.Runnable) error {
	v := reflect.ValueOf(run)
	if v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct {
		if do := v.Elem().FieldByName("Do"); do.IsValid() && do.CanSet() && do.Type() == reconcilerType && !do.IsNil() {
			inner := do.Interface().(reconcile.Reconciler)
			if _, done := inner.(*recordedReconciler); !done {
				do.Set(reflect.ValueOf(reconcile.Reconciler(&recordedReconciler{inner: inner, r: m.r})))
			}
		}
	}
	if m.learned != nil {
		*m.learned = append(*m.learned, run)
	}
	return m.Manager.Add(run)
}

// recordedReconciler records each reconcile.
type recordedReconciler struct {
	inner reconcile.Reconciler
	r     *recording
}

// Reconcile records the start, calls the reconciler and records the end.
func (rr *recordedReconciler) Reconcile(ctx context.Context, req reconcile.Request) (res reconcile.Result, err error) {
	key := req.String()
	rr.r.record(sim.Record{Kind: sim.RecReconcile, Op: "start", Key: key})
	defer func() {
		if x := recover(); x != nil {
			rr.r.panicked("Reconcile of "+key, x)
			rr.r.record(sim.Record{Kind: sim.RecReconcile, Op: "end", Key: key, Result: fmt.Sprintf("panic: %v", x)})
			panic(x)
		}
		result := "ok"
		switch {
		case err != nil:
			result = err.Error()
		case res.RequeueAfter > 0:
			result = "requeued after " + res.RequeueAfter.String()
		}
		rr.r.record(sim.Record{Kind: sim.RecReconcile, Op: "end", Key: key, Result: result})
	}()
	return rr.inner.Reconcile(ctx, req)
}
