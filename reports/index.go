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
	Invariants []string
	Rows       []indexRow
	Subjects   []subjectSummary
	Total      subjectSummary
}

type indexRow struct {
	IndexEntry
	Status invariants.Status
	Cells  []indexCell
}

type indexCell struct {
	Status invariants.Status // "" when the run did not check the invariant
	Reason string
}

// subjectSummary counts a subject's runs by overall status.
type subjectSummary struct {
	Subject             string
	Runs                int
	Pass, Fail, Unknown int
}

func (s *subjectSummary) add(st invariants.Status) {
	s.Runs++
	switch st {
	case invariants.Pass:
		s.Pass++
	case invariants.Fail:
		s.Fail++
	default:
		s.Unknown++
	}
}

// Index writes an offline HTML page listing a batch of runs: a summary of
// pass/fail per subject, then a sortable table with one row per run
// (scenario, subject, seed, one column per invariant, the overall status
// and a link to the run's report). Rows keep the order given until a
// column header is clicked. It is a pure function of entries.
func Index(w io.Writer, entries []IndexEntry) error {
	page := indexPage{Title: fmt.Sprintf("cachelab: %d runs", len(entries))}
	if len(entries) == 1 {
		page.Title = "cachelab: 1 run"
	}
	col := map[string]int{}
	for _, e := range entries {
		for _, v := range e.Verdicts {
			if _, ok := col[v.Invariant]; !ok {
				col[v.Invariant] = len(page.Invariants)
				page.Invariants = append(page.Invariants, v.Invariant)
			}
		}
	}
	subj := map[string]*subjectSummary{}
	for _, e := range entries {
		row := indexRow{IndexEntry: e, Status: OverallStatus(e.Verdicts), Cells: make([]indexCell, len(page.Invariants))}
		for _, v := range e.Verdicts {
			c := &row.Cells[col[v.Invariant]]
			if c.Status == "" || v.Status == invariants.Fail {
				c.Status, c.Reason = v.Status, v.Reason
			}
		}
		page.Rows = append(page.Rows, row)
		s := subj[e.Subject]
		if s == nil {
			s = &subjectSummary{Subject: e.Subject}
			subj[e.Subject] = s
		}
		s.add(row.Status)
		page.Total.add(row.Status)
	}
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
