package sim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/simtest"
)

// standardPlan is the benchmark's scenario: 50 ConfigMaps, 200 operations
// by the user over 30 virtual seconds (120 patches of the initial objects,
// 40 creates and 40 deletes of others), 3 broken watches, per-watch uniform
// latency, watched by one real informer (simtest/informer) on the direct
// path.
func standardPlan() *sim.Plan {
	p := &sim.Plan{Version: 1, Seed: 7, Subject: simtest.Name, Quiet: at(time.Second), Deadline: at(time.Minute),
		Faults: sim.FaultPolicy{Latency: sim.Distribution{Kind: "uniform", Min: at(time.Millisecond), Max: at(50 * time.Millisecond)}}}
	for i := range 50 {
		p.Objects = append(p.Objects, cm(fmt.Sprintf("cm%d", i)))
	}
	step := 30 * time.Second / 200
	for i := range 200 {
		s := sim.Step{At: at(time.Duration(i+1) * step), Actor: "user"}
		switch {
		case i%5 == 3:
			s.Op, s.Object = "create", cm(fmt.Sprintf("new%d", i))
		case i%5 == 4:
			s.Op, s.Resource, s.Namespace, s.Name = "delete", "configmaps", "default", fmt.Sprintf("new%d", i-1)
		default:
			s.Op, s.Resource, s.Namespace, s.Name = "patch", "configmaps", "default", fmt.Sprintf("cm%d", i%50)
			s.Patch = json.RawMessage(fmt.Sprintf(`{"data":{"i":"%d"}}`, i))
		}
		p.Steps = append(p.Steps, s)
	}
	for _, t := range []time.Duration{7500 * time.Millisecond, 15 * time.Second, 22500 * time.Millisecond} {
		p.Steps = append(p.Steps, sim.Step{At: at(t), Actor: "faults", Op: "break", Resource: "configmaps"})
	}
	return p
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStandardScenario runs standardPlan b.N times in one bubble and
// reports runs per CPU-second (all threads) and virtual time per wall time.
func BenchmarkStandardScenario(b *testing.B) { benchmarkScenario(b, standardPlan()) }

// BenchmarkStandardScenarioHTTP is the same scenario with the subject on
// the HTTP path (real REST clients over fakeapi/http's in-memory pipe).
func BenchmarkStandardScenarioHTTP(b *testing.B) {
	p := standardPlan()
	p.Access = "http"
	benchmarkScenario(b, p)
}

func benchmarkScenario(b *testing.B, p *sim.Plan) {
	if err := p.Validate(); err != nil {
		b.Fatal(err)
	}
	var virtual time.Duration
	var faults, handled int
	// Timing happens outside the bubble: inside it, time.Now is virtual.
	b.ResetTimer()
	cpu0, wall0 := cpuTime(), time.Now()
	sim.Bubble(b, func(t *testing.T) {
		ctx := context.Background()
		for range b.N {
			tr, err := sim.RunInBubble(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Outcome != "quiet" {
				t.Fatalf("outcome %s", tr.Outcome)
			}
			virtual += tr.End.D()
			for _, r := range tr.Records {
				switch r.Kind {
				case sim.RecFault:
					faults++
				case sim.RecHandler:
					handled++
				}
			}
		}
	})
	wall, cpu := time.Since(wall0), cpuTime()-cpu0
	b.StopTimer()
	if faults != 3*b.N {
		b.Fatalf("%d faults in %d runs, want 3 per run", faults, b.N)
	}
	b.ReportMetric(float64(b.N)/cpu.Seconds(), "runs/cpu-s")
	b.ReportMetric(virtual.Seconds()/wall.Seconds(), "virtual/wall")
	b.ReportMetric(float64(handled)/float64(b.N), "handler-calls/run")
}
