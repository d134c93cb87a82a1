package cli

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/cachelab/cachelab/fakeapi/fakeapibench"
	"github.com/cachelab/cachelab/fakeapi/store"
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/simbench"
)

// benchCommand is `cachelab bench`: the sim's standard scenario measured
// against baselines run in the same process.
func benchCommand() command {
	return command{"bench",
		"measure the standard scenario's runs per CPU-second and virtual/wall against baselines measured in the same run",
		"[--runs N] [--access direct,http,direct-unscheduled] [--procs N] [--updates N] [--update-rounds N] [--campaign N]",
		"cachelab bench --runs 50 --access direct", benchCmd}
}

type benchOptions struct {
	runs         int
	access       string
	procs        int
	campaign     int
	updates      int
	updateRounds int
}

func benchFlags() (*flag.FlagSet, *benchOptions) {
	o := &benchOptions{}
	fs := newFlagSet("bench")
	fs.IntVar(&o.runs, "runs", 20, "runs of each kind (scenario on each access path, server baseline, floor baseline), alternating")
	fs.StringVar(&o.access, "access", "direct,http,direct-unscheduled", "comma-separated access paths of the scenario: direct, http, and direct-unscheduled (direct without the deterministic scheduler, to measure its cost)")
	fs.IntVar(&o.procs, "procs", 0, "GOMAXPROCS during the runs (0: unchanged); a run's goroutines mostly take turns, so 1 spares the wake-ups of idle threads")
	fs.IntVar(&o.updates, "updates", fakeapibench.Updates, "updates of the informer-throughput workload (issue 20: 50 ConfigMaps listed, then N updates through a client, at most 50 unseen by the handler) on each of its paths (0: skip)")
	fs.IntVar(&o.updateRounds, "update-rounds", 3, "rounds of the informer-throughput workload, each running every path once in turn (the ratios' spread is across rounds)")
	fs.IntVar(&o.campaign, "campaign", 40, "random plans of a campaign (as cachelab run --random N) run with 1 worker and with one per core, alternating 1, all, all, 1: the campaign's runs per wall second on every core against one (0: skip)")
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
	if o.campaign < 0 {
		fmt.Fprintf(env.Stderr, "cachelab bench: --campaign must be 0 (skip) or a number of random plans, got %d\n", o.campaign)
		return ExitUsage
	}
	if o.updates < 0 {
		fmt.Fprintf(env.Stderr, "cachelab bench: --updates must be 0 (skip) or a number of updates, got %d\n", o.updates)
		return ExitUsage
	}
	if o.updateRounds < 1 {
		fmt.Fprintf(env.Stderr, "cachelab bench: --update-rounds must be at least 1, got %d\n", o.updateRounds)
		return ExitUsage
	}
	if o.runs < 1 {
		fmt.Fprintf(env.Stderr, "cachelab bench: --runs must be at least 1, got %d\n", o.runs)
		return ExitUsage
	}
	var accesses []string
	for _, a := range strings.Split(o.access, ",") {
		a = strings.TrimSpace(a)
		if a != "direct" && a != "http" && a != "direct"+simbench.Unscheduled && a != "direct"+simbench.HandWritten && a != "http"+simbench.HandWritten {
			fmt.Fprintf(env.Stderr, "cachelab bench: --access %q: unknown access path %q (allowed: direct, http, direct-unscheduled, direct-handwritten, http-handwritten, comma-separated)\n", o.access, a)
			return ExitUsage
		}
		accesses = append(accesses, a)
	}
	// A binary with kubestrategies measures each path both ways, so the
	// strategies' cost comes from one run.
	strategies := len(store.Strategies())
	if strategies > 0 {
		for _, a := range slices.Clone(accesses) {
			if (a == "direct" || a == "http") && !slices.Contains(accesses, a+simbench.HandWritten) {
				accesses = append(accesses, a+simbench.HandWritten)
			}
		}
	}
	if o.procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(o.procs))
	}
	var res []simbench.Result
	var runErr error
	var handOff time.Duration
	host := env.Host
	if host == nil {
		host = lab.MainHost(1)
	}
	ok, out := host(func(t *testing.T) {
		sim.Bubble(t, func(t *testing.T) {
			res, runErr = simbench.Measure(t.Context(), o.runs, accesses...)
			if runErr == nil && slices.Contains(accesses, "direct") && slices.Contains(accesses, "direct"+simbench.Unscheduled) {
				handOff, _ = simbench.HandOffFloor(t.Context(), handOffTurns)
			}
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
	printBench(env, o.runs, res, len(accesses), strategies, handOff)
	if o.updates > 0 {
		if code := benchUpdates(env, host, o.updateRounds, o.updates); code != ExitOK {
			return code
		}
	}
	if o.campaign > 0 {
		return benchCampaign(env, o.campaign)
	}
	return ExitOK
}

// benchUpdates runs the informer-throughput workload (fakeapibench) rounds
// times on each of its paths in one bubble and prints each path's events
// per CPU-second and allocations per event, and its ratio to
// fake.NewSimpleClientset and to the pre-filled channel, over all rounds
// and its spread across them.
func benchUpdates(env *Env, host lab.Host, rounds, updates int) int {
	var byRound [][]fakeapibench.Result
	var runErr error
	ok, out := host(func(t *testing.T) {
		sim.Bubble(t, func(t *testing.T) {
			byRound, runErr = fakeapibench.MeasureRounds(t.Context(), rounds, updates)
		})
	})
	if runErr != nil {
		printErr(env, "bench", runErr)
		return ExitUnexpected
	}
	if !ok {
		fmt.Fprintf(env.Stderr, "cachelab bench: the informer-throughput bubble failed:\n%s", out)
		return ExitUnexpected
	}
	w := env.Stdout
	fmt.Fprintf(w, "\ninformer throughput (issue 20's workload): %d ConfigMaps listed, then %d updates through a client while at most %d events are unseen by the handler, in a bubble; %d rounds, each path once per round in turn\n\n",
		fakeapibench.Objects, updates, fakeapibench.Window, rounds)
	index := map[string]int{}
	for i, p := range fakeapibench.Paths {
		index[p] = i
	}
	simple, limit := index[fakeapibench.SimpleClientset], index[fakeapibench.Limit]
	// ratio is r's total ratio to base and its range across rounds.
	ratio := func(i, base int, total []fakeapibench.Result) string {
		lo, hi := 0.0, 0.0
		for k, round := range byRound {
			x := round[i].Ratio(round[base])
			if k == 0 || x < lo {
				lo = x
			}
			if k == 0 || x > hi {
				hi = x
			}
		}
		if len(byRound) == 1 {
			return fmt.Sprintf("%.2fx", total[i].Ratio(total[base]))
		}
		return fmt.Sprintf("%.2fx (%.2f-%.2f)", total[i].Ratio(total[base]), lo, hi)
	}
	total := fakeapibench.Total(byRound)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "PATH\tEVENTS/CPU-S\tALLOCS/EVENT\tVS SIMPLE-CLIENTSET (ROUNDS)\tVS LIMIT (ROUNDS)\t\n")
	for i, r := range total {
		fmt.Fprintf(tw, "%s\t%.0f\t%.1f\t%s\t%s\t\n", r.Path, r.EventsPerCPUSecond(), r.AllocsPerEvent(), ratio(i, simple, total), ratio(i, limit, total))
	}
	tw.Flush()
	fmt.Fprintf(w, `
listerwatcher:    an informer over a fakeapi Client's ListerWatcher, updates through that Client.
clientset:        fakeapi.NewClientset (the drop-in for client-go's fake clientset) + informer factory.
simple-clientset: client-go's fake.NewSimpleClientset + informer factory (baseline).
limit:            an informer over a watch channel filled with the same events (baseline: the
                  informer alone, no server, no writes).
Counted from the informer's sync to the handler's last update; CPU is the whole process's.
Target (issue 20): listerwatcher and clientset >= 1.0x simple-clientset, <= 50 allocs/event.
`)
	return ExitOK
}

// campaignMeasure is one batch of a campaign's runs.
type campaignMeasure struct {
	workers, runs int
	wall, cpu     time.Duration
}

// benchCampaign runs the same n random plans of bellerophon with one
// worker and with one worker per core (GOMAXPROCS), in the order 1, all,
// all, 1 so that a change of the machine's load weighs on both, and prints
// each one's runs per wall second and the ratio.
func benchCampaign(env *Env, n int) int {
	w := env.Stdout
	cores := runtime.GOMAXPROCS(0)
	fmt.Fprintf(w, "\ncampaign: %d random plans of bellerophon (as `cachelab run --random %d --out \"\"`), 1 worker against %d (GOMAXPROCS), alternating 1, %d, %d, 1\n\n", n, n, cores, cores, cores)
	if l := loadAverage(); l != "" {
		// The ratio needs idle cores: other processes' load takes them.
		fmt.Fprintf(w, "load average before (1, 5, 15 min; %d CPUs): %s\n\n", runtime.NumCPU(), l)
	}
	if cores < 2 {
		fmt.Fprintf(w, "skipped: GOMAXPROCS is 1, there is no second core to measure\n")
		return ExitOK
	}
	jobs := make([]lab.Job, n)
	for i := range jobs {
		p := scenarios.Random(uint64(i+1), "bellerophon")
		jobs[i] = lab.NewJob(&p, nil)
	}
	host := env.Host
	if host == nil {
		host = lab.MainHost(cores)
	}
	total := map[int]*campaignMeasure{1: {workers: 1}, cores: {workers: cores}}
	for _, workers := range []int{1, cores, cores, 1} {
		cpu0, wall0 := simbench.ProcessCPU(), time.Now()
		results, out := lab.RunBatch(host, jobs, lab.Options{Parallel: workers, Sequential: workers == 1, DropTraces: true})
		m := total[workers]
		m.wall += time.Since(wall0)
		m.cpu += simbench.ProcessCPU() - cpu0
		m.runs += len(results)
		for _, r := range results {
			if r.Err != nil {
				fmt.Fprintf(env.Stderr, "cachelab bench: campaign run %s could not run: %v\n%s", r.Job.ID, r.Err, out)
				return ExitUnexpected
			}
		}
	}
	one, all := total[1], total[cores]
	rate := func(m *campaignMeasure) float64 { return float64(m.runs) / m.wall.Seconds() }
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "WORKERS\tRUNS\tWALL\tRUNS/S (WALL)\tCPU/RUN\tCORES BUSY\t\n")
	for _, m := range []*campaignMeasure{one, all} {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%.1f\t%s\t%.2f\t\n", m.workers, m.runs, m.wall.Round(time.Millisecond), rate(m),
			(m.cpu / time.Duration(m.runs)).Round(10*time.Microsecond), m.cpu.Seconds()/m.wall.Seconds())
	}
	tw.Flush()
	fmt.Fprintf(w, "\ncampaign on every core: %.2fx the runs per wall second of one worker (%d workers: %.1f/s, 1 worker: %.1f/s; target >= 1.8x on 2 cores of an idle machine)\n",
		rate(all)/rate(one), cores, rate(all), rate(one))
	return ExitOK
}

// handOffTurns is the number of hand-offs simbench.HandOffFloor measures
// for the per-turn line (about a tenth of a CPU-second).
const handOffTurns = 100000

// printBench prints the results table: the scenario's rows first, then the
// baselines', each with its ratio to the server and floor baselines.
func printBench(env *Env, runs int, res []simbench.Result, scenarios, strategies int, handOff time.Duration) {
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
		if turns := d.TurnsPerRun(); turns > 0 && handOff > 0 {
			perTurn := time.Duration(float64(d.CPUPerRun()-u.CPUPerRun()) / turns)
			fmt.Fprintf(w, "per turn: %.0f turns per direct run, %s of CPU each beyond the unscheduled run; the Go runtime's hand-off alone\n"+
				"(a goroutine parked for its turn, synctest.Wait, the release: simbench.HandOffFloor) costs %s per turn in this process\n",
				turns, perTurn.Round(10*time.Nanosecond), handOff.Round(10*time.Nanosecond))
		}
	}
	for _, a := range []string{"direct", "http"} {
		if r, h := byName[a], byName[a+simbench.HandWritten]; r.Runs > 0 && h.Runs > 0 {
			fmt.Fprintf(w, "real strategies cost: the %s path runs at %.2fx the runs per CPU-second of the same path on the hand-written rules (%.1f vs %.1f)\n",
				a, r.RunsPerCPUSecond()/h.RunsPerCPUSecond(), r.RunsPerCPUSecond(), h.RunsPerCPUSecond())
		}
	}
	if strategies > 0 {
		fmt.Fprintf(w, "\nThis binary serves %d built-in resources through kube-apiserver's own strategies (kubestrategies);\nthe -handwritten rows are the same paths with them suspended (the lab's hand-written rules).\n", strategies)
	} else {
		fmt.Fprintf(w, "\nThis binary serves the built-in kinds through the lab's hand-written rules; out/cachelab-kube\n(make kube-strategies) has kube-apiserver's own strategies and measures both.\n")
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

// loadAverage is /proc/loadavg's first three fields ("" where there is none).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
