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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/cachelab/cachelab/fakeapi/serve"
)

// TestLoadWatchersReceiveEveryEventInOrder (opt-in: CACHELAB_SLOW=1;
// CACHELAB_LOAD_WATCHERS, default 1000): that many watches over one HTTP/2
// connection on loopback and 4 writers (on a second connection) for 5 s; every watcher must receive
// every write, in resourceVersion order, and the goroutines must return to
// their baseline afterwards. Logs events/s and the p50/p99 latency from
// write request to delivery.
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

	ctx, cancel := context.WithCancel(context.Background())
	r, err := serve.Serve(ctx, serve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := r.RESTConfig()
	cfg.QPS, cfg.Burst = -1, 0
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
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
	var wg sync.WaitGroup
	wctx, wcancel := context.WithCancel(bg)
	for i := range watchers {
		w, err := cs.CoreV1().ConfigMaps("load").Watch(wctx, metav1.ListOptions{ResourceVersion: start.ResourceVersion})
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
	for wait := time.Now().Add(60 * time.Second); time.Now().Before(wait); time.Sleep(50 * time.Millisecond) {
		done := 0
		for i := range got {
			if n := len(got[i]); n >= len(written) {
				done++
			}
		}
		if done == watchers {
			break
		}
	}
	drained := time.Since(writeEnd)
	wcancel()
	wg.Wait()

	var lats []time.Duration
	for i := range got {
		rvs := make([]int64, len(got[i]))
		for j, r := range got[i] {
			rvs[j] = r.rv
			lats = append(lats, r.lat)
		}
		if !slices.Equal(rvs, written) {
			t.Fatalf("watcher %d received %d events, want the %d writes in order (first mismatch near %d)", i, len(rvs), len(written), firstDiff(rvs, written))
		}
	}
	slices.Sort(lats)
	total := len(lats)
	elapsed := duration + drained
	t.Logf("%d watchers, %d writers, %d writes in %v: %d events delivered in %v (%.0f events/s); latency write->delivery p50 %v p99 %v max %v",
		watchers, writers, len(written), duration, total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(),
		lats[total/2], lats[total*99/100], lats[total-1])

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

func firstDiff(a, b []int64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
