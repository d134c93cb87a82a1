package cli

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestBenchReportsTheScenarioAgainstBaselinesMeasuredInTheSameRun(t *testing.T) {
	code, out, errs := run(t, "bench", "--runs", "1", "--access", "direct", "--procs", "1", "--updates", "200", "--update-rounds", "2")
	if code != ExitOK {
		t.Fatalf("bench exited %d: %s", code, errs)
	}
	for _, want := range []string{
		"50 ConfigMaps, 200 operations over 30s, 3 broken watches",
		"1 runs of each kind", "GOMAXPROCS=1",
		"RUNS/CPU-S", "VIRTUAL/WALL", "VS SERVER", "VS FLOOR",
		"scenario direct", "server", "floor",
		"1.00x", // each baseline against itself
		"campaign: 40 random plans", "skipped: GOMAXPROCS is 1",
		"informer throughput (issue 20's workload): 50 ConfigMaps listed, then 200 updates", "2 rounds",
		"PATH ", "EVENTS/CPU-S", "ALLOCS/EVENT", "VS SIMPLE-CLIENTSET (ROUNDS)",
		"\nlisterwatcher ", "\nclientset ", "\nsimple-clientset ", "\nlimit ",
		"1.00x (1.00-1.00)", // each baseline against itself, in every round
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bench output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "scenario http") {
		t.Errorf("bench --access direct ran the http path:\n%s", out)
	}
}

func TestBenchMeasuresACampaignOnEveryCoreAgainstOneWorker(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs GOMAXPROCS >= 2")
	}
	code, out, errs := run(t, "bench", "--runs", "1", "--access", "direct", "--campaign", "3", "--updates", "0")
	if code != ExitOK {
		t.Fatalf("bench exited %d: %s", code, errs)
	}
	cores := fmt.Sprint(runtime.GOMAXPROCS(0))
	for _, want := range []string{
		"campaign: 3 random plans of bellerophon", "1 worker against " + cores,
		"WORKERS  RUNS", "\n1        6 ", "\n" + cores + "        6 ",
		"campaign on every core: ", "the runs per wall second of one worker",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bench output lacks %q:\n%s", want, out)
		}
	}
}

func TestBenchRejectsBadFlagsWithWhatIsAllowed(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--runs", "0"}, "--runs must be at least 1, got 0"},
		{[]string{"--access", "direct,grpc"}, `unknown access path "grpc" (allowed: direct, http`},
		{[]string{"extra"}, `takes no arguments, got ["extra"]`},
		{[]string{"--procs", "-1"}, "--procs must be 0 (unchanged) or more, got -1"},
		{[]string{"--campaign", "-1"}, "--campaign must be 0 (skip) or a number of random plans, got -1"},
		{[]string{"--updates", "-1"}, "--updates must be 0 (skip) or a number of updates, got -1"},
		{[]string{"--update-rounds", "0"}, "--update-rounds must be at least 1, got 0"},
	} {
		code, _, errs := run(t, append([]string{"bench"}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("bench %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errs, ExitUsage, tc.want)
		}
	}
}

// The scheduler's cost is also given per turn, beside the Go runtime's
// hand-off measured in the same process, only when both the direct path and
// the direct path without the scheduler ran.
func TestBenchGivesTheSchedulersCostPerTurnBesideTheRuntimesHandOff(t *testing.T) {
	code, out, errs := run(t, "bench", "--runs", "1", "--access", "direct,direct-unscheduled", "--campaign", "0", "--updates", "0")
	if code != ExitOK {
		t.Fatalf("bench exited %d: %s", code, errs)
	}
	for _, want := range []string{"scheduler cost: the direct path runs at", "per turn: ", "turns per direct run", "simbench.HandOffFloor) costs "} {
		if !strings.Contains(out, want) {
			t.Errorf("bench output lacks %q:\n%s", want, out)
		}
	}
	code, out, errs = run(t, "bench", "--runs", "1", "--access", "direct", "--campaign", "0", "--updates", "0")
	if code != ExitOK {
		t.Fatalf("bench exited %d: %s", code, errs)
	}
	if strings.Contains(out, "per turn: ") {
		t.Errorf("bench without direct-unscheduled gives a cost per turn:\n%s", out)
	}
}
