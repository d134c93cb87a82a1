package reports_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/cachelab/cachelab/reports"
	"github.com/cachelab/cachelab/sim"
	_ "github.com/cachelab/cachelab/subjects/legacy"
)

// TestTheReportPlotsTheSubjectsWorkqueueDepthFromClientGosOwnMetrics runs
// the mirror controller over one ConfigMap and reads its workqueue's depth
// off the report. The story: the initial list's OnAdd queues "default/a"
// (depth 1); the worker takes it (0) and creates a-mirror; the mirror's
// OnAdd queues its source "default/a" again (1); the worker takes it (0),
// finds the mirror there, and the queue stays empty. Two adds.
func TestTheReportPlotsTheSubjectsWorkqueueDepthFromClientGosOwnMetrics(t *testing.T) {
	p := &sim.Plan{Version: sim.PlanVersion, Name: "one-configmap", Subject: "informer-realfifo", Seed: 1,
		Objects: []json.RawMessage{json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"k":"v"}}`)}}
	tr, err := sim.Run(t, p)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := reports.HTML(&b, reports.Run{Trace: tr}); err != nil {
		t.Fatal(err)
	}
	points := func(metric string) string {
		m := regexp.MustCompile(`data-metric="` + metric + `" data-kind="\w+" data-points="([^"]*)"`).FindSubmatch(b.Bytes())
		if m == nil {
			t.Fatalf("the report has no %s chart", metric)
		}
		return string(m[1])
	}
	if got, want := points("workqueue_depth"), "0:1 0:0 0:1 0:0"; got != want {
		t.Errorf("workqueue_depth points %q, want %q (ms:value)", got, want)
	}
	if got, want := points("workqueue_adds_total"), "0:1 0:2"; got != want {
		t.Errorf("workqueue_adds_total points %q, want %q", got, want)
	}
	if !bytes.Contains(b.Bytes(), []byte(`<code>informer-realfifo</code> · configmaps`)) {
		t.Error("the report has no chart group for the informer-realfifo's configmaps informer")
	}
}
