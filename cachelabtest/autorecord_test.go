package cachelabtest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/informers"

	"github.com/cachelab/cachelab/cachelabtest/internal/privatectl"
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/sim"
)

// privateController starts privatectl's controller on a factory of its
// own; with record, Env.Record records it.
func privateController(record bool) Controller {
	return Controller{
		Name: "private",
		Start: func(ctx context.Context, env *Env) error {
			f := informers.NewSharedInformerFactory(env.Kube, 0)
			c := privatectl.NewController(env.Kube, f)
			if record {
				if err := env.Record(c, f); err != nil {
					return err
				}
			}
			f.Start(ctx.Done())
			go c.Run(ctx, 2)
			return nil
		},
	}
}

// TestRecordRecordsAPrivateQueueAndTheFactorysInformers runs a controller
// imported from another package (its workqueue and informer private,
// built in its constructor) with and without Env.Record: with it, the
// trace holds its queue operations, its reconciles of each key and its
// informer's handler calls and cache; without, none of them.
func TestRecordRecordsAPrivateQueueAndTheFactorysInformers(t *testing.T) {
	count := func(record bool) map[sim.RecordKind]int {
		c := privateController(record)
		if err := sim.ReplaceSubject(sim.SubjectInfo{Name: c.Name, New: func() sim.Subject { return newSubject(c) }}); err != nil {
			t.Fatal(err)
		}
		cm := func(n, v string) json.RawMessage {
			return json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + n + `","namespace":"default"},"data":{"n":"` + v + `"}}`)
		}
		p := &sim.Plan{Version: sim.PlanVersion, Name: "record", Seed: 1, Subject: c.Name, Objects: []json.RawMessage{cm("a", "0")},
			Steps: []sim.Step{
				{At: sim.Duration(time.Second), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "a", Patch: json.RawMessage(`{"data":{"n":"1"}}`)},
				{At: sim.Duration(2 * time.Second), Actor: "user", Op: "create", Object: cm("b", "2")},
			},
			Deadline: sim.Duration(time.Minute), Quiet: sim.Duration(5 * time.Second)}
		tr, err := lab.RunPlan(t, p)
		if err != nil {
			t.Fatal(err)
		}
		n := map[sim.RecordKind]int{}
		for _, r := range tr.Records {
			if r.Actor != c.Name {
				continue
			}
			switch {
			case r.Kind == sim.RecQueue && r.Key == "default/a":
				n[r.Kind]++
			case r.Kind == sim.RecReconcile && r.Op == "end" && r.Key == "default/b" && r.Result == "ok":
				n[r.Kind]++
			case r.Kind == sim.RecHandler && r.Resource == "configmaps" && r.Name == "a-copy":
				n[r.Kind]++
			case r.Kind == sim.RecCache && r.Handler == "configmaps" && len(r.Objects) == 4:
				n[r.Kind]++
			}
		}
		return n
	}
	with, without := count(true), count(false)
	for _, k := range []sim.RecordKind{sim.RecQueue, sim.RecReconcile, sim.RecHandler, sim.RecCache} {
		if with[k] == 0 {
			t.Errorf("with Env.Record: no %s record of the controller's (%v)", k, with)
		}
		if without[k] != 0 {
			t.Errorf("without Env.Record: %d %s records (%v): the test does not show what Record adds", without[k], k, without)
		}
	}
}

func TestRecordSaysWhenItFindsNothing(t *testing.T) {
	env := &Env{rec: newRecording(nil, "x")}
	type empty struct{ n int }
	for _, x := range []any{42, &empty{}, (*privatectl.Controller)(nil)} {
		if err := env.Record(x); err == nil || !strings.Contains(err.Error(), "nothing to record") {
			t.Errorf("Record(%T): %v, want it to say it found nothing to record", x, err)
		}
	}
}
