package reports

import (
	"bytes"
	"fmt"
	"io"
	"sort"

	"github.com/cachelab/cachelab/invariants"
)

// indexPage is the index template's input.
type indexPage struct {
	Title      string
	Invariants []indexColumn
	Rows       []indexRow
	Subjects   []subjectSummary
	Total      subjectSummary
	// Judged is true when some run says whether it went as expected; the
	// page then leads with that, not with the raw verdicts.
	Judged bool
	// Share says how many property verdicts of the batch could not judge,
	// unknown (a record missing) and n/a (nothing to judge) apart, with
	// the top reasons (invariants.UnknownShare); "" for no verdict.
	Share string
}

type indexRow struct {
	IndexEntry
	Status invariants.Status
	Cells  []indexCell
}

// indexColumn is one invariant's column.
type indexColumn struct {
	Name string
	// Measurement is true for a sync-soundness column: its cells read
	// sound or unsound, never fail.
	Measurement bool
}

type indexCell struct {
	Status invariants.Status // "" when the run did not check the invariant
	// Label is the cell's text: pass, fail, unknown, n/a; sound,
	// unsound for a measurement. Class is its CSS class.
	Label, Class string
	Reason       string
}

// subjectSummary counts a subject's runs by overall status.
type subjectSummary struct {
	Subject             string
	Runs                int
	Pass, Fail, Unknown int
	// AsExpected and Unexpected count the runs by IndexEntry.Expected.
	AsExpected, Unexpected int
	// ExpectedFail counts the runs that failed as expected (a mutant or a
	// contrast variant caught): the Fail that is not red.
	ExpectedFail int
}

// FailClass is the CSS class of the subject's raw fail count: red only
// when a run failed that was not expected to (or nothing judged it);
// "n-expected" when every failure was expected.
func (s subjectSummary) FailClass() string {
	switch {
	case s.Fail == 0:
		return "n-zero"
	case s.Fail == s.ExpectedFail:
		return "n-expected"
	}
	return "n-fail"
}

func (s *subjectSummary) add(st invariants.Status, exp Expectation) {
	s.Runs++
	switch exp {
	case AsExpected:
		s.AsExpected++
	case Unexpected:
		s.Unexpected++
	}
	switch st {
	case invariants.Pass:
		s.Pass++
	case invariants.Fail:
		s.Fail++
		if exp == AsExpected {
			s.ExpectedFail++
		}
	default:
		s.Unknown++
	}
}

// Index writes an offline HTML page listing a batch of runs: a summary of
// pass/fail per subject, then a sortable table with one row per run
// (scenario, subject, seed, one column per invariant, the overall status
// and a link to the run's report). When entries say whether they went as
// expected (IndexEntry.Expected), the page leads with that: the header
// counts runs as expected and unexpected, each row and subject shows it,
// and only unexpected rows are marked red. Rows keep the order given until
// a column header is clicked. It is a pure function of entries.
func Index(w io.Writer, entries []IndexEntry) error {
	return IndexTitled(w, "", entries)
}

// IndexTitled is Index with a title saying what the batch was
// ("cachelab: every built-in scenario"); the run count is added to it.
func IndexTitled(w io.Writer, title string, entries []IndexEntry) error {
	if title == "" {
		title = "cachelab"
	}
	page := indexPage{Title: fmt.Sprintf("%s: %d runs", title, len(entries))}
	if len(entries) == 1 {
		page.Title = title + ": 1 run"
	}
	col := map[string]int{}
	for _, e := range entries {
		for _, v := range e.Verdicts {
			if _, ok := col[v.Invariant]; !ok {
				col[v.Invariant] = len(page.Invariants)
				page.Invariants = append(page.Invariants, indexColumn{Name: v.Invariant, Measurement: v.Measurement || invariants.IsMeasurement(v.Invariant)})
			}
		}
	}
	subj := map[string]*subjectSummary{}
	var share invariants.UnknownShare
	for _, e := range entries {
		share.Add(e.Verdicts)
		row := indexRow{IndexEntry: e, Status: OverallStatus(e.Verdicts), Cells: make([]indexCell, len(page.Invariants))}
		for _, v := range e.Verdicts {
			c := &row.Cells[col[v.Invariant]]
			if c.Status == "" || v.Status == invariants.Fail {
				c.Status, c.Label, c.Reason = v.Status, displayLabel(v), v.Reason
				c.Class = labelClass(c.Label)
			}
		}
		page.Rows = append(page.Rows, row)
		s := subj[e.Subject]
		if s == nil {
			s = &subjectSummary{Subject: e.Subject}
			subj[e.Subject] = s
		}
		s.add(row.Status, e.Expected)
		page.Total.add(row.Status, e.Expected)
		page.Judged = page.Judged || e.Expected != ""
	}
	page.Share = share.String()
	for _, s := range subj {
		page.Subjects = append(page.Subjects, *s)
	}
	sort.Slice(page.Subjects, func(i, j int) bool { return page.Subjects[i].Subject < page.Subjects[j].Subject })
	var b bytes.Buffer
	if err := indexTmpl.Execute(&b, page); err != nil {
		return fmt.Errorf("reports: rendering index: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// RowClass is the run row's CSS class: when the page is judged, only an
// unexpected run is marked (a failure the scenario expects is the lab
// working); otherwise the raw result.
func (r indexRow) RowClass(judged bool) string {
	if judged {
		if r.Expected == Unexpected {
			return "r-fail"
		}
		return ""
	}
	return "r-" + string(r.Status)
}

// ResultClass is the CSS class of the run's raw result badge: on a judged
// page, a failure its scenario expects (a mutant caught) is drawn as
// "expected", not as a red fail.
func (r indexRow) ResultClass(judged bool) string {
	if judged && r.Status == invariants.Fail && r.Expected == AsExpected {
		return "expected"
	}
	return string(r.Status)
}

// ExpectedStatus is the status the expectation cell is drawn and sorted
// as: pass for as expected, fail for unexpected, unknown when not judged.
func (r indexRow) ExpectedStatus() invariants.Status {
	switch r.Expected {
	case AsExpected:
		return invariants.Pass
	case Unexpected:
		return invariants.Fail
	}
	return invariants.Unknown
}
