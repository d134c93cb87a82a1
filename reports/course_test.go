package reports

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestCoursePageShowsEachStopsLessonScenariosAndGaps: a stop with a
// scenario links each subject's report and says which fails; a stop
// without one says so; text is escaped.
func TestCoursePageShowsEachStopsLessonScenariosAndGaps(t *testing.T) {
	var b bytes.Buffer
	err := Course(&b, []CoursePart{{Letter: "A", Question: `What does "synced" mean?`, Stops: []CourseStop{
		{Label: "A1", Title: "Store synced", Lesson: "Wait for the <handler>.", Scenarios: []CourseScenario{{
			Name: "s1", Title: "T1", Explain: "cachelab explain s1",
			Runs: []CourseRun{{Subject: "x", Href: "s1/x/report.html", Expect: "holds"}, {Subject: "x/m", Href: "s1/x_m/report.html", Expect: "fails: eventual-convergence", Fails: true}},
		}}},
		{Label: "A2", Title: "Panics", Lesson: "Recover."},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<a href="#part-A">A. What does &#34;synced&#34; mean?</a>`,
		"Wait for the &lt;handler&gt;.",
		`<a href="s1/x/report.html">x</a> <span class="holds">holds</span>`,
		`<a href="s1/x_m/report.html">x/m</a> <span class="fails">fails: eventual-convergence</span>`,
		`<div class="stop" id="A2">`,
		"No scenario shows this one yet.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	if strings.Count(page, "No scenario shows this one yet.") != 1 {
		t.Errorf("want exactly one gap")
	}
}

// A failed property and a definition measured unsound are drawn apart:
// their own classes and colours, never one orange for both.
func TestCoursePageDrawsFailuresAndUnsoundMeasurementsApart(t *testing.T) {
	var b bytes.Buffer
	err := Course(&b, []CoursePart{{Letter: "A", Question: "Q", Stops: []CourseStop{{Label: "A1", Title: "T", Scenarios: []CourseScenario{{
		Name: "s", Runs: []CourseRun{
			{Subject: "m", Href: "r.html", Expect: "fails: finalizers", Fails: true, Unsound: "measured unsound: lastsync-rv"},
			{Subject: "x", Href: "r.html", Expect: "holds", Unsound: "measured unsound: quiescence-synced"},
		}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<span class="fails">fails: finalizers</span> <span class="unsound"`,
		`>measured unsound: lastsync-rv</span>`,
		`<span class="holds">holds</span> <span class="unsound"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	colour := func(class string) string {
		m := regexp.MustCompile(`\.` + class + `\{color:(#[0-9a-f]+)`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no colour for .%s", class)
		}
		return m[1]
	}
	if f, u, h := colour("fails"), colour("unsound"), colour("holds"); f == u || f == h || u == h {
		t.Errorf("fails %s, measured unsound %s, holds %s: want three colours", f, u, h)
	}
}
