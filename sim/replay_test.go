package sim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim"
)

func TestReplayOfAPlanFileAndOfATraceFile(t *testing.T) {
	dir := t.TempDir()
	p := plan(
		sim.Step{At: at(time.Second), Actor: "faults", Op: "break", Resource: "configmaps"},
		sim.Step{At: at(2 * time.Second), Actor: "user", Op: "create", Object: cm("b")},
	)
	p.Faults.DisconnectEvery = at(3 * time.Second)
	planFile := filepath.Join(dir, "plan.json")
	f, err := os.Create(planFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Save(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	recorded, err := sim.Replay(t, planFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(sim.FaultSchedule(recorded)) < 1 {
		t.Fatal("no fault recorded")
	}
	traceFile := filepath.Join(dir, "run.jsonl")
	if err := sim.WriteTraceFile(traceFile, recorded); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Replay(t, traceFile); err != nil {
		t.Fatalf("replay of a recorded trace: %v", err)
	}
	// A trace whose schedule the plan does not produce: the replay says
	// where it differs.
	for i := range recorded.Records {
		if recorded.Records[i].Kind == sim.RecFault {
			recorded.Records[i].At = at(1500 * time.Millisecond)
			break
		}
	}
	if err := sim.WriteTraceFile(traceFile, recorded); err != nil {
		t.Fatal(err)
	}
	_, err = sim.Replay(t, traceFile)
	if err == nil || !strings.Contains(err.Error(), "fault schedules differ at fault #0") || !strings.Contains(err.Error(), "a: at 1.5s fault fault=watch-break") {
		t.Fatalf("replay of a doctored trace: %v", err)
	}
}

func TestWaitQuietHoldsTheTimelineUntilQuiet(t *testing.T) {
	tr := run(t, plan(
		sim.Step{At: at(time.Second), Actor: "user", Op: "create", Object: cm("b")},
		sim.Step{At: at(time.Second), Actor: "user", Op: "wait-quiet"},
		sim.Step{At: at(2 * time.Second), Actor: "user", Op: "create", Object: cm("c")},
	))
	// Quiet from 1s (the handling of b) takes until 11s; the step at 2s
	// comes then.
	w := only(t, "write of c", find(tr, func(r sim.Record) bool { return r.Kind == sim.RecWrite && r.Name == "c" }))
	if w.At.D() != 11*time.Second {
		t.Errorf("c written at %s, want 11s (after the wait)", w.At)
	}
}
