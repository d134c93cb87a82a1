package reports

import (
	"errors"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// Run is one run to report: what was asked (Plan), what happened (Trace),
// what the invariants concluded (Verdicts) and how to do it again.
type Run struct {
	// Plan is the plan that was run. Optional when Trace.Plan is set; when
	// both are set, Plan wins.
	Plan *sim.Plan
	// Trace is the recorded run. Required by HTML; JSON and JUnit read only
	// its End and Outcome and accept nil.
	Trace *sim.Trace
	// Verdicts are the invariants' judgements, in the order to show them.
	Verdicts []invariants.Verdict
	// ReplayCommand is the shell command that replays the run
	// ("cachelab replay out/tombstone-after-410/plan.json"). Optional.
	ReplayCommand string
	// Title is the page title. Optional; default "<scenario> / <subject>".
	Title string
	// Records, optional, is the trace's record count when Trace is a
	// summary whose records were dropped (a long campaign keeps only End
	// and Outcome of each run); 0 means len(Trace.Records).
	Records int
	// Accepted, optional, are failures the controller's team knows and
	// accepts on purpose (cachelabtest's Controller.Expect): invariant ->
	// reason. A failed verdict named here is shown as an expected
	// failure, with the reason; it stays failed.
	Accepted map[string]string
}

// displayLabel is how a report draws v: its Label, but "n/a" for an
// Unknown the subject gave nothing to judge (Verdict.NotApplicable),
// drawn grey apart from the yellow Unknown a missing record causes.
func displayLabel(v invariants.Verdict) string {
	if v.Status == invariants.Unknown && v.NotApplicable && !v.Measurement && !invariants.IsMeasurement(v.Invariant) {
		return "n/a"
	}
	return v.Label()
}

// labelClass is the CSS class of a display label ("n/a" -> "na").
func labelClass(label string) string {
	if label == "n/a" {
		return "na"
	}
	return label
}

// recordCount is the run's number of trace records.
func (r Run) recordCount() int {
	if r.Records > 0 || r.Trace == nil {
		return r.Records
	}
	return len(r.Trace.Records)
}

// IndexEntry is one run listed by Index.
type IndexEntry struct {
	// Scenario is the plan's name ("tombstone-after-410", "random-42").
	Scenario string
	// Subject is the subject's registry name ("bellerophon").
	Subject string
	// Seed is the plan's seed.
	Seed uint64
	// Verdicts are the run's verdicts.
	Verdicts []invariants.Verdict
	// Report is the link to the run's HTML report, relative to the index
	// page ("tombstone-after-410/bellerophon/report.html"). Optional.
	Report string
	// Outcome is the trace's outcome ("quiet", "deadline", "error: ...").
	// Optional.
	Outcome string
	// Expected says whether the run went as its scenario (or, for a
	// random or file plan, the lab) expects: AsExpected, Unexpected, or ""
	// when nothing judged it. The index shows it beside the raw result,
	// which counts an expected failure (a mutant caught) or an unsound sync
	// definition (a measurement) as "fail". Optional.
	Expected Expectation
	// Note is shown next to the run's expectation or result, e.g. "caught
	// as expected: finalizers" or "expected fail, got pass". Optional.
	Note string
}

// Expectation is whether a run went as expected (see IndexEntry.Expected).
type Expectation string

// The expectations of a run.
const (
	// AsExpected: every verdict is what the scenario expects (failures
	// included), or, for a plan without a scenario, no property of the
	// subject failed.
	AsExpected Expectation = "as expected"
	// Unexpected: at least one verdict differs from the expectation, or the
	// run could not run.
	Unexpected Expectation = "unexpected"
)

// NewIndexEntry describes run for Index, linking to its report at href
// (relative to the index page).
func NewIndexEntry(run Run, href string) IndexEntry {
	e := IndexEntry{Verdicts: run.Verdicts, Report: href}
	if p := run.plan(); p != nil {
		e.Scenario, e.Subject, e.Seed = p.Name, p.Subject, p.Seed
	}
	if run.Trace != nil {
		e.Outcome = run.Trace.Outcome
	}
	return e
}

// ErrNoPlan is returned when a Run has neither a Plan nor a Trace.Plan.
var ErrNoPlan = errors.New("reports: run has no plan (set Run.Plan or Run.Trace.Plan)")

// ErrNoTrace is returned by HTML when Run.Trace is nil.
var ErrNoTrace = errors.New("reports: run has no trace (set Run.Trace; a report shows what happened)")

// plan returns the run's plan: Run.Plan, else Trace.Plan, else nil.
func (r Run) plan() *sim.Plan {
	if r.Plan != nil {
		return r.Plan
	}
	if r.Trace != nil {
		return r.Trace.Plan
	}
	return nil
}

// title returns Run.Title or its default.
func (r Run) title() string {
	if r.Title != "" {
		return r.Title
	}
	if p := r.plan(); p != nil {
		return nameOr(p.Name, "unnamed plan") + " / " + nameOr(p.Subject, "no subject")
	}
	return "cachelab run"
}

// caseName is the JUnit and index name of a run: "<scenario>/<subject>".
func caseName(p *sim.Plan) string {
	return nameOr(p.Name, "unnamed") + "/" + nameOr(p.Subject, "unknown-subject")
}

func nameOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// OverallStatus folds the verdicts of properties into one status: Fail if
// any failed, else Unknown if any is unknown or there is none, else Pass.
// Measurements (invariants.IsMeasurement: how often a definition of
// "synced" lied) are not properties of the run and never count: a run is
// red only when an invariant it must hold fails.
func OverallStatus(vs []invariants.Verdict) invariants.Status {
	st, n := invariants.Pass, 0
	for _, v := range vs {
		if v.Measurement || invariants.IsMeasurement(v.Invariant) {
			continue
		}
		n++
		switch v.Status {
		case invariants.Fail:
			return invariants.Fail
		case invariants.Pass:
		default:
			st = invariants.Unknown
		}
	}
	if n == 0 {
		return invariants.Unknown
	}
	return st
}
