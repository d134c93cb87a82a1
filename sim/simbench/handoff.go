package simbench

import (
	"context"
	"sync"
	"testing/synctest"
	"time"
)

// HandOffFloor measures what the Go runtime alone costs per turn of a
// scheduler built as sim's is, on synctest.Wait, with nothing of the lab
// around it: a goroutine asks for its turn (a one-slot channel, under a
// mutex) and parks on it and on ctx, as a subject's goroutine waits for
// its turn; the caller's synctest.Wait returns once it is blocked, and the
// caller gives it its turn (a token on the channel) and waits again. A
// scheduled run pays at least this on each of its turns (two goroutine
// switches and a wait of the bubble); what it pays beyond is the lab's
// bookkeeping and the switches' effect on the code around them.
//
// It returns the process's CPU time (every thread) per hand-off over n of
// them, and how many were made (n, unless ctx ended first). It must be
// called from a goroutine inside a synctest bubble in which no other
// goroutine calls synctest.Wait.
func HandOffFloor(ctx context.Context, n int) (perTurn time.Duration, made int) {
	if n <= 0 {
		return 0, 0
	}
	var (
		mu      sync.Mutex
		pending chan struct{}
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ch := make(chan struct{}, 1)
		for range n {
			mu.Lock()
			pending = ch
			mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
		}
	}()
	cpu0 := ProcessCPU()
	for made < n {
		synctest.Wait()
		mu.Lock()
		ch := pending
		pending = nil
		mu.Unlock()
		if ch == nil {
			break // ctx ended: the goroutine returned
		}
		ch <- struct{}{}
		made++
	}
	<-done
	if made == 0 {
		return 0, 0
	}
	return (ProcessCPU() - cpu0) / time.Duration(made), made
}
