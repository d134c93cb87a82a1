package naivecache

import (
	"strings"
	"testing"
)

// With two bad parameters the error names the same one every time (the
// first by name), not whichever a map iteration met first: an error is
// part of a run's outcome, and a run must repeat.
func TestTwoBadParametersGiveOneError(t *testing.T) {
	for i := range 50 {
		err := (&Subject{}).parseParams(map[string]string{ParamRetryDelay: "-1s", ParamLoopTime: "x", ParamWorkers: "0"})
		if err == nil || !strings.Contains(err.Error(), ParamLoopTime+"=") {
			t.Fatalf("try %d: %v, want the error about %s (first by name)", i, err, ParamLoopTime)
		}
	}
}
