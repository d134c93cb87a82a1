package fakeapi_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rt "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/fakeapi/fakeapibench"
)

// The informer-throughput workload: n ConfigMap creates, written by one
// goroutine at most benchWindow ahead of the handler (client-go's fake
// trackers panic when more than 100 events wait in a watch channel, so every
// path gets the same pacing), into a real SharedIndexInformer whose one
// handler counts OnAdd calls. A run ends when the handler has seen n events.
const benchWindow = 64

// handlerCounter counts OnAdd calls and lets a writer wait for the handler.
type handlerCounter struct {
	mu    sync.Mutex
	cond  *sync.Cond
	count int
}

func newHandlerCounter() *handlerCounter {
	h := &handlerCounter{}
	h.cond = sync.NewCond(&h.mu)
	return h
}

func (h *handlerCounter) OnAdd(any, bool) {
	h.mu.Lock()
	h.count++
	h.cond.Broadcast()
	h.mu.Unlock()
}
func (h *handlerCounter) OnUpdate(any, any) {}
func (h *handlerCounter) OnDelete(any)      {}

// waitFor blocks until the handler has seen at least n events.
func (h *handlerCounter) waitFor(n int) {
	h.mu.Lock()
	for h.count < n {
		h.cond.Wait()
	}
	h.mu.Unlock()
}

// throughputPath is one way of getting writes into an informer.
type throughputPath struct {
	name string
	// start builds the path for n events and starts its informer (handler
	// h) and returns write(i), which makes event i (nil if the events are
	// already queued).
	start func(ctx context.Context, tb testing.TB, n int, h *handlerCounter) (write func(i int))
}

func benchConfigMap(i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("cm-%d", i), Labels: map[string]string{"app": "bench"}},
		Data:       map[string]string{"key": "value"},
	}
}

func startInformerOn(ctx context.Context, tb testing.TB, inf cache.SharedIndexInformer, h *handlerCounter) {
	if _, err := inf.AddEventHandler(h); err != nil {
		tb.Fatal(err)
	}
	go inf.RunWithContext(ctx)
	if !cache.WaitFor(ctx, "bench", inf.HasSyncedChecker()) {
		tb.Fatal("informer did not sync")
	}
}

func clientsetPath(name string, newCS func() kubernetes.Interface) throughputPath {
	return throughputPath{name: name, start: func(ctx context.Context, tb testing.TB, n int, h *handlerCounter) func(int) {
		cs := newCS()
		factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("bench"))
		startInformerOn(ctx, tb, factory.Core().V1().ConfigMaps().Informer(), h)
		cms := cs.CoreV1().ConfigMaps("bench")
		return func(i int) {
			if _, err := cms.Create(ctx, benchConfigMap(i), metav1.CreateOptions{}); err != nil {
				tb.Fatal(err)
			}
		}
	}}
}

// noWatchList wraps a ListWatch to report that it does not support
// WatchList, as the fake clientsets do.
type noWatchList struct{ *cache.ListWatch }

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

var throughputPaths = []throughputPath{
	{name: "cachelab", start: func(ctx context.Context, tb testing.TB, n int, h *handlerCounter) func(int) {
		s := fakeapi.NewServer(fakeapi.Options{})
		c := s.Client("bench")
		if _, err := c.Create(ctx, nsGVR, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
			tb.Fatal(err)
		}
		startInformerOn(ctx, tb, cache.NewSharedIndexInformer(c.ListerWatcher(cmGVR, "bench"), &corev1.ConfigMap{}, 0, cache.Indexers{}), h)
		return func(i int) {
			if _, err := c.Create(ctx, cmGVR, "bench", benchConfigMap(i), metav1.CreateOptions{}); err != nil {
				tb.Fatal(err)
			}
		}
	}},
	clientsetPath("NewSimpleClientset", func() kubernetes.Interface { return fake.NewSimpleClientset() }),
	clientsetPath("NewClientset", func() kubernetes.Interface { return fake.NewClientset() }),
	{name: "limit", start: func(ctx context.Context, tb testing.TB, n int, h *handlerCounter) func(int) {
		fw := watch.NewFakeWithChanSize(n, false)
		for i := range n {
			cm := benchConfigMap(i)
			cm.ResourceVersion = fmt.Sprint(i + 2)
			fw.Add(cm)
		}
		lw := noWatchList{&cache.ListWatch{
			ListWithContextFunc: func(context.Context, metav1.ListOptions) (rt.Object, error) {
				return &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, nil
			},
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return fw, nil },
		}}
		startInformerOn(ctx, tb, cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{}), h)
		return nil
	}},
}

// throughputRun is the cost of one run of n events.
type throughputRun struct {
	n      int
	cpu    time.Duration
	wall   time.Duration
	allocs uint64
}

func (r throughputRun) eventsPerCPUSecond() float64 { return float64(r.n) / r.cpu.Seconds() }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runThroughput runs n events through p and measures CPU time, wall time and
// allocations from the first write (for the limit: from the informer's
// start) to the handler's n-th event.
func runThroughput(tb testing.TB, p throughputPath, n int) throughputRun {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newHandlerCounter()
	var ms0, ms1 runtime.MemStats
	var write func(int)
	var cpu0 time.Duration
	var wall0 time.Time
	if p.name == "limit" {
		runtime.ReadMemStats(&ms0)
		cpu0, wall0 = cpuTime(), time.Now()
		write = p.start(ctx, tb, n, h)
	} else {
		write = p.start(ctx, tb, n, h)
		runtime.ReadMemStats(&ms0)
		cpu0, wall0 = cpuTime(), time.Now()
	}
	if write != nil {
		for i := range n {
			if i >= benchWindow {
				h.waitFor(i - benchWindow/2)
			}
			write(i)
		}
	}
	h.waitFor(n)
	r := throughputRun{n: n, cpu: cpuTime() - cpu0, wall: time.Since(wall0)}
	runtime.ReadMemStats(&ms1)
	r.allocs = ms1.Mallocs - ms0.Mallocs
	return r
}

// BenchmarkInformerThroughput measures events per CPU-second from writes
// into a real informer's handler, through cachelab's server and through
// client-go's fake clientsets, and from a pre-filled watch channel (the
// limit: no writes, no server). One op is one event.
func BenchmarkInformerThroughput(b *testing.B) {
	for _, p := range throughputPaths {
		b.Run(p.name, func(b *testing.B) {
			r := runThroughput(b, p, max(b.N, 1))
			b.ReportMetric(r.eventsPerCPUSecond(), "events/cpu-s")
			b.ReportMetric(float64(r.n)/r.wall.Seconds(), "events/s")
			b.ReportMetric(float64(r.allocs)/float64(r.n), "allocs/event")
		})
	}
}

// BenchmarkInformerThroughputRatios runs the four paths of
// BenchmarkInformerThroughput in the same run, 20,000 events each (1,000 for
// fake.NewClientset, whose field-managed tracker costs milliseconds per
// event: 20,000 would take minutes; events per CPU-second is a rate, and
// that path's rate does not grow with n), and reports cachelab's events per CPU-second as ratios: x_vs_simple
// (fake.NewSimpleClientset, target >= 1.0), x_vs_clientset
// (fake.NewClientset) and x_vs_limit (pre-filled channel, target >= 0.5).
func BenchmarkInformerThroughputRatios(b *testing.B) {
	const n = 20000
	total := map[string]throughputRun{}
	for range b.N {
		for _, p := range throughputPaths {
			pn := n
			if p.name == "NewClientset" {
				pn = n / 20
			}
			r := runThroughput(b, p, pn)
			t := total[p.name]
			t.n += r.n
			t.cpu += r.cpu
			t.wall += r.wall
			t.allocs += r.allocs
			total[p.name] = t
		}
	}
	ours := total["cachelab"].eventsPerCPUSecond()
	b.ReportMetric(ours, "events/cpu-s")
	b.ReportMetric(ours/total["NewSimpleClientset"].eventsPerCPUSecond(), "x_vs_simple")
	b.ReportMetric(ours/total["NewClientset"].eventsPerCPUSecond(), "x_vs_clientset")
	b.ReportMetric(ours/total["limit"].eventsPerCPUSecond(), "x_vs_limit")
	b.ReportMetric(float64(total["cachelab"].allocs)/float64(total["cachelab"].n), "allocs/event")
	for _, p := range throughputPaths {
		r := total[p.name]
		b.Logf("%-20s %10.0f events/cpu-s %10.0f events/s %8.1f allocs/event", p.name, r.eventsPerCPUSecond(), float64(r.n)/r.wall.Seconds(), float64(r.allocs)/float64(r.n))
	}
}

// inBubble runs f in a synctest bubble from a benchmark (synctest.Test
// needs a *testing.T: testing.RunTests makes one, as sim.Bubble does).
func inBubble(b *testing.B, f func(t *testing.T)) {
	b.Helper()
	ran := false
	ok := testing.RunTests(func(string, string) (bool, error) { return true, nil }, []testing.InternalTest{{
		Name: "fakeapi.bench",
		F: func(t *testing.T) {
			if !ran {
				ran = true
				synctest.Test(t, f)
			}
		},
	}})
	if !ok {
		b.Fatal("the bubble failed (see its output above)")
	}
}

// BenchmarkUpdateThroughput is issue 20's informer workload
// (fakeapibench: 50 ConfigMaps listed, then 20,000 updates through a
// client while at most 50 events are unseen by the handler, in a bubble)
// on its four paths, one run of each in turn, b.N rounds. One op is one
// round. It reports the events per CPU-second of cachelab's ListerWatcher
// (listerwatcher) and of fakeapi.NewClientset (clientset), each as a ratio
// to client-go's fake.NewSimpleClientset (x_vs_simple: target >= 1.0) and
// to an informer over a pre-filled watch channel (x_vs_limit), and their
// allocations per event (target <= 50).
func BenchmarkUpdateThroughput(b *testing.B) {
	var res []fakeapibench.Result
	var err error
	inBubble(b, func(t *testing.T) {
		res, err = fakeapibench.Measure(t.Context(), b.N, fakeapibench.Updates)
	})
	if err != nil {
		b.Fatal(err)
	}
	by := map[string]fakeapibench.Result{}
	for _, r := range res {
		by[r.Path] = r
		b.Logf("%-17s %9.0f events/cpu-s %6.1f allocs/event", r.Path, r.EventsPerCPUSecond(), r.AllocsPerEvent())
	}
	simple, limit := by[fakeapibench.SimpleClientset], by[fakeapibench.Limit]
	for _, p := range []string{fakeapibench.ListerWatcher, fakeapibench.Clientset} {
		r := by[p]
		b.ReportMetric(r.EventsPerCPUSecond(), p+"-events/cpu-s")
		b.ReportMetric(r.Ratio(simple), p+"-x_vs_simple")
		b.ReportMetric(r.Ratio(limit), p+"-x_vs_limit")
		b.ReportMetric(r.AllocsPerEvent(), p+"-allocs/event")
	}
	b.ReportMetric(simple.EventsPerCPUSecond(), "simple-events/cpu-s")
	b.ReportMetric(simple.AllocsPerEvent(), "simple-allocs/event")
	b.ReportMetric(limit.EventsPerCPUSecond(), "limit-events/cpu-s")
}

// BenchmarkUpdateThroughputPath runs BenchmarkUpdateThroughput's workload
// on one path at a time (for profiles: -bench
// 'UpdateThroughputPath/listerwatcher' -cpuprofile). One op is one run.
func BenchmarkUpdateThroughputPath(b *testing.B) {
	for _, p := range fakeapibench.Paths {
		b.Run(p, func(b *testing.B) {
			var res []fakeapibench.Result
			var err error
			inBubble(b, func(t *testing.T) {
				res, err = fakeapibench.Measure(t.Context(), b.N, fakeapibench.Updates, p)
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(res[0].EventsPerCPUSecond(), "events/cpu-s")
			b.ReportMetric(res[0].AllocsPerEvent(), "allocs/event")
		})
	}
}
