package legacy

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/subjects/internal/mirror"
)

// DeltaFIFOName is the registry name of the DeltaFIFO subject, and its
// handler name in the trace.
const DeltaFIFOName = "legacy-deltafifo"

// SignalFIFOSynced is the DeltaFIFO's synced channel (HasSyncedChecker),
// sampled with cache.IsDone at the start of every process call; a record is
// written when the sample differs from the previous one.
const SignalFIFOSynced = "fifo-synced"

func init() {
	sim.RegisterSubject(sim.SubjectInfo{
		Name:    DeltaFIFOName,
		Summary: "the mirror controller on the pre-RealFIFO path: cache.New + DeltaFIFO, handlers called inside Pop",
		New:     func() sim.Subject { return NewDeltaFIFO() },
	})
}

// DeltaFIFOSubject is the mirror controller on an informer assembled by
// hand from cache.New and a DeltaFIFO, as informers were built before
// RealFIFO. Build one with NewDeltaFIFO for every process start.
type DeltaFIFOSubject struct {
	env     sim.Env
	h       handlerRecorder
	store   cache.Indexer
	fifo    *cache.DeltaFIFO
	ctrl    cache.Controller
	workers *mirror.Workers
}

var (
	_ sim.Subject   = (*DeltaFIFOSubject)(nil)
	_ sim.Converger = (*DeltaFIFOSubject)(nil)

	_ sim.CacheSnapshotter = (*DeltaFIFOSubject)(nil)
)

// NewDeltaFIFO returns a subject that is not started.
func NewDeltaFIFO() *DeltaFIFOSubject { return &DeltaFIFOSubject{} }

// Desired implements sim.Converger: every source ConfigMap has a matching
// mirror.
func (s *DeltaFIFOSubject) Desired(objs []sim.ServerObject) (bool, string) {
	return mirror.Desired(objs)
}

// Store returns the informer's store (nil before Start), for tests.
func (s *DeltaFIFOSubject) Store() cache.Store { return s.store }

// Start builds the store, the DeltaFIFO, the controller and the workers, and
// starts them. Workers start once the FIFO's synced channel is closed.
func (s *DeltaFIFOSubject) Start(ctx context.Context, env sim.Env) error {
	if err := checkEnv(DeltaFIFOName, env); err != nil {
		return err
	}
	p, err := parseParams(DeltaFIFOName, env.Params)
	if err != nil {
		return err
	}
	if p.handlerDelay > 0 {
		// A goroutine waiting for a sync.Mutex is not durably blocked in a
		// synctest bubble: with the reflector waiting for the FIFO's lock,
		// a sleep under that lock would stop virtual time for good.
		return fmt.Errorf("%s: subject parameter %s is not supported: the handler runs under the DeltaFIFO's lock, and sleeping there stops virtual time (use %s)",
			DeltaFIFOName, ParamHandlerDelay, RealFIFOName)
	}
	if env.Name == "" {
		env.Name = DeltaFIFOName
	}
	s.env = env
	s.h = newHandlerRecorder(env.Rec, env.Name, DeltaFIFOName)
	s.store = cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{})
	// As newQueueFIFO built it when the InOrderInformers gate was off.
	s.fifo = cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
		Name:                  "DeltaFIFO " + DeltaFIFOName,
		KnownObjects:          s.store,
		EmitDeltaTypeReplaced: true,
	})
	s.ctrl = cache.New(&cache.Config{
		Queue:             s.fifo,
		ListerWatcher:     newLW(ctx, env, p, s.h),
		FullResyncPeriod:  p.resync,
		ObjectType:        &corev1.ConfigMap{},
		ObjectDescription: "configmaps",
		Process:           s.process,
	})
	s.workers = newWorkers(ctx, env, s.store, s.h)
	go s.ctrl.RunWithContext(ctx)
	go func() {
		if !cache.WaitFor(ctx, "", s.ctrl.HasSyncedChecker()) {
			return
		}
		s.h.note(fmt.Sprintf("workers start (%d): DeltaFIFO synced channel closed", p.workers))
		s.h.snapshot(s.store, "synced")
		s.workers.Run(ctx, p.workers)
	}()
	return nil
}

// process is the informer's processDeltas (controller.go), recording each
// handler call, and sampling the FIFO's synced channel first. It runs with
// the DeltaFIFO's lock held: HasSynced() would deadlock here, the channel
// does not.
func (s *DeltaFIFOSubject) process(obj any, isInInitialList bool) error {
	deltas, ok := obj.(cache.Deltas)
	if !ok {
		return fmt.Errorf("%s: Pop gave a %T, not cache.Deltas", DeltaFIFOName, obj)
	}
	key := ""
	if len(deltas) > 0 {
		key, _ = s.fifo.KeyOf(deltas)
	}
	s.sample(key, isInInitialList)
	for _, d := range deltas {
		if err := s.processDelta(d, isInInitialList); err != nil {
			return err
		}
	}
	return nil
}

func (s *DeltaFIFOSubject) processDelta(d cache.Delta, isInInitialList bool) error {
	switch d.Type {
	case cache.Sync, cache.Replaced, cache.Added, cache.Updated:
		old, exists, err := s.store.Get(d.Object)
		if err == nil && exists {
			if err := s.store.Update(d.Object); err != nil {
				return err
			}
			s.handle(watch.Modified, d.Object, old, false, "delta "+string(d.Type))
			return nil
		}
		if err := s.store.Add(d.Object); err != nil {
			return err
		}
		s.handle(watch.Added, d.Object, nil, isInInitialList, "delta "+string(d.Type))
	case cache.Deleted:
		if err := s.store.Delete(d.Object); err != nil {
			return err
		}
		s.handle(watch.Deleted, d.Object, nil, false, "delta "+string(d.Type))
	default:
		return errors.New(DeltaFIFOName + ": unexpected delta type " + string(d.Type))
	}
	return nil
}

// handle records the handler call and enqueues the source's key.
func (s *DeltaFIFOSubject) handle(t watch.EventType, obj, old any, initial bool, detail string) {
	ns, name := s.h.call(t, obj, old, initial, detail)
	s.workers.Add(mirror.SourceKey(ns, name))
}

func (s *DeltaFIFOSubject) sample(key string, initial bool) {
	v := cache.IsDone(s.fifo.HasSyncedChecker())
	s.h.flip(SignalFIFOSynced, v, fmt.Sprintf("sampled in process of %s (isInInitialList=%v)", key, initial))
}

// SnapshotCaches implements sim.CacheSnapshotter: the informer's store,
// named after the subject.
func (s *DeltaFIFOSubject) SnapshotCaches() []sim.CacheSnapshot {
	store := s.Store()
	if store == nil {
		return nil
	}
	return []sim.CacheSnapshot{{Name: DeltaFIFOName, Objects: mirror.Snapshot(mirror.Resource, store.List())}}
}
