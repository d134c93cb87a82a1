package lab

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim"
)

// timeoutFlag is how long, in wall time, a run of Test or Catch may go
// without making a record before the watchdog gives up on it.
var timeoutFlag = flag.Duration("cachelab.timeout", 2*time.Minute, "cachelabtest: wall-clock limit of each run without progress (a run whose bubble never lets virtual time advance, a goroutine spinning or blocked on a mutex while another waits for virtual time, would hang go test): a run that makes no record for this long, or runs 10 times this long in all, fails with the goroutines' stacks and the test moves on; a slow run on a loaded machine that keeps recording goes on; 0: no limit")

// maxWatchedRounds bounds a run that keeps recording: it is stopped
// after this many limits of wall time in all.
const maxWatchedRounds = 10

// StuckGoroutinesSuffix ends the name of the file, next to a stuck run's
// report folder ("<folder>.goroutines.txt"), that holds the goroutine
// stacks the watchdog took.
const StuckGoroutinesSuffix = ".goroutines.txt"

// StuckError is the error of a run the watchdog gave up on.
type StuckError struct {
	plan  string
	limit time.Duration
	// total is the wall time the run had when given up on; records,
	// how many records it had made by then.
	total   time.Duration
	records int64
	stacks  string // every goroutine's stack when the limit passed
	bubble  []string
	file    string // where the stacks are written, set by SaveStacks
}

func (e *StuckError) Error() string {
	var b strings.Builder
	if e.records > 0 && e.total >= maxWatchedRounds*e.limit {
		fmt.Fprintf(&b, "stuck (lab watchdog): the run of plan %q kept recording (%d records) but did not end within %s of wall time (%d times -cachelab.timeout %s): a livelock outside the sim's own detection, or a machine too loaded for this limit.", e.plan, e.records, e.total.Round(time.Second), maxWatchedRounds, e.limit)
	} else {
		fmt.Fprintf(&b, "stuck (lab watchdog): the run of plan %q made no record for %s of wall time (-cachelab.timeout; %d records, %s in all): its bubble's clock no longer advances, a goroutine spins or is blocked on something synctest does not count as durably blocked (a sync.Mutex held by a goroutine that waits for virtual time).", e.plan, e.limit, e.records, e.total.Round(time.Second))
	}
	b.WriteString(" Virtual time reached: not readable from outside the bubble. The run's goroutines are left running until the test binary exits.")
	if e.file != "" {
		fmt.Fprintf(&b, " Goroutine stacks: %s.", e.file)
	}
	if len(e.bubble) > 0 {
		fmt.Fprintf(&b, " Not durably blocked in the bubble: %s", strings.Join(e.bubble, "; "))
	}
	return b.String()
}

// RunWatched is RunPlan under the wall-clock watchdog: when the run makes
// no record for -cachelab.timeout of wall time (stuck: its bubble's clock
// cannot advance), or runs maxWatchedRounds times that in all, it returns
// a StuckError and leaves the run's bubble behind (nothing can stop
// goroutines that never yield to virtual time; they leak until the
// process ends). A run starved of CPU on a loaded machine keeps recording
// and goes on. The watchdog is a wall-clock timer outside the bubble: it
// never changes what happens inside.
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
		progress atomic.Int64
	)
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		tr, err = runPlan(t, p, &progress)
		finished = true
	}()
	// The watchdog looks every quarter of the limit.
	tick := time.NewTicker(limit / 4)
	defer tick.Stop()
	total, records, ok := watch(done, tick.C, progress.Load, start, limit)
	if ok {
		if !finished {
			return nil, fmt.Errorf("the run of plan %q ended its goroutine (runtime.Goexit: a FailNow inside the bubble)", p.Name)
		}
		return tr, err
	}
	stacks := allStacks()
	return nil, &StuckError{plan: p.Name, limit: limit, total: total, records: records, stacks: stacks, bubble: notDurable(stacks)}
}

// watch waits for done, looking at the run's record count (records) at
// each tick: the run is stuck (ok false) once a whole limit of wall time
// has passed since the last look that found new records, or
// maxWatchedRounds limits since start; it returns then how long the run
// had been going and how many records it had made.
func watch(done <-chan struct{}, ticks <-chan time.Time, records func() int64, start time.Time, limit time.Duration) (total time.Duration, made int64, ok bool) {
	seen, lastNew := int64(0), start
	for {
		select {
		case <-done:
			return 0, 0, true
		case now := <-ticks:
			if n := records(); n != seen {
				seen, lastNew = n, now
			}
			if now.Sub(lastNew) >= limit || now.Sub(start) >= maxWatchedRounds*limit {
				return now.Sub(start), seen, false
			}
		}
	}
}

// allStacks returns every goroutine's stack.
func allStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
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
