package cachelabtest_test

import (
	"os"
	"os/exec"
	"regexp"
	"testing"

	"github.com/cachelab/cachelab/cachelabtest"
)

// Test's log says, once its plans have run, how many property verdicts
// could not judge, unknown and n/a apart, and why (issue 27 item 3). A
// test's log is only seen from outside its process: the plans run in a
// child.
func TestTestLogsTheShareOfVerdictsThatCouldNotJudge(t *testing.T) {
	if os.Getenv("CACHELAB_SHARE_CHILD") != "" {
		t.Skip("in the child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestShareChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "CACHELAB_SHARE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child failed: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`cachelab: could not judge, of \d+ property verdicts in 2 runs, \d+ unknown \(\d+\.\d%\), \d+ n/a`).Match(out) {
		t.Errorf("Test's log lacks the share of verdicts that could not judge:\n%s", out)
	}
}

// TestShareChild is TestTestLogsTheShareOfVerdictsThatCouldNotJudge's child.
func TestShareChild(t *testing.T) {
	if os.Getenv("CACHELAB_SHARE_CHILD") == "" {
		t.Skip("run by TestTestLogsTheShareOfVerdictsThatCouldNotJudge")
	}
	scratch(t)
	cachelabtest.Test(t, clientGo("", false), cachelabtest.These(plan("one"), plan("two")))
}
