package layers

import (
	"bytes"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/cachelab/cachelab/fakeapi/fakeapibench"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/simbench"
)

// stack builds a CPU profile sample of value ms milliseconds whose stack is
// frames, leaf first, each "name@file".
func stack(p *profile.Profile, ms int64, frames ...string) {
	var locs []*profile.Location
	for _, f := range frames {
		name, file, _ := strings.Cut(f, "@")
		fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, Filename: file}
		p.Function = append(p.Function, fn)
		loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
		p.Location = append(p.Location, loc)
		locs = append(locs, loc)
	}
	p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{1, ms * int64(time.Millisecond)}})
}

func cpuProfile() *profile.Profile {
	return &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}}
}

// A sample belongs to the innermost frame of a layer: library frames (JSON,
// the allocator, client-go's watch encoder under the fake's handler) count
// for their caller, GC workers and stacks with no layer frame are the
// runtime's.
func TestBreakdownGivesEachSampleToItsInnermostLayer(t *testing.T) {
	p := cpuProfile()
	stack(p, 40, "sigs.k8s.io/json.Unmarshal@x.go", lab+"fakeapi/store.(*resState).decode@/r/fakeapi/store/store.go",
		lab+"fakeapi.(*Client).write@/r/fakeapi/client.go", lab+"sim.(*run).play@/r/sim/run.go")
	stack(p, 30, "runtime.mallocgc@malloc.go", lab+"sim.(*recorder).addLocked@/r/sim/recorder.go",
		lab+"fakeapi.(*Server).observeLocked@/r/fakeapi/server.go")
	stack(p, 20, "runtime.scanobject@mgc.go", "runtime.gcBgMarkWorker@mgc.go")
	stack(p, 10, "runtime.mcall@proc.go")
	stack(p, 5, "encoding/json.Unmarshal@x.go", "k8s.io/client-go/rest.Result.Into@request.go", lab+"sim/simtest.(*Subject).run@/r/sim/simtest/s.go")
	stack(p, 5, "runtime.selectgo@select.go", lab+"sim.(*scheduler).turn@/r/sim/sched.go", lab+"sim.(*recorder).Record@/r/sim/recorder.go")
	stack(p, 5, "encoding/json.Marshal@x.go", "k8s.io/client-go/rest/watch.(*Encoder).Encode@encoder.go", lab+"fakeapi/http.(*handler).serveWatch@/r/fakeapi/http/watch.go")
	shares, total, err := Breakdown(p)
	if err != nil {
		t.Fatal(err)
	}
	if total != 115*time.Millisecond {
		t.Errorf("total %v, want 115ms", total)
	}
	want := map[string]time.Duration{Store: 40 * time.Millisecond, SimRecorder: 30 * time.Millisecond, GCWorkers: 20 * time.Millisecond,
		RuntimeNoLayers: 10 * time.Millisecond, REST: 5 * time.Millisecond, SimScheduler: 5 * time.Millisecond,
		HTTPHandler: 5 * time.Millisecond}
	got := map[string]time.Duration{}
	for _, s := range shares {
		got[s.Layer] = s.CPU
	}
	if len(got) != len(want) {
		t.Errorf("layers %v, want %v", got, want)
	}
	for l, v := range want {
		if got[l] != v {
			t.Errorf("%s: %v, want %v", l, got[l], v)
		}
	}
	if shares[0].Layer != Store || shares[0].Fraction < 0.34 || shares[0].Fraction > 0.35 {
		t.Errorf("first share %+v, want the store's 40 of 115 ms", shares[0])
	}
}

func TestBreakdownRefusesAProfileWithoutCPU(t *testing.T) {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}}}
	if _, _, err := Breakdown(p); err == nil || !strings.Contains(err.Error(), "not a CPU profile") {
		t.Errorf("error %v, want 'not a CPU profile'", err)
	}
}

// profiled runs f under the CPU profiler and breaks the profile down.
func profiled(t *testing.T, name string, per int, unit string, f func(t *testing.T)) Column {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Fatalf("%s: %v (run without -cpuprofile)", name, err)
	}
	sim.Bubble(t, f)
	pprof.StopCPUProfile()
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	shares, total, err := Breakdown(p)
	if err != nil {
		t.Fatal(err)
	}
	return Column{Name: name, Shares: shares, Total: total, Per: per, Unit: unit}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// TestLayerBreakdown profiles the standard scenario on the direct and HTTP
// paths and its floor and server baselines (runs of each, one kind at a
// time, CACHELAB_LAYERS_RUNS scales them), then the informer-throughput
// workload's paths (20,000 updates, CACHELAB_LAYERS_UPDATE_RUNS runs each),
// and prints each kind's CPU per run (per event for the workload) by layer.
// Skipped unless CACHELAB_LAYERS=1 (about 30 s of CPU).
func TestLayerBreakdown(t *testing.T) {
	if os.Getenv("CACHELAB_LAYERS") != "1" {
		t.Skip("set CACHELAB_LAYERS=1: profiles about 30 s of runs")
	}
	runs := envInt("CACHELAB_LAYERS_RUNS", 200)
	loop := func(n int, run func(t *testing.T)) func(t *testing.T) {
		return func(t *testing.T) {
			for range n {
				run(t)
			}
		}
	}
	scenario := func(access string) func(t *testing.T) {
		p := simbench.StandardPlan(access)
		return func(t *testing.T) {
			tr, err := sim.RunInBubble(t.Context(), p)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Outcome != "quiet" {
				t.Fatalf("%s run ended %q, want quiet", access, tr.Outcome)
			}
		}
	}
	baseline := func(run func(t *testing.T) error) func(t *testing.T) {
		return func(t *testing.T) {
			if err := run(t); err != nil {
				t.Fatal(err)
			}
		}
	}
	floor := baseline(func(t *testing.T) error { _, _, err := simbench.FloorRun(t.Context()); return err })
	server := baseline(func(t *testing.T) error { _, _, err := simbench.ServerRun(t.Context()); return err })
	cols := []Column{
		profiled(t, "scenario direct", runs, "run", loop(runs, scenario("direct"))),
		profiled(t, "scenario http", runs/2, "run", loop(runs/2, scenario("http"))),
		profiled(t, "server", 2*runs, "run", loop(2*runs, server)),
		profiled(t, "floor", 4*runs, "run", loop(4*runs, floor)),
	}
	var b strings.Builder
	if err := Table(&b, cols); err != nil {
		t.Fatal(err)
	}
	t.Logf("the standard scenario, CPU per run by layer:\n%s", b.String())

	updateRuns := envInt("CACHELAB_LAYERS_UPDATE_RUNS", 3)
	var ucols []Column
	for _, path := range fakeapibench.Paths {
		ucols = append(ucols, profiled(t, path, updateRuns*fakeapibench.Updates, "event", func(t *testing.T) {
			for range updateRuns {
				if _, err := fakeapibench.Run(t.Context(), path, fakeapibench.Updates); err != nil {
					t.Fatal(err)
				}
			}
		}))
	}
	b.Reset()
	if err := Table(&b, ucols); err != nil {
		t.Fatal(err)
	}
	t.Logf("the informer-throughput workload (%d updates), CPU per event by layer:\n%s", fakeapibench.Updates, b.String())
}
