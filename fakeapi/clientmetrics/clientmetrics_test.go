package clientmetrics_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/fakeapi/clientmetrics"
)

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// find returns the series of metric for client and name, failing the test
// when there is none.
func find(t *testing.T, c *clientmetrics.Collector, metric, client, name string) clientmetrics.Series {
	t.Helper()
	for _, s := range c.Series() {
		if s.Metric == metric && s.Client == client && s.Name == name {
			return s
		}
	}
	t.Fatalf("no series %s{client=%q,name=%q} in %v", metric, client, name, c.Series())
	return clientmetrics.Series{}
}

func values(s clientmetrics.Series) []float64 {
	out := make([]float64, len(s.Points))
	for i, p := range s.Points {
		out[i] = p.V
	}
	return out
}

func TestWorkqueueMetricsAreTimeSeriesInVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		c := clientmetrics.New(func() time.Duration { return time.Since(start) })
		q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "mirror", MetricsProvider: c.Workqueue("ctrl")})
		defer q.ShutDown()
		q.Add("a")
		q.Add("b")
		q.Add("a") // already queued: neither an add nor deeper
		time.Sleep(2 * time.Second)
		k, _ := q.Get()
		time.Sleep(500 * time.Millisecond)
		q.Done(k)
		q.AddRateLimited("c")
		time.Sleep(time.Second) // the rate limiter's 5 ms backoff, then c is added
		synctest.Wait()

		if got, want := values(find(t, c, clientmetrics.WorkqueueDepth, "ctrl", "mirror")), []float64{1, 2, 1, 2}; !slices.Equal(got, want) {
			t.Errorf("depth points %v, want %v", got, want)
		}
		if got, want := values(find(t, c, clientmetrics.WorkqueueAdds, "ctrl", "mirror")), []float64{1, 2, 3}; !slices.Equal(got, want) {
			t.Errorf("adds points %v, want %v", got, want)
		}
		lat := find(t, c, clientmetrics.WorkqueueLatency, "ctrl", "mirror")
		if lat.Count != 1 || lat.Points[0].V != 2 || lat.Points[0].At != 2*time.Second {
			t.Errorf("queue latency %+v, want one observation of 2 s at 2s", lat)
		}
		if work := find(t, c, clientmetrics.WorkqueueWorkDuration, "ctrl", "mirror"); work.Count != 1 || work.Sum != 0.5 {
			t.Errorf("work duration %+v, want one observation of 0.5 s", work)
		}
		if r := find(t, c, clientmetrics.WorkqueueRetries, "ctrl", "mirror"); r.Last != 1 {
			t.Errorf("retries %+v, want 1", r)
		}
		depth := find(t, c, clientmetrics.WorkqueueDepth, "ctrl", "mirror")
		if at := depth.Points[2].At; at != 2*time.Second {
			t.Errorf("the Get's depth point is at %s, want 2s (virtual time)", at)
		}
	})
}

func TestPrometheusExportLabelsEachSeriesByClientAndName(t *testing.T) {
	c := clientmetrics.New(nil)
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "pods", MetricsProvider: c.Workqueue("kubelet")})
	defer q.ShutDown()
	q.Add("x")
	q.Add("y")
	q2 := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "pods", MetricsProvider: c.Workqueue("other")})
	defer q2.ShutDown()
	q2.Add("z")
	reg := prometheus.NewRegistry()
	reg.MustRegister(c.Prometheus())
	want := `# HELP workqueue_depth Current depth of a client-go workqueue.
# TYPE workqueue_depth gauge
workqueue_depth{client="kubelet",name="pods"} 2
workqueue_depth{client="other",name="pods"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), clientmetrics.WorkqueueDepth); err != nil {
		t.Fatal(err)
	}
}

func TestInformerMetricsReachTheCollectorPerInformerAndThroughTheGlobalRouter(t *testing.T) {
	clientmetrics.InstallGlobal()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		srv := fakeapi.NewServer(fakeapi.Options{})
		kube := srv.Client("setup").Clientset()
		for _, n := range []string{"a", "b"} {
			if _, err := kube.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		rv := float64(srv.ResourceVersion())
		c := clientmetrics.New(nil)
		defer c.Release()

		// Per informer: a provider and an identity.
		id, err := c.InformerID("ctrl", "configmaps", configMaps)
		if err != nil {
			t.Fatal(err)
		}
		inf := cache.NewSharedIndexInformerWithOptions(srv.Client("ctrl").ListerWatcher(configMaps, ""), &corev1.ConfigMap{},
			cache.SharedIndexInformerOptions{Identifier: id, InformerMetricsProvider: c.Informer("ctrl")})
		go inf.RunWithContext(ctx)

		// Through the global router: a factory with an InformerName the
		// collector made.
		name, err := c.InformerName("other", "factory")
		if err != nil {
			t.Fatal(err)
		}
		var cs kubernetes.Interface = srv.Client("other").Clientset()
		f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithInformerName(name))
		f.Core().V1().ConfigMaps().Informer()
		f.Start(ctx.Done())
		synctest.Wait()
		if !inf.HasSynced() {
			t.Fatal("informer not synced")
		}

		if s := find(t, c, clientmetrics.InformerStoreRV, "ctrl", "configmaps configmaps"); s.Last != rv {
			t.Errorf("per-informer store resourceVersion %+v, want last %v", s, rv)
		}
		if s := find(t, c, clientmetrics.InformerStoreRV, "other", "factory configmaps"); s.Last != rv {
			t.Errorf("routed store resourceVersion %+v, want last %v", s, rv)
		}
		cancel()
		f.Shutdown()
	})
}

func TestAQueueOfARestartedProcessStartsItsSeriesFromZero(t *testing.T) {
	c := clientmetrics.New(nil)
	for i := range 2 {
		q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "mirror", MetricsProvider: c.Workqueue("ctrl")})
		q.Add("a")
		q.Add("b")
		if i == 0 {
			q.Get() // the crash comes with one item left and one in flight
		}
		q.ShutDown()
	}
	if got, want := values(find(t, c, clientmetrics.WorkqueueDepth, "ctrl", "mirror")), []float64{1, 2, 1, 0, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("depth points %v, want %v (the second queue starts at 0)", got, want)
	}
	if got, want := values(find(t, c, clientmetrics.WorkqueueAdds, "ctrl", "mirror")), []float64{1, 2, 0, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("adds points %v, want %v (a counter reset)", got, want)
	}
}
