package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/reports"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// Job is one run to do: a plan, and the scenario it comes from if any.
type Job struct {
	// ID names the run's folder under the output directory:
	// "<plan name>/<subject>", "/" in the subject written as "_".
	ID string
	// Plan is the plan to run (Plan.Subject set).
	Plan *sim.Plan
	// Scenario is the named scenario the plan comes from, whose
	// expectations judge the verdicts; nil for plan files and random plans,
	// where every failed verdict is unexpected.
	Scenario *scenarios.Scenario
}

// NewJob returns the job that runs p, judged by s when s is not nil.
func NewJob(p *sim.Plan, s *scenarios.Scenario) Job {
	return Job{ID: RunID(p), Plan: p, Scenario: s}
}

// RunID is the folder name of a run of p: "<name>/<subject>" with the
// subject's "/" written as "_" ("tombstone-after-410/bellerophon_no-uid-check").
func RunID(p *sim.Plan) string {
	name := p.Name
	if name == "" {
		name = fmt.Sprintf("plan-%d", p.Seed)
	}
	return Safe(name) + "/" + Safe(p.Subject)
}

func Safe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, s)
}

// ScenarioJobs returns one job per subject named in s's expectations (or
// only subject, if not ""), in file order.
func ScenarioJobs(s *scenarios.Scenario, subject string) []Job {
	subjects := s.Subjects()
	if subject != "" {
		// A subject the scenario says nothing about may run too: its
		// verdicts are reported, none is judged.
		subjects = []string{subject}
	}
	var jobs []Job
	for _, subj := range subjects {
		p := s.PlanFor(subj)
		jobs = append(jobs, NewJob(&p, s))
	}
	return jobs
}

// Result is one finished run.
type Result struct {
	Job Job
	// Trace is the recorded run (nil if the run could not start, or
	// dropped after the run was judged and written: Options.DropTraces).
	Trace *sim.Trace
	// End, Outcome and Records summarise Trace (its end, outcome and
	// record count); they stay when the trace is dropped.
	End     sim.Duration
	Outcome string
	Records int
	// Verdicts are the invariants' judgements of Trace.
	Verdicts []invariants.Verdict
	// Mismatches are the verdicts that differ from the scenario's
	// expectations (scenario jobs only).
	Mismatches []scenarios.Mismatch
	// Err is set when the run itself failed (the plan could not run, or the
	// bubble failed its *testing.T).
	Err error
	// Dir is the run's folder, "" when files were not written.
	Dir string
	// WriteErr is set when the run's files could not all be written.
	WriteErr error
	// Wall is the wall-clock time the run took.
	Wall time.Duration
}

// Judged reports whether the run's verdicts are judged against a scenario's
// expectations (false: every failed verdict is unexpected).
func (r *Result) Judged() bool { return r.Job.Scenario != nil }

// Unexpected returns the verdicts that count as unexpected: for a scenario
// job, those differing from its expectations (and the story's claims its
// run does not bear out); otherwise every failed verdict of a property of
// the subject, unless the subject is a mutant (see Caught). The sync-soundness verdicts (is
// "informer-synced", "quiescence", "desired"... a sound definition of
// synced?) measure definitions, most of which the subject does not rely
// on; outside a scenario that names them they are reported (Measured), not
// counted. A failure the subject's team accepts (SetAccepted) is not
// unexpected (see AcceptedFailures). A run that failed (Err) counts as one
// more.
func (r *Result) Unexpected() []string {
	var out []string
	if r.Err != nil {
		out = append(out, "run error: "+r.Err.Error())
	}
	if r.Judged() {
		for _, m := range r.Mismatches {
			out = append(out, m.String())
		}
		return out
	}
	if r.mutant() {
		return out
	}
	acc := r.acceptedFailures()
	for _, v := range r.Verdicts {
		if _, ok := acc[v.Invariant]; v.Failed() && !ok {
			out = append(out, v.Invariant+": "+v.Reason)
		}
	}
	return out
}

// IsMeasurement reports whether an invariant measures a definition of
// "synced" rather than a property of the subject (invariants.IsMeasurement).
func IsMeasurement(invariant string) bool { return invariants.IsMeasurement(invariant) }

// mutant reports whether the run's subject carries a deliberate,
// documented bug: outside a scenario, a property it fails is the lab
// catching it, as in a scenario that expects the failure.
func (r *Result) mutant() bool {
	info, ok := sim.LookupSubject(r.Job.Plan.Subject)
	return ok && info.Mutant
}

// Caught returns the failed properties that count as a bug caught: for a
// scenario job, those its expectations say fail (ExpectedFailures); for a
// random or file plan of a mutant, every failed property. Empty for the
// real subjects outside a scenario, whose failures are Unexpected.
func (r *Result) Caught() []string {
	if r.Judged() {
		return r.ExpectedFailures()
	}
	if !r.mutant() {
		return nil
	}
	var out []string
	for _, v := range r.Verdicts {
		if v.Failed() {
			out = append(out, v.Invariant)
		}
	}
	return out
}

// Measured returns the sync definitions that failed their soundness check
// and that no expectation of the run's scenario judges (see Unexpected).
func (r *Result) Measured() []string {
	var out []string
	for _, v := range r.Verdicts {
		if v.Status == invariants.Fail && IsMeasurement(v.Invariant) && !r.judges(v.Invariant) {
			out = append(out, strings.TrimPrefix(v.Invariant, invariants.NameSyncSoundnessPrefix))
		}
	}
	return out
}

// judges reports whether the run's scenario has an expectation for inv
// (by name or "*").
func (r *Result) judges(inv string) bool {
	if !r.Judged() {
		return false
	}
	for _, e := range r.Job.Scenario.ExpectedFor(r.Job.Plan.Subject) {
		if e.Invariant == inv || e.Invariant == "*" {
			return true
		}
	}
	return false
}

// ExpectedFailures returns the invariants that failed as the scenario said
// they would: the lab catching a mutant's bug.
func (r *Result) ExpectedFailures() []string {
	if !r.Judged() {
		return nil
	}
	bad := map[string]bool{}
	for _, m := range r.Mismatches {
		bad[m.Invariant] = true
	}
	var out []string
	for _, v := range r.Verdicts {
		if v.Status == invariants.Fail && !bad[v.Invariant] && r.expects(v.Invariant, invariants.Fail) {
			out = append(out, v.Invariant)
		}
	}
	return out
}

// expects reports whether the scenario expects status for inv.
func (r *Result) expects(inv string, status invariants.Status) bool {
	var star *scenarios.Expectation
	for _, e := range r.Job.Scenario.ExpectedFor(r.Job.Plan.Subject) {
		if e.Invariant == inv {
			return e.Status == status
		}
		if e.Invariant == "*" {
			e := e
			star = &e
		}
	}
	return star != nil && star.Status == status
}

// Unjudged returns the failed verdicts of properties of the subject that
// the scenario says nothing about (measurements are in Measured).
func (r *Result) Unjudged() []string {
	if !r.Judged() {
		return nil
	}
	var out []string
	for _, v := range r.Verdicts {
		if v.Status == invariants.Fail && !IsMeasurement(v.Invariant) && !r.judges(v.Invariant) {
			out = append(out, v.Invariant)
		}
	}
	return out
}

// OK reports whether the run went as expected.
func (r *Result) OK() bool { return len(r.Unexpected()) == 0 }

// Options configure RunBatch.
type Options struct {
	// Out is the output folder; "" writes no file.
	Out string
	// Replay returns the command that replays the plan saved at path.
	Replay func(planPath string) string
	// Accepted, optional, are the failures the controller's team accepts
	// (Controller.Expect): invariant -> reason, shown in the report.
	Accepted map[string]string
	// OnStart, optional, is called when a run starts (concurrently).
	OnStart func(j Job)
	// OnDone, optional, is called once per finished run, never
	// concurrently, in the order the runs finish.
	OnDone func(r *Result)
	// Sequential runs the jobs one at a time (default: in parallel, up to
	// the host's parallelism).
	Sequential bool
	// Parallel is how many runs go at a time unless Sequential (default
	// GOMAXPROCS; the host's own limit, testing's -parallel, also applies).
	Parallel int
	// DropTraces drops each Result's Trace once the run is judged, its
	// files are written and OnDone has returned, keeping its summary (End,
	// Outcome, Records) and verdicts: a campaign of thousands of runs then
	// holds a few kilobytes per run, not its whole trace (about 1.5 MB).
	DropTraces bool
	// Reference judges the runs of SetJudgedAsTest's subjects with the
	// differential oracle too (matches-reference, against fault-free runs
	// of the same plan that the batch keeps), as cachelabtest.Test does.
	// Off for callers that judge it against reference runs of their own
	// (the hunt).
	Reference bool
}

// RunBatch runs every job under host and returns their results in job
// order. hostOutput is the testing framework's output when it reported a
// failure of its own (for example a bubble whose goroutines outlived it).
func RunBatch(host Host, jobs []Job, opt Options) (results []*Result, hostOutput string) {
	results = make([]*Result, len(jobs))
	// The fault-free reference runs of the batch's plans, shared by its
	// runs (SetJudgedAsTest's subjects, with Options.Reference).
	var refs *ReferenceCache
	if opt.Reference {
		refs = &ReferenceCache{}
	}
	var mu sync.Mutex
	finish := func(r *Result) {
		mu.Lock()
		defer mu.Unlock()
		if opt.OnDone != nil {
			opt.OnDone(r)
		}
	}
	runJob := func(t *testing.T, i int) {
		job := jobs[i]
		t.Run(job.ID, func(t *testing.T) {
			if opt.OnStart != nil {
				opt.OnStart(job)
			}
			r := runOne(t, job, refs)
			if opt.Out != "" {
				r.Dir = filepath.Join(opt.Out, filepath.FromSlash(job.ID))
				r.WriteErr = WriteRun(r, opt)
			}
			results[i] = r
			finish(r)
			if opt.DropTraces {
				r.Trace = nil
			}
		})
	}
	ok, out := host(func(t *testing.T) {
		if opt.Sequential {
			for i := range jobs {
				runJob(t, i)
			}
			return
		}
		// A fixed set of parallel workers, each running its jobs as
		// sequential subtests: the testing package keeps every parallel
		// subtest (and what its cleanups hold: the run's server, recorder
		// and trace) until its parent ends, so one parallel subtest per
		// job made a campaign's memory grow by ~1.5 MB per run.
		next := make(chan int, len(jobs))
		for i := range jobs {
			next <- i
		}
		close(next)
		workers := opt.Parallel
		if workers <= 0 {
			workers = runtime.GOMAXPROCS(0)
		}
		for w := range min(workers, len(jobs)) {
			t.Run(fmt.Sprintf("worker-%d", w+1), func(t *testing.T) {
				t.Parallel()
				for i := range next {
					runJob(t, i)
				}
			})
		}
	})
	for i, r := range results {
		if r == nil {
			results[i] = &Result{Job: jobs[i], Err: fmt.Errorf("the run did not finish (see the testing output)")}
		}
	}
	if ok {
		out = ""
	}
	return results, out
}

// runOne runs one job in a subtest and judges it. A subject
// SetJudgedAsTest marks is judged as cachelabtest.Test judges it: with the
// health verdicts, and with matches-reference (its reference runs kept in
// refs) unless refs is nil.
func runOne(t *testing.T, job Job, refs *ReferenceCache) *Result {
	r := &Result{Job: job}
	start := time.Now()
	p := job.Plan
	var err error
	func() {
		// synctest.Test panics when a bubble ends with goroutines still
		// blocked in it: recover, so that one bad run does not end the batch.
		defer func() {
			if x := recover(); x != nil {
				err = fmt.Errorf("panic: %v", x)
			}
		}()
		r.Trace, err = RunPlan(t, p)
	}()
	r.Wall = time.Since(start)
	if err == nil && t.Failed() {
		err = fmt.Errorf("the run failed its testing.T (a goroutine outlived the bubble, or the sim reported an error)")
	}
	r.Err = err
	if r.Trace != nil {
		if r.Trace.Plan == nil {
			r.Trace.Plan = p
		}
		r.End, r.Outcome, r.Records = r.Trace.End, r.Trace.Outcome, len(r.Trace.Records)
		if r.Err == nil && Stopped(r.Trace.Outcome) {
			r.Err = fmt.Errorf("%s", r.Trace.Outcome)
		}
		r.Verdicts = CheckTrace(r.Trace)
		if judgedAsTestFor(p.Subject) {
			r.Verdicts = append(r.Verdicts, HealthVerdicts(r.Trace)...)
			if refs != nil {
				JudgeReference(r, refs, invariants.ReferenceOptions{}, func(p *sim.Plan) (*sim.Trace, error) { return RunPlan(t, p) })
			}
		}
	}
	if job.Scenario != nil && r.Err == nil {
		r.Mismatches = append(job.Scenario.Compare(p.Subject, r.Verdicts), job.Scenario.CheckClaims(p.Subject, r.Trace)...)
	}
	return r
}

// Stopped reports whether a run's outcome says it did not run to its end:
// an error, a livelock, or a spent record budget (Plan.MaxRecords). Its
// verdicts judge a cut trace, so the run counts as unexpected (Err), never
// as a pass, as in Catch.
func Stopped(outcome string) bool {
	for _, p := range []string{"error", "livelock", "budget"} {
		if strings.HasPrefix(outcome, p) {
			return true
		}
	}
	return false
}

// Files of one run, inside its folder.
const (
	PlanFile     = "plan.json"
	TraceFile    = "trace.jsonl"
	ReportFile   = "report.html"
	VerdictsFile = "verdicts.json"
)

// reportRun is the reports.Run of a result.
func reportRun(r *Result, opt Options) reports.Run {
	run := reports.Run{Plan: r.Job.Plan, Trace: r.Trace, Verdicts: r.Verdicts, Accepted: opt.Accepted}
	if run.Accepted == nil && r.Job.Plan != nil {
		run.Accepted = AcceptedIn(AcceptedFor(r.Job.Plan.Subject), r.Verdicts)
	}
	if opt.Replay != nil && r.Dir != "" {
		run.ReplayCommand = opt.Replay(filepath.Join(r.Dir, PlanFile))
	}
	return run
}

// WriteRun writes a run's files into r.Dir.
func WriteRun(r *Result, opt Options) error {
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return err
	}
	var errs []string
	write := func(name string, f func(*os.File) error) {
		fh, err := os.Create(filepath.Join(r.Dir, name))
		if err == nil {
			err = f(fh)
			if cerr := fh.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			errs = append(errs, name+": "+err.Error())
		}
	}
	write(PlanFile, func(f *os.File) error { return savePlan(f, r.Job.Plan) })
	run := reportRun(r, opt)
	if r.Trace != nil {
		write(TraceFile, func(f *os.File) error { return writeTrace(f, r.Trace) })
		write(ReportFile, func(f *os.File) error { return writeHTML(f, run) })
	}
	write(VerdictsFile, func(f *os.File) error { return writeJSON(f, run) })
	if len(errs) > 0 {
		return fmt.Errorf("writing %s: %s", r.Dir, strings.Join(errs, "; "))
	}
	return nil
}

// Batch file names, in the output folder.
const (
	IndexFile = "index.html"
	JUnitFile = "junit.xml"
)

// WriteBatch writes the index page and the JUnit XML of results into out.
//
// In the JUnit file a testcase is one scenario x subject, and it fails only
// when the run did not go as expected: for a scenario's run, a verdict that
// failed as the scenario expects (a mutant caught) is written as passing,
// with a reason saying so, and a verdict that differs from the expectation
// as failing; a failed verdict the scenario does not judge is written as
// unknown. For random and file plans a failed sync-soundness verdict (a
// measurement, see Result.Unexpected) is written as unknown. The index
// and the per-run files always show the verdicts as they are.
func WriteBatch(out, title string, results []*Result, opt Options) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	sorted := append([]*Result(nil), results...)
	sort.SliceStable(sorted, func(i, j int) bool { return NaturalLess(sorted[i].Job.ID, sorted[j].Job.ID) })
	var entries []reports.IndexEntry
	var runs []reports.Run
	for _, r := range sorted {
		run := reportRun(r, opt)
		if run.Trace == nil && (r.Outcome != "" || r.Records > 0) {
			// The trace was dropped (Options.DropTraces): its summary is
			// what the index and JUnit show.
			run.Trace = &sim.Trace{Plan: r.Job.Plan, End: r.End, Outcome: r.Outcome}
			run.Records = r.Records
		}
		href := ""
		if r.Dir != "" && (r.Trace != nil || r.Records > 0) {
			if rel, err := filepath.Rel(out, filepath.Join(r.Dir, ReportFile)); err == nil {
				href = filepath.ToSlash(rel)
			}
		}
		e := reports.NewIndexEntry(run, href)
		e.Expected, e.Note = expectation(r)
		entries = append(entries, e)
		run.Verdicts = junitVerdicts(r)
		if r.Err != nil {
			// JUnit marks a run that failed as such (<error>) from the
			// trace's outcome; the run's own files keep the real outcome.
			t := sim.Trace{}
			if r.Trace != nil {
				t = *r.Trace
			}
			t.Outcome = "error: " + r.Err.Error()
			run.Trace = &t
		}
		runs = append(runs, run)
	}
	var errs []string
	for _, f := range []struct {
		name  string
		write func(*os.File) error
	}{
		{IndexFile, func(f *os.File) error { return writeIndex(f, title, entries) }},
		{JUnitFile, func(f *os.File) error { return writeJUnit(f, runs) }},
		{CourseFile, writeCourse},
	} {
		fh, err := os.Create(filepath.Join(out, f.name))
		if err == nil {
			err = f.write(fh)
			if cerr := fh.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			errs = append(errs, f.name+": "+err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("writing %s: %s", out, strings.Join(errs, "; "))
	}
	return nil
}

// expectation is how the index shows whether r went as expected, and why:
// the unexpected verdicts, else the bugs caught and the sync definitions
// measured unsound (why the raw result says fail).
func expectation(r *Result) (reports.Expectation, string) {
	if !r.OK() {
		var what []string
		if r.Err != nil {
			what = append(what, "the run failed: "+FirstLineOf(r.Err.Error()))
		}
		if r.Judged() {
			for _, m := range r.Mismatches {
				if m.Claim != "" {
					what = append(what, fmt.Sprintf("the story's claim %q does not hold: %s", m.Claim, m.Reason))
					continue
				}
				got := m.Got
				if got == "" {
					got = "no verdict"
				}
				what = append(what, fmt.Sprintf("%s (expected %s, got %s)", m.Invariant, m.Want, got))
			}
		} else {
			acc := r.acceptedFailures()
			for _, v := range r.Verdicts {
				if _, ok := acc[v.Invariant]; v.Status == invariants.Fail && !IsMeasurement(v.Invariant) && !ok {
					what = append(what, v.Invariant)
				}
			}
		}
		return reports.Unexpected, "unexpected: " + strings.Join(what, "; ")
	}
	var parts []string
	if a := r.AcceptedFailures(); len(a) > 0 {
		parts = append(parts, "expected fail: "+strings.Join(a, ", "))
	}
	if c := r.Caught(); len(c) > 0 {
		parts = append(parts, "caught: "+strings.Join(c, ", "))
	} else if !r.Judged() && r.mutant() {
		parts = append(parts, "not caught by this plan")
	}
	if u := r.Unjudged(); len(u) > 0 {
		parts = append(parts, "also failed: "+strings.Join(u, ", "))
	}
	if m := r.Measured(); len(m) > 0 {
		parts = append(parts, "unsound sync: "+strings.Join(m, ", "))
	}
	return reports.AsExpected, strings.Join(parts, "; ")
}

// FirstLineOf is s up to its first newline (all of s when it has none): a
// verdict's reason or an error as one line of a run line or table.
func FirstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// junitVerdicts are r's verdicts as the JUnit file shows them (see
// WriteBatch).
func junitVerdicts(r *Result) []invariants.Verdict {
	if !r.Judged() {
		// Measurements stay measurements (reports.JUnit never fails a
		// testcase on them); a mutant's failed property is a bug caught.
		mutant := r.mutant()
		out := make([]invariants.Verdict, 0, len(r.Verdicts))
		for _, v := range r.Verdicts {
			if mutant && v.Failed() {
				v.Status = invariants.Pass
				v.Reason = "caught (the subject is a mutant with a documented bug): " + v.Reason
			}
			out = append(out, v)
		}
		return out
	}
	mism := map[string]scenarios.Mismatch{}
	for _, m := range r.Mismatches {
		mism[m.Invariant] = m
	}
	out := make([]invariants.Verdict, 0, len(r.Verdicts))
	for _, v := range r.Verdicts {
		switch m, bad := mism[v.Invariant]; {
		case bad:
			// A verdict that differs from the scenario fails the run,
			// measurement or not.
			v.Status, v.Measurement = invariants.Fail, false
			v.Reason = fmt.Sprintf("expected %s, got %s: %s", m.Want, m.Got, v.Reason)
		case v.Status == invariants.Fail && r.expects(v.Invariant, invariants.Fail):
			v.Status, v.Measurement = invariants.Pass, false
			v.Reason = "failed as the scenario expects: " + v.Reason
		case v.Failed():
			v.Status = invariants.Unknown
			v.Reason = "failed, but the scenario does not judge it: " + v.Reason
		}
		out = append(out, v)
	}
	for _, m := range r.Mismatches {
		if m.Claim != "" {
			out = append(out, invariants.Verdict{Invariant: "claim: " + m.Claim, Status: invariants.Fail, Reason: fmt.Sprintf("the story claims it (line %d), but %s", m.Line, m.Reason)})
			continue
		}
		if m.Got == "" {
			out = append(out, invariants.Verdict{Invariant: m.Invariant, Status: invariants.Fail, Reason: fmt.Sprintf("expected %s, but no verdict was returned", m.Want)})
		}
	}
	return out
}

// NaturalLess orders names as a person would: runs of digits by their
// value, so random-2 comes before random-10 (as text it comes after).
func NaturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitsPrefix(a), digitsPrefix(b)
		switch {
		case da != "" && db != "":
			na, nb := strings.TrimLeft(da, "0"), strings.TrimLeft(db, "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[len(da):], b[len(db):]
		case a[0] != b[0]:
			return a[0] < b[0]
		default:
			a, b = a[1:], b[1:]
		}
	}
	return len(a) < len(b)
}

func digitsPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// Judge fills r from a run's trace and error: the invariants' verdicts and
// the controller's health.
func Judge(r *Result, tr *sim.Trace, err error) {
	r.Trace, r.Err = tr, err
	if tr == nil {
		return
	}
	if tr.Plan == nil {
		tr.Plan = r.Job.Plan
	}
	if r.Err == nil && Stopped(tr.Outcome) {
		r.Err = fmt.Errorf("%s", tr.Outcome)
	}
	r.Err = causeFirst(r.Err, tr.Outcome)
	r.Verdicts = append(CheckTrace(tr), HealthVerdicts(tr)...)
}

// causeFirst returns err led by the error the trace's outcome records
// ("error: sim: subject x: start: no config"), when err (the bubble's own
// end: synctest's "deadlock" over the goroutines a failed start left
// blocked) does not already say it: the start error is the cause, the
// blocked goroutines its consequence. A stuck run's error is kept as is.
func causeFirst(err error, outcome string) error {
	cause, ok := strings.CutPrefix(outcome, "error: ")
	if err == nil || !ok || cause == "" || strings.Contains(err.Error(), cause) {
		return err
	}
	if _, stuck := err.(*StuckError); stuck {
		return err
	}
	return fmt.Errorf("%s; then %w", cause, err)
}

// Failures lists what failed in r: the run's error, then each failed
// verdict that judges the controller (not the sync-soundness
// measurements).
func (r *Result) Failures() []invariants.Verdict {
	var out []invariants.Verdict
	if r.Err != nil {
		out = append(out, invariants.Verdict{Invariant: "run", Status: invariants.Fail, Reason: r.Err.Error()})
	}
	for _, v := range r.Verdicts {
		if v.Status == invariants.Fail && !IsMeasurement(v.Invariant) {
			out = append(out, v)
		}
	}
	return out
}
