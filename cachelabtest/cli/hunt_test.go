package cli

import (
	"io"
	"strings"
	"testing"
)

// hunt refuses an unknown --order before anything runs.
func TestHuntRefusesAnUnknownOrder(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hunt", "--order", "bogus"}, "--order \"bogus\""},
	} {
		var stderr strings.Builder
		env := &Env{Stdout: io.Discard, Stderr: &stderr, Prog: "cachelab"}
		if code := Main(c.args, env); code != ExitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, stderr.String(), ExitUsage, c.want)
		}
	}
}

// --derive-lifecycle adds the lifecycle workload derived from the first
// workload's reference run (a delete and recreate of each main object, a
// child deleted), and says what it derived; without it nothing is derived.
func TestHuntDerivesALifecycleWorkloadOnlyWhenAsked(t *testing.T) {
	args := []string{"hunt", "--subject", "bellerophon", "--workloads", "1", "--seed", "2", "--lifecycle=false",
		"--class", "intermediate-state", "--shrink=false", "--out", "", "--parallel", "1"}
	code, stdout, stderr := run(t, append(args, "--derive-lifecycle")...)
	if code != ExitOK || !strings.Contains(stdout, "lifecycle: ") || !strings.Contains(stdout, "-lifecycle") {
		t.Errorf("--derive-lifecycle: exit %d, want %d and a 'lifecycle:' line naming the derived workload:\n%s%s", code, ExitOK, stdout, stderr)
	}
	code, stdout, stderr = run(t, args...)
	if code != ExitOK || strings.Contains(stdout, "lifecycle: ") {
		t.Errorf("without --derive-lifecycle: exit %d, want %d and no 'lifecycle:' line:\n%s%s", code, ExitOK, stdout, stderr)
	}
}
