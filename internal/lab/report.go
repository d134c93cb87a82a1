package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/reports"
	"github.com/cachelab/cachelab/sim"
)

// ErrWrite is wrapped by errors writing output files.
var ErrWrite = errors.New("lab: cannot write the output")

// DefaultReportPath is where `cachelab report TRACE` writes by default:
// report.html next to a trace.jsonl, else TRACE with the extension .html.
func DefaultReportPath(trace string) string {
	if filepath.Base(trace) == TraceFile {
		return filepath.Join(filepath.Dir(trace), ReportFile)
	}
	return strings.TrimSuffix(trace, filepath.Ext(trace)) + ".html"
}

// ReportTrace reads the trace at tracePath, judges it, and writes its HTML
// report to htmlPath. replay, optional, makes the replay command of the
// trace's plan (a plan.json next to the trace, else the trace itself).
func ReportTrace(tracePath, htmlPath string, replay func(planPath string) string) ([]invariants.Verdict, error) {
	if err := CheckFile(tracePath, "a trace.jsonl written by `cachelab run` or `cachelab serve`"); err != nil {
		return nil, err
	}
	switch SniffFile(tracePath) {
	case KindPlan:
		if strings.HasSuffix(tracePath, ".jsonl") {
			break // a trace without its header: readTraceFile says so
		}
		return nil, fmt.Errorf("%s is a plan, not a trace: `cachelab replay %s` runs it and writes its trace; or report the trace.jsonl of its run", tracePath, tracePath)
	case KindScenario:
		return nil, fmt.Errorf("%s is a scenario file, not a trace: `cachelab run %s` runs it and writes each run's trace.jsonl and report.html", tracePath, tracePath)
	case KindHTML:
		return nil, fmt.Errorf("%s is already an HTML report: open it in a browser, or give the trace.jsonl next to it", tracePath)
	case KindVerdicts:
		return nil, fmt.Errorf("%s is a run's verdicts (verdicts.json), not a trace: its report.html is beside it; to render it again, give the trace.jsonl next to it", tracePath)
	}
	tr, err := readTraceFile(tracePath)
	if err != nil {
		return nil, traceReadError(tracePath, err)
	}
	vs := CheckTrace(tr)
	run := reports.Run{Trace: tr, Verdicts: vs}
	if replay != nil && replayable(tr) {
		plan := filepath.Join(filepath.Dir(tracePath), PlanFile)
		if _, err := os.Stat(plan); err != nil {
			plan = tracePath
		}
		run.ReplayCommand = replay(plan)
	}
	f, err := os.Create(htmlPath)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrWrite, err)
	}
	if err := writeHTML(f, run); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrWrite, htmlPath, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrWrite, err)
	}
	return vs, nil
}

// VerdictDiff judges the recorded trace again (checks are pure functions
// of a trace) and lists the invariants whose status differs from now.
func VerdictDiff(recorded *sim.Trace, now []invariants.Verdict) []string {
	before := map[string]invariants.Status{}
	for _, v := range CheckTrace(recorded) {
		before[v.Invariant] = v.Status
	}
	var out []string
	for _, v := range now {
		if b, ok := before[v.Invariant]; ok && b != v.Status {
			out = append(out, fmt.Sprintf("%s: recorded %s, replayed %s", v.Invariant, b, v.Status))
		}
	}
	return out
}
