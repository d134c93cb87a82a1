package envtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/fakeapi/fakeapibench"
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/simbench"
	"github.com/cachelab/cachelab/sim/simtest"
)

// TestEnvtestSideBySide is `make bench-envtest`: the standard scenario and
// three random plans of the simtest/informer controller (a real
// SharedIndexInformer, workqueue and worker), each played on the real
// server (envtest), in the lab without faults and in the lab with them,
// CACHELAB_ENVTEST_REPS times (default 5) in turn; it prints the means
// as a Markdown table (means, not medians: the server's CPU comes from
// /proc in 10 ms ticks, which only a sum over plays resolves for a small
// plan). It needs a real server: CACHELAB_ENVTEST_BENCH=1
// and the env file of `make real-apiserver-start` (REALSERVER_ENV, default
// /tmp/realserver.env).
func TestEnvtestSideBySide(t *testing.T) {
	if os.Getenv("CACHELAB_ENVTEST_BENCH") == "" {
		t.Skip("set CACHELAB_ENVTEST_BENCH=1 and start a real server (make bench-envtest does both)")
	}
	envFile := os.Getenv("REALSERVER_ENV")
	if envFile == "" {
		envFile = "/tmp/realserver.env"
	}
	srv, err := FromEnvFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	reps := 5
	if v := os.Getenv("CACHELAB_ENVTEST_REPS"); v != "" {
		if reps, err = strconv.Atoi(v); err != nil || reps < 1 {
			t.Fatalf("CACHELAB_ENVTEST_REPS=%q: want a positive number", v)
		}
	}
	plans := []*sim.Plan{simbench.StandardPlan("direct")}
	for seed := uint64(1); seed <= 3; seed++ {
		p := scenarios.Random(seed, simtest.Name)
		plans = append(plans, &p)
	}
	// One unmeasured warm-up of each side: the server's caches, discovery
	// and this process's first allocations are not a plan's cost.
	if _, err := srv.Replay(t.Context(), plans[0], "bench-warmup", time.Minute); err != nil {
		t.Fatal(err)
	}
	labRun(t, plans[0])

	var rows []string
	for i, p := range plans {
		ref, _ := lab.ReferencePlan(p)
		var env, clean, faulted []Measurement
		for r := range reps {
			m, err := srv.Replay(t.Context(), p, fmt.Sprintf("bench-%d-%d-%d", i, r, time.Now().UnixNano()%1e6), time.Minute)
			if err != nil {
				t.Fatalf("%s on the real server: %v", p.Name, err)
			}
			// The server's CPU over an idle window as long as the play: what
			// it spends on its own (leases, controllers) or on other
			// clients, part of the play's server CPU too.
			idle0, err := srv.ServerCPU()
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(max(m.Wall, 200*time.Millisecond)) // real server, real time
			idle1, err := srv.ServerCPU()
			if err != nil {
				t.Fatal(err)
			}
			m.IdleServerCPU = (idle1 - idle0) * m.Wall / max(m.Wall, 200*time.Millisecond)
			env = append(env, m)
			clean = append(clean, labRun(t, ref))
			faulted = append(faulted, labRun(t, p))
		}
		e, c, f := mean(env), mean(clean), mean(faulted)
		rows = append(rows, fmt.Sprintf("| %s | %d (%d refused, %d objects first) | %s, %s (server %s; idle %s) | %s, %s | %s, %s | **%.1fx** | **%.1fx** | %.1fx |",
			p.Name, e.Steps, e.Failed, len(p.Objects), ms(e.Wall), ms(e.CPU), ms(e.ServerCPU), ms(e.IdleServerCPU), ms(c.Wall), ms(c.CPU), ms(f.Wall), ms(f.CPU),
			ratio(e.CPU, c.CPU), ratio(e.Wall, c.Wall), ratio(e.CPU, f.CPU)))
	}
	t.Logf("means of %d plays each, alternating envtest, lab, lab+faults:\n\n"+
		"| plan | user steps | envtest wall, CPU | lab (no faults) wall, CPU | lab + faults wall, CPU | envtest/lab CPU | envtest/lab wall | envtest/lab+faults CPU |\n"+
		"| --- | --- | --- | --- | --- | --- | --- | --- |\n%s", reps, strings.Join(rows, "\n"))
}

// labRun runs p in the lab and measures the whole process around it.
func labRun(t *testing.T, p *sim.Plan) Measurement {
	t.Helper()
	cpu0, wall0 := fakeapibench.ProcessCPU(), fakeapibench.WallClock()
	tr, err := sim.Run(t, p)
	m := Measurement{Wall: fakeapibench.WallClock() - wall0, CPU: fakeapibench.ProcessCPU() - cpu0}
	if err != nil {
		t.Fatalf("%s in the lab: %v", p.Name, err)
	}
	for _, r := range tr.Records {
		if r.Kind == sim.RecStep && r.Actor == "user" {
			m.Steps++
		}
	}
	return m
}

// mean returns the plays' mean (the counts of the first play: every play
// of a plan plays the same steps).
func mean(ms []Measurement) Measurement {
	m := ms[0]
	m.Wall, m.CPU, m.ServerCPU, m.IdleServerCPU = 0, 0, 0, 0
	for _, x := range ms {
		m.Wall += x.Wall / time.Duration(len(ms))
		m.CPU += x.CPU / time.Duration(len(ms))
		m.ServerCPU += x.ServerCPU / time.Duration(len(ms))
		m.IdleServerCPU += x.IdleServerCPU / time.Duration(len(ms))
	}
	return m
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// TestProcessCPUReadsThisProcess: /proc's utime+stime of this process is
// within a clock tick or two of getrusage's, after burning some CPU.
func TestProcessCPUReadsThisProcess(t *testing.T) {
	x := 0
	for i := range 50_000_000 {
		x += i % 7
	}
	_ = x
	ru := fakeapibench.ProcessCPU()
	proc, err := processCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if d := ru - proc; d < -30*time.Millisecond || d > 30*time.Millisecond || proc <= 0 {
		t.Errorf("/proc says %s, getrusage %s", proc, ru)
	}
	if _, err := processCPU(-1); err == nil {
		t.Errorf("a process that does not exist: no error")
	}
}

// TestFromEnvFileSaysWhatIsMissing: no env file, or one without a
// kubeconfig, is a clear error.
func TestFromEnvFileSaysWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	if _, err := FromEnvFile(filepath.Join(dir, "none.env")); err == nil || !strings.Contains(err.Error(), "make real-apiserver-start") {
		t.Errorf("missing env file: %v; want an error naming make real-apiserver-start", err)
	}
	f := filepath.Join(dir, "realserver.env")
	if err := os.WriteFile(f, []byte("VERSION=v1.37.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FromEnvFile(f); err == nil || !strings.Contains(err.Error(), "KUBECONFIG") {
		t.Errorf("env file without KUBECONFIG: %v; want an error naming it", err)
	}
}
