package sim_test

import (
	"testing"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/simbench"
)

// BenchmarkStandardScenario runs the standard scenario (simbench: 50
// ConfigMaps, 200 operations over 30 virtual seconds, 3 broken watches,
// per-watch latency, one real informer, direct path) b.N times, and the
// floor (simbench.FloorRun: the same timeline into the same real informer
// and workqueue with no fakeapi, no fault policy and no recorder) and the
// server baseline (simbench.ServerRun: the same through fakeapi, without
// the sim) b.N times each, alternating, in one bubble. It reports the
// scenario's runs per CPU-second (all threads) and virtual time per wall
// time, the baselines' runs per CPU-second, and the ratios (x_vs_floor:
// 1.0 would mean the lab costs nothing beyond client-go; x_vs_server: 1.0
// would mean the sim costs nothing beyond the fake server).
func BenchmarkStandardScenario(b *testing.B) { benchmarkScenario(b, "direct") }

// BenchmarkStandardScenarioHTTP is the same scenario with the subject on
// the HTTP path (real REST clients over fakeapi/http's in-memory pipe).
func BenchmarkStandardScenarioHTTP(b *testing.B) { benchmarkScenario(b, "http") }

func benchmarkScenario(b *testing.B, access string) {
	var res []simbench.Result
	var err error
	sim.Bubble(b, func(t *testing.T) {
		res, err = simbench.Measure(t.Context(), b.N, access)
	})
	if err != nil {
		b.Fatal(err)
	}
	run, server, floor := res[0], res[1], res[2]
	b.ReportMetric(run.RunsPerCPUSecond(), "runs/cpu-s")
	b.ReportMetric(run.VirtualPerWall(), "virtual/wall")
	b.ReportMetric(server.RunsPerCPUSecond(), "server-runs/cpu-s")
	b.ReportMetric(floor.RunsPerCPUSecond(), "floor-runs/cpu-s")
	b.ReportMetric(run.RunsPerCPUSecond()/server.RunsPerCPUSecond(), "x_vs_server")
	b.ReportMetric(run.RunsPerCPUSecond()/floor.RunsPerCPUSecond(), "x_vs_floor")
	b.ReportMetric(float64(run.HandlerCalls)/float64(run.Runs), "handler-calls/run")
}
