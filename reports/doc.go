// Package reports renders a run (Plan, Trace, Verdicts) as one self-contained
// offline HTML file, JSON and JUnit XML. Every function is a pure function of
// its input.
package reports
