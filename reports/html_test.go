package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// outDir is the repository's out/ folder (gitignored), where tests leave
// reports and screenshots for people to look at.
func outDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "out", "reports-test")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func renderHTML(t *testing.T, run Run) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, run); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pageJSON extracts and decodes the data inlined in a report.
func pageJSON(t *testing.T, html []byte) map[string]any {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="cachelab-data">(.*?)</script>`).FindSubmatch(html)
	if m == nil {
		t.Fatal("no <script type=application/json id=cachelab-data> in the report")
	}
	var d map[string]any
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatalf("inlined data is not JSON: %v", err)
	}
	return d
}

func TestHTMLReportIsSelfContained(t *testing.T) {
	html := renderHTML(t, fixtureFailing())
	for _, bad := range []string{`src="http`, `href="http`, `@import`, `url(http`, `<link `, `src="//`} {
		if bytes.Contains(html, []byte(bad)) {
			t.Errorf("report references something outside the file: contains %q", bad)
		}
	}
	for _, want := range []string{"<style>", "cachelab-data", "function", `id="timeline"`} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("report lacks %q (inlined styles, data and script)", want)
		}
	}
	if err := os.WriteFile(filepath.Join(outDir(t), "fixture.html"), html, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestHTMLReportShowsVerdictsWithLinksToTheirPositions(t *testing.T) {
	html := string(renderHTML(t, fixtureFailing()))
	for _, want := range []string{
		`<span class="inv">convergence</span>`,
		`the cache of naivecache still holds default/web-1, deleted from the server at #20`,
		`data-pos="22" data-verdict="0">#22</a>`,
		`data-pos="20" data-verdict="0">#20</a>`,
		`data-pos="4" data-verdict="2">#4</a>`,
		`cachelab replay out/missed-delete-during-disconnect/naivecache/plan.json`,
		`&#34;seed&#34;: 42`, // the plan, pretty-printed and escaped
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// The unknown verdict's reason has <, > and & and must be escaped.
	if strings.Contains(html, "<never flipped back>") || !strings.Contains(html, "&lt;never flipped back&gt; &amp; the run ended first") {
		t.Error("the reason of hassynced-sound is not HTML-escaped")
	}
}

func TestHTMLReportShowsCacheVersusServerAtFirstFailure(t *testing.T) {
	html := string(renderHTML(t, fixtureFailing()))
	// The convergence verdict cites #22 (the cache snapshot) first, then
	// #20 (the delete of web-1), which names the object involved. The
	// snapshot of naivecache's pods cache at #22 still holds web-1 with uid
	// 0d3c5a1e-web1 at rv 1; the server, rebuilt from its writes up to #22
	// (the final state is #23, later), no longer has it.
	for _, want := range []string{
		`<b>convergence</b> at <a class="poslink" href="#rec-22" data-pos="22">#22</a> (t = 5s)`,
		`<code>pods default/web-1</code>`,
		`snapshot #22 at 5s, against the server rebuilt from its writes up to #22`,
		`pods default/web-1 is in the cache (uid 0d3c5a1e-web1, rv 1) but gone from the server`,
		`0d3c5a1e-web1`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("first-failure section lacks %q", want)
		}
	}
	if strings.Contains(html, "web-2 is") {
		t.Error("the diff mentions web-2, which is not involved in the failure and equal on both sides")
	}
}

func TestHTMLReportOfPassingRunSaysNothingFailed(t *testing.T) {
	html := string(renderHTML(t, fixturePassing()))
	if !strings.Contains(html, "No invariant failed in this run") {
		t.Error("passing report does not say that nothing failed")
	}
	if strings.Contains(html, "First failure <span") {
		t.Error("passing report shows a first-failure section")
	}
}

func TestHTMLReportLanesFollowActors(t *testing.T) {
	d := pageJSON(t, renderHTML(t, fixtureFailing()))
	var got []string
	for _, l := range d["lanes"].([]any) {
		m := l.(map[string]any)
		got = append(got, m["g"].(string)+": "+m["l"].(string))
	}
	// Written by hand from the fixture: run lanes, the server's writes, the
	// subject's lanes, then the user's requests.
	want := []string{
		"run: plan steps",
		"run: faults",
		"API server: writes",
		"naivecache: watch pods",
		"naivecache: handler pods",
		"naivecache: cache pods",
		"naivecache: workqueue",
		"naivecache: reconciles",
		"naivecache: HasSynced",
		"user: requests",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("lanes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(d["recs"].([]any)); n != 24 {
		t.Errorf("page has %d records, want 24", n)
	}
}

func TestHTMLIsDeterministic(t *testing.T) {
	a, b := renderHTML(t, fixtureFailing()), renderHTML(t, fixtureFailing())
	if !bytes.Equal(a, b) {
		t.Error("two renderings of the same run differ")
	}
}

func TestHTMLWithoutTraceSaysWhatToSet(t *testing.T) {
	err := HTML(&bytes.Buffer{}, Run{Plan: fixturePlan("x")})
	if !errors.Is(err, ErrNoTrace) || !strings.Contains(err.Error(), "Run.Trace") {
		t.Fatalf("error = %v, want ErrNoTrace naming Run.Trace", err)
	}
}

func TestHTMLRejectsAWriteWhoseObjectIsNotJSON(t *testing.T) {
	run := fixtureFailing()
	run.Trace.Records[7].Object = json.RawMessage(`{"kind":`)
	err := HTML(&bytes.Buffer{}, run)
	if err == nil || !strings.Contains(err.Error(), "record #7") {
		t.Fatalf("error = %v, want one naming record #7", err)
	}
}

func TestHTMLOfStandard30sRunStaysUnder2MB(t *testing.T) {
	run := synthRun()
	html := renderHTML(t, run)
	n := len(run.Trace.Records)
	if n < 3000 {
		t.Fatalf("synthetic run has only %d records; the check needs several thousand", n)
	}
	t.Logf("standard 30s run: %d records, report %d bytes (%.2f MB)", n, len(html), float64(len(html))/(1<<20))
	if len(html) >= 2<<20 {
		t.Errorf("report of a standard 30s run is %d bytes, want < 2 MB", len(html))
	}
	if err := os.WriteFile(filepath.Join(outDir(t), "standard-30s.html"), html, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestIndexListsEveryRunWithItsVerdictsAndLink(t *testing.T) {
	var b bytes.Buffer
	entries := []IndexEntry{
		NewIndexEntry(fixtureFailing(), "missed-delete-during-disconnect/naivecache/report.html"),
		NewIndexEntry(fixturePassing(), "missed-delete-during-disconnect/bellerophon/report.html"),
	}
	if err := Index(&b, entries); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{
		`<title>cachelab: 2 runs</title>`,
		`<a href="missed-delete-during-disconnect/naivecache/report.html">open report</a>`,
		`<a href="missed-delete-during-disconnect/bellerophon/report.html">open report</a>`,
		`<th data-type="status" class="inv">convergence</th>`,
		`<th data-type="status" class="inv">hassynced-sound</th>`,
		`<span class="badge badge-lg pass">1 pass</span>`,
		`<span class="badge badge-lg fail">1 fail</span>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("index lacks %q", want)
		}
	}
	// naivecache: one run, failed; bellerophon: one run, passed.
	sub := regexp.MustCompile(`<td class="mono">(\w+)</td><td>(\d+)</td><td class="n-pass">(\d+)</td><td class="n-fail">(\d+)</td>`).FindAllStringSubmatch(html, -1)
	var rows []string
	for _, m := range sub {
		rows = append(rows, strings.Join(m[1:], " "))
	}
	if strings.Join(rows, "; ") != "bellerophon 1 1 0; naivecache 1 0 1" {
		t.Errorf("subject summary rows = %q, want bellerophon 1 1 0; naivecache 1 0 1", rows)
	}
	if err := os.WriteFile(filepath.Join(outDir(t), "index.html"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestHTMLRendersAnEmptyTraceAndPositionsOutOfRange(t *testing.T) {
	p := fixturePlan("naivecache")
	run := Run{
		Plan:  p,
		Trace: &sim.Trace{Version: sim.TraceVersion, Plan: p, Outcome: "error: nothing ran"},
		Verdicts: []invariants.Verdict{
			{Invariant: "convergence", Status: invariants.Fail, Reason: "cites records that do not exist", Positions: []int{99, -1}},
		},
	}
	html := string(renderHTML(t, run))
	if !strings.Contains(html, "cites records that do not exist") {
		t.Error("verdict missing from the report of an empty trace")
	}
	if !strings.Contains(html, "The trace has no cache snapshot") {
		t.Error("first-failure section does not say why there is no comparison")
	}
}

func TestHTMLKeepsRecordsOfUnknownKindOutOfTheLanes(t *testing.T) {
	run := fixtureFailing()
	run.Trace.Records = append(run.Trace.Records, sim.Record{Pos: 24, Kind: "from-the-future", Detail: "x"})
	d := pageJSON(t, renderHTML(t, run))
	recs := d["recs"].([]any)
	last := recs[len(recs)-1].(map[string]any)
	if _, has := last["l"]; has {
		t.Errorf("a record of unknown kind got lane %v; want none (it stays in the trace table)", last["l"])
	}
	if len(d["lanes"].([]any)) != 10 {
		t.Errorf("lanes = %d, want the fixture's 10", len(d["lanes"].([]any)))
	}
}

func TestFirstFailureTreatsNilAndEmptyFinalizersAsEqual(t *testing.T) {
	run := fixtureFailing()
	snap := &run.Trace.Records[22]
	snap.Objects = []sim.ObjectState{{Resource: "pods", Namespace: "default", Name: "web-2", UID: uidWeb2, RV: 2, Finalizers: []string{}}}
	run.Verdicts[0].Positions = []int{22, 7} // involves web-2 only, equal on both sides
	fv := firstFailure(run.Trace, run.Verdicts)
	if fv == nil || len(fv.Caches) != 1 {
		t.Fatalf("firstFailure = %+v, want one cache comparison", fv)
	}
	if c := fv.Caches[0]; c.Diff != "" || len(c.Summary) != 0 || c.Compared != 2 {
		t.Errorf("web-2 with finalizers [] in the cache and none on the server: diff %q, summary %q, compared %d; want no difference over 2 objects", c.Diff, c.Summary, c.Compared)
	}
}

func TestStepLabelsComeFromThePlan(t *testing.T) {
	cases := []struct {
		step sim.Step
		want string
	}{
		{sim.Step{Actor: "user", Op: "create", Resource: "pods", Namespace: "default", Name: "web-2"}, "create pods default/web-2"},
		{sim.Step{Actor: "faults", Op: "disconnect", Resource: "pods", Target: "naivecache"}, "disconnect pods of naivecache"},
		{sim.Step{Actor: "user", Op: "create", Object: json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c5","namespace":"default"}}`)}, "create configmap default/c5"},
		{sim.Step{Actor: "faults", Op: "fail-next", Verb: "update", Code: 409}, "fail-next with 409 on update"},
		{sim.Step{Actor: "faults", Op: "stale-replica", Lag: 3, For: sim.Duration(2e9)}, "stale-replica lag 3 for 2s"},
		{sim.Step{Actor: "controller", Op: "crash"}, "crash"},
	}
	for _, c := range cases {
		if got := describeStep(c.step); got != c.want {
			t.Errorf("describeStep(%+v) = %q, want %q", c.step, got, c.want)
		}
	}
	d := pageJSON(t, renderHTML(t, fixtureFailing()))
	strs := d["S"].([]any)
	rec15 := d["recs"].([]any)[15].(map[string]any) // the disconnect step
	if got := strs[int(rec15["sd"].(float64))]; got != "disconnect pods of naivecache" {
		t.Errorf("step record #15 is labelled %q, want %q", got, "disconnect pods of naivecache")
	}
}

func TestInlinedAssetsCannotEndTheirElementEarly(t *testing.T) {
	for _, name := range []string{"report.js", "index.js", "base.css", "report.css", "index.css"} {
		src := strings.ToLower(asset(name))
		for _, bad := range []string{"</script", "</style", "<!--"} {
			if strings.Contains(src, bad) {
				t.Errorf("assets/%s contains %q, which would end or break its inline element", name, bad)
			}
		}
	}
}

func TestIndexLeadsWithRunsAsExpectedSoACaughtMutantIsNotShownAsARedFailure(t *testing.T) {
	caught := NewIndexEntry(fixtureFailing(), "a/naivecache/report.html")
	caught.Expected, caught.Note = AsExpected, "caught: convergence"
	missed := NewIndexEntry(fixtureFailing(), "b/naivecache/report.html")
	missed.Scenario = "b"
	missed.Expected, missed.Note = Unexpected, "unexpected: convergence (expected pass, got fail)"
	var b bytes.Buffer
	if err := IndexTitled(&b, "cachelab: every built-in scenario", []IndexEntry{caught, missed}); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{
		`<title>cachelab: every built-in scenario: 2 runs</title>`,
		`<span class="badge badge-lg pass">1 as expected</span>`,
		`<span class="badge badge-lg fail">1 unexpected</span>`,
		`0 of 2 runs held every one, 2 failed at least one`,
		`<span class="badge pass">as expected</span> <span class="note">caught: convergence</span>`,
		`<span class="badge fail">unexpected</span> <span class="note">unexpected: convergence (expected pass, got fail)</span>`,
		`share as expected`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("index lacks %q", want)
		}
	}
	// Only the unexpected run is marked red; the caught one is not.
	if n := strings.Count(html, `<tr class="r-fail">`); n != 1 {
		t.Errorf("%d rows marked as failures, want 1 (the unexpected run)", n)
	}
	// naivecache: 2 runs, 1 as expected, 1 unexpected, raw 0 pass, 2 fail.
	if !regexp.MustCompile(`<td class="mono">naivecache</td><td>2</td><td class="n-pass">1</td><td class="n-fail">1</td><td class="n-pass">0</td><td class="n-fail" title="1 of these failed as expected \(a mutant or contrast variant caught\)">2 <span class="expl">\(1 expected\)</span></td>`).MatchString(html) {
		t.Errorf("subject row does not count 1 as expected, 1 unexpected, 0 pass, 2 fail")
	}
}

func TestFirstFailureIsAPropertyOfTheSubjectBeforeAnEarlierSyncSoundnessMeasurement(t *testing.T) {
	run := fixtureFailing()
	run.Verdicts = append(run.Verdicts, invariants.Verdict{
		Invariant: invariants.NameSyncSoundnessPrefix + "desired", Status: invariants.Fail,
		Reason: "desired flipped to true too early", Positions: []int{3},
	})
	if fv := firstFailure(run.Trace, run.Verdicts); fv == nil || fv.Invariant != "convergence" {
		t.Errorf("first failure = %+v, want convergence (the property that failed), not the earlier measurement", fv)
	}
	only := []invariants.Verdict{run.Verdicts[len(run.Verdicts)-1]}
	if fv := firstFailure(run.Trace, only); fv == nil || fv.Pos != 3 {
		t.Errorf("with only a measurement failed, first failure = %+v, want it at #3", fv)
	}
}

func TestNoDifferenceInASnapshotTakenLongAfterTheFailureSaysSo(t *testing.T) {
	run := fixtureFailing()
	// The failure at #10 (1.1s) involves web-2 only; the trace's one cache
	// snapshot is #22 at 5s, where the cache agrees on web-2.
	run.Verdicts[0].Positions = []int{10}
	html := string(renderHTML(t, run))
	if !strings.Contains(html, "No difference") || !strings.Contains(html, "taken 3.9s after the failure: the cache may have caught up by then") {
		t.Errorf("the report does not say that the agreeing snapshot comes 3.9s after the failure")
	}
	// A snapshot at the failure's own position says nothing more.
	run.Verdicts[0].Positions = []int{22}
	if html := string(renderHTML(t, run)); strings.Contains(html, "after the failure: the cache may have caught up") {
		t.Errorf("a snapshot at the failure itself is described as later")
	}
}

// TestAMeasurementNeverMakesARunRed: a correct subject whose "desired"
// definition of synced is unsound passes, in every output, and the
// measurement reads "unsound", never "fail".
func TestAMeasurementNeverMakesARunRed(t *testing.T) {
	run := fixturePassing()
	for i := range run.Verdicts {
		run.Verdicts[i].Status = invariants.Pass
	}
	run.Verdicts = append(run.Verdicts, invariants.Verdict{Invariant: "sync-soundness/desired", Status: invariants.Fail, Measurement: true,
		Reason: `"desired" claimed synced 1 time(s) out of 2 while the cache lagged`, Positions: []int{3}})
	if st := OverallStatus(run.Verdicts); st != invariants.Pass {
		t.Errorf("OverallStatus = %s, want pass: a measurement is not a verdict on the run", st)
	}
	var j bytes.Buffer
	if err := JSON(&j, run); err != nil {
		t.Fatal(err)
	}
	if s := j.String(); !strings.Contains(s, `"status": "pass"`) || !strings.Contains(s, `"status": "unsound",`+"\n"+`      "measurement": true`) || strings.Contains(s, `"fail"`) {
		t.Errorf("JSON shows the measurement as a failure:\n%s", s)
	}
	var x bytes.Buffer
	if err := JUnit(&x, []Run{run}); err != nil {
		t.Fatal(err)
	}
	if s := x.String(); !strings.Contains(s, `failures="0"`) || strings.Contains(s, "<failure") || !strings.Contains(s, "measured unsound sync-soundness/desired") {
		t.Errorf("JUnit fails on a measurement or hides it:\n%s", s)
	}
	var h bytes.Buffer
	if err := HTML(&h, run); err != nil {
		t.Fatal(err)
	}
	if s := h.String(); !strings.Contains(s, `<span class="badge badge-lg pass">pass</span>`) || !strings.Contains(s, `<span class="badge unsound">unsound</span>`) || strings.Contains(s, `<span class="badge fail">`) {
		t.Errorf("the report shows the measurement as a failure")
	}
	var ix bytes.Buffer
	if err := Index(&ix, []IndexEntry{NewIndexEntry(run, "r.html")}); err != nil {
		t.Fatal(err)
	}
	if s := ix.String(); !strings.Contains(s, `<span class="badge badge-lg pass">1 pass</span>`) || !strings.Contains(s, `<span class="dot unsound"></span>unsound`) || strings.Contains(s, `class="r-fail"`) {
		t.Errorf("the index paints a measurement red:\n%s", s)
	}
}

func TestTheReportListsFailuresFirstAndMeasurementsLast(t *testing.T) {
	run := fixtureFailing()
	run.Verdicts = append([]invariants.Verdict{
		{Invariant: "sync-soundness/desired", Status: invariants.Fail, Measurement: true, Reason: "lied"},
		{Invariant: "no-lost-deletes", Status: invariants.Pass, Reason: "fine"},
	}, run.Verdicts...)
	var h bytes.Buffer
	if err := HTML(&h, run); err != nil {
		t.Fatal(err)
	}
	s := h.String()
	order := []string{`<span class="inv">convergence</span>`, `<span class="inv">hassynced-sound</span>`, `<span class="inv">no-lost-deletes</span>`, `Measurements <span`, `<span class="inv">sync-soundness/desired</span>`}
	last := -1
	for _, o := range order {
		i := strings.Index(s, o)
		if i < 0 || i < last {
			t.Errorf("%q is missing or out of order (failures, unknown, passes, then measurements)", o)
		}
		last = i
	}
}

func TestTheFirstFailureIsWhereTheEvidenceDepartsWithItsTriggerAsContext(t *testing.T) {
	run := fixtureFailing()
	at, trig := 22, 20
	run.Verdicts[0].At, run.Verdicts[0].Trigger = &at, &trig
	if pos, inv := FirstFailure(run.Trace, run.Verdicts); pos != 22 || inv != "convergence" {
		t.Errorf("FirstFailure = %d %s, want 22 convergence (Verdict.At, not the trigger at 20)", pos, inv)
	}
	var h bytes.Buffer
	if err := HTML(&h, run); err != nil {
		t.Fatal(err)
	}
	s := h.String()
	for _, want := range []string{`data-pos="22">#22</a>`, `the step that broke it:`, `set in motion by <a class="poslink" href="#rec-20" data-pos="20">#20</a>`} {
		if !strings.Contains(s, want) {
			t.Errorf("the first-failure card lacks %q", want)
		}
	}
}
