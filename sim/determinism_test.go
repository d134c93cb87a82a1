//go:debug randseednop=0

package sim_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim"
)

// determinismPlan mixes timeline faults with every kind of random fault.
// The subject only reads: its requests are the reflector's lists and
// watches, made one after another. (A subject's writes come in the order
// it reconciles, which after a relist follows client-go's randomized map
// order: faults drawn for them land at times that vary from run to run.)
func determinismPlan() *sim.Plan {
	p := plan()
	p.Seed = 20261122
	for i := range 30 {
		p.Steps = append(p.Steps, sim.Step{At: at(time.Duration(i+1) * 500 * time.Millisecond), Actor: "user", Op: "create", Object: cm(fmt.Sprintf("o%d", i))})
	}
	p.Steps = append(p.Steps,
		sim.Step{At: at(3 * time.Second), Actor: "faults", Op: "break", Resource: "configmaps"},
		sim.Step{At: at(6 * time.Second), Actor: "faults", Op: "hold", Resource: "configmaps", For: at(time.Second)},
		sim.Step{At: at(9 * time.Second), Actor: "faults", Op: "fail-next", Code: 503, Verb: "create", Target: "user"},
		sim.Step{At: at(11 * time.Second), Actor: "controller", Op: "crash"},
		sim.Step{At: at(12 * time.Second), Actor: "controller", Op: "restart"},
	)
	p.Faults = sim.FaultPolicy{
		Latency:         sim.Distribution{Kind: "uniform", Min: at(time.Millisecond), Max: at(300 * time.Millisecond)},
		DisconnectEvery: at(5 * time.Second),
		ExpireOnRewatch: 0.3,
		ErrorRate:       0.3,
	}
	return p
}

func TestSamePlanGivesTheSameFaultScheduleHundredTimes(t *testing.T) {
	p := determinismPlan()
	first := run(t, p)
	schedule := sim.FaultSchedule(first)
	kinds := map[string]bool{}
	for _, r := range schedule {
		kinds[r.Fault] = true
	}
	if len(schedule) < 5 || !kinds[sim.FaultWatchBreak] || !kinds["fail-next-503"] || !kinds[sim.FaultHold] {
		t.Fatalf("schedule too thin to test determinism (%d faults: %v)", len(schedule), kinds)
	}
	for i := range 99 {
		tr, err := sim.Run(t, p)
		if err != nil {
			t.Fatal(err)
		}
		if d := sim.DiffSchedules(first, tr); d != "" {
			t.Fatalf("run %d: %s", i+2, d)
		}
	}
}

func TestDiffSchedulesSaysWhereSchedulesDiffer(t *testing.T) {
	a := &sim.Trace{Records: []sim.Record{
		{Kind: sim.RecFault, At: at(time.Second), Fault: sim.FaultWatchBreak, Watcher: "x/pods#1"},
		{Kind: sim.RecHandler, At: at(time.Second)},
		{Kind: sim.RecFault, At: at(2 * time.Second), Fault: "error-500", Target: "x", Verb: "list"},
	}}
	b := &sim.Trace{Records: []sim.Record{
		{Kind: sim.RecFault, At: at(time.Second), Fault: sim.FaultWatchBreak, Watcher: "x/pods#1"},
		{Kind: sim.RecFault, At: at(3 * time.Second), Fault: "error-500", Target: "x", Verb: "list"},
	}}
	if d := sim.DiffSchedules(a, a); d != "" {
		t.Fatalf("a trace differs from itself: %s", d)
	}
	want := "fault schedules differ at fault #1 (of 2 and 2):\n  a: at 2s fault fault=error-500 target=x verb=list\n  b: at 3s fault fault=error-500 target=x verb=list"
	if d := sim.DiffSchedules(a, b); d != want {
		t.Fatalf("diff:\n%s\nwant:\n%s", d, want)
	}
	b.Records = b.Records[:1]
	if d := sim.DiffSchedules(a, b); d != "fault schedules differ: a has 1 more faults, from #1: at 2s fault fault=error-500 target=x verb=list" {
		t.Fatalf("diff: %s", d)
	}
}
