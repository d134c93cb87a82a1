package statefulset_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/upstream/statefulset"
)

// epoch is the virtual clock's start in a synctest bubble.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// updatePlan is TestRecreateStatefulSetUpdate's actions
// (test/integration/statefulset, kubernetes#141250) with update strategy
// strategy: a StatefulSet of 3 created at 1 s, its Pods made Ready by
// the kubelet 500 ms after it sees them, its image updated at 10 s; every
// watch event latency late.
func updatePlan(subject, strategy string, latency time.Duration) *sim.Plan {
	p := &sim.Plan{
		Version: sim.PlanVersion, Name: fmt.Sprintf("%s-update-%s", strategy, latency), Seed: 1, Subject: subject,
		Deadline: sim.Duration(3 * time.Minute), Quiet: sim.Duration(45 * time.Second),
		Kubelet: &sim.Kubelet{ReadyAfter: sim.Duration(500 * time.Millisecond)},
		Faults:  sim.FaultPolicy{RequestLatency: sim.Distribution{Kind: "fixed", Max: sim.Duration(time.Millisecond)}},
		Steps: []sim.Step{
			{At: sim.Duration(time.Second), Actor: "user", Op: "create", Object: json.RawMessage(fmt.Sprintf(
				`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":3,"serviceName":"web",`+
					`"updateStrategy":{"type":"%s"},"selector":{"matchLabels":{"app":"web"}},`+
					`"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"busybox:1.35"}]}}}}`, strategy))},
			{At: sim.Duration(10 * time.Second), Actor: "user", Op: "patch", Resource: "statefulsets", Namespace: "default", Name: "web",
				Patch: json.RawMessage(`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox:1.36"}]}}}}`)},
		},
	}
	if latency > 0 {
		p.Faults.Latency = sim.Distribution{Kind: "fixed", Max: sim.Duration(latency)}
	}
	return p
}

// settle runs plan p on the controller (gate) and returns when, after the
// update at 10 s, the desired state last began to hold (virtual time from
// the run's start), or -1 if it did not hold at the end; and the failures.
func settle(t *testing.T, gate bool, strategy string, latency time.Duration) (time.Duration, []*cachelabtest.Failure) {
	c := statefulset.Controller(gate)
	desired := c.Desired
	var held bool
	var since time.Duration = -1
	c.Desired = func(s *cachelabtest.State) error {
		err := desired(s)
		now := time.Now().Sub(epoch)
		switch {
		case err == nil && !held:
			held, since = true, now
		case err != nil:
			held, since = false, -1
		}
		return err
	}
	failures := cachelabtest.Catch(t, c, cachelabtest.These(updatePlan(c.Name, strategy, latency)))
	return since, failures
}

// TestIssue141250SlowUpdateUnderTheGate holds the measurement of
// docs/upstream-findings/141250.md. kubernetes#141250's test uses the
// Recreate strategy, which the fake API server refuses (kube-apiserver's
// StatefulSetRecreateStrategy gate off), so this runs its actions with
// RollingUpdate: the update's sync writes status, and with the gate on
// every next sync waits (EnsureReady, requeued with backoff) until the
// informer has seen that write. With every watch event late by the
// latency, the gate-on controller must still finish, later the later its
// events: settled 1.514 s after the update with no latency, 32.516 s with
// 3 s (measured; logged). Gate off is logged, not asserted (with 200 ms it
// deleted and recreated web-2 until the deadline: see the story).
func TestIssue141250SlowUpdateUnderTheGate(t *testing.T) {
	var last time.Duration
	for _, latency := range []time.Duration{0, 200 * time.Millisecond, time.Second, 3 * time.Second} {
		at, failures := settle(t, true, "RollingUpdate", latency)
		for _, f := range failures {
			t.Errorf("latency %v, gate on: %v failed:\n%s", latency, f.Failed, f.Report)
		}
		if at < 0 || at <= last {
			t.Errorf("latency %v, gate on: settled at %v, want a time after the update and after %v (the lower latency's)", latency, at, last)
		}
		last = at
		t.Logf("latency %v, gate on: settled %v after the update at 10s", latency, at-10*time.Second)
	}
	at, failures := settle(t, false, "RollingUpdate", 200*time.Millisecond)
	var failed []string
	for _, f := range failures {
		for _, v := range f.Failed {
			failed = append(failed, v.Invariant)
		}
	}
	t.Logf("latency 200ms, gate off: settled at %v (-1: not at the end); failed %v", at, failed)
}
