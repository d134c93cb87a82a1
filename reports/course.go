package reports

import (
	"bytes"
	"html/template"
	"io"
)

// CoursePart is one leg of the guided course (a question of the origin
// notes), for Course.
type CoursePart struct {
	// Letter is the part's letter in EDGE-CASES.md ("A").
	Letter string
	// Question is the question the part answers.
	Question string
	// Stops are the part's edge cases, in order.
	Stops []CourseStop
}

// CourseStop is one edge case of the course.
type CourseStop struct {
	// Label is the edge case's label ("A1").
	Label string
	// Title is the edge case's title.
	Title string
	// Lesson is its lesson, one paragraph.
	Lesson string
	// Scenarios show it; none means no scenario shows it yet.
	Scenarios []CourseScenario
}

// CourseScenario is one scenario of a stop.
type CourseScenario struct {
	// Name is the scenario's name.
	Name string
	// Title is its one-line title.
	Title string
	// Explain is the command that tells its story.
	Explain string
	// Runs are its subjects, with where their reports are.
	Runs []CourseRun
}

// CourseRun is one subject's run of a scenario.
type CourseRun struct {
	// Subject is the subject's name.
	Subject string
	// Href is the run's report, relative to the course page (at its
	// first-failure card when the run is expected to fail).
	Href string
	// Expect says what the scenario expects of its properties: "holds" or
	// "fails: invariant, ...".
	Expect string
	// Fails is true when the scenario expects a failed invariant.
	Fails bool
	// Unsound, optional, names the definitions of "synced" the scenario
	// expects to be measured unsound ("measured unsound: lastsync-rv"):
	// a measurement, drawn apart from a failure.
	Unsound string
}

var courseTmpl = template.Must(template.New("course").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>cachelab: the guided course</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.6rem}h2{font-size:1.3rem;margin-top:2.5rem;border-bottom:2px solid #ccd}
nav ol{padding-left:1.2rem}.stop{margin:1.2rem 0 1.6rem}.stop h3{font-size:1.05rem;margin:.2rem 0}
.label{display:inline-block;min-width:2.4rem;margin-right:.5rem;font-weight:700;color:#446}
.lesson{margin:.3rem 0 .5rem}.scenario{margin:.3rem 0 .3rem 1rem}.scenario code{background:#f3f3f6;padding:0 .3rem}
.runs{margin:.2rem 0 0 1rem;padding:0;list-style:none}.runs li{margin:.1rem 0}
.fails{color:#cf222e}.holds{color:#1a7f37}.unsound{color:#8250df;font-style:italic}.gap{color:#777;font-style:italic;margin-left:1rem}
</style></head><body>
<h1>cachelab: the guided course</h1>
<p>The 28 edge cases of the lab's EDGE-CASES.md, in order, as a path through the questions of the
origin notes. Each stop says what to take away, then the scenarios that show it: read a story with
<code>cachelab explain NAME</code>, run it with <code>cachelab run NAME</code>, and open each
subject's report (written by <code>make run</code> beside this page), where the first failed
invariant is marked at the moment it goes wrong. <span class="holds">holds</span>: every property
holds; <span class="fails">fails</span>: the scenario expects these properties to fail (a mutant's
bug caught); <span class="unsound">measured unsound</span>: a definition of "synced" claims sync too
early here, a measurement, not a failure of the subject. How often each definition of "synced" lies, over
random plans: <a href="hassynced.html">hassynced.html</a> (written by <code>make hassynced</code>).</p>
<nav><ol>{{range .}}<li><a href="#part-{{.Letter}}">{{.Letter}}. {{.Question}}</a></li>{{end}}</ol></nav>
{{range .}}<section id="part-{{.Letter}}"><h2>{{.Letter}}. {{.Question}}</h2>
{{range .Stops}}<div class="stop" id="{{.Label}}"><h3><span class="label">{{.Label}}</span>{{.Title}}</h3>
<p class="lesson">{{.Lesson}}</p>
{{range .Scenarios}}<div class="scenario"><b>{{.Name}}</b>: {{.Title}} <code>{{.Explain}}</code>
<ul class="runs">{{range .Runs}}<li><a href="{{.Href}}">{{.Subject}}</a> <span class="{{if .Fails}}fails{{else}}holds{{end}}">{{.Expect}}</span>{{if .Unsound}} <span class="unsound" title="a measurement of a definition of synced, not a failure">{{.Unsound}}</span>{{end}}</li>{{end}}</ul></div>
{{else}}<p class="gap">No scenario shows this one yet.</p>{{end}}</div>
{{end}}</section>
{{end}}</body></html>
`))

// Course writes the guided course as one self-contained offline HTML page:
// the parts in order, each stop with its lesson, its scenarios and a link to
// each subject's report. It is a pure function of parts.
func Course(w io.Writer, parts []CoursePart) error {
	var b bytes.Buffer
	if err := courseTmpl.Execute(&b, parts); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}
