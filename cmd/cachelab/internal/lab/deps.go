package lab

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/reports"
	"github.com/cachelab/cachelab/sim"
)

// This file is the lab's only contact with the other packages' entry
// points, so that their signatures are adapted in one place.

// errNotYet is returned by entry points of packages still being built.
var errNotYet = errors.New("lab: this part of cachelab is not built yet")

// runPlan runs p in a synctest bubble under t and returns its trace.
func runPlan(t *testing.T, p *sim.Plan) (*sim.Trace, error) {
	return nil, errNotYet
}

// checkTrace judges a trace with every invariant.
func checkTrace(tr *sim.Trace) []invariants.Verdict { return nil }

// InvariantNames lists the invariants' names, in check order.
func InvariantNames() []string { return nil }

// loadPlanFile reads a plan file, with errors naming field and line.
func loadPlanFile(path string) (*sim.Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p sim.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// savePlan writes p as indented JSON.
func savePlan(w io.Writer, p *sim.Plan) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

// writeTrace writes tr as JSON Lines.
func writeTrace(w io.Writer, tr *sim.Trace) error { return errNotYet }

// readTraceFile reads a JSON Lines trace.
func readTraceFile(path string) (*sim.Trace, error) { return nil, errNotYet }

// writeHTML renders one run's report.
func writeHTML(w io.Writer, run reports.Run) error { return errNotYet }

// writeIndex renders the index of a batch.
func writeIndex(w io.Writer, title string, entries []reports.IndexEntry) error { return errNotYet }

// writeJSON writes one run's verdicts.
func writeJSON(w io.Writer, run reports.Run) error { return reports.JSON(w, run) }

// writeJUnit writes a batch as JUnit XML.
func writeJUnit(w io.Writer, runs []reports.Run) error { return reports.JUnit(w, runs) }

// applyDefaults sets a plan's optional fields to their defaults.
func applyDefaults(p *sim.Plan) {}

// InvariantInfo describes one invariant for `cachelab list`.
type InvariantInfo struct {
	Name, Summary, Contract string
}

// Invariants lists the invariants, in check order.
func Invariants() []InvariantInfo { return nil }
