// Package fakeapibench is the informer-throughput workload of issue 20: a
// real client-go SharedIndexInformer lists Objects ConfigMaps, then a
// client makes Updates updates to them while at most Window events are
// unseen by the informer's handler, inside a synctest bubble. It runs the
// same workload on four paths, so that each figure comes with its
// baselines from the same run:
//
//   - "listerwatcher": an informer over a fakeapi Client's ListerWatcher,
//     updates through the same Client;
//   - "clientset": fakeapi.NewClientset (the drop-in for client-go's fake
//     clientset) and an informer factory;
//   - "simple-clientset": client-go's fake.NewSimpleClientset and an
//     informer factory (baseline);
//   - "limit": an informer over a watch channel filled with the same
//     events, with no server and no writes (baseline: what the informer
//     alone costs).
//
// CPU time is the whole process's (getrusage: every thread, the garbage
// collector included) and allocations are the runtime's count, both from
// the informer's sync to the handler's last update; the initial list is
// not counted.
package fakeapibench

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rt "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/fakeapi"
)

// The workload's size.
const (
	// Objects is the number of ConfigMaps the informer lists.
	Objects = 50
	// Updates is the number of updates of the standard workload.
	Updates = 20000
	// Window is the most events written but not yet seen by the handler
	// (client-go's fake trackers panic when 100 wait in a watch channel).
	Window = 50
	// Namespace is the ConfigMaps' namespace.
	Namespace = "bench"
)

// The paths, in the order Measure runs them.
const (
	ListerWatcher   = "listerwatcher"
	Clientset       = "clientset"
	SimpleClientset = "simple-clientset"
	Limit           = "limit"
)

// Paths lists every path, in the order Measure runs them.
var Paths = []string{ListerWatcher, Clientset, SimpleClientset, Limit}

// Result is the cost of the workload's runs on one path.
type Result struct {
	// Path is the path's name (see Paths).
	Path string
	// Runs is the number of runs; Events the handler's update calls over
	// all of them.
	Runs, Events int
	// CPU is the process's CPU time and Wall the wall time spent from the
	// informers' sync to their last update.
	CPU, Wall time.Duration
	// Allocs is the number of heap allocations over the same spans.
	Allocs uint64
}

// EventsPerCPUSecond is Events over CPU time (0 when CPU time is unknown).
func (r Result) EventsPerCPUSecond() float64 {
	if r.CPU <= 0 {
		return 0
	}
	return float64(r.Events) / r.CPU.Seconds()
}

// AllocsPerEvent is Allocs over Events.
func (r Result) AllocsPerEvent() float64 {
	if r.Events == 0 {
		return 0
	}
	return float64(r.Allocs) / float64(r.Events)
}

// Ratio is r's events per CPU-second over base's (0 if base's is unknown).
func (r Result) Ratio(base Result) float64 {
	if base.EventsPerCPUSecond() == 0 {
		return 0
	}
	return r.EventsPerCPUSecond() / base.EventsPerCPUSecond()
}

func (r *Result) add(o Result) {
	r.Runs += o.Runs
	r.Events += o.Events
	r.CPU += o.CPU
	r.Wall += o.Wall
	r.Allocs += o.Allocs
}

// Measure runs the workload with updates updates on each path of paths
// (all of Paths if none), rounds times, one run of each path in turn, and
// returns one Result per path, in the order of paths (Total of
// MeasureRounds). It must be called from a goroutine inside a synctest
// bubble.
func Measure(ctx context.Context, rounds, updates int, paths ...string) ([]Result, error) {
	byRound, err := MeasureRounds(ctx, rounds, updates, paths...)
	if err != nil {
		return nil, err
	}
	return Total(byRound), nil
}

// MeasureRounds is Measure returning each round's results (one Result per
// path, in the order of paths), so that a ratio's spread across rounds can
// be shown.
func MeasureRounds(ctx context.Context, rounds, updates int, paths ...string) ([][]Result, error) {
	if len(paths) == 0 {
		paths = Paths
	}
	if rounds < 1 || updates < 1 {
		return nil, fmt.Errorf("fakeapibench: rounds and updates must be at least 1, got %d and %d", rounds, updates)
	}
	out := make([][]Result, rounds)
	for round := range out {
		out[round] = make([]Result, len(paths))
		for i, p := range paths {
			r, err := Run(ctx, p, updates)
			if err != nil {
				return nil, err
			}
			out[round][i] = r
		}
	}
	return out, nil
}

// Total adds up rounds of results (as MeasureRounds returns them) path by
// path.
func Total(rounds [][]Result) []Result {
	if len(rounds) == 0 {
		return nil
	}
	out := make([]Result, len(rounds[0]))
	for i, r := range rounds[0] {
		out[i].Path = r.Path
	}
	for _, round := range rounds {
		for i, r := range round {
			out[i].add(r)
		}
	}
	return out
}

// Run runs the workload once on path with updates updates. It must be
// called from a goroutine inside a synctest bubble and leaves nothing
// running.
func Run(ctx context.Context, path string, updates int) (Result, error) {
	if updates < 1 {
		return Result{}, fmt.Errorf("fakeapibench: updates must be at least 1, got %d", updates)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		inf    cache.SharedIndexInformer
		update func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error)
		fill   func()
		err    error
	)
	switch path {
	case ListerWatcher:
		inf, update, err = listerWatcherPath(ctx)
	case Clientset:
		inf, update = clientsetPath(ctx, fakeapi.NewClientset(initial()...))
	case SimpleClientset:
		inf, update = clientsetPath(ctx, fake.NewSimpleClientset(initial()...))
	case Limit:
		inf, fill = limitPath(updates)
	default:
		return Result{}, fmt.Errorf("fakeapibench: unknown path %q (known: %v)", path, Paths)
	}
	if err != nil {
		return Result{}, fmt.Errorf("fakeapibench: %s: %w", path, err)
	}
	h := newCounter()
	reg, err := inf.AddEventHandler(h)
	if err != nil {
		return Result{}, err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { inf.RunWithContext(ctx) })
	if !cache.WaitFor(ctx, path, reg.HasSyncedChecker()) {
		return Result{}, fmt.Errorf("fakeapibench: %s: the informer did not sync", path)
	}
	if n := h.adds(); n != Objects {
		return Result{}, fmt.Errorf("fakeapibench: %s: the informer synced with %d objects, want %d", path, n, Objects)
	}
	objs := initial()
	cms := make([]*corev1.ConfigMap, len(objs))
	for i, o := range objs {
		cms[i] = o.(*corev1.ConfigMap)
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0, wall0 := ProcessCPU(), WallClock()
	if fill != nil {
		fill()
	} else {
		for i := range updates {
			if i >= Window {
				h.waitFor(i + 1 - Window)
			}
			cm := cms[i%Objects]
			cm.Data["i"] = strconv.Itoa(i)
			got, err := update(cm)
			if err != nil {
				return Result{}, fmt.Errorf("fakeapibench: %s: update %d: %w", path, i, err)
			}
			cms[i%Objects] = got
		}
	}
	h.waitFor(updates)
	r := Result{Path: path, Runs: 1, Events: updates, CPU: ProcessCPU() - cpu0, Wall: WallClock() - wall0}
	runtime.ReadMemStats(&ms1)
	r.Allocs = ms1.Mallocs - ms0.Mallocs
	return r, nil
}

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// initial returns the Objects ConfigMaps the informer lists.
func initial() []rt.Object {
	out := make([]rt.Object, Objects)
	for i := range out {
		out[i] = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: fmt.Sprintf("cm-%d", i), Labels: map[string]string{"app": "bench"}},
			Data:       map[string]string{"i": "initial"},
		}
	}
	return out
}

func listerWatcherPath(ctx context.Context) (cache.SharedIndexInformer, func(*corev1.ConfigMap) (*corev1.ConfigMap, error), error) {
	c := fakeapi.NewServer(fakeapi.Options{}).Client("bench")
	for _, o := range initial() {
		if _, err := c.Create(ctx, configMaps, Namespace, o, metav1.CreateOptions{}); err != nil {
			return nil, nil, err
		}
	}
	inf := cache.NewSharedIndexInformer(c.ListerWatcher(configMaps, Namespace), &corev1.ConfigMap{}, 0, cache.Indexers{})
	return inf, func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		got, err := c.Update(ctx, configMaps, Namespace, cm, metav1.UpdateOptions{})
		if err != nil {
			return nil, err
		}
		return got.(*corev1.ConfigMap), nil
	}, nil
}

func clientsetPath(ctx context.Context, cs kubernetes.Interface) (cache.SharedIndexInformer, func(*corev1.ConfigMap) (*corev1.ConfigMap, error)) {
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(Namespace))
	inf := factory.Core().V1().ConfigMaps().Informer()
	cms := cs.CoreV1().ConfigMaps(Namespace)
	return inf, func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		return cms.Update(ctx, cm, metav1.UpdateOptions{})
	}
}

// noWatchList is a ListWatch that reports no WatchList support, as the
// fake clientsets do: the reflector lists, then watches.
type noWatchList struct{ *cache.ListWatch }

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// limitPath is an informer over a list of the initial objects and a watch
// channel with room for every update; fill sends the updates (built
// beforehand) into it.
func limitPath(updates int) (cache.SharedIndexInformer, func()) {
	list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(Objects + 1)}}
	for i, o := range initial() {
		cm := o.(*corev1.ConfigMap)
		cm.ResourceVersion = strconv.Itoa(i + 2)
		list.Items = append(list.Items, *cm)
	}
	events := make([]*corev1.ConfigMap, updates)
	for i := range events {
		cm := list.Items[i%Objects].DeepCopy()
		cm.Data["i"] = strconv.Itoa(i)
		cm.ResourceVersion = strconv.Itoa(Objects + 2 + i)
		events[i] = cm
	}
	fw := watch.NewFakeWithChanSize(updates, false)
	lw := noWatchList{&cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (rt.Object, error) {
			return list.DeepCopy(), nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return fw, nil },
	}}
	inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
	return inf, func() {
		for _, cm := range events {
			fw.Modify(cm)
		}
	}
}

// counter is the informer's one handler: it counts adds and updates and
// lets the writer wait (durably, as synctest sees it) for the updates.
type counter struct {
	mu      sync.Mutex
	added   int
	updated int
	want    int
	reached chan struct{}
}

func newCounter() *counter { return &counter{} }

func (c *counter) OnAdd(any, bool) {
	c.mu.Lock()
	c.added++
	c.mu.Unlock()
}

func (c *counter) OnUpdate(any, any) {
	c.mu.Lock()
	c.updated++
	if c.reached != nil && c.updated >= c.want {
		close(c.reached)
		c.reached = nil
	}
	c.mu.Unlock()
}

func (c *counter) OnDelete(any) {}

func (c *counter) adds() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.added
}

// waitFor blocks until the handler has seen at least n updates.
func (c *counter) waitFor(n int) {
	c.mu.Lock()
	if c.updated >= n {
		c.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	c.want, c.reached = n, ch
	c.mu.Unlock()
	<-ch
}
