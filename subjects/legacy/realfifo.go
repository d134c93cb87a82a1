package legacy

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/subjects/internal/mirror"
)

// RealFIFOName is the registry name of the modern informer subject, and its
// handler name in the trace.
const RealFIFOName = "informer-realfifo"

// The modern subject's signals. Each is recorded when its checker completes
// and, for informer-synced, also as sampled at the start of every handler
// call; a record is written only when the value changes.
const (
	// SignalInformerSynced is informer.HasSyncedChecker(): the store holds
	// the initial list (its handlers may not have seen it yet, EDGE-CASES 1).
	SignalInformerSynced = "informer-synced"
	// SignalHandlerSynced is registration.HasSyncedChecker(): the handler
	// has returned on every initial item.
	SignalHandlerSynced = "handler-synced"
	// SignalRVSynced is KEP-5647's stale-controller check (EDGE-CASES 24):
	// the store's resourceVersion (LastStoreSyncResourceVersion, moved by
	// AtomicFIFO with every delta and bookmark) is at least that of the
	// controller's last write. Sampled at every handler call and after every
	// write; false until the store has a resourceVersion.
	SignalRVSynced = "rv-synced"
	// SignalLastSyncRV is informer.LastSyncResourceVersion() != "" taken
	// for a sync signal (the lastsync-rv variant only, EDGE-CASES 6):
	// sampled every 100 ms and at every handler call.
	SignalLastSyncRV = "lastsync-rv"
)

func init() {
	sim.RegisterSubject(sim.SubjectInfo{
		Name:    RealFIFOName,
		Summary: "the mirror controller on today's SharedIndexInformer (RealFIFO), waiting for its handler registration's HasSynced",
		New:     func() sim.Subject { return NewRealFIFO() },
	})
}

// RealFIFOSubject is the mirror controller on a client-go v0.37.2
// SharedIndexInformer (RealFIFO, AtomicFIFO and WatchList by default), to
// compare side by side with DeltaFIFOSubject. Build one with NewRealFIFO
// for every process start.
type RealFIFOSubject struct {
	// v is what this variant changes (the zero variant but its name is
	// the real controller).
	v        variant
	env      sim.Env
	h        handlerRecorder
	informer cache.SharedIndexInformer
	reg      cache.ResourceEventHandlerRegistration
	workers  *mirror.Workers
	// handlerDelay is how long each handler call takes (ParamHandlerDelay).
	handlerDelay time.Duration
	// ctx is Start's, for the handler's delay.
	ctx context.Context
	// lastWrite is the resourceVersion of the controller's last write.
	lastWrite atomic.Int64
}

var (
	_ sim.Subject   = (*RealFIFOSubject)(nil)
	_ sim.Converger = (*RealFIFOSubject)(nil)

	_ sim.CacheSnapshotter = (*RealFIFOSubject)(nil)
)

// NewRealFIFO returns a subject that is not started.
func NewRealFIFO() *RealFIFOSubject { return &RealFIFOSubject{v: variant{name: RealFIFOName}} }

// Desired implements sim.Converger: every source ConfigMap has a matching
// mirror.
func (s *RealFIFOSubject) Desired(objs []sim.ServerObject) (bool, string) {
	return mirror.Desired(objs)
}

// Store returns the informer's store (nil before Start), for tests.
func (s *RealFIFOSubject) Store() cache.Store {
	if s.informer == nil {
		return nil
	}
	return s.informer.GetStore()
}

// Start builds the informer, registers the handler and starts them; the
// workers start once the registration's HasSyncedChecker is done.
func (s *RealFIFOSubject) Start(ctx context.Context, env sim.Env) error {
	if s.v.name == "" {
		s.v.name = RealFIFOName
	}
	if err := checkEnv(s.v.name, env); err != nil {
		return err
	}
	p, err := parseParams(s.v.name, env.Params)
	if err != nil {
		return err
	}
	if env.Name == "" {
		env.Name = s.v.name
	}
	s.env, s.ctx = env, ctx
	s.handlerDelay = p.handlerDelay
	s.h = newHandlerRecorder(env.Rec, env.Name, RealFIFOName)
	lw := newLW(ctx, env, p, s.h)
	lw.noWatchList, lw.stripListRV = s.v.noWatchList, s.v.stripListRV
	if s.v.hideTooLarge {
		lw.hideTooLarge = func() {
			s.h.note("the ListerWatcher hid a 504 Too large resource version from the reflector (a bare 504 Timeout)")
		}
	}
	opts := cache.SharedIndexInformerOptions{ObjectDescription: "configmaps", ResyncPeriod: p.resync}
	if env.Metrics != nil {
		// client-go's informer metrics go to the trace (sim.Trace.Metrics).
		if opts.Identifier, err = env.Metrics.InformerID(env.Name, "", mirror.GVR); err != nil {
			return fmt.Errorf("%s: informer metrics: %w", s.v.name, err)
		}
		opts.InformerMetricsProvider = env.Metrics.Informer(env.Name)
	}
	s.informer = cache.NewSharedIndexInformerWithOptions(lw, &corev1.ConfigMap{}, opts)
	s.workers = newWorkers(ctx, env, s.informer.GetStore(), s.h)
	s.workers.Reconciler.Wrote = func(rv int64) {
		for {
			last := s.lastWrite.Load()
			if rv <= last || s.lastWrite.CompareAndSwap(last, rv) {
				break
			}
		}
		s.sampleRV("after a write")
	}
	s.reg, err = s.informer.AddEventHandlerWithOptions(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			s.handle(watch.Added, obj, nil, isInInitialList, "OnAdd")
		},
		UpdateFunc: func(old, obj any) {
			detail := "OnUpdate"
			switch {
			case old == obj:
				detail = "OnUpdate (same object: a resync)"
			case sameRV(old, obj):
				detail = "OnUpdate (same resourceVersion, another copy: a relist)"
			}
			if s.v.skipSameRV && sameRV(old, obj) {
				s.h.call(watch.Modified, obj, old, false, detail+", skipped as a resync")
				return
			}
			s.handle(watch.Modified, obj, old, false, detail)
		},
		DeleteFunc: func(obj any) {
			detail := "OnDelete"
			if _, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				detail = "OnDelete (DeletedFinalStateUnknown)"
			}
			s.handle(watch.Deleted, obj, nil, false, detail)
		},
	}, cache.HandlerOptions{ResyncPeriod: &p.resync})
	if err != nil {
		return fmt.Errorf("%s: AddEventHandler: %w", s.v.name, err)
	}
	go s.informer.RunWithContext(ctx)
	go s.waitSignal(ctx, SignalInformerSynced, s.informer.HasSyncedChecker())
	if s.v.lastSyncRV {
		go s.waitSignal(ctx, SignalHandlerSynced, s.reg.HasSyncedChecker())
		go func() {
			if !s.waitLastSyncRV(ctx) {
				return
			}
			s.h.note(fmt.Sprintf("workers start (%d): %s", p.workers, SignalLastSyncRV))
			s.h.snapshot(s.informer.GetStore(), SignalLastSyncRV)
			s.workers.Run(ctx, p.workers)
		}()
		return nil
	}
	go func() {
		if !s.waitSignal(ctx, SignalHandlerSynced, s.reg.HasSyncedChecker()) {
			return
		}
		s.h.note(fmt.Sprintf("workers start (%d): %s", p.workers, SignalHandlerSynced))
		s.h.snapshot(s.informer.GetStore(), SignalHandlerSynced)
		s.workers.Run(ctx, p.workers)
	}()
	return nil
}

// waitLastSyncRV looks at informer.LastSyncResourceVersion() every 100 ms
// (in the run's turn order) until it is set, as a controller polling it
// would; false if ctx ended first. The handler samples it too (sampleLastSyncRV).
func (s *RealFIFOSubject) waitLastSyncRV(ctx context.Context) bool {
	for {
		if s.sampleLastSyncRV("polled every 100ms") {
			return true
		}
		if s.env.Sleep != nil {
			s.env.Sleep(ctx, "poll LastSyncResourceVersion", 100*time.Millisecond)
		} else {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
		if ctx.Err() != nil {
			return false
		}
	}
}

// sampleLastSyncRV records lastsync-rv when it changes and reports whether
// it is set.
func (s *RealFIFOSubject) sampleLastSyncRV(when string) bool {
	var set bool
	s.h.flipFunc(SignalLastSyncRV, func() (bool, string) {
		rv := s.informer.LastSyncResourceVersion()
		set = rv != ""
		return set, fmt.Sprintf("%s: LastSyncResourceVersion() = %q", when, rv)
	})
	return set
}

func (s *RealFIFOSubject) handle(t watch.EventType, obj, old any, initial bool, detail string) {
	if s.env.Turn != nil {
		// The handler records in the order the plan decides, beside a
		// worker or a checker woken by the same release (sim.Env.Turn).
		key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
		s.env.Turn(s.ctx, "handler configmaps", string(t)+" "+key)
	}
	s.h.flip(SignalInformerSynced, cache.IsDone(s.informer.HasSyncedChecker()), "sampled in the handler")
	s.sampleRV("sampled in the handler")
	if s.v.lastSyncRV {
		s.sampleLastSyncRV("sampled in the handler")
	}
	ns, name := s.h.call(t, obj, old, initial, detail)
	if s.handlerDelay > 0 {
		if s.env.Sleep != nil {
			s.env.Sleep(s.ctx, "handler", s.handlerDelay)
		} else {
			time.Sleep(s.handlerDelay)
		}
	}
	if s.v.panicOnPoison && t == watch.Added && poisoned(obj) {
		s.h.note(fmt.Sprintf("OnAdd panics on %s/%s (annotation %s)", ns, name, PoisonAnnotation))
		panic(fmt.Sprintf("%s: OnAdd: cannot handle %s/%s", s.v.name, ns, name))
	}
	if s.v.sourcesOnly && mirror.IsMirrorName(name) {
		return
	}
	s.workers.Add(mirror.SourceKey(ns, name))
}

// sampleRV records rv-synced when it changes.
func (s *RealFIFOSubject) sampleRV(when string) {
	s.h.flipFunc(SignalRVSynced, func() (bool, string) {
		store := mirror.ParseRV(s.informer.GetStore().LastStoreSyncResourceVersion())
		write := s.lastWrite.Load()
		return store > 0 && store >= write, fmt.Sprintf("%s: store rv %d, last write rv %d", when, store, write)
	})
}

// waitSignal records name once checker is done; false if ctx ended first.
func (s *RealFIFOSubject) waitSignal(ctx context.Context, name string, checker cache.DoneChecker) bool {
	select {
	case <-ctx.Done():
		return false
	case <-checker.Done():
		if s.env.Turn != nil {
			s.env.Turn(ctx, "check signals", name)
		}
		s.h.flip(name, true, "checker done")
		return true
	}
}

func sameRV(a, b any) bool {
	ma, err1 := meta.Accessor(a)
	mb, err2 := meta.Accessor(b)
	return err1 == nil && err2 == nil && ma.GetResourceVersion() == mb.GetResourceVersion()
}

// SnapshotCaches implements sim.CacheSnapshotter: the informer's store,
// named after the subject.
func (s *RealFIFOSubject) SnapshotCaches() []sim.CacheSnapshot {
	store := s.Store()
	if store == nil {
		return nil
	}
	return []sim.CacheSnapshot{{Name: RealFIFOName, Objects: mirror.Snapshot(mirror.Resource, store.List())}}
}
