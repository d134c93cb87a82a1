// Package campaign runs random-plan campaigns over the upstream module's
// subjects and renders their table: per subject, plans run, plans failing
// each invariant, and the CPU time to the first failure; with
// -upstream.shrink it shrinks failing plans with rapid (Shrink).
package campaign

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/fakeapi/fakeapibench"
	"github.com/cachelab/cachelab/sim"
)

var (
	plansFlag  = flag.Int("upstream.plans", 0, "random plans per subject for the campaign (0: skip)")
	seedFlag   = flag.Uint64("upstream.seed", 1, "first seed of the campaign's plans")
	tableFlag  = flag.String("upstream.table", "", "file to write the campaign's table to (besides the test log)")
	keepFlag   = flag.Bool("upstream.keep", false, "for triage: keep every failing plan's files (plan, trace, report) under testdata/cachelab and log one line per failed verdict")
	shrinkFlag = flag.Bool("upstream.shrink", false, "shrink each subject's first failing plan of each invariant with rapid, and save the smallest plan that still fails it")
)

// Subject is one controller of a campaign and its plan generator.
type Subject struct {
	Controller cachelabtest.Controller
	// Gen returns the rapid generator of plans for the subject named
	// subject; the campaign's plan of seed is its Example(seed) (see
	// plangen.Workload.Plan), the plan Shrink starts from.
	Gen func(subject string) *rapid.Generator[sim.Plan]
}

// Plan returns s's plan of seed, named "<subject without upstream/>-<seed>".
func (s Subject) Plan(seed uint64) *sim.Plan {
	p := s.Gen(s.Controller.Name).Example(int(seed))
	p.Name = fmt.Sprintf("%s-%d", strings.TrimPrefix(s.Controller.Name, "upstream/"), seed)
	return &p
}

// row is one subject's campaign result.
type row struct {
	subject     string
	plans       int
	failedPlans int
	byInv       map[string]int
	firstCPU    time.Duration // CPU time until the first failing plan ended; 0: none
	firstPlan   string
	firstSize   int
	firstReport string
	shrunk      []string      // "<invariant> seed N: S -> M steps", with -upstream.shrink
	dupAt       int           // plans run at the first no-duplicate-children failure; 0: none
	dupCPU      time.Duration // CPU time until then
	dupSeed     uint64
	cpu         time.Duration
}

// Run runs -upstream.plans random plans (seeds from -upstream.seed) against
// each subject, in turn, and prints per subject the plans run, the plans
// failing each invariant and the CPU time to the first failure (also to
// -upstream.table). With -cachelab.plan (a report's replay command) it runs
// that plan once per subject and logs the verdicts; with
// -upstream.reproduce=N too, it replays the saved run N times against its
// subject, following its recorded delivery schedule, and logs what
// Reproduce measured. generator names the plan generator's file in the
// table's heading.
func Run(t *testing.T, generator string, subjects ...Subject) {
	n := *plansFlag
	replay := false
	if f := flag.Lookup("cachelab.plan"); f != nil && f.Value.String() != "" {
		// A report's replay command: the saved plan, once per subject
		// (its verdicts are logged; no table).
		n, replay = 1, true
	}
	if replay && *reproduceFlag > 0 {
		reproduceSaved(t, flag.Lookup("cachelab.plan").Value.String(), *reproduceFlag, subjects)
		return
	}
	if n <= 0 {
		t.Skip("give -upstream.plans=N (make upstream)")
	}
	if !replay {
		_ = os.RemoveAll(filepath.Join("testdata", "cachelab", t.Name()))
	}
	var rows []*row
	for _, s := range subjects {
		c := s.Controller
		rw := &row{subject: c.Name, byInv: map[string]int{}}
		start := fakeapibench.ProcessCPU()
		for i := range n {
			seed := *seedFlag + uint64(i)
			p := s.Plan(seed)
			failures := cachelabtest.Catch(t, c, cachelabtest.These(p))
			rw.plans++
			if len(failures) == 0 {
				continue
			}
			rw.failedPlans++
			var names []string
			for _, v := range failures[0].Failed {
				rw.byInv[v.Invariant]++
				names = append(names, v.Invariant)
				if *keepFlag {
					// One line per failed verdict, for triage.
					t.Logf("verdict %s seed %d %s: %s", c.Name, seed, v.Invariant, oneLine(v.Reason))
				}
				if *shrinkFlag && !replay && rw.byInv[v.Invariant] == 1 {
					shrinkAndLog(t, s, seed, v.Invariant, rw)
				}
			}
			if rw.dupAt == 0 && slices.Contains(names, "no-duplicate-children") {
				rw.dupAt, rw.dupCPU, rw.dupSeed = i+1, fakeapibench.ProcessCPU()-start, seed
			}
			keep := *keepFlag || rw.firstCPU == 0 || slices.Contains(names, "no-duplicate-children")
			if keep {
				t.Logf("%s seed %d failed %s: %s", c.Name, seed, strings.Join(names, ", "), failures[0].ReportPath)
			} else if failures[0].ReportPath != "" {
				// Only the first failure's and the over-creations' files
				// are kept (about 400 kB each).
				_ = os.RemoveAll(filepath.Dir(failures[0].ReportPath))
			}
			if rw.firstCPU == 0 {
				rw.firstCPU = fakeapibench.ProcessCPU() - start
				rw.firstPlan = fmt.Sprintf("seed %d", seed)
				rw.firstSize = len(p.Steps)
				rw.firstReport = failures[0].ReportPath
				t.Logf("%s: first failure at plan %d (seed %d):\n%s", c.Name, i+1, seed, failures[0].Report)
			}
		}
		rw.cpu = fakeapibench.ProcessCPU() - start
		rows = append(rows, rw)
	}
	if replay {
		return
	}
	table := formatTable(rows, generator, *seedFlag, n)
	fmt.Print(table)
	if *tableFlag != "" {
		if err := os.WriteFile(*tableFlag, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// formatTable renders the rows as a Markdown table.
func formatTable(rows []*row, generator string, seed uint64, n int) string {
	invs := map[string]bool{}
	for _, r := range rows {
		for k := range r.byInv {
			invs[k] = true
		}
	}
	var names []string
	for k := range invs {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "\nseeds %d..%d (%s), k8s.io/kubernetes v1.37.1\n\n", seed, seed+uint64(n)-1, generator)
	b.WriteString("| subject | plans run | plans failing | ")
	for _, k := range names {
		b.WriteString(k + " | ")
	}
	b.WriteString("CPU to first failure | first failing plan (steps) | first no-duplicate-children: plans, CPU, seed | CPU total |\n|---|---|---|")
	for range names {
		b.WriteString("---|")
	}
	b.WriteString("---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d | ", r.subject, r.plans, r.failedPlans)
		for _, k := range names {
			fmt.Fprintf(&b, "%d | ", r.byInv[k])
		}
		first, plan := "none", "none"
		if r.firstCPU > 0 {
			first = r.firstCPU.Round(time.Millisecond).String()
			plan = fmt.Sprintf("%s (%d) %s", r.firstPlan, r.firstSize, r.firstReport)
		}
		dup := "none"
		if r.dupAt > 0 {
			dup = fmt.Sprintf("%d, %s, seed %d", r.dupAt, r.dupCPU.Round(time.Millisecond), r.dupSeed)
		}
		fmt.Fprintf(&b, "%s | %s | %s | %s |\n", first, plan, dup, r.cpu.Round(time.Millisecond))
	}
	for _, r := range rows {
		for _, line := range r.shrunk {
			fmt.Fprintf(&b, "\nshrunk, %s: %s", r.subject, line)
		}
	}
	if slices.ContainsFunc(rows, func(r *row) bool { return len(r.shrunk) > 0 }) {
		b.WriteString("\n")
	}
	return b.String()
}

// oneLine is s on one line, cut to 400 bytes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}
