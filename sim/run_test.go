package sim_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim"
	_ "github.com/cachelab/cachelab/sim/simtest"
)

// cm returns a ConfigMap's JSON.
func cm(name string) []byte {
	return []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"default"}}`, name))
}

func at(d time.Duration) sim.Duration { return sim.Duration(d) }

func dump(t *testing.T, tr *sim.Trace) {
	t.Helper()
	for _, r := range tr.Records {
		if r.Kind == sim.RecSent || r.Kind == sim.RecDelivered || r.Kind == sim.RecRequest {
			continue
		}
		t.Logf("%4d %8s %-10s %-18s %s %s %s/%s rv=%d %s %s %s", r.Pos, r.At, r.Kind, r.Actor, r.Verb, r.EventType, r.Namespace, r.Name, r.RV, r.Fault, r.Op, r.Detail)
	}
}

func TestRunSmoke(t *testing.T) {
	p := &sim.Plan{Version: 1, Seed: 1, Subject: "simtest/informer",
		Objects: []json.RawMessage{cm("a")},
		Steps: []sim.Step{
			{At: at(time.Second), Actor: "user", Op: "create", Object: cm("b")},
			{At: at(2 * time.Second), Actor: "faults", Op: "break", Resource: "configmaps"},
			{At: at(3 * time.Second), Actor: "user", Op: "delete", Resource: "configmaps", Namespace: "default", Name: "a"},
		}}
	tr, err := sim.Run(t, p)
	if err != nil {
		t.Fatal(err)
	}
	dump(t, tr)
	t.Logf("outcome %s end %s records %d", tr.Outcome, tr.End, len(tr.Records))
	_ = strings.Contains
}
