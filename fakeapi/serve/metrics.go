package serve

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/fakeapi/clientmetrics"
)

// metrics is a fakeapi.Observer that keeps Prometheus metrics of what the
// server does, and forwards every observation to next (if set).
type metrics struct {
	next     fakeapi.Observer
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	writes   *prometheus.CounterVec
	sent     *prometheus.CounterVec
	faults   *prometheus.CounterVec
	watchers prometheus.Gauge
	rv       prometheus.Gauge
	compact  prometheus.Gauge
	// client holds client-go's own metrics (workqueue, informer) of the
	// client-go components the process runs (the kubelet), exported with
	// a client label.
	client *clientmetrics.Collector
}

func newMetrics(next fakeapi.Observer) *metrics {
	m := &metrics{
		next: next,
		reg:  prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cachelab_requests_total", Help: "Requests answered, by verb, resource and HTTP code.",
		}, []string{"verb", "resource", "code"}),
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cachelab_writes_total", Help: "Store writes, by verb and resource (garbage collection included).",
		}, []string{"verb", "resource"}),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cachelab_watch_events_sent_total", Help: "Watch events queued for watchers, by resource and type.",
		}, []string{"resource", "type"}),
		faults: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cachelab_faults_injected_total", Help: "Faults injected, by name.",
		}, []string{"fault"}),
		watchers: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cachelab_active_watchers", Help: "Open watches."}),
		rv:       prometheus.NewGauge(prometheus.GaugeOpts{Name: "cachelab_resource_version", Help: "Latest resourceVersion written."}),
		compact:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "cachelab_compacted_resource_version", Help: "resourceVersion history is compacted to."}),
	}
	m.client = clientmetrics.New(nil)
	m.reg.MustRegister(m.requests, m.writes, m.sent, m.faults, m.watchers, m.rv, m.compact, m.client.Prometheus())
	return m
}

// Observe implements fakeapi.Observer.
func (m *metrics) Observe(o fakeapi.Observation) {
	switch o.Kind {
	case fakeapi.ObsRequest:
		if o.Request != nil {
			m.requests.WithLabelValues(o.Request.Verb, resourceLabel(o.Request.Resource.Group, o.Request.Resource.Resource, o.Request.Subresource), strconv.Itoa(o.Code)).Inc()
		}
	case fakeapi.ObsWrite:
		m.writes.WithLabelValues(o.Verb, resourceLabel(o.Resource.Group, o.Resource.Resource, "")).Inc()
		m.rv.Set(float64(o.RV))
	case fakeapi.ObsSent:
		if o.Event != nil {
			m.sent.WithLabelValues(resourceLabel(o.Resource.Group, o.Resource.Resource, ""), string(o.Event.Type)).Inc()
		}
	case fakeapi.ObsWatchOpen:
		m.watchers.Inc()
	case fakeapi.ObsWatchClose:
		m.watchers.Dec()
	case fakeapi.ObsFault:
		m.faults.WithLabelValues(o.Fault).Inc()
	case fakeapi.ObsCompact:
		m.compact.Set(float64(o.RV))
	}
	if m.next != nil {
		m.next.Observe(o)
	}
}

// handler serves the metrics in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

func resourceLabel(group, resource, sub string) string {
	s := resource
	if group != "" {
		s += "." + group
	}
	if sub != "" {
		s += "/" + sub
	}
	return s
}
