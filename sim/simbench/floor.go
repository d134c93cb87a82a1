package simbench

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// FloorRun plays the standard scenario's timeline against the same real
// client-go components the simtest/informer subject runs (a
// SharedIndexInformer with one handler, a typed rate-limiting workqueue and
// one worker), fed by the smallest server that speaks WatchList: a map of
// ConfigMaps and a watch channel, with no fakeapi, no fault policy, no
// latency and no recorder. The same 50 initial objects, the same 200
// operations at the same virtual times, the same 3 broken watches (an
// ERROR event with a 500, as fakeapi's break), then 1 s of quiet. It must
// be called from a goroutine inside a synctest bubble and leaves nothing
// running. It returns the virtual time the run took and the number of
// handler calls.
//
// Its cost per run is the floor of any run of the standard scenario: what
// the real informer and workqueue cost when everything around them is
// free.
func FloorRun(ctx context.Context) (virtual time.Duration, handled int, err error) {
	start := time.Now()
	srv := newFloorServer()
	for i := range StandardObjects {
		srv.create(fmt.Sprintf("cm%d", i))
	}
	handled, err = runInformer(ctx, srv.lw(), func(op Op) {
		switch op.Op {
		case "create":
			srv.create(op.Name)
		case "delete":
			srv.delete(op.Name)
		case "patch":
			srv.patch(op.Name, op.Value)
		case "break":
			srv.breakWatch()
		}
	})
	srv.breakWatch()
	return time.Since(start), handled, err
}

// runInformer runs the subject's client-go components on lw while play
// plays the standard timeline at its virtual times, waits StandardQuiet,
// stops them and returns the number of handler calls.
func runInformer(ctx context.Context, lw cache.ListerWatcher, play func(Op)) (handled int, err error) {
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	inf := cache.NewSharedIndexInformerWithOptions(lw, &corev1.ConfigMap{}, cache.SharedIndexInformerOptions{})
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
		workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "floor"})
	enqueue := func(obj any) {
		mu.Lock()
		handled++
		mu.Unlock()
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if name, err := cache.ObjectToName(obj); err == nil {
			queue.Add(name)
		}
	}
	if _, err := inf.AddEventHandlerWithOptions(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, _ bool) { enqueue(obj) },
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}, cache.HandlerOptions{}); err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	wg.Go(func() { inf.RunWithContext(ctx) })
	wg.Go(func() {
		<-ctx.Done()
		queue.ShutDown()
	})
	wg.Go(func() {
		if !cache.WaitFor(ctx, "", inf.HasSyncedChecker()) {
			return
		}
		for {
			key, shutdown := queue.Get()
			if shutdown {
				return
			}
			queue.Forget(key)
			queue.Done(key)
		}
	})
	for _, op := range StandardTimeline() {
		if d := op.At - time.Since(start); d > 0 {
			time.Sleep(d)
		}
		play(op)
	}
	time.Sleep(StandardQuiet)
	cancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	return handled, nil
}

// floorServer is the floor's server: current objects, a revision counter
// and at most one open watch.
type floorServer struct {
	mu   sync.Mutex
	rv   int64
	uid  int64
	objs map[string]*corev1.ConfigMap
	keys []string // names in creation order (list order)
	w    *watch.RaceFreeFakeWatcher
}

func newFloorServer() *floorServer {
	return &floorServer{rv: 1, objs: map[string]*corev1.ConfigMap{}}
}

func (s *floorServer) create(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv++
	s.uid++
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "default", UID: types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", s.uid)),
		ResourceVersion: strconv.FormatInt(s.rv, 10), CreationTimestamp: metav1.Now(),
	}}
	s.objs[name] = cm
	s.keys = append(s.keys, name)
	s.sendLocked(watch.Added, cm)
}

func (s *floorServer) patch(name, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.objs[name]
	if !ok {
		return
	}
	s.rv++
	cm := old.DeepCopy()
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["i"] = value
	cm.ResourceVersion = strconv.FormatInt(s.rv, 10)
	s.objs[name] = cm
	s.sendLocked(watch.Modified, cm)
}

func (s *floorServer) delete(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.objs[name]
	if !ok {
		return
	}
	s.rv++
	delete(s.objs, name)
	for i, k := range s.keys {
		if k == name {
			s.keys = append(s.keys[:i], s.keys[i+1:]...)
			break
		}
	}
	last := old.DeepCopy()
	last.ResourceVersion = strconv.FormatInt(s.rv, 10)
	s.sendLocked(watch.Deleted, last)
}

// sendLocked sends a copy of obj to the open watch, if any.
func (s *floorServer) sendLocked(typ watch.EventType, obj *corev1.ConfigMap) {
	if s.w == nil || s.w.IsStopped() {
		return
	}
	s.w.Action(typ, obj.DeepCopy())
}

// breakWatch ends the open watch as fakeapi's abrupt close does: an ERROR
// event with a 500 InternalError, then the end of the stream.
func (s *floorServer) breakWatch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return
	}
	if !s.w.IsStopped() {
		status := apierrors.NewClientErrorReporter(500, "GET", "ClientWatchDecoding").AsObject(
			fmt.Errorf("unable to decode an event from the watch stream: stream error: stream ID 1; INTERNAL_ERROR; received from peer"))
		s.w.Error(status)
		s.w.Stop()
	}
	s.w = nil
}

// lw serves lists and WatchList watches (initial ADDED events, then the
// initial-events-end bookmark, then live events). A plain watch (no
// sendInitialEvents) gets live events only.
func (s *floorServer) lw() *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			l := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatInt(s.rv, 10)}}
			for _, k := range s.keys {
				l.Items = append(l.Items, *s.objs[k].DeepCopy())
			}
			return l, nil
		},
		WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.w != nil && !s.w.IsStopped() {
				s.w.Stop()
			}
			w := watch.NewRaceFreeFake()
			s.w = w
			if o.SendInitialEvents != nil && *o.SendInitialEvents {
				for _, k := range s.keys {
					w.Add(s.objs[k].DeepCopy())
				}
				w.Action(watch.Bookmark, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
					ResourceVersion: strconv.FormatInt(s.rv, 10),
					Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
				}})
			}
			return w, nil
		},
	}
}
