package cli

import (
	"flag"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	lab "github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/simbench"
)

// benchCommand is `cachelab bench`: the sim's standard scenario measured
// against baselines run in the same process.
func benchCommand() command {
	return command{"bench",
		"measure the standard scenario's runs per CPU-second and virtual/wall against baselines measured in the same run",
		"[--runs N] [--access direct,http,direct-unscheduled] [--procs N]",
		"cachelab bench --runs 50 --access direct", benchCmd}
}

type benchOptions struct {
	runs   int
	access string
	procs  int
}

func benchFlags() (*flag.FlagSet, *benchOptions) {
	o := &benchOptions{}
	fs := newFlagSet("bench")
	fs.IntVar(&o.runs, "runs", 20, "runs of each kind (scenario on each access path, server baseline, floor baseline), alternating")
	fs.StringVar(&o.access, "access", "direct,http,direct-unscheduled", "comma-separated access paths of the scenario: direct, http, and direct-unscheduled (direct without the deterministic scheduler, to measure its cost)")
	fs.IntVar(&o.procs, "procs", 0, "GOMAXPROCS during the runs (0: unchanged); a run's goroutines mostly take turns, so 1 spares the wake-ups of idle threads")
	return fs, o
}

func benchCmd(env *Env, args []string) int {
	fs, o := benchFlags()
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(env, "bench", fs, err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(env.Stderr, "cachelab bench: takes no arguments, got %q\nRun `%s bench --help` for the flags.\n", pos, env.Prog)
		return ExitUsage
	}
	if o.procs < 0 {
		fmt.Fprintf(env.Stderr, "cachelab bench: --procs must be 0 (unchanged) or more, got %d\n", o.procs)
		return ExitUsage
	}
	if o.runs < 1 {
		fmt.Fprintf(env.Stderr, "cachelab bench: --runs must be at least 1, got %d\n", o.runs)
		return ExitUsage
	}
	var accesses []string
	for _, a := range strings.Split(o.access, ",") {
		a = strings.TrimSpace(a)
		if a != "direct" && a != "http" && a != "direct"+simbench.Unscheduled {
			fmt.Fprintf(env.Stderr, "cachelab bench: --access %q: unknown access path %q (allowed: direct, http, direct-unscheduled, comma-separated)\n", o.access, a)
			return ExitUsage
		}
		accesses = append(accesses, a)
	}
	if o.procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(o.procs))
	}
	var res []simbench.Result
	var runErr error
	host := env.Host
	if host == nil {
		host = lab.MainHost(1)
	}
	ok, out := host(func(t *testing.T) {
		sim.Bubble(t, func(t *testing.T) {
			res, runErr = simbench.Measure(t.Context(), o.runs, accesses...)
		})
	})
	if runErr != nil {
		printErr(env, "bench", runErr)
		return ExitUnexpected
	}
	if !ok {
		fmt.Fprintf(env.Stderr, "cachelab bench: a run failed its bubble:\n%s", out)
		return ExitUnexpected
	}
	printBench(env, o.runs, res, len(accesses))
	return ExitOK
}

// printBench prints the results table: the scenario's rows first, then the
// baselines', each with its ratio to the server and floor baselines.
func printBench(env *Env, runs int, res []simbench.Result, scenarios int) {
	w := env.Stdout
	fmt.Fprintf(w, "cachelab bench: the standard scenario (%d ConfigMaps, %d operations over %s, %d broken watches, latency 1-50ms, one real informer + workqueue), %d runs of each kind, alternating, GOMAXPROCS=%d\n\n",
		simbench.StandardObjects, simbench.StandardOps, simbench.StandardSpan, len(simbench.StandardBreaks), runs, runtime.GOMAXPROCS(0))
	byName := map[string]simbench.Result{}
	for _, r := range res {
		byName[r.Name] = r
	}
	server, floor := byName["server"], byName["floor"]
	ratio := func(r, base simbench.Result) string {
		if base.RunsPerCPUSecond() == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2fx", r.RunsPerCPUSecond()/base.RunsPerCPUSecond())
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "RUN\tCPU/RUN\tRUNS/CPU-S\tVIRTUAL/WALL\tHANDLER CALLS/RUN\tVS SERVER\tVS FLOOR\t\n")
	for i, r := range res {
		name := r.Name
		if i < scenarios {
			name = "scenario " + name
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.0fx\t%.0f\t%s\t%s\t\n", name, r.CPUPerRun().Round(10*time.Microsecond),
			r.RunsPerCPUSecond(), r.VirtualPerWall(), float64(r.HandlerCalls)/float64(r.Runs), ratio(r, server), ratio(r, floor))
	}
	tw.Flush()
	if d, u := byName["direct"], byName["direct"+simbench.Unscheduled]; d.Runs > 0 && u.Runs > 0 {
		fmt.Fprintf(w, "\nscheduler cost: the direct path runs at %.2fx the runs per CPU-second of the same path without the deterministic scheduler (%.1f vs %.1f)\n",
			d.RunsPerCPUSecond()/u.RunsPerCPUSecond(), d.RunsPerCPUSecond(), u.RunsPerCPUSecond())
	}
	fmt.Fprintf(w, `
direct-unscheduled: the direct path without the deterministic scheduler (not reproducible;
        there to measure what ordering every request and event costs).
server: the same timeline through fakeapi (no fault policy, latency, recorder or trace).
floor:  the same timeline into the same real informer and workqueue from a map and a
        watch channel (no fakeapi, no sim): what client-go alone costs per run.
CPU is the whole process's (every thread, the garbage collector included).
Target (issue 4): 1,000 runs per CPU-second and 1,000x virtual/wall on the direct path.
`)
}
