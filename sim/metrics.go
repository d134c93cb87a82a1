package sim

import (
	"time"

	"github.com/cachelab/cachelab/fakeapi/clientmetrics"
)

// MetricSeries is one of client-go's own metrics of one queue or informer
// of one client over the run's virtual time (see Trace.Metrics and
// fakeapi/clientmetrics).
type MetricSeries = clientmetrics.Series

// MetricPoint is one value of a MetricSeries at a virtual time.
type MetricPoint = clientmetrics.Point

// Every run collects client-go's metrics into a clientmetrics.Collector
// whose clock is the run's virtual clock (Env.Metrics), and hands the
// series to the trace when it stops (Trace.Metrics).
//
// Routing, since runs go in parallel in one process and client-go's
// providers are partly process-wide:
//
//   - queues and informers the subject builds take the run's providers
//     directly: Env.Metrics.Workqueue(env.Name) as a queue's
//     MetricsProvider, Env.Metrics.Informer(env.Name) with an Identifier
//     from Env.Metrics.InformerID as an informer's. Nothing is shared.
//   - informers built by a SharedInformerFactory use client-go's
//     process-wide informer provider, which the first run installs
//     (clientmetrics.InstallGlobal; a provider the process set before
//     wins, and then such informers are not collected): give the factory
//     informers.WithInformerName(Env.Metrics.InformerName(env.Name, role)).
//     That name, "cachelab-N/<client>/<role>", is unique in the process and
//     routed to this run's collector until the run ends, when it is
//     released.
//   - queues built without a provider report to the process-wide workqueue
//     provider, which controller-runtime's init takes in any binary that
//     links it (cachelab's does): they are not collected.
//
// Metrics are not records: they do not take trace positions, so a run's
// records are the same with or without them.
func newRunMetrics(now func() time.Duration) *clientmetrics.Collector {
	clientmetrics.InstallGlobal()
	return clientmetrics.New(now)
}
