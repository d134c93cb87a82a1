package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExplainListShowsTheCourseInOrderAndWritesItsPage: explain --list
// walks the 28 edge cases in order with their lessons and scenarios, and
// --html writes the page with links to each subject's report (a measured
// unsound sync signal said as such, not as a failure); other arguments are
// a usage error.
func TestExplainListShowsTheCourseInOrderAndWritesItsPage(t *testing.T) {
	page := filepath.Join(t.TempDir(), "course.html")
	code, out, errs := run(t, "explain", "--list", "--html", page)
	if code != ExitOK {
		t.Fatalf("explain --list exited %d: %s", code, errs)
	}
	last := -1
	for _, want := range []string{
		`A. What does "the cache is synced" mean?`,
		"  A1   Store synced is not handler synced",
		"  A2   A panicking handler never syncs",
		"explain panicking-handler-never-syncs",
		"  A6   LastSyncResourceVersion is not a sync signal",
		"the handlers, still working through the list",
		"B. What goes wrong with deletion and recreation?",
		"explain relist-is-not-resync",
		"E. What does a controller built on a stale cache do?",
		"  E28  Write with unknown outcome",
	} {
		i := strings.Index(out, want)
		if i < 0 {
			t.Fatalf("explain --list lacks %q:\n%s", want, out)
		}
		if i < last {
			t.Errorf("%q is out of order:\n%s", want, out)
		}
		last = i
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`href="panicking-handler-never-syncs/informer-realfifo_panicking-handler/report.html#failure"`,
		`href="panicking-handler-never-syncs/informer-realfifo/report.html"`,
		"fails: eventual-convergence",
		`href="lastsync-rv-is-not-sync/informer-realfifo_lastsync-rv/report.html#failure"`,
		"measured unsound: lastsync-rv",
	} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the course page lacks %q", want)
		}
	}
	if code, _, errs := run(t, "explain", "--list", "--pdf"); code != ExitUsage || !strings.Contains(errs, "--html FILE") {
		t.Errorf("explain --list --pdf: exit %d, %s; want a usage error naming --html FILE", code, errs)
	}
}
