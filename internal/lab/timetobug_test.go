package lab

import (
	"strings"
	"testing"

	_ "github.com/cachelab/cachelab/subjects/bellerophon"
)

// TestTimeToBugFindsAPlantedBugAndNotTheRealController: a mutant's
// campaign stops at its first failing plan; the real Bellerophon's runs
// its whole bound and is reported not found, '> max' in the table.
func TestTimeToBugFindsAPlantedBugAndNotTheRealController(t *testing.T) {
	rows, err := TimeToBug(TestHost(t), []string{"bellerophon/no-expectations", "bellerophon"}, TimeToBugOptions{Seeds: []uint64{1}, Max: 2})
	if err != nil {
		t.Fatal(err)
	}
	mutant, real := rows[0].Campaigns[0], rows[1].Campaigns[0]
	if !mutant.Found || mutant.Plans != 1 || len(mutant.Failed) == 0 || mutant.CPU <= 0 {
		t.Errorf("the mutant's campaign: %+v, want its first plan to fail, with CPU measured", mutant)
	}
	if real.Found || real.Plans != 2 {
		t.Errorf("the real controller's campaign: %+v, want no failure in its 2 plans", real)
	}
	var b strings.Builder
	WriteTimeToBug(&b, rows, 2)
	for _, want := range []string{"| bellerophon/no-expectations | 1/1 | 1 / 1 |", "| bellerophon | 0/1 | 2 / > 2 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, b.String())
		}
	}
	if _, err := TimeToBug(TestHost(t), []string{"no-such-subject"}, TimeToBugOptions{Seeds: []uint64{1}, Max: 1}); err == nil {
		t.Error("an unknown subject gave no error")
	}
}
