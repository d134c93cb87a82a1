package reports

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestHasSyncedPageShowsSharesAndHistograms: the share is false positives
// over flips, each duration lands in its bucket, a row without flips says
// so, and nothing needs the network.
func TestHasSyncedPageShowsSharesAndHistograms(t *testing.T) {
	var b bytes.Buffer
	err := HasSynced(&b, "3 plans per subject", []SyncDefinitionStats{
		{Subject: "s", Signal: "quiescence-synced", Traces: 3, Flips: 4, FalsePositives: 1,
			LateBy: []time.Duration{0, 5 * time.Millisecond, 5 * time.Millisecond}, StaleBy: []time.Duration{20 * time.Second}},
		{Subject: "s", Signal: "handler-synced", Traces: 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"<p>3 plans per subject</p>",
		`style="width:30px"></span></span> 25.0% <small>(1)</small>`,
		"<title>0: 1</title>", "<title>≤10ms: 2</title>", "<title>&gt;10s before the flip: 1</title>",
		"no sound flip", "no false flip",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") || strings.Contains(page, "<script") {
		t.Errorf("the page reaches for the network or runs scripts")
	}
}

func TestHistogramPutsEachDurationInOneBucketScaledToTheTallest(t *testing.T) {
	bars := histogram([]time.Duration{0, time.Millisecond, 2 * time.Millisecond, 2 * time.Second, time.Hour, time.Hour})
	want := []int{1, 1, 1, 0, 0, 1, 2}
	for i, b := range bars {
		if b.N != want[i] {
			t.Errorf("bucket %s: %d, want %d", b.Label, b.N, want[i])
		}
	}
	if bars[6].H != 60 || bars[0].H != 30 || bars[3].H != 0 {
		t.Errorf("heights %d %d %d, want 60 30 0", bars[6].H, bars[0].H, bars[3].H)
	}
}
