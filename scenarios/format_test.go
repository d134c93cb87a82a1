package scenarios

import (
	"reflect"
	"strings"
	"testing"
)

// TestFormatPlanWritesStepsAScenarioFileReadsBack: the readable form of a
// plan (what property tests print) is the timeline syntax itself.
func TestFormatPlanWritesStepsAScenarioFileReadsBack(t *testing.T) {
	s, err := Parse("data/tiny.txt", []byte(wellFormed))
	if err != nil {
		t.Fatal(err)
	}
	text := FormatPlan(s.Plan)
	for _, want := range []string{"subject bellerophon, seed 42", "at 2.5s faults break pods target=bellerophon", "at 3s faults stale-replica lag=3 for=10s", `at 4s user patch configmaps default/a {"data":{"k":"w"}}`, "at 5s controller crash midReconcile=true"} {
		if !strings.Contains(text, want) {
			t.Errorf("FormatPlan lacks %q:\n%s", want, text)
		}
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "at ") || strings.HasPrefix(l, "object ") {
			lines = append(lines, l)
		}
	}
	again, err := Parse("data/tiny.txt", []byte("scenario tiny\ntitle t\nedge 7\n"+strings.Join(lines, "\n")+"\n----\nbellerophon: *=pass\n"))
	if err != nil {
		t.Fatalf("the formatted steps do not parse: %v\n%s", err, text)
	}
	if !reflect.DeepEqual(again.Plan.Steps, s.Plan.Steps) {
		t.Errorf("steps changed through FormatPlan:\n%+v\n%+v", again.Plan.Steps, s.Plan.Steps)
	}
}
