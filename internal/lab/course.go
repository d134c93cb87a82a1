package lab

import (
	"os"
	"strings"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/reports"
	"github.com/cachelab/cachelab/scenarios"
)

// CourseFile is the guided course's page, written by WriteBatch beside the
// index.
const CourseFile = "course.html"

// CoursePage returns the guided course (scenarios.Course) as the course
// page's input: every stop with its lesson and scenarios, each scenario with
// the command that tells its story (prog explain NAME) and, per subject it
// names, the path of its report relative to the output folder (at the
// first-failure card when the scenario expects a failure).
func CoursePage(prog string) ([]reports.CoursePart, error) {
	parts, err := scenarios.Course()
	if err != nil {
		return nil, err
	}
	all, err := scenarios.All()
	if err != nil {
		return nil, err
	}
	byName := map[string]*scenarios.Scenario{}
	for _, s := range all {
		byName[s.Name] = s
	}
	var page []reports.CoursePart
	for _, p := range parts {
		cp := reports.CoursePart{Letter: p.Letter, Question: p.Question}
		for _, st := range p.Stops {
			cs := reports.CourseStop{Label: st.Label(), Title: st.Title, Lesson: st.Lesson}
			for _, name := range st.Scenarios {
				s := byName[name]
				sc := reports.CourseScenario{Name: name, Title: s.Title, Explain: prog + " explain " + name}
				for _, subj := range s.Subjects() {
					plan := s.PlanFor(subj)
					run := reports.CourseRun{Subject: subj, Href: RunID(&plan) + "/report.html", Expect: "holds"}
					var fails, unsound []string
					for _, e := range s.Expect {
						if e.Subject != subj || e.Status != invariants.Fail {
							continue
						}
						// A sync-soundness verdict is a measurement: say
						// so, never "fails".
						if invariants.IsMeasurement(e.Invariant) {
							unsound = append(unsound, strings.TrimPrefix(e.Invariant, invariants.NameSyncSoundnessPrefix))
						} else {
							fails = append(fails, e.Invariant)
						}
					}
					if len(fails) > 0 {
						run.Expect, run.Fails = "fails: "+strings.Join(fails, ", "), true
					}
					if len(unsound) > 0 {
						run.Unsound = "measured unsound: " + strings.Join(unsound, ", ")
					}
					if len(fails) > 0 || len(unsound) > 0 {
						// The report's first-failure card: where it goes
						// wrong (or the first unsound sync claim).
						run.Href += "#failure"
					}
					sc.Runs = append(sc.Runs, run)
				}
				cs.Scenarios = append(cs.Scenarios, sc)
			}
			cp.Stops = append(cp.Stops, cs)
		}
		page = append(page, cp)
	}
	return page, nil
}

// writeCourse writes the course page, linking the reports written beside it.
func writeCourse(f *os.File) error {
	page, err := CoursePage("cachelab")
	if err != nil {
		return err
	}
	return reports.Course(f, page)
}
