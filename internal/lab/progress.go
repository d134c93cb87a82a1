package lab

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Progress shows a batch's progress on a terminal (a bar redrawn in place)
// or in a log (a line every few seconds), once the batch has run for more
// than a second. Its ticker runs outside any bubble, on the wall clock.
type Progress struct {
	w     io.Writer
	tty   bool
	total int
	start time.Time
	// after is how long the batch runs before anything is shown; every is
	// the redraw (terminal) or log-line period.
	after, every time.Duration

	mu         sync.Mutex
	done       int
	unexpected int
	drawn      bool
	stop       chan struct{}
	stopped    chan struct{}
}

// IsTerminal reports whether w is a character device (a terminal).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// StartProgress starts showing the progress of total runs on w.
func StartProgress(w io.Writer, total int, tty bool) *Progress {
	every := 2 * time.Second
	if tty {
		every = 100 * time.Millisecond
	}
	return startProgress(w, total, tty, time.Second, every)
}

func startProgress(w io.Writer, total int, tty bool, after, every time.Duration) *Progress {
	p := &Progress{w: w, tty: tty, total: total, start: time.Now(), after: after, every: every,
		stop: make(chan struct{}), stopped: make(chan struct{})}
	go p.loop()
	return p
}

// Done counts one finished run.
func (p *Progress) Done(unexpected bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if unexpected {
		p.unexpected++
	}
}

// Clear erases the bar before other output is printed on the terminal; the
// next tick redraws it.
func (p *Progress) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
}

func (p *Progress) clearLocked() {
	if p.tty && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// Stop stops the ticker and erases the bar.
func (p *Progress) Stop() {
	close(p.stop)
	<-p.stopped
	p.Clear()
}

func (p *Progress) loop() {
	defer close(p.stopped)
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			if time.Since(p.start) >= p.after {
				p.draw()
			}
		}
	}
}

func (p *Progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	el := time.Since(p.start).Round(100 * time.Millisecond)
	if !p.tty {
		fmt.Fprintf(p.w, "cachelab: %d/%d runs done, %d unexpected, %s\n", p.done, p.total, p.unexpected, el)
		return
	}
	const width = 30
	n := 0
	if p.total > 0 {
		n = p.done * width / p.total
	}
	fmt.Fprintf(p.w, "\r\033[K[%s%s] %d/%d runs  %d unexpected  %s", strings.Repeat("#", n), strings.Repeat(".", width-n), p.done, p.total, p.unexpected, el)
	p.drawn = true
}
