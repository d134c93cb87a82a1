package reports

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/invariants"
)

// cssColour returns the colour a stylesheet gives selector (its first
// "color:" declaration), with var(--x) resolved from base.css.
func cssColour(t *testing.T, css, selector string) string {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(selector) + `\s*\{[^}]*?color:\s*([^;}]+)`).FindStringSubmatch(css)
	if m == nil {
		t.Fatalf("no colour for %s", selector)
	}
	c := strings.TrimSpace(m[1])
	if v := regexp.MustCompile(`^var\((--[\w-]+)\)$`).FindStringSubmatch(c); v != nil {
		d := regexp.MustCompile(regexp.QuoteMeta(v[1]) + `:\s*([^;]+);`).FindStringSubmatch(asset("base.css"))
		if d == nil {
			t.Fatalf("base.css does not define %s", v[1])
		}
		c = strings.TrimSpace(d[1])
	}
	return c
}

// On a judged index, a subject whose only failures were expected (a
// contrast variant or a mutant caught) does not show a red "fail": its
// fail count is drawn as expected, and so is the run's result badge; a
// subject with an unexpected failure stays red.
func TestIndexBySubjectDoesNotShowAnExpectedFailureAsRed(t *testing.T) {
	caught := NewIndexEntry(fixtureFailing(), "a/naivecache/report.html")
	caught.Expected, caught.Note = AsExpected, "caught: convergence"
	missed := NewIndexEntry(fixtureFailing(), "b/other/report.html")
	missed.Subject, missed.Expected = "other", Unexpected
	var b bytes.Buffer
	if err := IndexTitled(&b, "t", []IndexEntry{caught, missed}); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if !strings.Contains(html, `<td class="mono">naivecache</td><td>1</td><td class="n-pass">1</td><td class="">0</td><td class="n-pass">0</td><td class="n-expected" title="1 of these failed as expected (a mutant or contrast variant caught)">1 <span class="expl">(1 expected)</span></td>`) {
		t.Errorf("the expected failure's subject row is not drawn as expected:\n%s", html)
	}
	if !strings.Contains(html, `<td class="mono">other</td><td>1</td><td class="n-pass">0</td><td class="n-fail">1</td><td class="n-pass">0</td><td class="n-fail">1</td>`) {
		t.Errorf("the unexpected failure's subject row is not red")
	}
	if n := strings.Count(html, `<span class="badge expected" title="failed as its scenario expects">fail</span>`); n != 1 {
		t.Errorf("%d result badges drawn as expected failures, want 1", n)
	}
	css := asset("index.css") + asset("base.css")
	if red, exp := cssColour(t, css, ".n-fail"), cssColour(t, css, ".n-expected"); red == exp {
		t.Errorf(".n-expected has the failure's colour %s", red)
	}
	if red, exp := cssColour(t, css, ".badge.fail"), cssColour(t, css, ".badge.expected"); red == exp {
		t.Errorf(".badge.expected has the failure's colour %s", red)
	}
}

// The first-failure card's "No difference" (the cache agreed with the
// server on the objects involved) sits beside a FAIL: it is drawn neutral,
// not in the pass colour, and says the failure is something else.
func TestNoDifferenceBesideAFailureIsNotGreen(t *testing.T) {
	run := fixtureFailing()
	run.Verdicts[0].Positions = []int{10}
	html := string(renderHTML(t, run))
	if !strings.Contains(html, `<p class="nodiff">No difference: the cache and the server agree on the objects compared here, so this failure is not a cache behind the server on them`) {
		t.Fatalf("the report's No difference line is not the neutral one")
	}
	css := asset("report.css") + asset("base.css")
	if pass, nd := cssColour(t, css, ".badge.pass"), cssColour(t, css, ".nodiff"); pass == nd {
		t.Errorf(".nodiff has the pass colour %s", pass)
	}
}

// A failure the controller's team accepts (Run.Accepted) keeps its fail
// badge and gets an "expected" one with the reason; other failures do not.
func TestAnAcceptedFailureShowsItsReason(t *testing.T) {
	run := fixtureFailing()
	run.Accepted = map[string]string{run.Verdicts[0].Invariant: "retried 409s are fine here"}
	html := string(renderHTML(t, run))
	if !strings.Contains(html, `<span class="badge fail">fail</span> <span class="badge expected"`) ||
		!strings.Contains(html, "Expected failure, accepted by the controller's team (Controller.Expect): retried 409s are fine here") {
		t.Errorf("the accepted failure is not shown with its reason")
	}
	if n := strings.Count(html, `<span class="badge expected"`); n != 1 {
		t.Errorf("%d expected badges, want 1", n)
	}
}

// An invariant the subject gave nothing to judge (Verdict.NotApplicable)
// is drawn "n/a" in grey, apart from the yellow Unknown of a missing
// record, in the report and in the index.
func TestANotApplicableInvariantIsNotAYellowUnknown(t *testing.T) {
	run := fixtureFailing()
	run.Verdicts = append(run.Verdicts,
		invariants.Verdict{Invariant: "no-lost-updates", Status: invariants.Unknown, NotApplicable: true, Reason: "the subject made no update or patch"},
		invariants.Verdict{Invariant: "no-lost-deletes", Status: invariants.Unknown, Reason: "the trace has no final server state"})
	html := string(renderHTML(t, run))
	for _, want := range []string{
		`<li class="verdict v-na"`,
		`<span class="badge na" title="not applicable: the subject did nothing this invariant is about">n/a</span>`,
		`<li class="verdict v-unknown"`,
		`<span class="badge unknown">unknown</span>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	css := asset("base.css")
	if u, na := cssColour(t, css, ".badge.unknown"), cssColour(t, css, ".badge.na"); u == na {
		t.Errorf("n/a and unknown share the colour %s", u)
	}
	var b bytes.Buffer
	if err := Index(&b, []IndexEntry{NewIndexEntry(run, "r.html")}); err != nil {
		t.Fatal(err)
	}
	if idx := b.String(); !strings.Contains(idx, `<td data-v="n/a" title="the subject made no update or patch"><span class="dot na"></span>n/a</td>`) {
		t.Errorf("the index does not draw the not-applicable cell as n/a")
	}
}

// The index says how many property verdicts of the batch could not judge,
// unknown (a record missing) and n/a (nothing to judge) apart, with the
// reasons; measurements are not counted. The JSON marks an n/a verdict.
func TestIndexReportsTheShareOfVerdictsThatCouldNotJudge(t *testing.T) {
	run := fixtureFailing()
	run.Verdicts = append(run.Verdicts,
		invariants.Verdict{Invariant: "no-lost-updates", Status: invariants.Unknown, NotApplicable: true, Short: "no update or patch by the subject", Reason: "the subject made no update or patch"},
		invariants.Verdict{Invariant: "finalizers", Status: invariants.Unknown, Reason: "the trace has no final server state: nothing to compare"})
	props, unknown := 0, 0
	for _, v := range run.Verdicts {
		if !v.Measurement && !invariants.IsMeasurement(v.Invariant) {
			props++
			if v.Status == invariants.Unknown && !v.NotApplicable {
				unknown++
			}
		}
	}
	var b bytes.Buffer
	if err := IndexTitled(&b, "t", []IndexEntry{NewIndexEntry(run, "a/report.html")}); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	want := fmt.Sprintf("Properties that could not judge, of %d property verdicts in 1 runs, %d unknown", props, unknown)
	for _, w := range []string{want, "1 n/a", "1 the trace has no final server state (finalizers)", "n/a: 1 no update or patch by the subject (no-lost-updates)"} {
		if !strings.Contains(html, w) {
			t.Errorf("index lacks %q", w)
		}
	}
	var j bytes.Buffer
	if err := JSON(&j, run); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(j.String(), `"notApplicable": true`); n != 1 {
		t.Errorf("JSON marks %d verdicts n/a, want 1:\n%s", n, j.String())
	}
}
