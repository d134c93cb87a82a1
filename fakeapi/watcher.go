package fakeapi

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/fakeapi/store"
)

// Close reasons reported in ObsWatchClose observations (Observation.Reason).
const (
	// CloseStopped: the client called Stop.
	CloseStopped = "stopped"
	// CloseContext: the context of the watch request ended.
	CloseContext = "context canceled"
	// CloseTimeout: the watch's timeoutSeconds elapsed.
	CloseTimeout = "timeout"
	// CloseClean: Server.CloseWatch ended the watch cleanly.
	CloseClean = "closed"
	// CloseBroken: Server.CloseWatch broke the watch abruptly.
	CloseBroken = "broken"
	// CloseExpired: Server.ExpireWatch sent a 410 and closed the watch.
	CloseExpired = "expired"
	// CloseServer: Server.Close ended every watch.
	CloseServer = "server closed"
)

// preTimeoutBookmark is how long before a watch's timeout the last
// bookmark is sent.
const preTimeoutBookmark = 2 * time.Second

// queuedEvent is one event waiting in a watcher's queue.
type queuedEvent struct {
	// ev holds the store's shared object; it is deep-copied on delivery.
	ev watch.Event
	// info describes the event for hooks and observers; the sent and the
	// delivered observation share it (observers must not modify it).
	info   *EventInfo
	sentAt time.Time
	// owned is true when the watch may deliver ev.Object itself: nothing
	// else reads it (see Server.publishLocked).
	owned bool
}

// closeRequest asks a delivery goroutine to end the watch, after sending
// errEvent if it is set.
type closeRequest struct {
	reason   string
	errEvent *watch.Event
}

// watcher is one open watch: an unbounded queue filled by the server under
// its lock, drained in order by one delivery goroutine (run) that holds each
// event for the hook's delay and sends it on result.
type watcher struct {
	s *Server
	// info is set at creation and never modified: observations point at
	// it.
	info WatcherInfo
	// filter is what the watch sees of a live event (store.Filter).
	filter func(store.Event) (store.Event, bool)
	// source is the resource whose events the watch sees: its own, or
	// the storage version it is served from (store.StorageResource).
	source  schema.GroupVersionResource
	ctx     context.Context
	timeout time.Duration
	// bookmarks is true when the client asked for periodic bookmarks.
	bookmarks bool
	// convert turns a stored (shared) object into the one delivered;
	// convertOwned, if set, an object the watch owns (no copy needed).
	convert      func(runtime.Object) runtime.Object
	convertOwned func(runtime.Object) runtime.Object
	// lastQueuedRV is the RV of the last event queued (guarded by s.mu).
	lastQueuedRV int64
	// startRV is the revision the watch starts after: live events and
	// bookmarks at or below it are never sent (a watch from a future
	// resourceVersion waits for it, as the watch cache's watchers do).
	startRV int64

	mu      sync.Mutex
	queue   []queuedEvent
	closing *closeRequest

	wake     chan struct{} // capacity 1: "the queue or closing changed"
	stopCh   chan struct{} // closed by Stop
	stopOnce sync.Once
	result   chan watch.Event
}

var _ watch.Interface = (*watcher)(nil)

func newWatcher(s *Server, ctx context.Context, info WatcherInfo, filter func(store.Event) (store.Event, bool), timeout time.Duration, bookmarks bool) *watcher {
	if ctx == nil {
		ctx = context.Background()
	}
	return &watcher{
		s:            s,
		info:         info,
		source:       info.Resource,
		filter:       filter,
		ctx:          ctx,
		timeout:      timeout,
		bookmarks:    bookmarks,
		wake:         make(chan struct{}, 1),
		stopCh:       make(chan struct{}),
		result:       make(chan watch.Event),
		convert:      func(obj runtime.Object) runtime.Object { return asTypedClientSees(obj.DeepCopyObject()) },
		convertOwned: asTypedClientSees,
	}
}

// Stop ends the watch; the result channel closes soon after. It is safe to
// call more than once and from any goroutine.
func (w *watcher) Stop() {
	w.stopOnce.Do(func() { close(w.stopCh) })
}

// ResultChan returns the channel events are delivered on.
func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

// enqueue appends ev unless the watch is closing; it never blocks.
func (w *watcher) enqueue(ev queuedEvent) bool {
	w.mu.Lock()
	if w.closing != nil {
		w.mu.Unlock()
		return false
	}
	w.queue = append(w.queue, ev)
	w.mu.Unlock()
	if ev.info.RV > w.lastQueuedRV {
		w.lastQueuedRV = ev.info.RV
	}
	w.signal()
	return true
}

// terminate asks the delivery goroutine to end the watch.
func (w *watcher) terminate(req closeRequest) {
	w.mu.Lock()
	if w.closing == nil {
		w.closing = &req
	}
	w.mu.Unlock()
	w.signal()
}

func (w *watcher) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// watchTimer is one timer of a watch: a clock's channel (c), or a turn
// of the scheduler (turn, closed when it fires); stop withdraws it.
type watchTimer struct {
	c    <-chan time.Time
	turn <-chan struct{}
	stop func()
}

// cancel stops t, if it is armed.
func (t watchTimer) cancel() {
	if t.stop != nil {
		t.stop()
	}
}

// run delivers queued events in order until the watch ends, then closes the
// result channel. Each event is held until
// max(previous delivery time, sent time + Hooks.EventDelay), so a delay never
// reorders one stream.
func (w *watcher) run() {
	reason := CloseStopped
	defer func() {
		w.s.watchEnded(w, reason)
		close(w.result)
	}()
	clk := w.s.clock
	// The watch's timers run on the clock, or, with a TimerScheduler, are
	// turns of the scheduler (a bookmark then never races an event or a
	// request of the same instant).
	ts, _ := w.s.sched.(TimerScheduler)
	arm := func(name string, d time.Duration, periodic bool) watchTimer {
		if ts != nil {
			if fire, cancel, ok := ts.AwaitTimer(w.info, name, d); ok {
				return watchTimer{turn: fire, stop: cancel}
			}
		}
		if periodic {
			t := clk.NewTicker(d)
			return watchTimer{c: t.C(), stop: t.Stop}
		}
		t := clk.NewTimer(d)
		return watchTimer{c: t.C(), stop: func() { t.Stop() }}
	}
	var tick, timeout, preTimeout watchTimer
	defer func() {
		tick.cancel()
		timeout.cancel()
		preTimeout.cancel()
	}()
	if w.bookmarks {
		tick = arm("bookmark", w.s.bookmarkInterval, true)
	}
	if w.timeout > 0 {
		timeout = arm("timeout", w.timeout, false)
		// The watch cache sends a bookmark 2 s before a watch's deadline
		// (cacheWatcher.nextBookmarkTime), so that the client resumes
		// from as close to now as possible.
		if w.bookmarks && w.timeout > preTimeoutBookmark {
			preTimeout = arm("pre-timeout bookmark", w.timeout-preTimeoutBookmark, false)
		}
	}

	var (
		lastDeliverAt time.Time
		// State of the queue's head, reset when it is delivered.
		headPlanned bool
		headAt      time.Time
		headReady   bool
		headEvent   watch.Event
		// headTimer holds the head until headAt. One timer serves every
		// event of the watch: it is only re-armed once it has fired and
		// been received from, or was never armed.
		headTimer clock.Timer
		// With a Scheduler, a ready head also waits for its turn:
		// turnC is closed when it is given, cancelTurn withdraws the
		// request, granted is true once given. delivered counts the
		// events delivered so far.
		turnC      <-chan struct{}
		cancelTurn func()
		granted    bool
		delivered  int
	)
	defer func() {
		if headTimer != nil {
			headTimer.Stop()
		}
		if cancelTurn != nil {
			cancelTurn()
		}
	}()

	for {
		w.mu.Lock()
		closing := w.closing
		var head queuedEvent
		hasHead := len(w.queue) > 0
		if hasHead {
			head = w.queue[0]
		}
		w.mu.Unlock()

		if closing != nil {
			reason = closing.reason
			if closing.errEvent != nil {
				select {
				case w.result <- *closing.errEvent:
				case <-w.stopCh:
				case <-w.ctx.Done():
				}
			}
			return
		}

		var timerC <-chan time.Time
		var sendC chan<- watch.Event
		if hasHead {
			if !headPlanned {
				headPlanned = true
				d := w.s.hooks.EventDelay(w.info, *head.info)
				headAt = head.sentAt.Add(d)
				if headAt.Before(lastDeliverAt) {
					headAt = lastDeliverAt
				}
				if wait := headAt.Sub(clk.Now()); wait > 0 {
					if headTimer == nil {
						headTimer = clk.NewTimer(wait)
					} else {
						headTimer.Reset(wait)
					}
				} else {
					headReady = true
				}
			}
			if headReady {
				if headEvent.Object == nil {
					convert := w.convert
					if head.owned && w.convertOwned != nil {
						convert = w.convertOwned
					}
					headEvent = watch.Event{Type: head.ev.Type, Object: convert(head.ev.Object)}
				}
				switch sched := w.s.sched; {
				case sched == nil || granted:
					sendC = w.result
				case turnC == nil:
					turnC, cancelTurn = sched.AwaitDelivery(w.info, *head.info, delivered+1)
				}
			} else {
				timerC = headTimer.C()
			}
		}

		// sent records the head's delivery.
		sent := func() {
			w.mu.Lock()
			w.queue[0] = queuedEvent{}
			w.queue = w.queue[1:]
			if len(w.queue) == 0 {
				w.queue = nil
			}
			w.mu.Unlock()
			lastDeliverAt = headAt
			headPlanned, headReady, headEvent = false, false, watch.Event{}
			granted, cancelTurn = false, nil
			delivered++
			w.s.delivered(w, head.info)
		}
		// Fast paths, before the select over every channel (whose cost
		// grows with their number): a turn already given, a consumer
		// already waiting. Either is one of the outcomes the select
		// could pick.
		if turnC != nil {
			select {
			case <-turnC:
				granted, turnC = true, nil
				continue
			default:
			}
		}
		if sendC != nil {
			select {
			case sendC <- headEvent:
				sent()
				continue
			default:
			}
		}

		select {
		case <-w.wake:
		case <-timerC:
			headReady = true
		case <-turnC:
			granted, turnC = true, nil
		case sendC <- headEvent:
			sent()
		case <-tick.c:
			w.s.sendBookmark(w)
		case <-tick.turn:
			w.s.sendBookmark(w)
			tick = arm("bookmark", w.s.bookmarkInterval, true)
		case <-preTimeout.c:
			w.s.sendBookmark(w)
		case <-preTimeout.turn:
			w.s.sendBookmark(w)
			preTimeout = watchTimer{}
		case <-timeout.c:
			reason = CloseTimeout
			return
		case <-timeout.turn:
			reason = CloseTimeout
			return
		case <-w.stopCh:
			reason = CloseStopped
			return
		case <-w.ctx.Done():
			reason = CloseContext
			return
		}
	}
}
