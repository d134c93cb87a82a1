package bellerophon_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/subjects/bellerophon"
	"github.com/cachelab/cachelab/subjects/bellerophon/apis/lab/v1alpha1"
)

// These tests run Bellerophon and its mutants under sim.Run (a synctest
// bubble: every duration below is virtual) and read only the trace.

func at(d time.Duration) sim.Duration { return sim.Duration(d) }

// bphJSON is a Bellerophon in namespace default.
func bphJSON(name string, replicas int32, version string, config map[string]string) json.RawMessage {
	b := v1alpha1.Bellerophon{
		Spec: v1alpha1.BellerophonSpec{Replicas: replicas, Version: version, Config: config},
	}
	b.APIVersion, b.Kind = v1alpha1.SchemeGroupVersion.String(), v1alpha1.Kind
	b.Namespace, b.Name = "default", name
	raw, err := json.Marshal(b)
	if err != nil {
		panic(err)
	}
	return raw
}

func patchStep(t time.Duration, patch string) sim.Step {
	return sim.Step{At: at(t), Actor: "user", Op: "patch", Resource: "bellerophons", Namespace: "default", Name: "a", Patch: json.RawMessage(patch)}
}

// lifecycleGap separates the lifecycle's steps: more than a reflector's
// largest backoff (30s) plus the kubelet's readiness delay, so that the
// controller converges between two steps even when a watch waits to
// reconnect.
const lifecycleGap = time.Minute

// lifecyclePlan: a with 3 replicas, then scale to 5, version 2, a config
// change, and delete, lifecycleGap apart.
func lifecyclePlan(subject string) *sim.Plan {
	return &sim.Plan{
		Version: sim.PlanVersion, Name: "bellerophon-lifecycle", Seed: 7, Subject: subject,
		Objects: []json.RawMessage{bphJSON("a", 3, "1", map[string]string{"mode": "fast"})},
		Kubelet: &sim.Kubelet{ReadyAfter: at(time.Second)},
		Steps: []sim.Step{
			patchStep(1*lifecycleGap, `{"spec":{"replicas":5}}`),
			patchStep(2*lifecycleGap, `{"spec":{"version":"2"}}`),
			patchStep(3*lifecycleGap, `{"spec":{"config":{"mode":"safe","level":"3"}}}`),
			{At: at(4 * lifecycleGap), Actor: "user", Op: "delete", Resource: "bellerophons", Namespace: "default", Name: "a"},
		},
		Deadline: at(8 * time.Minute),
		// Longer than the reflector's largest backoff (30s): a run is not
		// "quiet" while a watch waits to reconnect.
		Quiet: at(45 * time.Second),
	}
}

func run(t *testing.T, p *sim.Plan) *sim.Trace {
	t.Helper()
	tr, err := sim.Run(t, p)
	if err != nil {
		t.Fatalf("sim.Run(%s on %s): %v", p.Name, p.Subject, err)
	}
	if os.Getenv("CACHELAB_DUMP") != "" {
		t.Cleanup(func() {
			if t.Failed() || os.Getenv("CACHELAB_DUMP") == "all" {
				dump(t, tr)
			}
		})
	}
	return tr
}

func dump(t *testing.T, tr *sim.Trace) {
	for _, r := range tr.Records {
		switch r.Kind {
		case sim.RecSent, sim.RecDelivered, sim.RecQueue:
			continue
		}
		t.Logf("%4d %9s %-9s %-30s %-13s %-6s %s %s/%s uid=%s rv=%d owner=%s code=%d %s %s %v %s", r.Pos, r.At, r.Kind, r.Actor, r.Verb, r.EventType,
			r.Resource, r.Namespace, r.Name, r.UID, r.RV, r.Owner, r.Code, r.Op, r.Signal, r.Value, r.Detail+r.Result)
	}
}

// writes returns the server writes by actor of verb on resource.
func writes(tr *sim.Trace, actor, verb, resource string) []sim.Record {
	var out []sim.Record
	for _, r := range tr.Records {
		if r.Kind == sim.RecWrite && r.Actor == actor && r.Verb == verb && r.Resource == resource {
			out = append(out, r)
		}
	}
	return out
}

// desiredBefore returns the last RecDesired before t (ok false if none).
func desiredBefore(tr *sim.Trace, t time.Duration) (sim.Record, bool) {
	var last sim.Record
	found := false
	for _, r := range tr.Records {
		if r.At.D() >= t {
			break
		}
		if r.Kind == sim.RecDesired {
			last, found = r, true
		}
	}
	return last, found
}

// final returns the final state's objects of resource.
func final(tr *sim.Trace, resource string) []sim.ObjectState {
	var out []sim.ObjectState
	for _, r := range tr.Records {
		if r.Kind == sim.RecFinal {
			for _, o := range r.Objects {
				if o.Resource == resource {
					out = append(out, o)
				}
			}
		}
	}
	return out
}

// lastObject decodes the last written state of bellerophon a.
func lastObject(t *testing.T, tr *sim.Trace) *v1alpha1.Bellerophon {
	t.Helper()
	var raw json.RawMessage
	for _, r := range tr.Records {
		if r.Kind == sim.RecWrite && r.Resource == bellerophon.ResourceBellerophons && r.Name == "a" {
			raw = r.Object
		}
	}
	b := &v1alpha1.Bellerophon{}
	if err := json.Unmarshal(raw, b); err != nil {
		t.Fatalf("decoding the last write of a: %v", err)
	}
	return b
}

// livePodsMax is the largest number of live Pods owned by one UID at any
// moment of the trace, from the server's writes.
func livePodsMax(tr *sim.Trace) (int, string) {
	live := map[string]map[string]bool{} // owner -> pod names
	best, who := 0, ""
	for _, r := range tr.Records {
		if r.Kind != sim.RecWrite || r.Resource != "pods" || r.Owner == "" {
			continue
		}
		if live[r.Owner] == nil {
			live[r.Owner] = map[string]bool{}
		}
		switch r.Verb {
		case "create":
			live[r.Owner][r.Name] = true
		case "delete":
			delete(live[r.Owner], r.Name)
		}
		if n := len(live[r.Owner]); n > best {
			best, who = n, fmt.Sprintf("owner %s at %s", r.Owner, r.At)
		}
	}
	return best, who
}

func checkLifecycle(t *testing.T, tr *sim.Trace, subject string) {
	t.Helper()
	// Before each step the world had converged.
	for i := range 4 {
		step := time.Duration(i+1) * lifecycleGap
		d, ok := desiredBefore(tr, step)
		if !ok || !d.Value {
			t.Errorf("before step %d at %s: desired = %v (%s), want true", i, step, d.Value, d.Detail)
		}
	}
	checkEnd(t, tr, subject)
}

// checkEnd checks the lifecycle's Pod creates, the live Pods at every
// moment and the clean-up after the delete.
func checkEnd(t *testing.T, tr *sim.Trace, subject string) {
	t.Helper()
	// 3 Pods, 2 more, 5 of version 2: 10 creates, never a duplicate.
	if n := len(writes(tr, subject, "create", "pods")); n != 10 {
		t.Errorf("%d Pod creates, want 10 (3, +2 on scale, 5 on the version change)", n)
	}
	if n, who := livePodsMax(tr); n > 5 {
		t.Errorf("%d live Pods of one Bellerophon at once (%s), want at most 5", n, who)
	}
	for _, res := range []string{bellerophon.ResourceBellerophons, "pods", "configmaps"} {
		if left := final(tr, res); len(left) != 0 {
			t.Errorf("after the delete, %s left on the server: %+v", res, left)
		}
	}
	if tr.Outcome != "quiet" {
		t.Errorf("outcome %q, want quiet", tr.Outcome)
	}
}

func TestConvergesThroughScaleVersionConfigAndDeleteWithoutFaults(t *testing.T) {
	p := lifecyclePlan(bellerophon.SubjectName)
	checkLifecycle(t, run(t, p), p.Subject)
}

// TestConvergesUnderLatencyAndDisconnects plays the lifecycle with watch
// latency, disconnects every few seconds and 410s on re-watch until 3m30s,
// then checks the controller converged once the faults stopped, never had
// more live Pods than wanted, and cleaned up after the delete. (While the
// faults last, a reflector can back off for up to a minute, so the world
// need not converge between two steps.)
func TestConvergesUnderLatencyAndDisconnects(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			p := lifecyclePlan(bellerophon.SubjectName)
			p.Name, p.Seed = "bellerophon-lifecycle-faults", seed
			p.Steps[3].At = at(6 * time.Minute) // the delete, well after the faults
			p.Deadline = at(9 * time.Minute)
			p.Faults = sim.FaultPolicy{
				Latency:         sim.Distribution{Kind: "uniform", Min: at(10 * time.Millisecond), Max: at(800 * time.Millisecond)},
				DisconnectEvery: at(4 * time.Second),
				ExpireOnRewatch: 0.3,
				Until:           at(3*time.Minute + 30*time.Second),
			}
			tr := run(t, p)
			faults := 0
			for _, r := range tr.Records {
				if r.Kind == sim.RecFault {
					faults++
				}
			}
			if faults < 20 {
				t.Fatalf("only %d faults injected: the plan does not exercise latency and disconnects", faults)
			}
			if d, ok := desiredBefore(tr, 6*time.Minute); !ok || !d.Value {
				t.Errorf("before the delete, after the faults: desired = %v (%s), want true", d.Value, d.Detail)
			}
			checkEnd(t, tr, p.Subject)
		})
	}
}

// TestInvalidBellerophonIsRejectedByTheServerUnderTheSim creates a
// Bellerophon with negative replicas and one with an empty version through
// a plan: the server answers 422 (the CRD's Validate, through sim's
// adapter), nothing is written, and the controller creates nothing.
func TestInvalidBellerophonIsRejectedByTheServerUnderTheSim(t *testing.T) {
	p := basePlan("invalid-specs", bellerophon.SubjectName)
	p.Steps = []sim.Step{
		{At: at(time.Second), Actor: "user", Op: "create", Object: bphJSON("neg", -1, "1", nil)},
		{At: at(2 * time.Second), Actor: "user", Op: "create", Object: bphJSON("noversion", 1, "", nil)},
	}
	tr := run(t, p)
	var codes []int
	notes := map[string]bool{}
	for _, r := range tr.Records {
		if r.Kind == sim.RecRequest && r.Actor == "user" && r.Verb == "create" {
			codes = append(codes, r.Code)
		}
		if r.Kind == sim.RecNote && r.Actor == "user" {
			notes[r.Detail] = true
		}
		if r.Kind == sim.RecWrite && r.Resource != "events" {
			t.Errorf("write %s %s/%s: an invalid object reached the store or the controller acted", r.Verb, r.Resource, r.Name)
		}
	}
	if len(codes) != 2 || codes[0] != 422 || codes[1] != 422 {
		t.Errorf("answers to the two creates = %v, want [422 422]", codes)
	}
	var sawReplicas, sawVersion bool
	for n := range notes {
		sawReplicas = sawReplicas || strings.Contains(n, "spec.replicas")
		sawVersion = sawVersion || strings.Contains(n, "spec.version")
	}
	if !sawReplicas || !sawVersion {
		t.Errorf("step failure notes %v, want one naming spec.replicas and one naming spec.version", notes)
	}
}

// TestSignalsAreRecordedAndWorkersWaitForTheHandlers reads the sync
// signals of a restart with a slow handler: the correct controller starts
// its workers only after every registration synced, while the
// informer-synced mutant starts them when the stores are full and the
// handlers still lag.
func TestSignalsAreRecordedAndWorkersWaitForTheHandlers(t *testing.T) {
	for _, tc := range []struct {
		subject string
		waits   string
	}{
		{bellerophon.SubjectName, bellerophon.SignalHandlerSynced},
		{bellerophon.SubjectName + "/" + string(bellerophon.InformerSynced), bellerophon.SignalInformerSynced},
	} {
		t.Run(tc.subject, func(t *testing.T) {
			p := basePlan("restart-with-a-slow-handler", tc.subject, bphJSON("a", 3, "1", nil))
			p.SubjectParams = map[string]string{bellerophon.ParamHandlerDelay: "50ms"}
			p.Steps = []sim.Step{
				{At: at(10 * time.Second), Actor: "controller", Op: "crash"},
				{At: at(11 * time.Second), Actor: "controller", Op: "restart"},
			}
			tr := run(t, p)
			// After the restart: when did each aggregate signal flip, and
			// when did the workers start?
			flip := map[string]time.Duration{}
			var start time.Duration
			for _, r := range tr.Records {
				if r.At.D() < 11*time.Second || r.Actor != tc.subject {
					continue
				}
				if r.Kind == sim.RecSignal && r.Resource == "" && r.Value {
					if _, seen := flip[r.Signal]; !seen {
						flip[r.Signal] = r.At.D()
					}
				}
				if r.Kind == sim.RecNote && strings.HasPrefix(r.Detail, "starting") && start == 0 {
					start = r.At.D()
					if !strings.Contains(r.Detail, tc.waits) {
						t.Errorf("workers started with %q, want after %s", r.Detail, tc.waits)
					}
				}
			}
			inf, okI := flip[bellerophon.SignalInformerSynced]
			hdl, okH := flip[bellerophon.SignalHandlerSynced]
			if !okI || !okH || start == 0 {
				t.Fatalf("after the restart: informer-synced at %v (%v), handler-synced at %v (%v), workers at %v; want all recorded", inf, okI, hdl, okH, start)
			}
			// 3 Pods x 50ms in the Pod handler: the handlers lag the stores.
			if hdl-inf < 100*time.Millisecond {
				t.Errorf("handler-synced %v after informer-synced, want at least 100ms with a 50ms handler and 3 Pods", hdl-inf)
			}
			want := hdl
			if tc.waits == bellerophon.SignalInformerSynced {
				want = inf
			}
			if start != want {
				t.Errorf("workers started at %v, want at %s (%v)", start, tc.waits, want)
			}
			if _, ok := flip[bellerophon.SignalRVSynced]; !ok {
				t.Errorf("rv-synced never recorded true after the restart")
			}
		})
	}
}

// TestBackupStoreOutlivesARestart crashes and restarts the controller, then
// deletes a: the new process finds the backup the old one took (it does not
// take it again) and the finalizer removes it.
func TestBackupStoreOutlivesARestart(t *testing.T) {
	p := basePlan("restart-then-delete", bellerophon.SubjectName, bphJSON("a", 1, "1", nil))
	p.Steps = []sim.Step{
		{At: at(10 * time.Second), Actor: "controller", Op: "crash"},
		{At: at(11 * time.Second), Actor: "controller", Op: "restart"},
		user(20*time.Second, "delete", "bellerophons", "a"),
	}
	tr := run(t, p)
	var before, between, after int
	var last []sim.ObjectState
	for _, r := range tr.Records {
		if r.Kind != sim.RecCache || r.Handler != bellerophon.BackupCacheName {
			continue
		}
		switch {
		case r.At.D() < 10*time.Second:
			before++
		case r.At.D() < 20*time.Second:
			between++
		default:
			after++
		}
		last = r.Objects
	}
	if before != 1 || between != 0 || after != 1 || len(last) != 0 {
		t.Errorf("backup-store snapshots: %d before the crash, %d between restart and delete, %d after; last %+v; want 1, 0 (the restarted process shares the run's store), 1 and empty",
			before, between, after, last)
	}
	if left := final(tr, bellerophon.ResourceBellerophons); len(left) != 0 {
		t.Errorf("a left on the server: %+v", left)
	}
}
