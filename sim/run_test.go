package sim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/simtest"
)

// cm returns a ConfigMap's JSON.
func cm(name string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"default"}}`, name))
}

func pod(name string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":"default"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`, name))
}

func at(d time.Duration) sim.Duration { return sim.Duration(d) }

func plan(steps ...sim.Step) *sim.Plan {
	return &sim.Plan{Version: 1, Seed: 1, Subject: simtest.Name, Objects: []json.RawMessage{cm("a")}, Steps: steps}
}

func run(t *testing.T, p *sim.Plan) *sim.Trace {
	t.Helper()
	tr, err := sim.Run(t, p)
	if err != nil {
		t.Fatal(err)
	}
	if t.Failed() || testing.Verbose() {
		dump(t, tr)
	}
	return tr
}

// dump logs the trace without the per-event and per-request noise.
func dump(t *testing.T, tr *sim.Trace) {
	t.Helper()
	var b strings.Builder
	for _, r := range tr.Records {
		if r.Kind == sim.RecSent || r.Kind == sim.RecDelivered || r.Kind == sim.RecRequest {
			continue
		}
		fmt.Fprintf(&b, "%4d %9s %-11s %-17s %s %s %s %s/%s rv=%d %s %s %s\n", r.Pos, r.At, r.Kind, r.Actor, r.Verb, r.EventType, r.Resource, r.Namespace, r.Name, r.RV, r.Fault, r.Op, r.Detail)
	}
	t.Logf("outcome %s, end %s, %d records:\n%s", tr.Outcome, tr.End, len(tr.Records), b.String())
}

func find(tr *sim.Trace, pred func(sim.Record) bool) []sim.Record {
	var out []sim.Record
	for _, r := range tr.Records {
		if pred(r) {
			out = append(out, r)
		}
	}
	return out
}

func faultsNamed(tr *sim.Trace, name string) []sim.Record {
	return find(tr, func(r sim.Record) bool { return r.Kind == sim.RecFault && r.Fault == name })
}

func handlerCalls(tr *sim.Trace, name string) []sim.Record {
	return find(tr, func(r sim.Record) bool { return r.Kind == sim.RecHandler && r.Name == name })
}

// only returns the single record of recs, failing otherwise.
func only(t *testing.T, what string, recs []sim.Record) sim.Record {
	t.Helper()
	if len(recs) != 1 {
		t.Fatalf("%s: %d records, want 1: %+v", what, len(recs), recs)
	}
	return recs[0]
}

func TestRunEndsQuietWithCacheAndFinalStateEqual(t *testing.T) {
	tr := run(t, plan(sim.Step{At: at(time.Second), Actor: "user", Op: "create", Object: cm("b")}))
	if tr.Outcome != "quiet" {
		t.Fatalf("outcome %q, want quiet", tr.Outcome)
	}
	// Quiet = 10s with nothing but bookmarks after the last activity (the
	// handling of b at 1s).
	if tr.End.D() != 11*time.Second {
		t.Errorf("end %s, want 11s", tr.End)
	}
	final := only(t, "final", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecFinal }))
	cache := only(t, "cache", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecCache }))
	if len(final.Objects) != 2 || !reflect.DeepEqual(final.Objects, cache.Objects) {
		t.Fatalf("final %+v\ncache %+v", final.Objects, cache.Objects)
	}
	w := only(t, "write of b", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWrite && r.Name == "b" }))
	if w.Actor != "user" || w.Verb != "create" || w.At.D() != time.Second || w.UID == "" || w.RV == 0 || len(w.Object) == 0 {
		t.Errorf("write record %+v", w)
	}
	h := only(t, "handler of b", handlerCalls(tr, "b"))
	if h.EventType != "ADDED" || h.UID != w.UID || h.RV != w.RV || h.Initial {
		t.Errorf("handler record %+v, want live ADDED of uid %s rv %d", h, w.UID, w.RV)
	}
	if signals := find(tr, func(r sim.Record) bool { return r.Kind == sim.RecSignal && r.Value }); len(signals) != 2 {
		t.Errorf("%d signal flips, want informer and handler HasSynced", len(signals))
	}
	for i, r := range tr.Records {
		if r.Pos != i || (i > 0 && r.At < tr.Records[i-1].At) {
			t.Fatalf("record %d: pos %d at %s after %s", i, r.Pos, r.At, tr.Records[max(i-1, 0)].At)
		}
	}
}

func TestWatchFaultStepsHappenAtTheirTimeOnTheSubjectsWatch(t *testing.T) {
	for _, c := range []struct {
		op, fault, reason string
	}{
		{"disconnect", sim.FaultWatchClose, fakeapi.CloseClean},
		{"break", sim.FaultWatchBreak, fakeapi.CloseBroken},
		{"expire", sim.FaultWatchExpire, fakeapi.CloseExpired},
	} {
		t.Run(c.op, func(t *testing.T) {
			tr := run(t, plan(sim.Step{At: at(2 * time.Second), Actor: "faults", Op: c.op, Resource: "configmaps"}))
			f := only(t, c.fault, faultsNamed(tr, c.fault))
			if f.At.D() != 2*time.Second || f.Target != simtest.Name || f.Watcher != simtest.Name+"/configmaps#1" || f.Actor != sim.ActorFaults {
				t.Errorf("fault %+v, want at 2s on %s/configmaps#1", f, simtest.Name)
			}
			cl := only(t, "watch-close", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWatchClose && r.Watcher == f.Watcher }))
			if cl.Reason != c.reason || cl.At != f.At {
				t.Errorf("close %+v, want reason %q at %s", cl, c.reason, f.At)
			}
			if reopen := find(tr, func(r sim.Record) bool {
				return r.Kind == sim.RecWatchOpen && r.Watcher == simtest.Name+"/configmaps#2"
			}); len(reopen) != 1 {
				t.Errorf("the informer did not re-watch after %s", c.op)
			}
		})
	}
}

func TestCompactStepCompactsAtItsTime(t *testing.T) {
	tr := run(t, plan(
		sim.Step{At: at(time.Second), Actor: "user", Op: "create", Object: cm("b")},
		sim.Step{At: at(3 * time.Second), Actor: "faults", Op: "compact"},
	))
	f := only(t, "compact fault", faultsNamed(tr, sim.FaultCompact))
	c := only(t, "compact record", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecCompact }))
	w := only(t, "write of b", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWrite && r.Name == "b" }))
	if f.At.D() != 3*time.Second || c.At.D() != 3*time.Second || f.RV != w.RV || c.RV != w.RV || f.Pos > c.Pos {
		t.Errorf("fault %+v / compact %+v, want both at 3s, to rv %d, fault first", f, c, w.RV)
	}
}

func TestFailNextAndTimeoutNextWriteHitTheNextMatchingRequest(t *testing.T) {
	tr := run(t, plan(
		sim.Step{At: at(time.Second), Actor: "faults", Op: "fail-next", Code: 429, Target: "user"},
		sim.Step{At: at(2 * time.Second), Actor: "user", Op: "create", Object: cm("b")},
		sim.Step{At: at(3 * time.Second), Actor: "faults", Op: "timeout-next-write", Target: "user", Verb: "create"},
		sim.Step{At: at(4 * time.Second), Actor: "user", Op: "create", Object: cm("c")},
	))
	f := only(t, "fail-next-429", faultsNamed(tr, "fail-next-429"))
	if f.At.D() != 2*time.Second || f.Target != "user" || f.Verb != "create" || f.Code != 429 || f.Name != "b" {
		t.Errorf("fail-next fault %+v, want at 2s on the user's create of b", f)
	}
	if len(find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWrite && r.Name == "b" })) != 0 {
		t.Error("b was written despite the 429")
	}
	req := only(t, "request for b", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecRequest && r.Name == "b" }))
	if req.Code != 429 || req.Reason != "TooManyRequests" {
		t.Errorf("request %+v, want 429 TooManyRequests", req)
	}
	to := only(t, "timeout-next-write", faultsNamed(tr, sim.FaultTimeoutNextWrite))
	if to.At.D() != 4*time.Second || to.Name != "c" || to.Code != 504 {
		t.Errorf("timeout fault %+v, want at 4s on c", to)
	}
	// Unknown outcome: applied (a write, seen by the subject), reported 504.
	only(t, "write of c", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWrite && r.Name == "c" }))
	only(t, "handler of c", handlerCalls(tr, "c"))
	reqC := only(t, "request for c", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecRequest && r.Name == "c" }))
	if reqC.Code != 504 {
		t.Errorf("request for c answered %d, want 504", reqC.Code)
	}
	notes := find(tr, func(r sim.Record) bool { return r.Kind == sim.RecNote && r.Actor == "user" })
	if len(notes) != 2 {
		t.Errorf("want a step-failed note for each faulted step, got %+v", notes)
	}
}

func TestHoldDelaysDeliveryUntilRelease(t *testing.T) {
	tr := run(t, plan(
		sim.Step{At: at(time.Second), Actor: "faults", Op: "hold", Resource: "configmaps"},
		sim.Step{At: at(2 * time.Second), Actor: "user", Op: "create", Object: cm("b")},
		sim.Step{At: at(5 * time.Second), Actor: "faults", Op: "release", Resource: "configmaps"},
	))
	h := only(t, "hold", faultsNamed(tr, sim.FaultHold))
	r := only(t, "release", faultsNamed(tr, sim.FaultRelease))
	if h.At.D() != time.Second || r.At.D() != 5*time.Second || !strings.Contains(h.Detail, "until 5s") {
		t.Errorf("hold %+v release %+v", h, r)
	}
	sent := only(t, "sent b", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecSent && r.Name == "b" }))
	got := only(t, "handler b", handlerCalls(tr, "b"))
	if sent.At.D() != 2*time.Second || got.At.D() != 5*time.Second {
		t.Errorf("b sent at %s, handled at %s; want 2s and 5s", sent.At, got.At)
	}
}

func TestCrashDropsTheSubjectAndRestartRelists(t *testing.T) {
	tr := run(t, plan(
		sim.Step{At: at(time.Second), Actor: "controller", Op: "crash"},
		sim.Step{At: at(2 * time.Second), Actor: "user", Op: "create", Object: cm("b")},
		sim.Step{At: at(4 * time.Second), Actor: "controller", Op: "restart"},
	))
	c := only(t, "crash", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecCrash }))
	rs := only(t, "restart", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecRestart }))
	if c.At.D() != time.Second || rs.At.D() != 4*time.Second || c.Actor != simtest.Name {
		t.Errorf("crash %+v restart %+v", c, rs)
	}
	// The crashed process's watch ends; nothing is handled while down.
	for _, r := range tr.Records {
		if r.Kind == sim.RecHandler && r.At > c.At && r.At < rs.At {
			t.Errorf("handler call while crashed: %+v", r)
		}
	}
	// The new process lists both objects as initial.
	for _, name := range []string{"a", "b"} {
		calls := handlerCalls(tr, name)
		last := calls[len(calls)-1]
		if last.At.D() != 4*time.Second || !last.Initial || last.EventType != "ADDED" {
			t.Errorf("%s after restart: %+v, want an initial ADDED at 4s", name, last)
		}
	}
	if n := len(find(tr, func(r sim.Record) bool { return r.Kind == sim.RecSignal && r.Signal == "informer.HasSynced" })); n != 2 {
		t.Errorf("informer.HasSynced flipped %d times, want once per process", n)
	}
}

func TestMidReconcileCrashFreezesTheReconcileThatStarted(t *testing.T) {
	tr := run(t, plan(
		sim.Step{At: at(time.Second), Actor: "controller", Op: "crash", MidReconcile: true},
		sim.Step{At: at(3 * time.Second), Actor: "user", Op: "create", Object: cm("b")},
		sim.Step{At: at(5 * time.Second), Actor: "controller", Op: "restart"},
	))
	c := only(t, "crash", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecCrash }))
	if c.At.D() != 3*time.Second || !strings.Contains(c.Detail, "mid-reconcile") {
		t.Fatalf("crash %+v, want mid-reconcile at 3s (when b's reconcile starts)", c)
	}
	starts := find(tr, func(r sim.Record) bool {
		return r.Kind == sim.RecReconcile && r.Key == "default/b" && r.Op == "start" && r.At == c.At
	})
	start := only(t, "start of b's reconcile", starts)
	if start.Pos > c.Pos {
		t.Errorf("crash recorded before the reconcile start")
	}
	for _, r := range tr.Records {
		if r.Kind == sim.RecReconcile && r.Key == "default/b" && r.Op == "end" && r.At < at(5*time.Second) {
			t.Errorf("the frozen reconcile of b ended: %+v", r)
		}
	}
	if only(t, "restart", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecRestart })).At.D() != 5*time.Second {
		t.Error("restart not at 5s")
	}
}

func TestStaleReplicaServesTheListFallbackFromThePast(t *testing.T) {
	// A 500 on the WatchList request makes the reflector fall back to a
	// LIST at resourceVersion "0": served by the lagging replica.
	tr := run(t, plan(
		sim.Step{At: at(time.Second), Actor: "controller", Op: "crash"},
		sim.Step{At: at(2 * time.Second), Actor: "user", Op: "create", Object: cm("b")},
		sim.Step{At: at(3 * time.Second), Actor: "faults", Op: "stale-replica", Lag: 1},
		sim.Step{At: at(3 * time.Second), Actor: "faults", Op: "fail-next", Code: 500, Verb: "watch", Target: simtest.Name},
		sim.Step{At: at(4 * time.Second), Actor: "controller", Op: "restart"},
	))
	on := only(t, "stale-replica-on", faultsNamed(tr, "stale-replica-on"))
	if on.At.D() != 3*time.Second || on.Lag != 1 {
		t.Errorf("stale-replica step fault %+v", on)
	}
	fail := only(t, "fail-next-500", faultsNamed(tr, "fail-next-500"))
	if fail.At.D() != 4*time.Second || fail.Verb != "watch" {
		t.Errorf("fail-next %+v, want the restarted informer's watch at 4s", fail)
	}
	stale := faultsNamed(tr, sim.FaultStaleReplica)
	if len(stale) == 0 || stale[0].At.D() != 4*time.Second || stale[0].Lag != 1 {
		t.Fatalf("stale replica faults %+v, want one at 4s lagging 1", stale)
	}
	list := find(tr, func(r sim.Record) bool { return r.Kind == sim.RecList && r.Actor == simtest.Name })
	if len(list) == 0 || list[0].Lag != 1 || list[0].Count != 1 {
		t.Fatalf("lists %+v, want the fallback list 1 revision behind, without b", list)
	}
}

func TestRandomFaultsAreDrawnFromTheSeedOnly(t *testing.T) {
	p := plan()
	for i := range 20 {
		p.Steps = append(p.Steps, sim.Step{At: at(time.Duration(i+1) * time.Second), Actor: "user", Op: "create", Object: cm(fmt.Sprintf("o%d", i))})
	}
	p.Faults = sim.FaultPolicy{
		Latency:         sim.Distribution{Kind: "exponential", Mean: at(50 * time.Millisecond), Max: at(time.Second)},
		DisconnectEvery: at(4 * time.Second),
		ErrorRate:       0.2,
	}
	p.SubjectParams = map[string]string{"label": "seen"} // the subject writes too
	tr := run(t, p)
	if len(faultsNamed(tr, sim.FaultWatchClose))+len(faultsNamed(tr, sim.FaultWatchBreak)) == 0 {
		t.Error("no drawn disconnect in 20s with DisconnectEvery 4s")
	}
	errs := find(tr, func(r sim.Record) bool { return r.Kind == sim.RecFault && strings.HasPrefix(r.Fault, "error-") })
	if len(errs) == 0 {
		t.Error("no random request error with ErrorRate 0.2")
	}
	for _, r := range errs {
		if r.Target == "user" || r.At.D() > 20*time.Second {
			t.Errorf("random error %+v hit the user or came after Until (20s)", r)
		}
	}
	// The first watch's disconnect comes exactly when the policy drew it.
	pol := sim.NewPolicy(p, nil)
	d, abrupt, _ := pol.DisconnectDelay(fakeapi.WatcherInfo{ID: 1, Client: simtest.Name, Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}})
	open := find(tr, func(r sim.Record) bool {
		return r.Kind == sim.RecWatchOpen && r.Watcher == simtest.Name+"/configmaps#1"
	})
	closes := find(tr, func(r sim.Record) bool {
		return r.Kind == sim.RecFault && r.Watcher == simtest.Name+"/configmaps#1"
	})
	want := sim.FaultWatchClose
	if abrupt {
		want = sim.FaultWatchBreak
	}
	if len(open) == 1 && open[0].At.D()+d < 20*time.Second {
		if len(closes) != 1 || closes[0].At.D() != open[0].At.D()+d || closes[0].Fault != want {
			t.Errorf("first watch opened at %s, drawn %s after (%s): faults %+v", open[0].At, d, want, closes)
		}
	}
	// Delays: each event delivered no earlier than sent, within the cap.
	sent := map[string]sim.Duration{}
	for _, r := range tr.Records {
		key := fmt.Sprintf("%s/%s/%d", r.Watcher, r.EventType, r.RV)
		switch r.Kind {
		case sim.RecSent:
			sent[key] = r.At
		case sim.RecDelivered:
			if s, ok := sent[key]; ok && (r.At < s || r.At.D()-s.D() > 20*time.Second) {
				t.Errorf("event %s sent %s delivered %s", key, s, r.At)
			}
		}
	}
}

func TestContractBreakingDropsAreLabelledAndReachNoHandler(t *testing.T) {
	p := plan(sim.Step{At: at(time.Second), Actor: "user", Op: "create", Object: cm("b")},
		sim.Step{At: at(2 * time.Second), Actor: "user", Op: "wait-quiet"})
	p.Faults.ContractBreaking.DropRate = 1
	tr := run(t, p)
	drops := faultsNamed(tr, sim.FaultDrop)
	var dropB *sim.Record
	for i := range drops {
		if !drops[i].ContractBreaking {
			t.Errorf("drop not labelled contract-breaking: %+v", drops[i])
		}
		if drops[i].Name == "b" {
			dropB = &drops[i]
		}
	}
	if dropB == nil || dropB.At.D() != time.Second {
		t.Fatalf("no drop of b at 1s: %+v", drops)
	}
	if calls := handlerCalls(tr, "b"); len(calls) != 0 {
		t.Errorf("dropped event reached the handler: %+v", calls)
	}
	// Without the plan asking, nothing contract-breaking happens.
	p.Faults.ContractBreaking = sim.ContractBreaking{}
	p.Faults.ErrorRate, p.Faults.DisconnectEvery = 0.3, at(time.Second)
	tr = run(t, p)
	if cb := find(tr, func(r sim.Record) bool { return r.ContractBreaking }); len(cb) != 0 {
		t.Errorf("contract-breaking faults drawn without being asked: %+v", cb)
	}
}

func TestKubeletMovesPodsToRunningReadyAfterItsDelay(t *testing.T) {
	p := &sim.Plan{Version: 1, Seed: 1, Subject: simtest.Name, SubjectParams: map[string]string{"resource": "pods"},
		Kubelet: &sim.Kubelet{ReadyAfter: at(3 * time.Second)},
		Steps:   []sim.Step{{At: at(time.Second), Actor: "user", Op: "create", Object: pod("p")}}}
	tr := run(t, p)
	st := only(t, "status write", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWrite && r.Actor == "kubelet" }))
	if st.At.D() != 4*time.Second || st.Verb != "update/status" || st.Name != "p" {
		t.Fatalf("kubelet write %+v, want update/status of p at 4s", st)
	}
	if !bytes.Contains(st.Object, []byte(`"phase":"Running"`)) || !bytes.Contains(st.Object, []byte(`"type":"Ready","status":"True"`)) {
		t.Errorf("status not Running/Ready: %s", st.Object)
	}
}

func TestCompetitorWritesUnderItsOwnName(t *testing.T) {
	tr := run(t, plan(sim.Step{At: at(time.Second), Actor: "competitor", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "a",
		Patch: json.RawMessage(`{"data":{"by":"competitor"}}`)}))
	w := only(t, "competitor write", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWrite && r.Actor == "competitor" }))
	if w.Verb != "patch" || w.Name != "a" || w.At.D() != time.Second {
		t.Errorf("competitor write %+v", w)
	}
}

func TestDesiredIsRecordedWhenItChanges(t *testing.T) {
	p := plan(sim.Step{At: at(time.Second), Actor: "user", Op: "create", Object: cm("b")},
		sim.Step{At: at(2 * time.Second), Actor: "user", Op: "delete", Resource: "configmaps", Namespace: "default", Name: "b"},
		sim.Step{At: at(3 * time.Second), Actor: "controller", Op: "crash"},
		sim.Step{At: at(4 * time.Second), Actor: "user", Op: "create", Object: cm("c")},
		sim.Step{At: at(5 * time.Second), Actor: "user", Op: "delete", Resource: "configmaps", Namespace: "default", Name: "c"})
	p.Objects = nil
	p.Steps = append([]sim.Step{{At: at(500 * time.Millisecond), Actor: "user", Op: "create", Object: cm("a")}}, p.Steps...)
	p.SubjectParams = map[string]string{"label": "seen"}
	tr := run(t, p)
	var got []string
	for _, r := range find(tr, func(r sim.Record) bool { return r.Kind == sim.RecDesired }) {
		got = append(got, fmt.Sprintf("%s:%v", r.At, r.Value))
	}
	// Nothing at start (true), a created unlabelled (false), labelled by
	// the subject (true), b likewise; b's deletion changes nothing; with
	// the subject down, c stays unlabelled (false) until deleted (true).
	want := []string{"0s:true", "500ms:false", "500ms:true", "1s:false", "1s:true", "4s:false", "5s:true"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("desired flips %v, want %v", got, want)
	}
}

func TestRunRejectsUnknownSubjectsAndBadPlans(t *testing.T) {
	p := plan()
	p.Subject = "nope"
	_, err := sim.Run(t, p)
	if err == nil || !strings.Contains(err.Error(), `unknown subject "nope" (known: `) || !strings.Contains(err.Error(), simtest.Name) {
		t.Errorf("unknown subject: %v", err)
	}
	p = plan(sim.Step{At: at(time.Second), Actor: "kubelet2", Op: "create"})
	tr, err := sim.Run(t, p)
	if err == nil || !strings.Contains(err.Error(), `steps[0].actor: unknown actor "kubelet2"`) || !strings.HasPrefix(tr.Outcome, "error: ") {
		t.Errorf("bad plan: %v (outcome %q)", err, tr.Outcome)
	}
}

func TestRunTraceRoundTripsThroughJSONL(t *testing.T) {
	tr := run(t, plan(sim.Step{At: at(time.Second), Actor: "faults", Op: "break"}))
	var buf bytes.Buffer
	if err := sim.WriteTrace(&buf, tr); err != nil {
		t.Fatal(err)
	}
	got, err := sim.ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, tr) {
		t.Fatal("trace changed through JSONL")
	}
}

func TestContractBreakingDuplicatesAndReordersAreLabelled(t *testing.T) {
	p := plan(sim.Step{At: at(time.Second), Actor: "user", Op: "create", Object: cm("b")})
	p.Faults.ContractBreaking.DuplicateRate = 1
	tr := run(t, p)
	dup := only(t, "duplicate of b", find(tr, func(r sim.Record) bool {
		return r.Kind == sim.RecFault && r.Fault == sim.FaultDuplicate && r.Name == "b"
	}))
	if !dup.ContractBreaking || dup.At.D() != time.Second {
		t.Errorf("duplicate %+v", dup)
	}
	if calls := handlerCalls(tr, "b"); len(calls) != 2 || calls[1].RV != calls[0].RV {
		t.Errorf("handler calls for b %+v, want the same revision twice", calls)
	}

	// Swap the two patches of b: the informer sees revision 2 before 1.
	p = plan(
		sim.Step{At: at(time.Second), Actor: "user", Op: "create", Object: cm("b")},
		sim.Step{At: at(2 * time.Second), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "b", Patch: json.RawMessage(`{"data":{"x":"1"}}`)},
		sim.Step{At: at(2 * time.Second), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "b", Patch: json.RawMessage(`{"data":{"x":"2"}}`)},
	)
	p.Faults.ContractBreaking.ReorderInStream = true
	for seed := uint64(1); seed < 50; seed++ {
		p.Seed = seed
		tr = run(t, p)
		reorders := find(tr, func(r sim.Record) bool { return r.Kind == sim.RecFault && r.Fault == sim.FaultReorder && r.Name == "b" })
		if len(reorders) == 0 {
			continue
		}
		if !reorders[0].ContractBreaking {
			t.Errorf("reorder not labelled: %+v", reorders[0])
		}
		calls := handlerCalls(tr, "b")
		went := false
		for i := 1; i < len(calls); i++ {
			if calls[i].RV < calls[i-1].RV {
				went = true
			}
		}
		if !went {
			t.Errorf("seed %d: a reorder was recorded but the handler saw revisions in order: %+v", seed, calls)
		}
		return
	}
	t.Fatal("no seed in 1..49 reordered b's events")
}

func TestInformerFedCompetitorEnforcesItsPatch(t *testing.T) {
	p := plan(sim.Step{At: at(time.Second), Actor: "user", Op: "create", Object: cm("b")},
		sim.Step{At: at(5500 * time.Millisecond), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "b",
			Patch: json.RawMessage(`{"data":{"owner":"user"}}`)})
	p.Competitor = &sim.Competitor{Resource: "configmaps", Patch: json.RawMessage(`{"data":{"owner":"competitor"}}`), Delay: at(2 * time.Second)}
	tr := run(t, p)
	var got []string
	for _, w := range find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWrite && r.Actor == sim.ClientCompetitor }) {
		got = append(got, fmt.Sprintf("%s %s %s", w.At, w.Verb, w.Name))
	}
	// a at 0s+2s, b at 1s+2s, b again 2s after the user's patch at 5.5s
	// (not at 5s, when its own patch of 3s comes back: nothing to change).
	want := []string{"2s patch a", "3s patch b", "7.5s patch b"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("competitor writes %v, want %v", got, want)
	}
}

func TestHTTPAccessRunsTheSubjectThroughTheRESTHandler(t *testing.T) {
	p := plan(
		sim.Step{At: at(time.Second), Actor: "user", Op: "create", Object: cm("b")},
		sim.Step{At: at(2 * time.Second), Actor: "faults", Op: "break", Resource: "configmaps"},
		sim.Step{At: at(3 * time.Second), Actor: "user", Op: "delete", Resource: "configmaps", Namespace: "default", Name: "a"},
	)
	p.Access = "http"
	p.SubjectParams = map[string]string{"label": "seen"}
	tr := run(t, p)
	if tr.Outcome != "quiet" {
		t.Fatalf("outcome %s", tr.Outcome)
	}
	only(t, "break", faultsNamed(tr, sim.FaultWatchBreak))
	// The subject's label patches go through its REST client, under its name.
	patches := find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWrite && r.Actor == simtest.Name && r.Verb == "patch" })
	if len(patches) != 2 {
		t.Errorf("%d patches by the subject over HTTP, want 2 (a and b)", len(patches))
	}
	final := only(t, "final", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecFinal }))
	cache := only(t, "cache", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecCache }))
	if len(final.Objects) != 1 || !reflect.DeepEqual(final.Objects, cache.Objects) {
		t.Fatalf("final %+v\ncache %+v", final.Objects, cache.Objects)
	}
}
