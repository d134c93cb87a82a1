package legacy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/subjects/internal/mirror"
)

// The subjects' parameters (Plan.SubjectParams).
const (
	// ParamWorkers is the number of workers. Default 1.
	ParamWorkers = "workers"
	// ParamNamespace restricts the informer to one namespace. Default ""
	// (all namespaces).
	ParamNamespace = "namespace"
	// ParamHandlerDelay makes every handler call take this long (a Go
	// duration), as a slow handler does. Default 0.
	ParamHandlerDelay = "handlerDelay"
	// ParamResync is the informer's resync period and its handler's (a Go
	// duration): every period, each cached object is handed to the handler
	// again as OnUpdate(obj, obj) (EDGE-CASES 21). Default 0 (no resync).
	ParamResync = "resync"
	// ParamDropEndBookmark, "true", stands for a server (or a proxy) that
	// never sends the k8s.io/initial-events-end bookmark: the subject's
	// ListerWatcher drops it from every watch stream before the reflector
	// sees it, and records a note each time (EDGE-CASES 5). Default false.
	ParamDropEndBookmark = "dropEndBookmark"
)

// params are the parsed subject parameters.
type params struct {
	workers      int
	namespace    string
	handlerDelay time.Duration
	resync       time.Duration
	dropEndBM    bool
}

func parseParams(subject string, p map[string]string) (params, error) {
	out := params{workers: 1}
	for _, k := range slices.Sorted(maps.Keys(p)) { // the first bad one by name, every run
		v := p[k]
		switch k {
		case ParamWorkers:
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return out, fmt.Errorf("%s: subject parameter %s=%q: want an integer of at least 1", subject, k, v)
			}
			out.workers = n
		case ParamNamespace:
			out.namespace = v
		case ParamHandlerDelay:
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return out, fmt.Errorf("%s: subject parameter %s=%q: want a Go duration of at least 0 (e.g. 100ms)", subject, k, v)
			}
			out.handlerDelay = d
		case ParamResync:
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return out, fmt.Errorf("%s: subject parameter %s=%q: want a Go duration of at least 0 (e.g. 30s)", subject, k, v)
			}
			out.resync = d
		case ParamDropEndBookmark:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return out, fmt.Errorf("%s: subject parameter %s=%q: want true or false", subject, k, v)
			}
			out.dropEndBM = b
		default:
			return out, fmt.Errorf("%s: unknown subject parameter %q (known: %s, %s, %s, %s, %s)", subject, k, ParamWorkers, ParamNamespace, ParamHandlerDelay, ParamResync, ParamDropEndBookmark)
		}
	}
	return out, nil
}

func checkEnv(subject string, env sim.Env) error {
	if env.ListerWatcher == nil || env.Kube == nil || env.Rec == nil {
		return errors.New(subject + ": Start needs an Env with ListerWatcher, Kube and Rec set")
	}
	return nil
}

// lwAdapter gives a ListerWatcherWithContext the context-free methods that
// cache.Config and NewSharedIndexInformer ask for (the reflector calls the
// WithContext ones), and passes on whether WatchList is supported.
type lwAdapter struct {
	cache.ListerWatcherWithContext
	ctx context.Context
	// noWatchList makes the adapter report WatchList semantics unsupported,
	// so the reflector lists and watches (the opt-out of EDGE-CASES 5).
	noWatchList bool
	// stripListRV clears the resourceVersion of every list it returns, so
	// the reflector's LastSyncResourceVersion stays "" and its watch
	// starts from "" (EDGE-CASES 16).
	stripListRV bool
	// dropEndBookmark, when set, drops the k8s.io/initial-events-end
	// bookmark from every watch stream and is called each time
	// (ParamDropEndBookmark).
	dropEndBookmark func()
	// hideTooLarge turns a 504 "Too large resource version" from a list or
	// a watch into a bare 504 Timeout the reflector cannot recognise
	// (IgnoresTooLargeName), and is called each time.
	hideTooLarge func()
}

var _ cache.ListerWatcher = lwAdapter{}

// List lists with the subject's context.
func (a lwAdapter) List(o metav1.ListOptions) (runtime.Object, error) {
	return a.ListWithContext(a.ctx, o)
}

// ListWithContext lists, clearing the list's resourceVersion when
// stripListRV is set.
func (a lwAdapter) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	obj, err := a.ListerWatcherWithContext.ListWithContext(ctx, o)
	err = a.hide(err)
	if err != nil || !a.stripListRV {
		return obj, err
	}
	l, err := meta.ListAccessor(obj)
	if err != nil {
		return nil, fmt.Errorf("list of %T: %w", obj, err)
	}
	l.SetResourceVersion("")
	return obj, nil
}

// Watch watches with the subject's context.
func (a lwAdapter) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return a.WatchWithContext(a.ctx, o)
}

// WatchWithContext watches, dropping the initial-events-end bookmark when
// dropEndBookmark is set.
func (a lwAdapter) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	w, err := a.ListerWatcherWithContext.WatchWithContext(ctx, o)
	err = a.hide(err)
	if err != nil || a.dropEndBookmark == nil {
		return w, err
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if ev.Type != watch.Bookmark {
			return ev, true
		}
		if m, err := meta.Accessor(ev.Object); err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
			a.dropEndBookmark()
			return ev, false
		}
		return ev, true
	}), nil
}

// hide returns err, or a bare 504 Timeout in its place when hideTooLarge
// is set and err is a "Too large resource version" (a 504 with cause
// ResourceVersionTooLarge).
func (a lwAdapter) hide(err error) error {
	if err == nil || a.hideTooLarge == nil || !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		return err
	}
	a.hideTooLarge()
	return apierrors.NewTimeoutError("the server was unable to return a response in the time allotted", 1)
}

// IsWatchListSemanticsUnSupported passes the wrapped ListerWatcher's answer
// on (false when it has none: WatchList is tried), or true when noWatchList
// is set.
func (a lwAdapter) IsWatchListSemanticsUnSupported() bool {
	if a.noWatchList {
		return true
	}
	u, ok := a.ListerWatcherWithContext.(interface{ IsWatchListSemanticsUnSupported() bool })
	return ok && u.IsWatchListSemanticsUnSupported()
}

// handlerRecorder records handler calls and signals for one subject.
type handlerRecorder struct {
	rec     sim.Recorder
	actor   string
	handler string
	flips   *flips
}

// flips remembers each signal's last recorded value.
type flips struct {
	mu   sync.Mutex
	last map[string]bool
}

func newHandlerRecorder(rec sim.Recorder, actor, handler string) handlerRecorder {
	return handlerRecorder{rec: rec, actor: actor, handler: handler, flips: &flips{last: map[string]bool{}}}
}

// flip records signal name's value v if it is the first value recorded for
// name or differs from the last one.
func (h handlerRecorder) flip(name string, v bool, detail string) {
	h.flipFunc(name, func() (bool, string) { return v, detail })
}

// flipFunc is flip with the value computed under the lock, so that
// concurrent samplers record in the order of their samples.
func (h handlerRecorder) flipFunc(name string, sample func() (bool, string)) {
	h.flips.mu.Lock()
	v, detail := sample()
	last, seen := h.flips.last[name]
	h.flips.last[name] = v
	// Record while holding the lock, so two samplers cannot record the same
	// flip twice or out of order.
	if !seen || last != v {
		h.signal(name, v, detail)
	}
	h.flips.mu.Unlock()
}

// call records one handler call: evType is ADDED, MODIFIED or DELETED.
func (h handlerRecorder) call(evType watch.EventType, obj, old any, initial bool, detail string) (ns, name string) {
	r := sim.Record{Kind: sim.RecHandler, Actor: h.actor, Handler: h.handler, EventType: string(evType), Resource: mirror.Resource, Initial: initial, Detail: detail}
	if id, tomb, ok := mirror.IdentityOf(obj); ok {
		r.Namespace, r.Name, r.UID, r.RV, r.Tombstone = id.Namespace, id.Name, id.UID, id.RV, tomb
	}
	if old != nil {
		if id, _, ok := mirror.IdentityOf(old); ok {
			r.OldUID, r.OldRV = id.UID, id.RV
		}
	}
	h.rec.Record(r)
	return r.Namespace, r.Name
}

func (h handlerRecorder) signal(name string, v bool, detail string) {
	r := sim.Record{Kind: sim.RecSignal, Actor: h.actor, Signal: name, Value: v, Resource: mirror.Resource, Detail: detail}
	if name == SignalHandlerSynced || name == SignalLastSyncRV {
		r.Handler = h.handler
	}
	h.rec.Record(r)
}

func (h handlerRecorder) note(detail string) {
	h.rec.Record(sim.Record{Kind: sim.RecNote, Actor: h.actor, Detail: detail})
}

func (h handlerRecorder) snapshot(store cache.Store, why string) {
	h.rec.Record(sim.Record{Kind: sim.RecCache, Actor: h.actor, Handler: h.handler, Resource: mirror.Resource, Objects: mirror.Snapshot(mirror.Resource, store.List()), Detail: why})
}

// storeGetter reads ConfigMaps from a client-go store for the mirror
// controller.
func storeGetter(store cache.Store) mirror.Getter {
	return func(namespace, name string) (*corev1.ConfigMap, bool, error) {
		key := name
		if namespace != "" {
			key = namespace + "/" + name
		}
		obj, ok, err := store.GetByKey(key)
		if err != nil || !ok {
			return nil, false, err
		}
		cm, isCM := obj.(*corev1.ConfigMap)
		if !isCM {
			return nil, false, fmt.Errorf("cached %s is a %T, not a *v1.ConfigMap", key, obj)
		}
		return cm, true, nil
	}
}

// newWorkers returns the mirror controller's workers over a fresh
// rate-limited workqueue.
//
// The queue shuts down when ctx ends, whether or not the workers ever
// started: its delaying loop is a goroutine, and a crash before the first
// sync must not leave it running past the process it belonged to.
func newWorkers(ctx context.Context, env sim.Env, store cache.Store, h handlerRecorder) *mirror.Workers {
	config := workqueue.TypedRateLimitingQueueConfig[string]{Name: env.Name}
	if env.Metrics != nil {
		config.MetricsProvider = env.Metrics.Workqueue(env.Name)
	}
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](), config)
	context.AfterFunc(ctx, q.ShutDown)
	w := &mirror.Workers{
		Queue:      q,
		Reconciler: &mirror.Reconciler{Client: env.Kube, Get: storeGetter(store)},
		Rec:        env.Rec,
		Actor:      env.Name,
		Idle:       func() { h.snapshot(store, "idle") },
	}
	if env.Turn != nil {
		w.Turn = func(what, object string) { env.Turn(ctx, what, object) }
	}
	return w
}
