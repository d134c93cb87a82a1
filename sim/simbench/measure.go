package simbench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cachelab/cachelab/fakeapi/fakeapibench"
	"github.com/cachelab/cachelab/fakeapi/store"
	"github.com/cachelab/cachelab/sim"
)

// Result is the cost of a batch of runs of one kind.
type Result struct {
	// Name says what ran: "direct", "http" or "floor".
	Name string
	// Runs is the number of runs.
	Runs int
	// CPU is the process's CPU time (user + system, every thread, the
	// garbage collector included) spent during the runs; Wall the wall
	// time; Virtual the virtual time the runs covered.
	CPU, Wall, Virtual time.Duration
	// HandlerCalls is the number of informer handler calls over all runs.
	HandlerCalls int
	// Turns is the number of turns the deterministic scheduler gave over
	// all scenario runs (their delivery schedules' length; 0 for the
	// baselines).
	Turns int
}

// RunsPerCPUSecond is Runs over CPU time (0 when CPU time is unknown).
func (r Result) RunsPerCPUSecond() float64 {
	if r.CPU <= 0 {
		return 0
	}
	return float64(r.Runs) / r.CPU.Seconds()
}

// VirtualPerWall is virtual time over wall time.
func (r Result) VirtualPerWall() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return r.Virtual.Seconds() / r.Wall.Seconds()
}

// TurnsPerRun is Turns over Runs.
func (r Result) TurnsPerRun() float64 {
	if r.Runs == 0 {
		return 0
	}
	return float64(r.Turns) / float64(r.Runs)
}

// CPUPerRun is the CPU time of one run.
func (r Result) CPUPerRun() time.Duration {
	if r.Runs == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Runs)
}

func (r *Result) add(cpu, wall, virtual time.Duration, handled int) {
	r.Runs++
	r.CPU += cpu
	r.Wall += wall
	r.Virtual += virtual
	r.HandlerCalls += handled
}

// Baselines are the runs Measure compares the scenario with, in the order
// of its results: "server" (ServerRun: fakeapi and the informer, no sim)
// and "floor" (FloorRun: the informer alone).
var Baselines = []string{"server", "floor"}

// Unscheduled is the suffix of an access path ("direct-unscheduled") that
// Measure runs without the deterministic scheduler (sim.WithoutScheduler),
// to measure what the scheduler costs.
const Unscheduled = "-unscheduled"

// HandWritten is the suffix of an access path ("direct-handwritten") that
// Measure runs with the registered strategies suspended
// (store.WithoutStrategies): in a binary with kubestrategies, the same
// path on the lab's hand-written rules, to measure what kube-apiserver's
// own strategies cost.
const HandWritten = "-handwritten"

// Measure runs n runs of the standard scenario on each access path of
// accesses ("direct", "http"), n runs of ServerRun and n runs of FloorRun,
// alternating one of each, and returns one Result per access path, then
// one per baseline (see Baselines). It must be called from a goroutine
// inside a synctest bubble. CPU and wall time are read from the operating
// system (the bubble's clock is virtual).
//
// Every scenario run is checked: it must end quiet with its 3 injected
// faults, or Measure returns an error.
func Measure(ctx context.Context, n int, accesses ...string) ([]Result, error) {
	results := make([]Result, len(accesses), len(accesses)+len(Baselines))
	plans := make([]*sim.Plan, len(accesses))
	for i, a := range accesses {
		results[i].Name = a
		plans[i] = StandardPlan(strings.TrimSuffix(strings.TrimSuffix(a, HandWritten), Unscheduled))
		if err := plans[i].Validate(); err != nil {
			return nil, err
		}
	}
	baselines := []func(context.Context) (time.Duration, int, error){ServerRun, FloorRun}
	for _, name := range Baselines {
		results = append(results, Result{Name: name})
	}
	for range n {
		for i, p := range plans {
			rctx := ctx
			if strings.HasSuffix(accesses[i], Unscheduled) {
				rctx = sim.WithoutScheduler(ctx)
			}
			cpu0, wall0 := ProcessCPU(), WallClock()
			var tr *sim.Trace
			var err error
			if strings.HasSuffix(accesses[i], HandWritten) {
				store.WithoutStrategies(func() { tr, err = sim.RunInBubble(rctx, p) })
			} else {
				tr, err = sim.RunInBubble(rctx, p)
			}
			cpu, wall := ProcessCPU()-cpu0, WallClock()-wall0
			if err != nil {
				return nil, fmt.Errorf("simbench: %s run: %w", p.Access, err)
			}
			if tr.Outcome != "quiet" {
				return nil, fmt.Errorf("simbench: %s run ended %q, want quiet", p.Access, tr.Outcome)
			}
			faults, handled := 0, 0
			for _, r := range tr.Records {
				switch r.Kind {
				case sim.RecFault:
					faults++
				case sim.RecHandler:
					handled++
				}
			}
			if faults != len(StandardBreaks) {
				return nil, fmt.Errorf("simbench: %s run injected %d faults, want %d", p.Access, faults, len(StandardBreaks))
			}
			results[i].add(cpu, wall, tr.End.D(), handled)
			results[i].Turns += len(tr.Schedule)
		}
		for j, run := range baselines {
			cpu0, wall0 := ProcessCPU(), WallClock()
			virtual, handled, err := run(ctx)
			cpu, wall := ProcessCPU()-cpu0, WallClock()-wall0
			if err != nil {
				return nil, fmt.Errorf("simbench: %s run: %w", Baselines[j], err)
			}
			results[len(accesses)+j].add(cpu, wall, virtual, handled)
		}
	}
	return results, nil
}

// ProcessCPU is the process's user + system CPU time so far (0 where the
// operating system does not say): fakeapibench's, which measures the
// informer workload the same way.
func ProcessCPU() time.Duration { return fakeapibench.ProcessCPU() }

// WallClock reads the system clock, which synctest does not virtualise:
// usable inside a bubble to keep a wall-clock budget.
func WallClock() time.Duration { return fakeapibench.WallClock() }
