package lab

import (
	"bytes"
	"strings"
	"sync"
	"testing"
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

// These tests use the wall clock on purpose: progress is shown to a person
// while bubbles run, outside virtual time. The periods are milliseconds.

func TestProgressLogsCountsWhenNotATerminal(t *testing.T) {
	var out lockedBuffer
	p := startProgress(&out, 3, false, 0, 5*time.Millisecond)
	p.Done(false)
	p.Done(true)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "2/3 runs done, 1 unexpected") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	p.Stop()
	if got := out.String(); !strings.Contains(got, "cachelab: 2/3 runs done, 1 unexpected") || strings.Contains(got, "\r") {
		t.Errorf("log lines = %q, want plain lines with the counts", got)
	}
}

func TestProgressRedrawsABarOnATerminalAndErasesItWhenStopped(t *testing.T) {
	var out lockedBuffer
	p := startProgress(&out, 4, true, 0, 5*time.Millisecond)
	p.Done(false)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "1/4 runs") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	p.Stop()
	got := out.String()
	if !strings.Contains(got, "\r\033[K[#######.......................] 1/4 runs  0 unexpected") {
		t.Errorf("bar = %q", got)
	}
	if !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("the bar is not erased at the end: %q", got)
	}
}

func TestProgressStaysQuietForShortBatches(t *testing.T) {
	var out lockedBuffer
	p := startProgress(&out, 1, false, time.Hour, time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	p.Stop()
	if got := out.String(); got != "" {
		t.Errorf("a short batch printed %q", got)
	}
}
