package lab

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/reports"
	"github.com/cachelab/cachelab/sim"
)

// This file is the lab's only contact with the other packages' entry
// points, so that their signatures are adapted in one place.

// RunPlan runs p in a synctest bubble under t and returns its trace. It
// does what sim.Run does, but keeps the trace when the bubble ends with
// goroutines still blocked in it (synctest panics with "deadlock: main
// bubble goroutine has exited but blocked goroutines remain" after the run
// itself returned): the run is reported as failed, with its trace, report
// and verdicts, instead of being lost. A plan that follows a recorded
// schedule may take several attempts, each in a bubble of its own
// (sim.RunAttempts).
func RunPlan(t *testing.T, p *sim.Plan) (tr *sim.Trace, err error) {
	return runPlan(t, p, nil)
}

// runPlan is RunPlan counting the run's records in progress, when not nil
// (sim.WithProgress), for the watchdog.
func runPlan(t *testing.T, p *sim.Plan, progress *atomic.Int64) (tr *sim.Trace, err error) {
	return sim.RunAttempts(p, func(attempt func(ctx context.Context)) (err error) {
		defer func() {
			if x := recover(); x != nil {
				err = fmt.Errorf("%v: goroutines of the subject or the sim were still blocked when the run ended (the trace is kept)", x)
			}
		}()
		synctest.Test(t, func(t *testing.T) {
			ctx := t.Context()
			if progress != nil {
				ctx = sim.WithProgress(ctx, progress)
			}
			attempt(ctx)
		})
		return nil
	})
}

// CheckTrace judges a trace with every invariant, within the per-run
// watchdog's wall-time limit (-cachelab.timeout; see checkWithin).
func CheckTrace(tr *sim.Trace) []invariants.Verdict {
	return checkWithin(tr, allChecks(), *timeoutFlag)
}

// InvariantInfo describes one invariant for `cachelab list`.
type InvariantInfo struct {
	Name, Summary, Contract string
}

// Invariants lists the invariants, in check order.
func Invariants() []InvariantInfo {
	var out []InvariantInfo
	for _, inv := range invariants.All() {
		out = append(out, InvariantInfo{Name: inv.Name, Summary: inv.Summary, Contract: inv.Contract})
	}
	return out
}

// InvariantNames lists the invariants' names, in check order.
func InvariantNames() []string {
	var out []string
	for _, inv := range invariants.All() {
		out = append(out, inv.Name)
	}
	return out
}

// loadPlanFile reads a plan file, with errors naming field and line.
func loadPlanFile(path string) (*sim.Plan, error) { return sim.LoadPlanFile(path) }

// savePlan writes p as indented JSON.
func savePlan(w io.Writer, p *sim.Plan) error { return p.Save(w) }

// applyDefaults sets a plan's optional fields to their defaults.
func applyDefaults(p *sim.Plan) { p.ApplyDefaults() }

// writeTrace writes tr as JSON Lines.
func writeTrace(w io.Writer, tr *sim.Trace) error { return sim.WriteTrace(w, tr) }

// readTraceFile reads a JSON Lines trace.
func readTraceFile(path string) (*sim.Trace, error) { return sim.ReadTraceFile(path) }

// writeHTML renders one run's report.
func writeHTML(w io.Writer, run reports.Run) error { return reports.HTML(w, run) }

// writeIndex renders the index of a batch.
func writeIndex(w io.Writer, title string, entries []reports.IndexEntry) error {
	return reports.IndexTitled(w, title, entries)
}

// writeJSON writes one run's verdicts.
func writeJSON(w io.Writer, run reports.Run) error { return reports.JSON(w, run) }

// writeJUnit writes a batch as JUnit XML.
func writeJUnit(w io.Writer, runs []reports.Run) error { return reports.JUnit(w, runs) }
