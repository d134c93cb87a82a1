package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteBatchWritesTheCourseBesideTheIndexAndLinksIt: the batch folder
// gets course.html, whose links point at the folders WriteBatch's runs use
// (a failing one at its first-failure card), and the index links the
// course.
func TestWriteBatchWritesTheCourseBesideTheIndexAndLinksIt(t *testing.T) {
	out := t.TempDir()
	if err := WriteBatch(out, "cachelab: empty batch", nil, Options{}); err != nil {
		t.Fatal(err)
	}
	course, err := os.ReadFile(filepath.Join(out, CourseFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`href="tombstone-after-410/naivecache/report.html#failure"`,
		`href="tombstone-after-410/informer-realfifo/report.html"`,
		"cachelab explain tombstone-after-410",
	} {
		if !strings.Contains(string(course), want) {
			t.Errorf("course.html lacks %q", want)
		}
	}
	index, err := os.ReadFile(filepath.Join(out, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(index), `<a href="course.html">`) {
		t.Errorf("the index does not link the course")
	}
}
