// Package clientmetrics collects client-go's own metrics (the workqueue's
// and the informer's) as time series, through the metric providers client-go
// v0.37.2 offers, and exports them in the Prometheus text format.
//
// A Collector keeps one Series per (metric, client, name): every Set, Inc,
// Dec or Observe that client-go makes appends a Point stamped by the
// Collector's clock (virtual time inside a run's synctest bubble, so the
// series line up with the run's trace; wall time since the start in
// `cachelab serve`). The client label says whose queue or informer it is
// (the subject's actor name in a run, "kubelet" in serve), the name label is
// the queue's or informer's own name.
//
// # Where client-go takes a provider
//
//   - Workqueues: per queue, TypedRateLimitingQueueConfig.MetricsProvider
//     (Collector.Workqueue(client)); only named queues report. The global
//     workqueue.SetProvider is taken, once per process, by whoever calls it
//     first: controller-runtime's pkg/internal/metrics init does, in every
//     binary that links its controllers (cachelab's does), so a queue built
//     without a per-queue provider reports to controller-runtime's registry,
//     never here.
//   - Informers: per informer, SharedIndexInformerOptions.InformerMetricsProvider
//     with an Identifier (Collector.Informer and Collector.InformerID);
//     informers made by a SharedInformerFactory take the process-wide
//     provider (cache.SetInformerMetricsProvider, first call wins) and report
//     only when the factory has an InformerName (informers.WithInformerName).
//     InstallGlobal makes the process-wide provider a router: a name made by
//     Collector.InformerName is routed to its Collector (see Route).
//   - Reflectors: cache.SetReflectorMetricsProvider exists in v0.37.2, but
//     the reflector never calls its provider (reflector_metrics.go keeps it
//     in metricsFactory, which nothing reads): there is nothing to collect.
//
// Unfinished-work and longest-running-processor gauges are not collected:
// client-go updates them from a ticker goroutine every 500 ms, not at the
// queue's operations, and their points would say more about that ticker
// than about the queue.
package clientmetrics

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// The metric names, as exported (the Prometheus names kube-controller-manager
// gives the workqueue's metrics; the informer's are this package's).
const (
	WorkqueueDepth        = "workqueue_depth"
	WorkqueueAdds         = "workqueue_adds_total"
	WorkqueueRetries      = "workqueue_retries_total"
	WorkqueueLatency      = "workqueue_queue_duration_seconds"
	WorkqueueWorkDuration = "workqueue_work_duration_seconds"
	InformerQueuedItems   = "informer_queued_items"
	InformerLatency       = "informer_processing_latency_seconds"
	InformerStoreRV       = "informer_store_resource_version"
)

// Kind is how a series' points read.
type Kind string

// The kinds of series.
const (
	// Gauge: each point is the value after a Set, Inc or Dec.
	Gauge Kind = "gauge"
	// Counter: each point is the running total after an Inc.
	Counter Kind = "counter"
	// Histogram: each point is one observation (seconds).
	Histogram Kind = "histogram"
)

// MaxPoints bounds the points a Series keeps; later ones are counted in
// Series.Dropped (the exported totals still include them).
const MaxPoints = 5000

// Point is one value of a series at a time since the collector's start.
type Point struct {
	// At is the time since the collector's start (virtual in a run).
	At time.Duration `json:"at"`
	// V is the value (see Kind).
	V float64 `json:"v"`
}

// Series is one metric of one queue or informer of one client.
type Series struct {
	// Metric is the metric's name (WorkqueueDepth, ...).
	Metric string `json:"metric"`
	// Kind says how Points read.
	Kind Kind `json:"kind"`
	// Client is the client whose queue or informer it is (a subject's
	// actor name, "kubelet").
	Client string `json:"client"`
	// Name is the queue's or informer's name (an informer's: its name and
	// resource, "configmaps").
	Name string `json:"name"`
	// Points are the values in the order client-go set them.
	Points []Point `json:"points,omitempty"`
	// Dropped counts the points beyond MaxPoints.
	Dropped int `json:"dropped,omitempty"`
	// Count and Sum are a histogram's totals (every observation), and a
	// gauge's or counter's Count the number of updates.
	Count int     `json:"count"`
	Sum   float64 `json:"sum,omitempty"`
	// Last is the last value (a histogram's: the last observation).
	Last float64 `json:"last"`
}

// Collector keeps the series of one run (or one serve process). Build it
// with New; it is safe for concurrent use.
type Collector struct {
	now func() time.Duration

	mu     sync.Mutex
	series []*Series
	index  map[seriesKey]*Series
	// routes are the names this collector registered with the global
	// router, and the informer names it reserved, to release.
	routes []string
	names  []*cache.InformerName
}

type seriesKey struct{ metric, client, name string }

// New returns a collector whose points are stamped by now (the time since
// the start; nil: wall time since New).
func New(now func() time.Duration) *Collector {
	if now == nil {
		start := time.Now()
		now = func() time.Duration { return time.Since(start) }
	}
	return &Collector{now: now, index: map[seriesKey]*Series{}}
}

// series returns (creating) the series of key.
func (c *Collector) seriesOf(metric string, kind Kind, client, name string) *Series {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := seriesKey{metric, client, name}
	if s, ok := c.index[k]; ok {
		return s
	}
	s := &Series{Metric: metric, Kind: kind, Client: client, Name: name}
	c.index[k] = s
	c.series = append(c.series, s)
	return s
}

// newSink returns a metric writing to the series of key. A series that
// already has points belongs to a queue or informer of an earlier process
// of the same client (a crash, then a restart): the new one starts from 0,
// and a gauge's or counter's series shows the reset as a point at 0.
func (c *Collector) newSink(metric string, kind Kind, client, name string) sink {
	s := c.seriesOf(metric, kind, client, name)
	k := sink{c: c, s: s, v: new(float64)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(s.Points) > 0 && kind != Histogram && s.Last != 0 {
		s.Last = 0
		c.appendLocked(s, 0)
	}
	return k
}

// add records an update of k: v is the new value of a gauge (set reports
// whether v is absolute, else a delta), ignored for a counter (one more),
// an observation for a histogram.
func (c *Collector) add(k sink, v float64, set bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := k.s
	switch s.Kind {
	case Gauge:
		if !set {
			v += *k.v
		}
	case Counter:
		v = *k.v + 1
	case Histogram:
		s.Sum += v
	}
	*k.v = v
	s.Last = v
	s.Count++
	c.appendLocked(s, v)
}

func (c *Collector) appendLocked(s *Series, v float64) {
	if len(s.Points) >= MaxPoints {
		s.Dropped++
		return
	}
	s.Points = append(s.Points, Point{At: c.now(), V: v})
}

// Series returns a copy of every series, sorted by client, name and metric
// (nil when there is none).
func (c *Collector) Series() []Series {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.series) == 0 {
		return nil
	}
	out := make([]Series, len(c.series))
	for i, s := range c.series {
		out[i] = *s
		out[i].Points = append([]Point(nil), s.Points...)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Client != b.Client {
			return a.Client < b.Client
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Metric < b.Metric
	})
	return out
}

// sink is one client-go metric (of one queue or informer) writing to a
// series; v is its own value.
type sink struct {
	c *Collector
	s *Series
	v *float64
}

func (m sink) Inc()              { m.c.add(m, 1, false) }
func (m sink) Dec()              { m.c.add(m, -1, false) }
func (m sink) Set(v float64)     { m.c.add(m, v, true) }
func (m sink) Observe(v float64) { m.c.add(m, v, true) }

// noop is a metric that keeps nothing.
type noop struct{}

func (noop) Inc()            {}
func (noop) Dec()            {}
func (noop) Set(float64)     {}
func (noop) Observe(float64) {}

// Workqueue returns the workqueue metrics provider of client's queues:
// pass it as TypedRateLimitingQueueConfig.MetricsProvider (with a Name).
func (c *Collector) Workqueue(client string) workqueue.MetricsProvider {
	return queueProvider{c: c, client: client}
}

type queueProvider struct {
	c      *Collector
	client string
}

var _ workqueue.MetricsProvider = queueProvider{}

func (p queueProvider) m(metric string, kind Kind, name string) sink {
	return p.c.newSink(metric, kind, p.client, name)
}

// NewDepthMetric implements workqueue.MetricsProvider.
func (p queueProvider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return p.m(WorkqueueDepth, Gauge, name)
}

// NewAddsMetric implements workqueue.MetricsProvider.
func (p queueProvider) NewAddsMetric(name string) workqueue.CounterMetric {
	return p.m(WorkqueueAdds, Counter, name)
}

// NewLatencyMetric implements workqueue.MetricsProvider.
func (p queueProvider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return p.m(WorkqueueLatency, Histogram, name)
}

// NewWorkDurationMetric implements workqueue.MetricsProvider.
func (p queueProvider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return p.m(WorkqueueWorkDuration, Histogram, name)
}

// NewUnfinishedWorkSecondsMetric implements workqueue.MetricsProvider: not
// collected (see the package comment).
func (p queueProvider) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noop{}
}

// NewLongestRunningProcessorSecondsMetric implements
// workqueue.MetricsProvider: not collected (see the package comment).
func (p queueProvider) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noop{}
}

// NewRetriesMetric implements workqueue.MetricsProvider.
func (p queueProvider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return p.m(WorkqueueRetries, Counter, name)
}

// Informer returns the informer metrics provider of client's informers:
// pass it as SharedIndexInformerOptions.InformerMetricsProvider, with an
// Identifier from InformerID (client-go reports nothing without one).
func (c *Collector) Informer(client string) cache.InformerMetricsProvider {
	return informerProvider{c: c, client: client}
}

type informerProvider struct {
	c      *Collector
	client string
}

var _ cache.InformerMetricsProvider = informerProvider{}

// label names an informer's series: its name (without the unique
// "cachelab-N/client/" a Collector gave it) and resource.
func (p informerProvider) label(id cache.InformerNameAndResource) string {
	name := id.Name()
	if i := strings.LastIndex(name, "/"); strings.HasPrefix(name, "cachelab-") && i >= 0 {
		name = name[i+1:]
	}
	return strings.TrimSpace(name + " " + resourceName(id.GroupVersionResource()))
}

// NewQueuedItemMetric implements cache.InformerMetricsProvider.
func (p informerProvider) NewQueuedItemMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	return reserved{id, p.c.newSink(InformerQueuedItems, Gauge, p.client, p.label(id))}
}

// NewProcessingLatencyMetric implements cache.InformerMetricsProvider.
func (p informerProvider) NewProcessingLatencyMetric(id cache.InformerNameAndResource) cache.HistogramMetric {
	return reserved{id, p.c.newSink(InformerLatency, Histogram, p.client, p.label(id))}
}

// NewStoreResourceVersionMetric implements cache.InformerMetricsProvider.
func (p informerProvider) NewStoreResourceVersionMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	return reserved{id, p.c.newSink(InformerStoreRV, Gauge, p.client, p.label(id))}
}

// reserved updates its metric only while its informer identity is
// reserved, as client-go asks of informer metrics.
type reserved struct {
	id cache.InformerNameAndResource
	m  sink
}

func (r reserved) Set(v float64) {
	if r.id.Reserved() {
		r.m.Set(v)
	}
}

func (r reserved) Observe(v float64) {
	if r.id.Reserved() {
		r.m.Observe(v)
	}
}

// resourceName is "pods" for the core group, "resource.group" otherwise.
func resourceName(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Resource
	}
	return gvr.Resource + "." + gvr.Group
}

// nextRoute numbers the routes of the process.
var nextRoute atomic.Int64

// InformerID returns the identity of one informer of client (name: the
// informer's role, "" when its resource says it all; gvr its resource;
// its series are named by both, as "configmaps"), reserved in
// client-go's process-wide registry of informer names under a name unique
// to this collector, and released by Release.
func (c *Collector) InformerID(client, name string, gvr schema.GroupVersionResource) (cache.InformerNameAndResource, error) {
	n, err := c.reserve(client, name)
	if err != nil {
		return cache.InformerNameAndResource{}, err
	}
	return n.WithResource(gvr), nil
}

// InformerName returns an informer name for client's SharedInformerFactory
// (informers.WithInformerName): client-go reserves it process-wide, and the
// global router (InstallGlobal) routes the factory's informer metrics to
// this collector, labelled client, named name and the resource. Release
// releases it.
func (c *Collector) InformerName(client, name string) (*cache.InformerName, error) {
	n, err := c.reserve(client, name)
	if err != nil {
		return nil, err
	}
	global.route(n.Name(), route{c: c, client: client})
	c.mu.Lock()
	c.routes = append(c.routes, n.Name())
	c.mu.Unlock()
	return n, nil
}

// reserve reserves "cachelab-N/client/name" in client-go's registry.
func (c *Collector) reserve(client, name string) (*cache.InformerName, error) {
	full := fmt.Sprintf("cachelab-%d/%s/%s", nextRoute.Add(1), client, name)
	n, err := cache.NewInformerName(full)
	if err != nil {
		return nil, fmt.Errorf("clientmetrics: %w", err)
	}
	c.mu.Lock()
	c.names = append(c.names, n)
	c.mu.Unlock()
	return n, nil
}

// Release releases every informer name the collector reserved and its
// routes: their informers stop reporting. Call it when the run ends.
func (c *Collector) Release() {
	c.mu.Lock()
	names, routes := c.names, c.routes
	c.names, c.routes = nil, nil
	c.mu.Unlock()
	for _, n := range names {
		n.Release()
	}
	for _, r := range routes {
		global.unroute(r)
	}
}

// route is where the global router sends a name's metrics.
type route struct {
	c      *Collector
	client string
}

// router is the process-wide informer metrics provider (InstallGlobal): it
// sends an informer's metrics to the collector its name was routed to
// (Collector.InformerName), and drops the others.
type router struct {
	mu     sync.Mutex
	routes map[string]route
}

var global = &router{routes: map[string]route{}}

func (r *router) route(name string, to route) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.routes[name] = to
}

func (r *router) unroute(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.routes, name)
}

func (r *router) lookup(id cache.InformerNameAndResource) (informerProvider, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	to, ok := r.routes[id.Name()]
	if !ok {
		return informerProvider{}, false
	}
	return informerProvider{c: to.c, client: to.client}, true
}

// NewQueuedItemMetric implements cache.InformerMetricsProvider.
func (r *router) NewQueuedItemMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	if p, ok := r.lookup(id); ok {
		return p.NewQueuedItemMetric(id)
	}
	return noop{}
}

// NewProcessingLatencyMetric implements cache.InformerMetricsProvider.
func (r *router) NewProcessingLatencyMetric(id cache.InformerNameAndResource) cache.HistogramMetric {
	if p, ok := r.lookup(id); ok {
		return p.NewProcessingLatencyMetric(id)
	}
	return noop{}
}

// NewStoreResourceVersionMetric implements cache.InformerMetricsProvider.
func (r *router) NewStoreResourceVersionMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	if p, ok := r.lookup(id); ok {
		return p.NewStoreResourceVersionMetric(id)
	}
	return noop{}
}

var installOnce sync.Once

// InstallGlobal makes the router client-go's process-wide informer metrics
// provider (cache.SetInformerMetricsProvider: the first call of the
// process wins, so a provider set before is kept and factory-built
// informers are then not collected). Safe to call more than once.
func InstallGlobal() {
	installOnce.Do(func() { cache.SetInformerMetricsProvider(global) })
}

// Prometheus returns a prometheus.Collector exporting the collector's
// series as they stand: gauges and counters by their last value,
// histograms by count, sum and buckets, labelled client and name.
func (c *Collector) Prometheus() prometheus.Collector { return promCollector{c} }

type promCollector struct{ c *Collector }

// histogramBuckets are the exported histograms' upper bounds (seconds):
// 1 ms to 100 s, by tens.
var histogramBuckets = []float64{0.001, 0.01, 0.1, 1, 10, 100}

var promHelp = map[string]string{
	WorkqueueDepth:        "Current depth of a client-go workqueue.",
	WorkqueueAdds:         "Adds handled by a client-go workqueue.",
	WorkqueueRetries:      "Rate-limited re-adds of a client-go workqueue.",
	WorkqueueLatency:      "Seconds an item stays in a client-go workqueue before it is requested.",
	WorkqueueWorkDuration: "Seconds processing an item from a client-go workqueue takes.",
	InformerQueuedItems:   "Items queued in a client-go informer's FIFO.",
	InformerLatency:       "Seconds a client-go informer takes to process a popped item.",
	InformerStoreRV:       "resourceVersion of a client-go informer's store.",
}

func desc(metric string) *prometheus.Desc {
	return prometheus.NewDesc(metric, promHelp[metric], []string{"client", "name"}, nil)
}

// Describe implements prometheus.Collector (unchecked: the series come and
// go with the queues).
func (promCollector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (p promCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range p.c.Series() {
		var m prometheus.Metric
		var err error
		switch s.Kind {
		case Gauge:
			m, err = prometheus.NewConstMetric(desc(s.Metric), prometheus.GaugeValue, s.Last, s.Client, s.Name)
		case Counter:
			m, err = prometheus.NewConstMetric(desc(s.Metric), prometheus.CounterValue, s.Last, s.Client, s.Name)
		case Histogram:
			buckets := map[float64]uint64{}
			for _, b := range histogramBuckets {
				buckets[b] = 0
			}
			for _, pt := range s.Points {
				for _, b := range histogramBuckets {
					if pt.V <= b {
						buckets[b]++
					}
				}
			}
			m, err = prometheus.NewConstHistogram(desc(s.Metric), uint64(s.Count), s.Sum, buckets, s.Client, s.Name)
		}
		if err == nil && m != nil {
			ch <- m
		}
	}
}
