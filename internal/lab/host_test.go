package lab

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// helperEnv makes the test binary act as a command that uses MainHost.
const helperEnv = "CACHELAB_LAB_MAINHOST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(mainHostHelper())
	}
	os.Exit(m.Run())
}

// mainHostHelper runs two bubbles under MainHost, as the command does, and
// prints what they saw; the second leaves a goroutine blocked on purpose.
// The process must survive it.
func mainHostHelper() int {
	host := MainHost(2)
	var slept time.Duration
	var firstOK, secondOK bool
	ok, out := host(func(t *testing.T) {
		firstOK = t.Run("sleeps", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				time.Sleep(time.Hour)
				slept = time.Since(start)
			})
		})
		secondOK = t.Run("leaks", func(t *testing.T) {
			// synctest panics when a bubble ends with goroutines blocked;
			// runOne recovers it the same way, so one bad run does not
			// end the batch.
			defer func() {
				if x := recover(); x != nil {
					t.Errorf("recovered: %v", x)
				}
			}()
			synctest.Test(t, func(t *testing.T) {
				go func() { select {} }()
			})
		})
	})
	fmt.Printf("first: ok=%v slept=%s\n", firstOK, slept)
	fmt.Printf("second: ok=%v\n", secondOK)
	fmt.Printf("host: ok=%v\n", ok)
	fmt.Printf("captured: %q\n", out)
	return 0
}

func TestMainHostGivesBubblesATestingTOutsideGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{
		"first: ok=true slept=1h0m0s\n", // a bubble ran in virtual time
		"second: ok=false\n",            // a leaked goroutine fails its T ...
		"host: ok=false\n",              // ... and the host reports it
		"deadlock",                      // with synctest's explanation captured
	} {
		if !strings.Contains(got, want) {
			t.Errorf("helper output lacks %q:\n%s", want, got)
		}
	}
	if strings.HasPrefix(got, "PASS") || strings.Contains(got, "\nFAIL\n") {
		t.Errorf("the testing framework's own lines leaked to stdout:\n%s", got)
	}
	if wall := time.Since(start); wall > 30*time.Second {
		t.Errorf("one virtual hour took %s of wall time", wall)
	}
}

func TestTestHostWaitsForParallelSubtests(t *testing.T) {
	var finished atomic.Int32
	ok, _ := TestHost(t)(func(t *testing.T) {
		for i := 0; i < 3; i++ {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) { time.Sleep(time.Minute) })
				finished.Add(1)
			})
		}
	})
	if !ok || finished.Load() != 3 {
		t.Errorf("host returned ok=%v with %d of 3 parallel subtests finished", ok, finished.Load())
	}
}
