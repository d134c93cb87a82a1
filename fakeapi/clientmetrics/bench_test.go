package clientmetrics_test

import (
	"testing"

	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/fakeapi/clientmetrics"
)

// BenchmarkWorkqueueCycle is one Add, Get and Done of a named workqueue,
// without a metrics provider (client-go's no-op) and with a Collector: the
// cost the collector adds to each queue operation of a run.
func BenchmarkWorkqueueCycle(b *testing.B) {
	for _, tc := range []struct {
		name string
		mp   func() workqueue.MetricsProvider
	}{
		{"no-metrics", func() workqueue.MetricsProvider { return nil }},
		{"collector", func() workqueue.MetricsProvider { return clientmetrics.New(nil).Workqueue("bench") }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[int]{Name: "bench", MetricsProvider: tc.mp()})
			defer q.ShutDown()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				q.Add(i)
				k, _ := q.Get()
				q.Done(k)
			}
		})
	}
}
