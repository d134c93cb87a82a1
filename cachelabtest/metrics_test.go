package cachelabtest

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/sim"
)

// TestAControllersFactoryInformersAndQueueReportClientGoMetricsToItsRun: a
// controller under the lab that builds its queue with Env.WorkqueueMetrics
// and its informer from Env.Informers gets client-go's metrics of both in
// its run's trace: two ConfigMaps queued and never taken (depth 1, 2), and
// the factory's informer (routed by its InformerName) with its store at
// the server's resourceVersion.
func TestAControllersFactoryInformersAndQueueReportClientGoMetricsToItsRun(t *testing.T) {
	c := Controller{Start: func(ctx context.Context, env *Env) error {
		q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "copies", MetricsProvider: env.WorkqueueMetrics()})
		context.AfterFunc(ctx, q.ShutDown)
		inf := env.Informers.Core().V1().ConfigMaps().Informer()
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			if k, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				q.Add(k)
			}
		}}); err != nil {
			return err
		}
		env.Informers.Start(ctx.Done())
		return nil
	}}
	// ReplaceSubject: go test -count=N runs this test N times in one process.
	if err := sim.ReplaceSubject(sim.SubjectInfo{Name: "lab-test/metrics", Summary: "queues without a worker (lab tests only)", New: func() sim.Subject { return newSubject(c) }}); err != nil {
		t.Fatal(err)
	}
	cm := func(n string) json.RawMessage {
		return json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + n + `","namespace":"default"}}`)
	}
	tr, err := sim.Run(t, &sim.Plan{Version: sim.PlanVersion, Name: "two", Subject: "lab-test/metrics", Seed: 1, Objects: []json.RawMessage{cm("a"), cm("b")}})
	if err != nil {
		t.Fatal(err)
	}
	var depth, storeRV []float64
	for _, s := range tr.Metrics {
		for _, p := range s.Points {
			switch {
			case s.Client == "lab-test/metrics" && s.Name == "copies" && s.Metric == "workqueue_depth":
				depth = append(depth, p.V)
			case s.Client == "lab-test/metrics" && s.Name == "informers configmaps" && s.Metric == "informer_store_resource_version":
				storeRV = append(storeRV, p.V)
			}
		}
	}
	if want := []float64{1, 2}; !slices.Equal(depth, want) {
		t.Errorf("the queue's depth points %v, want %v (series: %+v)", depth, want, tr.Metrics)
	}
	var rv float64
	for _, r := range tr.Records {
		if r.Kind == sim.RecWrite {
			rv = float64(r.RV)
		}
	}
	if len(storeRV) == 0 || storeRV[len(storeRV)-1] != rv {
		t.Errorf("the factory informer's store resourceVersion points %v, want them to end at %v", storeRV, rv)
	}
}
