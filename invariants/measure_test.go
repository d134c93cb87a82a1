package invariants_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/reports"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// The lab's own measurements, opt-in so that `make test` stays fast:
//
//	CACHELAB_MUTATION=1 go test ./invariants -run TestMutationScore -v [-rapid.checks=100]
//	CACHELAB_HASSYNCED=1000 go test ./invariants -run TestHasSyncedComparison -v

// teachingSubjects are subjects that exist to fail in instructive ways; the
// mutation score reports them next to the mutants, without requiring them
// to be found.
var teachingSubjects = []string{"naivecache"}

// TestMutationScore runs the combined property (every subject invariant
// the subject claims) against every mutant, the teaching subjects and the
// subjects of the default property run (the real Bellerophon and the two
// informer paths), each in a child process (rapid.Check fails the test it
// runs in), with the same budget (-rapid.checks) for all, and reports per
// subject whether a failing plan was found, the CPU time and the number of
// plans to the first failing plan, and the size of the shrunk plan. Every
// mutant must be found; the subjects of the default run must not be.
func TestMutationScore(t *testing.T) {
	if os.Getenv("CACHELAB_MUTATION") == "" {
		t.Skip("set CACHELAB_MUTATION=1 to measure the mutation score (add -rapid.checks=N for the budget)")
	}
	checks := flag.Lookup("rapid.checks").Value.String()
	var names []string
	want := map[string]string{}
	for _, s := range sim.Subjects() {
		switch {
		case slices.Contains(propertySubjects, s.Name):
			want[s.Name] = "holds"
		case s.Mutant:
			want[s.Name] = "found"
		case slices.Contains(teachingSubjects, s.Name):
			want[s.Name] = "teaching"
		default:
			continue
		}
		names = append(names, s.Name)
	}
	dir := t.TempDir()
	// Every core (issue 20): the children run GOMAXPROCS at a time, each
	// subject's rapid run being sequential; the rows keep subject order.
	rows := make([]mutantResult, len(names))
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for k, name := range names {
		out := filepath.Join(dir, strings.ReplaceAll(name, "/", "_")+".json")
		seed := strconv.FormatUint(uint64(time.Now().UnixNano())>>1, 10)
		if f := flag.Lookup("rapid.seed"); f != nil && f.Value.String() != "0" {
			seed = f.Value.String()
		}
		args := []string{"-test.run=^TestPropertyOfOneSubject$", "-rapid.checks=" + checks, "-rapid.nofailfile", "-rapid.seed=" + seed}
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			fmt.Fprintf(os.Stderr, "[%d/%d] %s: %s plans, seed %s ...\n", k+1, len(names), name, checks, seed)
			started := time.Now()
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), "CACHELAB_PROPERTY_SUBJECT="+name, "CACHELAB_PROPERTY_OUT="+out)
			log, _ := cmd.CombinedOutput() // a found mutant fails the child: expected
			var res mutantResult
			b, err := os.ReadFile(out)
			if err == nil {
				err = json.Unmarshal(b, &res)
			}
			if err != nil {
				t.Errorf("%s: the child process left no result (%v); its output ends:\n%s", name, err, tail(string(log), 20))
				res = mutantResult{Subject: name}
			}
			rows[k] = res
			verdict := "held"
			if res.Found {
				verdict = fmt.Sprintf("failed %v at plan %d (shrunk to %d steps)", res.Invariants, res.ChecksToFirstFail, res.ShrunkSteps)
			}
			mu.Lock()
			done++
			fmt.Fprintf(os.Stderr, "[%d done of %d] %s: %s after %d plans, %s wall; again: make property SUBJECT=%s CHECKS=%s SEED=%s\n",
				done, len(names), name, verdict, res.Evaluations, time.Since(started).Round(time.Second), name, checks, seed)
			mu.Unlock()
		}()
	}
	wg.Wait()
	var bad []string
	for k, name := range names {
		res := rows[k]
		switch {
		case want[name] == "found" && !res.Found:
			bad = append(bad, name+" (mutant not found)")
		case want[name] == "holds" && res.Found:
			bad = append(bad, name+" (fails on a subject that must hold: "+strings.Join(res.Invariants, ", ")+")")
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Mutation score, -rapid.checks=%s per subject (combined property: every subject invariant the subject claims)\n\n", checks)
	fmt.Fprintf(&b, "| subject | expected | found | invariant(s) failing the shrunk plan | CPU to first failure | plans to first failure | shrunk plan: steps (objects) | plans run (with shrinking) |\n|---|---|---|---|---|---|---|---|\n")
	var cpus []time.Duration
	var plans, shrunk []int
	found, mutants := 0, 0
	for _, r := range rows {
		cpu, steps, first := "-", "-", "-"
		if r.Found {
			cpu = r.FirstFail.Round(time.Millisecond).String()
			steps = fmt.Sprintf("%d (%d)", r.ShrunkSteps, r.ShrunkObjects)
			first = strconv.Itoa(r.ChecksToFirstFail)
		}
		if want[r.Subject] == "found" {
			mutants++
			if r.Found {
				found++
				cpus = append(cpus, r.FirstFail)
				plans = append(plans, r.ChecksToFirstFail)
				shrunk = append(shrunk, r.ShrunkSteps)
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %v | %s | %s | %s | %s | %d |\n", r.Subject, want[r.Subject], r.Found, strings.Join(r.Invariants, ", "), cpu, first, steps, r.Evaluations)
	}
	sort.Slice(cpus, func(i, j int) bool { return cpus[i] < cpus[j] })
	med := time.Duration(0)
	if len(cpus) > 0 {
		med = cpus[len(cpus)/2]
	}
	slices.Sort(plans)
	slices.Sort(shrunk)
	fmt.Fprintf(&b, "\nmutants found: %d of %d; median CPU to first failure: %s", found, mutants, med.Round(time.Millisecond))
	if len(plans) > 0 {
		fmt.Fprintf(&b, "; median plans to first failure: %d; shrunk plans: median %d steps, largest %d", plans[len(plans)/2], shrunk[len(shrunk)/2], shrunk[len(shrunk)-1])
	}
	b.WriteString("\n")
	t.Log("\n" + b.String())
	if out := os.Getenv("CACHELAB_MUTATION_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Errorf("cannot write %s: %v", out, err)
		}
	}
	if len(bad) > 0 {
		t.Errorf("mutation score: %s", strings.Join(bad, "; "))
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// comparisonSubjects are the subjects the HasSynced comparison runs.
var comparisonSubjects = []string{"bellerophon", "informer-realfifo", "legacy-deltafifo", "naivecache"}

// signalStats aggregates one signal's reports over many traces.
type signalStats struct {
	traces, present, flips, fps, tracesWithFP int
	latencies                                 []time.Duration
	// staleBy holds, per false flip, how long before the flip the write
	// the cache lacked was made (for the HTML page).
	staleBy []time.Duration
}

// TestHasSyncedComparison runs the same N random plans (PlanGen, seeds 0 to
// N-1) through every comparison subject and prints, per sync definition,
// the false-positive rate (flips that claimed synced while the cache lagged
// what the definition promises) and the latency of sound flips (median,
// p99). N comes from CACHELAB_HASSYNCED.
func TestHasSyncedComparison(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CACHELAB_HASSYNCED"))
	if n <= 0 {
		t.Skip("set CACHELAB_HASSYNCED=N (e.g. 1000) to compare the sync definitions on N random plans per subject")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "HasSynced comparison: %d random plans (scenarios.PlanGen seeds 0..%d) per subject\n\n", n, n-1)
	var page []reports.SyncDefinitionStats
	fmt.Fprintf(&b, "| subject | signal | traces with it | flips to true | false positives | FP rate (flips) | traces with an FP | latency median | latency p99 |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, subject := range comparisonSubjects {
		if _, ok := sim.LookupSubject(subject); !ok {
			t.Errorf("subject %q is not registered", subject)
			continue
		}
		stats := map[string]*signalStats{}
		for _, s := range invariants.SignalNames() {
			stats[s] = &signalStats{}
		}
		failedRuns := 0
		start := time.Now()
		// Every core: the plans run in parallel subtests, one worker per
		// core (issue 20), and are counted in plan order afterwards.
		type planRun struct {
			tr  *sim.Trace
			err error
		}
		runs := make([]planRun, n)
		next := make(chan int, n)
		for i := range n {
			next <- i
		}
		close(next)
		t.Run(strings.ReplaceAll(subject, "/", "_"), func(t *testing.T) {
			for w := range min(runtime.GOMAXPROCS(0), n) {
				t.Run(fmt.Sprintf("worker-%d", w+1), func(t *testing.T) {
					t.Parallel()
					for i := range next {
						plan := scenarios.PlanGen(subject).Example(i)
						tr, err := runOnce(t, &plan)
						runs[i] = planRun{tr, err}
					}
				})
			}
		})
		for i, run := range runs {
			tr, err := run.tr, run.err
			if err != nil {
				failedRuns++
				if failedRuns <= 3 {
					t.Logf("%s plan %d: %v", subject, i, err)
				}
				continue
			}
			for _, rep := range invariants.SyncSoundness(tr) {
				st := stats[rep.Signal]
				st.traces++
				if rep.Present {
					st.present++
				}
				st.flips += rep.Flips
				st.fps += rep.FalsePositives
				if rep.FalsePositives > 0 {
					st.tracesWithFP++
				}
				st.latencies = append(st.latencies, rep.Latencies...)
				for _, j := range rep.Judged {
					if !j.Sound && j.Missing >= 0 && j.Missing < len(tr.Records) {
						st.staleBy = append(st.staleBy, (j.At - tr.Records[j.Missing].At).D())
					}
				}
			}
			runs[i] = planRun{} // the trace is counted: let it go
		}
		t.Logf("%s: %d plans in %s wall, %d runs failed (not counted)", subject, n, time.Since(start).Round(time.Millisecond), failedRuns)
		for _, s := range invariants.SignalNames() {
			st := stats[s]
			if st.present == 0 {
				continue
			}
			page = append(page, reports.SyncDefinitionStats{Subject: subject, Signal: s, Traces: st.present, Flips: st.flips,
				FalsePositives: st.fps, LateBy: st.latencies, StaleBy: st.staleBy})
			rate := "-"
			if st.flips > 0 {
				rate = fmt.Sprintf("%.1f%%", 100*float64(st.fps)/float64(st.flips))
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %s | %d | %s | %s |\n", subject, s, st.present, st.flips, st.fps, rate, st.tracesWithFP,
				quantile(st.latencies, 0.5), quantile(st.latencies, 0.99))
		}
	}
	t.Log("\n" + b.String())
	if out := os.Getenv("CACHELAB_HASSYNCED_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Errorf("cannot write %s: %v", out, err)
		}
	}
	if out := os.Getenv("CACHELAB_HASSYNCED_HTML"); out != "" {
		var h bytes.Buffer
		intro := fmt.Sprintf("%d random plans (scenarios.PlanGen seeds 0..%d) per subject.", n, n-1)
		if err := reports.HasSynced(&h, intro, page); err != nil {
			t.Errorf("rendering the HasSynced page: %v", err)
		} else if err := os.WriteFile(out, h.Bytes(), 0o644); err != nil {
			t.Errorf("cannot write %s: %v", out, err)
		} else {
			t.Logf("wrote %s", out)
		}
	}
}

// runOnce runs plan in a synctest bubble; a run that panics (a goroutine
// left blocked when the bubble ends) is returned as an error.
func runOnce(t *testing.T, plan *sim.Plan) (tr *sim.Trace, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the run panicked: %v", r)
		}
	}()
	synctest.Test(t, func(t *testing.T) {
		tr, err = sim.RunInBubble(t.Context(), plan)
	})
	return tr, err
}

func quantile(ds []time.Duration, q float64) string {
	if len(ds) == 0 {
		return "-"
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q * float64(len(s)-1))
	return s[i].Round(time.Millisecond).String()
}
