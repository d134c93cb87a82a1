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
// It flips: true after a quiet window, false again at the next event. The
// flip to false happens inside Event, before the event is applied, so a
// trace shows it ahead of the event's handler record. Synced is closed at the
// first flip to true, which is what the controller waits for.
type Quiescence struct {
	// LoopTime is the floor of the loop time. Under virtual time a trip
	// costs nothing, so this floor is the loop time in practice.
	LoopTime time.Duration
	// Factor multiplies the loop time into the quiet window (the notes: 10).
	Factor int
	// OnFlip, optional, is called at each flip with the window in force,
	// with the detector's lock held (so flips are reported in order); it
	// must not call back into the detector.
	OnFlip func(synced bool, window time.Duration)

	mu        sync.Mutex
	maxTrip   time.Duration
	lastEvent time.Time
	synced    bool
	kick      chan struct{}
	syncedCh  chan struct{}
}

// NewQuiescence returns a detector with the given loop-time floor and
// factor.
func NewQuiescence(loopTime time.Duration, factor int, onFlip func(bool, time.Duration)) *Quiescence {
	return &Quiescence{LoopTime: loopTime, Factor: factor, OnFlip: onFlip, kick: make(chan struct{}, 1), syncedCh: make(chan struct{})}
}

// Event tells the detector an event arrived: a synced detector flips to
// false now. It never blocks.
func (q *Quiescence) Event() {
	q.mu.Lock()
	q.lastEvent = time.Now()
	if q.synced {
		q.synced = false
		if q.OnFlip != nil {
			q.OnFlip(false, q.windowLocked())
		}
	}
	q.mu.Unlock()
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
	return q.windowLocked()
}

func (q *Quiescence) windowLocked() time.Duration {
	return time.Duration(q.Factor) * max(q.LoopTime, q.maxTrip)
}

// Synced is closed the first time the detector says synced.
func (q *Quiescence) Synced() <-chan struct{} { return q.syncedCh }

// Run measures quiet windows until ctx is cancelled. The clock starts when
// Run starts: a list slower than the window reads as quiet.
func (q *Quiescence) Run(ctx context.Context) {
	q.mu.Lock()
	if q.lastEvent.IsZero() {
		q.lastEvent = time.Now()
	}
	q.mu.Unlock()
	t := time.NewTimer(q.Window())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-q.kick:
		case <-t.C:
		}
		q.mu.Lock()
		wait := q.lastEvent.Add(q.windowLocked()).Sub(time.Now())
		if wait <= 0 && !q.synced {
			q.synced = true
			if q.OnFlip != nil {
				q.OnFlip(true, q.windowLocked())
			}
			select {
			case <-q.syncedCh:
			default:
				close(q.syncedCh)
			}
		}
		q.mu.Unlock()
		if wait > 0 {
			t.Reset(wait)
		}
	}
}
