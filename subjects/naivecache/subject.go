package naivecache

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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/subjects/internal/mirror"
)

// Name is the subject's registry name and its actor and handler name in the
// trace.
const Name = "naivecache"

// SignalQuiescence is the trace name of the quiescence "synced" signal.
const SignalQuiescence = "quiescence-synced"

// The subject's parameters (Plan.SubjectParams) and their defaults.
const (
	// ParamLoopTime is the loop-time floor, a Go duration. Default 10ms.
	ParamLoopTime = "loopTime"
	// ParamQuietFactor multiplies the loop time into the quiet window.
	// Default 10, as in the notes.
	ParamQuietFactor = "quietFactor"
	// ParamWorkers is the number of workers. Default 1.
	ParamWorkers = "workers"
	// ParamRetryDelay is the pause before a failed key is queued again and
	// before a failed list or watch is retried, a Go duration. Default 1s.
	ParamRetryDelay = "retryDelay"
	// ParamNamespace restricts the watch to one namespace. Default "" (all).
	ParamNamespace = "namespace"
)

func init() {
	sim.RegisterSubject(sim.SubjectInfo{
		Name:    Name,
		Summary: "the origin notes' watch-fed map with per-entry locks, synced by quiescence (10x loop time), running the mirror controller",
		New:     func() sim.Subject { return New() },
	})
}

// Subject is the naive cache with the mirror controller on top. Build one
// with New for every process start.
type Subject struct {
	env        sim.Env
	cache      *Cache
	quiet      *Quiescence
	queue      *FIFO
	reconciler *mirror.Reconciler

	loopTime   time.Duration
	factor     int
	workers    int
	retryDelay time.Duration
	namespace  string

	// lastRV is the resourceVersion of the last event or list seen; only
	// the feed goroutine touches it.
	lastRV string

	requeues sync.WaitGroup
}

var (
	_ sim.Subject          = (*Subject)(nil)
	_ sim.Converger        = (*Subject)(nil)
	_ sim.CacheSnapshotter = (*Subject)(nil)
)

// New returns a subject that is not started.
func New() *Subject { return &Subject{} }

// Cache returns the subject's cache (nil before Start), for tests.
func (s *Subject) Cache() *Cache { return s.cache }

// Desired implements sim.Converger: every source ConfigMap has a matching
// mirror.
func (s *Subject) Desired(objs []sim.ServerObject) (bool, string) { return mirror.Desired(objs) }

// Start parses the parameters and starts the quiescence detector, the watch
// loop and the controller. Every goroutine returns once ctx is cancelled.
func (s *Subject) Start(ctx context.Context, env sim.Env) error {
	if env.ListerWatcher == nil || env.Kube == nil || env.Rec == nil {
		return errors.New("naivecache: Start needs an Env with ListerWatcher, Kube and Rec set")
	}
	if err := s.parseParams(env.Params); err != nil {
		return err
	}
	if env.Name == "" {
		env.Name = Name
	}
	s.env = env
	s.cache = NewCache()
	s.queue = NewFIFO()
	s.reconciler = &mirror.Reconciler{Client: env.Kube, Get: s.get}
	s.quiet = NewQuiescence(s.loopTime, s.factor, s.onFlip)
	s.signal(false, fmt.Sprintf("start; quiet window %s", s.quiet.Window()))
	lw := env.ListerWatcher(mirror.GVR, s.namespace)
	go s.quiet.Run(ctx)
	go s.feed(ctx, lw)
	go s.control(ctx)
	return nil
}

func (s *Subject) parseParams(p map[string]string) error {
	s.loopTime, s.factor, s.workers, s.retryDelay = 10*time.Millisecond, 10, 1, time.Second
	for _, k := range slices.Sorted(maps.Keys(p)) { // the first bad one by name, every run
		v := p[k]
		var err error
		switch k {
		case ParamLoopTime:
			s.loopTime, err = time.ParseDuration(v)
			if err == nil && s.loopTime <= 0 {
				err = errors.New("must be positive")
			}
		case ParamRetryDelay:
			s.retryDelay, err = time.ParseDuration(v)
			if err == nil && s.retryDelay <= 0 {
				err = errors.New("must be positive")
			}
		case ParamQuietFactor:
			s.factor, err = strconv.Atoi(v)
			if err == nil && s.factor < 1 {
				err = errors.New("must be at least 1")
			}
		case ParamWorkers:
			s.workers, err = strconv.Atoi(v)
			if err == nil && s.workers < 1 {
				err = errors.New("must be at least 1")
			}
		case ParamNamespace:
			s.namespace = v
		default:
			return fmt.Errorf("naivecache: unknown subject parameter %q (known: %s, %s, %s, %s, %s)", k,
				ParamLoopTime, ParamQuietFactor, ParamWorkers, ParamRetryDelay, ParamNamespace)
		}
		if err != nil {
			return fmt.Errorf("naivecache: subject parameter %s=%q: %v", k, v, err)
		}
	}
	return nil
}

// handle is steps 3 and 4 of the notes' loop for one event: tell the
// quiescence detector, apply the event to the cache, then give it to the
// handler, which enqueues the source's key.
func (s *Subject) handle(ev watch.Event, o origin) {
	start := time.Now()
	s.quiet.Event()
	out, err := s.cache.Apply(ev.Type, ev.Object)
	if err != nil {
		s.note(err.Error())
		return
	}
	if out.Note != "" {
		s.note(fmt.Sprintf("%s: %s", out.Note, out.Key))
	}
	r := sim.Record{Kind: sim.RecHandler, Actor: s.env.Name, Handler: Name, EventType: string(ev.Type), Resource: mirror.Resource, Initial: o == fromInitialList, Detail: string(out.Rule)}
	if o == fromRelist {
		r.Detail += " (relist)"
	}
	if id, _, ok := mirror.IdentityOf(ev.Object); ok {
		r.Namespace, r.Name, r.UID, r.RV = id.Namespace, id.Name, id.UID, id.RV
	}
	if out.Old != nil {
		if id, _, ok := mirror.IdentityOf(out.Old); ok {
			r.OldUID, r.OldRV = id.UID, id.RV
		}
	}
	s.env.Rec.Record(r)
	s.enqueue(mirror.SourceKey(r.Namespace, r.Name))
	s.quiet.Trip(time.Since(start))
}

func (s *Subject) enqueue(key string) {
	s.env.Rec.Record(sim.Record{Kind: sim.RecQueue, Actor: s.env.Name, Op: "add", Key: key})
	s.queue.Add(key)
}

// control is step 5: wait for the quiescence signal, then run the workers.
func (s *Subject) control(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-s.quiet.Synced():
	}
	s.note(fmt.Sprintf("workers start (%d): %s", s.workers, SignalQuiescence))
	stop := context.AfterFunc(ctx, s.queue.Close)
	defer stop()
	var wg sync.WaitGroup
	for range s.workers {
		wg.Go(func() { s.work(ctx) })
	}
	wg.Wait()
	s.requeues.Wait()
}

func (s *Subject) work(ctx context.Context) {
	for {
		key, ok := s.queue.Get()
		if !ok {
			return
		}
		s.env.Rec.Record(sim.Record{Kind: sim.RecQueue, Actor: s.env.Name, Op: "get", Key: key})
		err := mirror.Reconcile(ctx, s.env.Rec, s.env.Name, s.reconciler, key)
		s.env.Rec.Record(sim.Record{Kind: sim.RecQueue, Actor: s.env.Name, Op: "done", Key: key})
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			s.env.Rec.Record(sim.Record{Kind: sim.RecQueue, Actor: s.env.Name, Op: "requeue", Key: key, Detail: err.Error()})
			s.requeues.Go(func() {
				s.sleep(ctx, s.retryDelay)
				if ctx.Err() == nil {
					s.enqueue(key)
				}
			})
			continue
		}
		if s.queue.Len() == 0 {
			s.snapshot("idle")
		}
	}
}

// get reads the cache for the mirror controller.
func (s *Subject) get(namespace, name string) (*corev1.ConfigMap, bool, error) {
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	obj, ok := s.cache.Get(key)
	if !ok {
		return nil, false, nil
	}
	return asConfigMap(obj)
}

func asConfigMap(obj runtime.Object) (*corev1.ConfigMap, bool, error) {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return o, true, nil
	case *unstructured.Unstructured:
		cm := &corev1.ConfigMap{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, cm); err != nil {
			return nil, false, fmt.Errorf("naivecache: cached %s is not a ConfigMap: %v", o.GetName(), err)
		}
		return cm, true, nil
	default:
		return nil, false, fmt.Errorf("naivecache: cached object is a %T, not a ConfigMap", obj)
	}
}

func (s *Subject) onFlip(synced bool, window time.Duration) {
	s.signal(synced, fmt.Sprintf("quiet window %s", window))
	if synced {
		s.snapshot(SignalQuiescence)
	}
}

func (s *Subject) signal(v bool, detail string) {
	s.env.Rec.Record(sim.Record{Kind: sim.RecSignal, Actor: s.env.Name, Signal: SignalQuiescence, Value: v, Resource: mirror.Resource, Detail: detail})
}

func (s *Subject) note(detail string) {
	s.env.Rec.Record(sim.Record{Kind: sim.RecNote, Actor: s.env.Name, Detail: detail})
}

func (s *Subject) snapshot(why string) {
	s.env.Rec.Record(sim.Record{Kind: sim.RecCache, Actor: s.env.Name, Handler: Name, Resource: mirror.Resource, Objects: s.objects(), Detail: why})
}

func (s *Subject) objects() []sim.ObjectState {
	objs := s.cache.List()
	anys := make([]any, len(objs))
	for i, o := range objs {
		anys[i] = o
	}
	return mirror.Snapshot(mirror.Resource, anys)
}

// SnapshotCaches implements sim.CacheSnapshotter: the map, named "naivecache".
func (s *Subject) SnapshotCaches() []sim.CacheSnapshot {
	if s.cache == nil {
		return nil
	}
	return []sim.CacheSnapshot{{Name: Name, Objects: s.objects()}}
}
