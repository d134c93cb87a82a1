package scenarios_test

import (
	"slices"
	"testing"

	"github.com/cachelab/cachelab/scenarios"
)

// notYetShown are the EDGE-CASES.md entries no built-in scenario shows yet.
// TestTheCourseVisitsAll28EdgeCasesAndEachNamesAScenario fails when one of
// them gets a scenario (remove it here) and when any other loses its last.
var notYetShown []string

// TestTheCourseVisitsAll28EdgeCasesAndEachNamesAScenario: the course has
// the 28 entries of EDGE-CASES.md in order, each with a title and a lesson;
// every entry names at least one scenario except those in notYetShown; and
// every scenario is on the course.
func TestTheCourseVisitsAll28EdgeCasesAndEachNamesAScenario(t *testing.T) {
	parts, err := scenarios.Course()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	onCourse := map[string]bool{}
	var missing []string
	for _, p := range parts {
		if p.Question == "" || len(p.Stops) == 0 {
			t.Errorf("part %s has no question or no stops", p.Letter)
		}
		for _, st := range p.Stops {
			n++
			if st.Edge != n {
				t.Errorf("stop %d of the course is edge case %d, want %d (EDGE-CASES.md order)", n, st.Edge, n)
			}
			if st.Label()[:1] != p.Letter {
				t.Errorf("%s is in part %s", st.Label(), p.Letter)
			}
			if st.Title == "" || len(st.Lesson) < 40 {
				t.Errorf("%s: title %q, lesson %q: want a title and a one-paragraph lesson", st.Label(), st.Title, st.Lesson)
			}
			if len(st.Scenarios) == 0 {
				missing = append(missing, st.Label())
			}
			for _, s := range st.Scenarios {
				onCourse[s] = true
			}
		}
	}
	if n != 28 {
		t.Errorf("the course has %d stops, want 28", n)
	}
	if !slices.Equal(missing, notYetShown) {
		t.Errorf("edge cases without a scenario: %v, want %v (update notYetShown when a scenario lands; never lose one)", missing, notYetShown)
	}
	for _, name := range scenarios.Names() {
		if !onCourse[name] {
			t.Errorf("scenario %s names no edge case of the course", name)
		}
	}
}
