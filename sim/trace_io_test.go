package sim

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sampleTrace(t *testing.T) *Trace {
	t.Helper()
	p, err := LoadPlanFile(filepath.Join("testdata", "standard.json"))
	if err != nil {
		t.Fatal(err)
	}
	recs := []Record{
		{Kind: RecWrite, At: Duration(time.Second), Actor: "user", Verb: "create", Resource: "configmaps", Namespace: "default", Name: "b",
			UID: "uid-2", RV: 12, Object: json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`)},
		{Kind: RecFault, At: Duration(2 * time.Second), Actor: ActorFaults, Fault: FaultWatchBreak, Target: "simtest/informer", Watcher: "simtest/informer/configmaps#1"},
		{Kind: RecHandler, At: Duration(2500 * time.Millisecond), Actor: "simtest/informer", Handler: "configmaps", EventType: "DELETED",
			Name: "a", UID: "uid-1", RV: 13, Tombstone: true, OldRV: 11, OldUID: "uid-1"},
		{Kind: RecSignal, Actor: "simtest/informer", Signal: "informer.HasSynced", Value: true},
		{Kind: RecFinal, Objects: []ObjectState{{Resource: "configmaps", Namespace: "default", Name: "b", UID: "uid-2", RV: 12, Finalizers: []string{"x"}}}},
	}
	for i := range recs {
		recs[i].Pos = i
	}
	metrics := []MetricSeries{{Metric: "workqueue_depth", Kind: "gauge", Client: "simtest/informer", Name: "q",
		Points: []MetricPoint{{At: 0, V: 1}, {At: 250 * time.Millisecond, V: 0}}, Count: 2}}
	return &Trace{Version: TraceVersion, Plan: p, Records: recs, End: Duration(40 * time.Second), Outcome: "quiet", Metrics: metrics}
}

func TestTraceRoundTripsThroughJSONLines(t *testing.T) {
	tr := sampleTrace(t)
	var buf bytes.Buffer
	if err := WriteTrace(&buf, tr); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1+len(tr.Records) {
		t.Fatalf("%d lines, want a header and %d records", len(lines), len(tr.Records))
	}
	if !strings.HasPrefix(lines[0], `{"version":1,"plan":{`) {
		t.Fatalf("header line: %s", lines[0])
	}
	got, err := ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, tr) {
		t.Fatalf("trace changed through JSONL:\n%+v\n%+v", got, tr)
	}
}

func TestReadTraceRejectsOtherVersionsAndDamagedFiles(t *testing.T) {
	tr := sampleTrace(t)
	var buf bytes.Buffer
	if err := WriteTrace(&buf, tr); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	lines := strings.SplitAfter(good, "\n")
	cases := []struct{ name, in, want string }{
		{"version", strings.Replace(good, `{"version":1,`, `{"version":9,`, 1), "trace line 1: unsupported trace version 9 (this code reads version 1)"},
		{"truncated", strings.Join(lines[:3], ""), "trace has 2 records, its header says 5 (truncated file?)"},
		{"out of order", lines[0] + lines[2] + lines[1], "trace line 2: record at position 1, want 0"},
		{"unknown field", lines[0] + strings.Replace(lines[1], `{"pos":0`, `{"pos":0,"bogus":1`, 1), `trace line 2: json: unknown field "bogus"`},
		{"empty", "", "empty input"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadTrace(strings.NewReader(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}
