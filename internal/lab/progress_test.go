package lab

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the ticker goroutine and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The progress line is shown to a person in real time, but its ticker is a
// plain time.Ticker: inside a synctest bubble these tests step it in
// virtual time, with no wall-clock polling.

func TestProgressLogsCountsWhenNotATerminal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out lockedBuffer
		p := startProgress(&out, 3, false, 0, 5*time.Millisecond)
		p.Done(false)
		p.Done(true)
		time.Sleep(6 * time.Millisecond)
		synctest.Wait()
		p.Stop()
		if got := out.String(); !strings.Contains(got, "cachelab: 2/3 runs done, 1 unexpected") || strings.Contains(got, "\r") {
			t.Errorf("log lines = %q, want plain lines with the counts", got)
		}
	})
}

func TestProgressRedrawsABarOnATerminalAndErasesItWhenStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out lockedBuffer
		p := startProgress(&out, 4, true, 0, 5*time.Millisecond)
		p.Done(false)
		time.Sleep(6 * time.Millisecond)
		synctest.Wait()
		p.Stop()
		got := out.String()
		if !strings.Contains(got, "\r\033[K[#######.......................] 1/4 runs  0 unexpected") {
			t.Errorf("bar = %q", got)
		}
		if !strings.HasSuffix(got, "\r\033[K") {
			t.Errorf("the bar is not erased at the end: %q", got)
		}
	})
}

func TestProgressStaysQuietForShortBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out lockedBuffer
		p := startProgress(&out, 1, false, time.Hour, time.Millisecond)
		time.Sleep(20 * time.Millisecond)
		synctest.Wait()
		p.Stop()
		if got := out.String(); got != "" {
			t.Errorf("a short batch printed %q", got)
		}
	})
}
