package reports

import (
	"bytes"
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
