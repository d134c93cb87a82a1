package subjecttest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim"
)

// CM returns a ConfigMap's JSON for a plan, in namespace "default".
func CM(name string, data map[string]string) json.RawMessage {
	b, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]string{"name": name, "namespace": "default"},
		"data":     data,
	})
	if err != nil {
		panic(err) // a map of strings always marshals
	}
	return b
}

// At is a virtual time for a plan.
func At(d time.Duration) sim.Duration { return sim.Duration(d) }

// Run plays p with sim.Run, failing t on a run error, and logs the trace
// (without per-event and per-request records) when t fails or -v is set.
func Run(t *testing.T, p *sim.Plan) *sim.Trace {
	t.Helper()
	tr, err := sim.Run(t, p)
	if err != nil {
		t.Fatalf("sim.Run: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() || testing.Verbose() {
			var quiet []sim.Record
			for _, r := range tr.Records {
				if r.Kind != sim.RecSent && r.Kind != sim.RecDelivered && r.Kind != sim.RecRequest {
					quiet = append(quiet, r)
				}
			}
			t.Logf("outcome %s, end %s, %d records:\n%s", tr.Outcome, tr.End, len(tr.Records), DumpTrace(quiet))
		}
	})
	return tr
}

// DumpTrace formats sim records one a line, with actor and resource.
func DumpTrace(recs []sim.Record) string {
	out := ""
	for _, r := range recs {
		out += fmt.Sprintf("%-10s %-9s ", r.Actor, r.Verb) + Dump([]sim.Record{r})
	}
	return out
}

// Find returns the records matching pred.
func Find(tr *sim.Trace, pred func(sim.Record) bool) []sim.Record {
	var out []sim.Record
	for _, r := range tr.Records {
		if pred(r) {
			out = append(out, r)
		}
	}
	return out
}

// Last returns the last record of kind; ok false if none.
func Last(tr *sim.Trace, kind sim.RecordKind) (sim.Record, bool) {
	for i := len(tr.Records) - 1; i >= 0; i-- {
		if tr.Records[i].Kind == kind {
			return tr.Records[i], true
		}
	}
	return sim.Record{}, false
}

// RequireFullSimTrace fails t unless the trace holds, from actor, handler,
// queue, reconcile (as many starts as ends), signal and cache records, and
// ends quiet with the subject's desired state reached.
func RequireFullSimTrace(t *testing.T, tr *sim.Trace, actor string) {
	t.Helper()
	requireFullSimTrace(t, tr, actor, 0)
}

// requireFullSimTrace is RequireFullSimTrace allowing unfinished reconciles
// (started, never ended: frozen by a mid-reconcile crash).
func requireFullSimTrace(t *testing.T, tr *sim.Trace, actor string, unfinished int) {
	t.Helper()
	if tr.Outcome != "quiet" {
		t.Errorf("outcome %q, want quiet", tr.Outcome)
	}
	for _, kind := range []sim.RecordKind{sim.RecHandler, sim.RecQueue, sim.RecReconcile, sim.RecSignal, sim.RecCache} {
		if len(Find(tr, func(r sim.Record) bool { return r.Kind == kind && r.Actor == actor })) == 0 {
			t.Errorf("no %s record from %s", kind, actor)
		}
	}
	starts := len(Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecReconcile && r.Op == "start" }))
	ends := len(Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecReconcile && r.Op == "end" }))
	if starts == 0 || starts != ends+unfinished {
		t.Errorf("reconcile records: %d starts, %d ends, want %d unfinished", starts, ends, unfinished)
	}
	if d, ok := Last(tr, sim.RecDesired); !ok || !d.Value {
		t.Errorf("last desired record %+v, want desired == actual at the end", d)
	}
}

// CacheAtEnd returns the snapshot the sim took of cache name at the end of
// the run (the last RecCache with that Handler and no Detail).
func CacheAtEnd(t *testing.T, tr *sim.Trace, name string) []sim.ObjectState {
	t.Helper()
	for i := len(tr.Records) - 1; i >= 0; i-- {
		r := tr.Records[i]
		if r.Kind == sim.RecCache && r.Handler == name && r.Detail == "" {
			return r.Objects
		}
	}
	t.Fatalf("no end-of-run snapshot of cache %q", name)
	return nil
}

// Names returns the names in a snapshot, in its order.
func Names(objs []sim.ObjectState) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.Name
	}
	return out
}

// FaultyPlan is a plan with random faults for the mirror subjects: events
// delayed uniformly up to 2s (per watch, so streams interleave), each watch
// broken about every 5s, half the re-watches answered 410, and a user who
// updates a, deletes b, recreates b and deletes c.
func FaultyPlan(subject string, seed uint64) *sim.Plan {
	return &sim.Plan{Version: sim.PlanVersion, Seed: seed, Subject: subject,
		Objects: []json.RawMessage{CM("a", nil), CM("b", nil), CM("c", nil)},
		Faults: sim.FaultPolicy{
			Latency:         sim.Distribution{Kind: "uniform", Max: At(2 * time.Second)},
			DisconnectEvery: At(5 * time.Second),
			ExpireOnRewatch: 0.5,
		},
		Steps: []sim.Step{
			{At: At(2 * time.Second), Actor: "user", Op: "update", Object: CM("a", map[string]string{"k": "2"})},
			{At: At(4 * time.Second), Actor: "user", Op: "delete", Resource: "configmaps", Namespace: "default", Name: "b"},
			{At: At(6 * time.Second), Actor: "user", Op: "create", Object: CM("b", map[string]string{"k": "new"})},
			{At: At(8 * time.Second), Actor: "user", Op: "delete", Resource: "configmaps", Namespace: "default", Name: "c"},
		},
		Deadline: At(2 * time.Minute),
	}
}

// ServerNames returns the names of the objects of resource in the run's
// final server state (RecFinal).
func ServerNames(t *testing.T, tr *sim.Trace, resource string) []string {
	t.Helper()
	final, ok := Last(tr, sim.RecFinal)
	if !ok {
		t.Fatal("no final record")
	}
	var out []string
	for _, o := range final.Objects {
		if o.Resource == resource {
			out = append(out, o.Name)
		}
	}
	return out
}

// CrashPlan crashes the subject in the middle of the reconcile that a
// user's update of a triggers at 2s, and restarts it at 4s.
func CrashPlan(subject string) *sim.Plan {
	return &sim.Plan{Version: sim.PlanVersion, Seed: 1, Subject: subject,
		Objects: []json.RawMessage{CM("a", map[string]string{"k": "1"})},
		Steps: []sim.Step{
			{At: At(time.Second), Actor: "controller", Op: "crash", MidReconcile: true},
			{At: At(2 * time.Second), Actor: "user", Op: "update", Object: CM("a", map[string]string{"k": "2"})},
			{At: At(4 * time.Second), Actor: "controller", Op: "restart"},
		}}
}

// RequireRecoveryFromCrash fails t unless the CrashPlan run crashed the
// subject inside a reconcile, restarted it with a fresh initial list, and
// ended quiet with the desired state reached, the crashed reconcile left
// without an end record.
func RequireRecoveryFromCrash(t *testing.T, tr *sim.Trace, subject string) {
	t.Helper()
	crash := Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecCrash })
	restart := Find(tr, func(r sim.Record) bool { return r.Kind == sim.RecRestart })
	if len(crash) != 1 || len(restart) != 1 || !strings.Contains(crash[0].Detail, "mid-reconcile") {
		t.Fatalf("crash records %+v, restart records %+v: want one mid-reconcile crash and one restart", crash, restart)
	}
	reinitial := Find(tr, func(r sim.Record) bool {
		return r.Kind == sim.RecHandler && r.Actor == subject && r.Initial && r.Pos > restart[0].Pos
	})
	if len(reinitial) == 0 {
		t.Error("the restarted subject handled no initial list")
	}
	requireFullSimTrace(t, tr, subject, 1)
}

// RecreateGapPlan deletes b and creates it again (a new UID) while the
// subject's watch events are delayed 1s, then expires the watch at once:
// neither the delete nor the create reaches the subject through the watch,
// and the server's garbage collector has removed b-mirror (owned by the old
// b) meanwhile. The deadline is 30s.
func RecreateGapPlan(subject string) *sim.Plan {
	return &sim.Plan{Version: sim.PlanVersion, Seed: 1, Subject: subject,
		Objects: []json.RawMessage{CM("b", map[string]string{"k": "old"})},
		Faults:  sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: At(time.Second)}},
		Steps: []sim.Step{
			{At: At(3 * time.Second), Actor: "user", Op: "delete", Resource: "configmaps", Namespace: "default", Name: "b"},
			{At: At(3 * time.Second), Actor: "user", Op: "create", Object: CM("b", map[string]string{"k": "new"})},
			{At: At(3 * time.Second), Actor: "faults", Op: "expire", Resource: "configmaps", Target: subject},
		},
		Deadline: At(30 * time.Second),
	}
}
