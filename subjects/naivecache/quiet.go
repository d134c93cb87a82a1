package naivecache

import (
	"context"
	"sync"
	"time"
)

// Quiescence is the origin notes' first definition of "synced": no event
// has arrived for Factor times the loop time. The loop time is the longest
// measured trip round the main loop (Trip), but never less than LoopTime.
//
// It flips: true after a quiet window, false again at the next event. Synced
// is closed at the first flip to true, which is what the controller waits for.
type Quiescence struct {
	// LoopTime is the floor of the loop time. Under virtual time a trip
	// costs nothing, so this floor is the loop time in practice.
	LoopTime time.Duration
	// Factor multiplies the loop time into the quiet window (the notes: 10).
	Factor int
	// OnFlip, optional, is called (from Run's goroutine) at each flip, with
	// the window in force.
	OnFlip func(synced bool, window time.Duration)

	mu      sync.Mutex
	maxTrip time.Duration
	kick    chan struct{}
	synced  chan struct{}
	once    sync.Once
}

// NewQuiescence returns a detector with the given loop-time floor and
// factor.
func NewQuiescence(loopTime time.Duration, factor int, onFlip func(bool, time.Duration)) *Quiescence {
	return &Quiescence{LoopTime: loopTime, Factor: factor, OnFlip: onFlip, kick: make(chan struct{}, 1), synced: make(chan struct{})}
}

// Event tells the detector an event arrived. It never blocks.
func (q *Quiescence) Event() {
	select {
	case q.kick <- struct{}{}:
	default: // a kick is already pending: same effect
	}
}

// Trip reports the measured duration of one trip round the main loop.
func (q *Quiescence) Trip(d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if d > q.maxTrip {
		q.maxTrip = d
	}
}

// Window is the quiet window in force: Factor x max(LoopTime, longest trip).
func (q *Quiescence) Window() time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	lt := max(q.LoopTime, q.maxTrip)
	return time.Duration(q.Factor) * lt
}

// Synced is closed the first time the detector says synced.
func (q *Quiescence) Synced() <-chan struct{} { return q.synced }

// Run measures quiet windows until ctx is cancelled. The clock starts when
// Run starts: a list slower than the window reads as quiet.
func (q *Quiescence) Run(ctx context.Context) {
	synced := false
	window := q.Window()
	t := time.NewTimer(window)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-q.kick:
			if synced {
				synced = false
				if q.OnFlip != nil {
					q.OnFlip(false, window)
				}
			}
			window = q.Window()
			t.Reset(window)
		case <-t.C:
			if !synced {
				synced = true
				if q.OnFlip != nil {
					q.OnFlip(true, window)
				}
				q.once.Do(func() { close(q.synced) })
			}
		}
	}
}
