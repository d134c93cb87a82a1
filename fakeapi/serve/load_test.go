package serve_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/fakeapi/serve"
	"github.com/cachelab/cachelab/sim"
)

// TestLoadWatchersReceiveEveryEventInOrder (opt-in: CACHELAB_SLOW=1;
// CACHELAB_LOAD_WATCHERS, default 1000): that many watches over
// CACHELAB_LOAD_CONNECTIONS HTTP/2 connections (default 1, the hardest case:
// one TLS stream carries every event) on loopback and 4 writers (on a
// connection of their own) for 5 s.
// The server records its trace (sim.ServerRecorder, fed the write
// observations: a trace of every sent event to 1,000 watchers would be
// gigabytes). Every watcher must receive exactly the configmap writes of the
// trace, in the trace's order, which must also be what the writers were
// answered; the heap, sampled throughout, must stay under
// loadHeapBoundPerWatcher per watcher plus loadHeapBase; the goroutines must
// return to their baseline after shutdown. Logs events/s, the p50/p99/max
// latency from write request to delivery, and the peak heap.
func TestLoadWatchersReceiveEveryEventInOrder(t *testing.T) {
	if os.Getenv("CACHELAB_SLOW") == "" {
		t.Skip("load test: set CACHELAB_SLOW=1")
	}
	watchers := 1000
	if s := os.Getenv("CACHELAB_LOAD_WATCHERS"); s != "" {
		watchers, _ = strconv.Atoi(s)
	}
	const writers = 4
	const duration = 5 * time.Second
	baseline := runtime.NumGoroutine()

	rec := sim.NewServerRecorder(&sim.Plan{Version: sim.PlanVersion, Name: "load"})
	ctx, cancel := context.WithCancel(context.Background())
	r, err := serve.Serve(ctx, serve.Options{Server: fakeapi.Options{Observer: writesOnly{rec}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := r.RESTConfig()
	cfg.QPS, cfg.Burst = -1, 0
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The watchers share conns HTTP/2 connections (each its own client, as
	// separate processes would have).
	conns := 1
	if s := os.Getenv("CACHELAB_LOAD_CONNECTIONS"); s != "" {
		if conns, err = strconv.Atoi(s); err != nil || conns < 1 {
			t.Fatalf("CACHELAB_LOAD_CONNECTIONS=%q: want an integer >= 1", s)
		}
	}
	watchClients := make([]kubernetes.Interface, conns)
	for c := range watchClients {
		ccfg := r.RESTConfig()
		ccfg.QPS, ccfg.Burst = -1, 0
		ccfg.Dial = (&net.Dialer{}).DialContext // a Dial of its own: a transport of its own
		if watchClients[c], err = kubernetes.NewForConfig(ccfg); err != nil {
			t.Fatal(err)
		}
	}
	bg := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "load"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	start, err := cs.CoreV1().ConfigMaps("load").List(bg, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}

	type recv struct {
		rv  int64
		lat time.Duration
	}
	got := make([][]recv, watchers)
	// Every watcher signals caughtUp once it holds target events (target is
	// set when the writers are done); the main goroutine signals for those
	// already there by then. signalled keeps it to once per watcher.
	var target atomic.Int64
	counts := make([]atomic.Int64, watchers)
	signalled := make([]atomic.Bool, watchers)
	var caughtUp sync.WaitGroup
	caughtUp.Add(watchers)
	signal := func(i int) {
		if signalled[i].CompareAndSwap(false, true) {
			caughtUp.Done()
		}
	}
	var wg sync.WaitGroup
	wctx, wcancel := context.WithCancel(bg)
	for i := range watchers {
		w, err := watchClients[i%conns].CoreV1().ConfigMaps("load").Watch(wctx, metav1.ListOptions{ResourceVersion: start.ResourceVersion})
		if err != nil {
			t.Fatalf("watch %d: %v", i, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Stop()
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					if wctx.Err() != nil {
						return // our own cancel, reported by client-go's decoder
					}
					t.Errorf("watcher %d: error event %v", i, ev.Object)
					return
				}
				c := ev.Object.(*corev1.ConfigMap)
				rv, _ := strconv.ParseInt(c.ResourceVersion, 10, 64)
				sent, _ := strconv.ParseInt(c.Data["sent"], 10, 64)
				got[i] = append(got[i], recv{rv: rv, lat: time.Since(time.Unix(0, sent))})
				if n, t := counts[i].Add(1), target.Load(); t > 0 && n >= t {
					signal(i)
				}
			}
		}()
	}

	// The writers are other processes in spirit: their own connection (a
	// custom Dial keeps client-go from sharing the watchers' transport).
	wcfg := r.RESTConfig()
	wcfg.QPS, wcfg.Burst = -1, 0
	wcfg.Dial = (&net.Dialer{}).DialContext
	wcs, err := kubernetes.NewForConfig(wcfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var written []int64
	var wwg sync.WaitGroup
	// The heap, sampled every 100 ms until the watchers are done.
	var peakHeap atomic.Uint64
	sampleCtx, stopSampling := context.WithCancel(bg)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peakHeap.Load() {
				peakHeap.Store(ms.HeapInuse)
			}
			select {
			case <-sampleCtx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	deadline := time.Now().Add(duration)
	for wr := range writers {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			for n := 0; time.Now().Before(deadline); n++ {
				c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w%d-%d", wr, n)},
					Data: map[string]string{"sent": strconv.FormatInt(time.Now().UnixNano(), 10)}}
				out, err := wcs.CoreV1().ConfigMaps("load").Create(bg, c, metav1.CreateOptions{})
				if err != nil {
					t.Errorf("writer %d: %v", wr, err)
					return
				}
				rv, _ := strconv.ParseInt(out.ResourceVersion, 10, 64)
				mu.Lock()
				written = append(written, rv)
				mu.Unlock()
			}
		}()
	}
	wwg.Wait()
	writeEnd := time.Now()
	slices.Sort(written)

	// Wait until every watcher has every event (or 60 s).
	target.Store(int64(len(written)))
	for i := range counts {
		if counts[i].Load() >= int64(len(written)) {
			signal(i)
		}
	}
	all := make(chan struct{})
	go func() { caughtUp.Wait(); close(all) }()
	select {
	case <-all:
	case <-time.After(60 * time.Second):
		t.Errorf("after 60 s not every watcher has the %d events (first mismatch reported below)", len(written))
	}
	drained := time.Since(writeEnd)
	wcancel()
	wg.Wait()
	stopSampling()
	<-sampled

	// The trace's configmap writes in namespace load, in trace order, are
	// what every watcher must have received; they are also what the
	// writers were answered.
	var traced []int64
	for _, r := range rec.Trace("load").Records {
		if r.Kind == sim.RecWrite && r.Resource == "configmaps" && r.Namespace == "load" {
			traced = append(traced, r.RV)
		}
	}
	if !slices.Equal(traced, written) {
		t.Fatalf("the trace has %d configmap writes, the writers were answered %d (first mismatch near %d)", len(traced), len(written), firstDiff(traced, written))
	}

	var lats []time.Duration
	for i := range got {
		rvs := make([]int64, len(got[i]))
		for j, r := range got[i] {
			rvs[j] = r.rv
			lats = append(lats, r.lat)
		}
		if !slices.Equal(rvs, traced) {
			t.Fatalf("watcher %d received %d events, want the trace's %d writes in order (first mismatch near %d)", i, len(rvs), len(traced), firstDiff(rvs, traced))
		}
	}
	slices.Sort(lats)
	total := len(lats)
	elapsed := duration + drained
	t.Logf("%d watchers on %d connections, %d writers, %d writes in %v: %d events delivered in %v (%.0f events/s); latency write->delivery p50 %v p99 %v max %v; peak heap %d MiB",
		watchers, conns, writers, len(written), duration, total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(),
		lats[total/2], lats[total*99/100], lats[total-1], peakHeap.Load()>>20)
	if bound := loadHeapBase + uint64(watchers)*loadHeapBoundPerWatcher; peakHeap.Load() > bound {
		t.Errorf("peak heap %d MiB, bound %d MiB (%d MiB + %d KiB per watcher)", peakHeap.Load()>>20, bound>>20, loadHeapBase>>20, loadHeapBoundPerWatcher>>10)
	}

	cancel()
	if err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	for wait := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > baseline+5 && time.Now().Before(wait); time.Sleep(50 * time.Millisecond) {
	}
	t.Logf("after shutdown: %d goroutines (baseline %d), heap in use %d MiB", runtime.NumGoroutine(), baseline, ms.HeapInuse>>20)
	if n := runtime.NumGoroutine(); n > baseline+5 {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutine leak: %d goroutines after shutdown, baseline %d\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
	}
}

// The load test's heap bound: a base for the server, the clients and the
// recorded writes, and a share per watcher (its HTTP/2 stream, client-go's
// decoder and channels, the server's watch queue, the events it received).
const (
	loadHeapBase            = 256 << 20
	loadHeapBoundPerWatcher = 512 << 10
)

// writesOnly forwards the write observations to a trace recorder.
type writesOnly struct{ rec *sim.ServerRecorder }

func (w writesOnly) Observe(o fakeapi.Observation) {
	if o.Kind == fakeapi.ObsWrite {
		w.rec.Observe(o)
	}
}

func firstDiff(a, b []int64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
