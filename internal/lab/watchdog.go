package lab

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim"
)

// timeoutFlag is the wall-clock limit of one run of Test or Catch.
var timeoutFlag = flag.Duration("cachelab.timeout", 2*time.Minute, "cachelabtest: wall-clock limit of each run (a run whose bubble never lets virtual time advance, a goroutine spinning or blocked on a mutex while another waits for virtual time, would hang go test): the run fails with the goroutines' stacks and the test moves on; 0: no limit")

// StuckGoroutinesSuffix ends the name of the file, next to a stuck run's
// report folder ("<folder>.goroutines.txt"), that holds the goroutine
// stacks the watchdog took.
const StuckGoroutinesSuffix = ".goroutines.txt"

// StuckError is the error of a run the watchdog gave up on.
type StuckError struct {
	plan   string
	limit  time.Duration
	stacks string // every goroutine's stack when the limit passed
	bubble []string
	file   string // where the stacks are written, set by SaveStacks
}

func (e *StuckError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "stuck (lab watchdog): the run of plan %q did not end within %s of wall time (-cachelab.timeout): its bubble's clock no longer advances, a goroutine spins or is blocked on something synctest does not count as durably blocked (a sync.Mutex held by a goroutine that waits for virtual time). Virtual time reached: not readable from outside the bubble. The run's goroutines are left running until the test binary exits.", e.plan, e.limit)
	if e.file != "" {
		fmt.Fprintf(&b, " Goroutine stacks: %s.", e.file)
	}
	if len(e.bubble) > 0 {
		fmt.Fprintf(&b, " Not durably blocked in the bubble: %s", strings.Join(e.bubble, "; "))
	}
	return b.String()
}

// RunWatched is RunPlan under the wall-clock watchdog: past
// -cachelab.timeout it returns a StuckError and leaves the run's bubble
// behind (nothing can stop goroutines that never yield to virtual time;
// they leak until the process ends). The watchdog is a wall-clock timer
// outside the bubble: it never changes what happens inside.
func RunWatched(t *testing.T, p *sim.Plan) (*sim.Trace, error) {
	return runWatchedLimit(t, p, *timeoutFlag)
}

func runWatchedLimit(t *testing.T, p *sim.Plan, limit time.Duration) (*sim.Trace, error) {
	if limit <= 0 {
		return RunPlan(t, p)
	}
	var (
		tr       *sim.Trace
		err      error
		finished bool
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tr, err = RunPlan(t, p)
		finished = true
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-done:
		if !finished {
			return nil, fmt.Errorf("the run of plan %q ended its goroutine (runtime.Goexit: a FailNow inside the bubble)", p.Name)
		}
		return tr, err
	case <-timer.C:
		buf := make([]byte, 1<<20)
		for {
			n := runtime.Stack(buf, true)
			if n < len(buf) || len(buf) >= 64<<20 {
				buf = buf[:n]
				break
			}
			buf = make([]byte, 2*len(buf))
		}
		stacks := string(buf)
		return nil, &StuckError{plan: p.Name, limit: limit, stacks: stacks, bubble: notDurable(stacks)}
	}
}

// notDurable returns the headers and top frames of the bubbles'
// goroutines that are not durably blocked (running, runnable, or waiting
// on a mutex): those that keep the bubble's clock from advancing. At most
// 5.
func notDurable(stacks string) []string {
	var out []string
	for _, g := range strings.Split(stacks, "\n\n") {
		header, rest, _ := strings.Cut(g, "\n")
		if !strings.Contains(header, "synctest") || strings.Contains(header, "durable") {
			continue
		}
		// The first function of the goroutine's own code: the runtime's
		// and sync's frames above it say less.
		var frame string
		for i, line := range strings.Split(rest, "\n") {
			if i%2 == 0 && line != "" && !strings.HasPrefix(line, "runtime.") && !strings.HasPrefix(line, "internal/") && !strings.HasPrefix(line, "sync.") {
				frame, _, _ = strings.Cut(line, "(")
				break
			}
		}
		out = append(out, strings.TrimSuffix(header, ":")+" in "+frame)
		if len(out) == 5 {
			break
		}
	}
	return out
}

// SaveStacks writes a stuck run's goroutine stacks next to its report
// folder dir, if r.Err is the watchdog's, and says where in the error.
func SaveStacks(r *Result, dir string) {
	se, ok := r.Err.(*StuckError)
	if !ok {
		return
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return
	}
	path := dir + StuckGoroutinesSuffix
	if err := os.WriteFile(path, []byte(se.stacks), 0o644); err == nil {
		se.file = path
	}
}
