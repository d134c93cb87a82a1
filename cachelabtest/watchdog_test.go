package cachelabtest

import (
	"context"
	"flag"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachelab/cachelab/internal/lab"
)

// A controller that holds a mutex while it sleeps in virtual time, while
// another goroutine waits for that mutex (Kueue's queue manager under
// the lab): sync.Mutex is not a durable block for synctest, so the
// bubble's clock never advances and the run never ends. The watchdog ends
// it within its wall-clock limit, naming the plan and the stuck
// goroutine.
func TestWatchdogEndsARunStuckOnAMutexHeldAcrossVirtualTime(t *testing.T) {
	c := stuckOnAMutex(t)
	start := time.Now()
	failures := Catch(t, c, These(faultedPlan()))
	wall := time.Since(start)
	if len(failures) != 1 {
		t.Fatalf("%d failures, want the stuck run's", len(failures))
	}
	f := failures[0]
	for _, want := range []string{"stuck (lab watchdog)", `plan "faulted"`, "2s of wall time", "-cachelab.timeout", "sync.Mutex", lab.StuckGoroutinesSuffix} {
		if !strings.Contains(f.Report, want) {
			t.Errorf("report lacks %q:\n%s", want, f.Report)
		}
	}
	if wall > 20*time.Second {
		t.Errorf("Catch took %s with a 2s limit", wall)
	}
	ents, _ := os.ReadDir("testdata/cachelab/" + lab.Safe(t.Name()))
	var files []string
	for _, e := range ents {
		files = append(files, e.Name())
	}
	if !strings.Contains(strings.Join(files, " "), lab.StuckGoroutinesSuffix) {
		t.Errorf("no goroutine dump written: %v", files)
	}
	t.Log(f.Report)
}

// Random plans: the stuck plan is reported as drawn (not shrunk: each
// smaller plan could hang as long), and the plans after it are not run.
func TestWatchdogStopsRandomPlansAtTheFirstStuckRun(t *testing.T) {
	c := stuckOnAMutex(t)
	start := time.Now()
	failures := Catch(t, c, Random())
	if wall := time.Since(start); wall > 20*time.Second {
		t.Errorf("Catch took %s with a 2s limit", wall)
	}
	if len(failures) != 1 || !strings.Contains(failures[0].Report, "stuck (lab watchdog)") {
		t.Fatalf("%d failures, want one stuck run: %v", len(failures), failures)
	}
}

// stuckOnAMutex sets a 2s watchdog limit for t and returns a controller
// whose run gets stuck: one goroutine holds a mutex while it sleeps in
// virtual time, another waits for it.
func stuckOnAMutex(t *testing.T) Controller {
	t.Chdir(t.TempDir())
	old := flag.Lookup("cachelab.timeout").Value.String()
	if err := flag.Set("cachelab.timeout", "2s"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set("cachelab.timeout", old) })
	var mu sync.Mutex
	var over atomic.Bool
	// Released once the test is done, so that the bubble left behind
	// can end (the holder sleeps on, and never unlocks it); the
	// controller's restarts then do nothing.
	t.Cleanup(func() { over.Store(true); mu.Unlock() })
	c := Controller{Start: func(ctx context.Context, env *Env) error {
		if over.Load() {
			return nil
		}
		held := make(chan struct{})
		go func() {
			mu.Lock()
			close(held)
			time.Sleep(time.Second) // virtual time
		}()
		<-held
		go func() {
			mu.Lock() // not durably blocked: the clock stops
			mu.Unlock()
		}()
		return nil
	}}
	return c
}
