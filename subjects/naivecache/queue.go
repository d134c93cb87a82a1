package naivecache

import "sync"

// FIFO is the notes' work queue: keys in arrival order, nothing more. It does
// not de-duplicate (a key added twice is handed out twice, possibly to two
// workers at once), does not rate-limit and does not remember failures:
// exactly the properties client-go's workqueue adds, left out on purpose.
type FIFO struct {
	mu     sync.Mutex
	cond   sync.Cond
	items  []string
	closed bool
}

// NewFIFO returns an empty queue.
func NewFIFO() *FIFO {
	q := &FIFO{}
	q.cond.L = &q.mu
	return q
}

// Add appends key. Adding to a closed queue does nothing.
func (q *FIFO) Add(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.items = append(q.items, key)
	q.cond.Signal()
}

// Get blocks until a key is available or the queue is closed; ok is false
// once closed.
func (q *FIFO) Get() (key string, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return "", false
	}
	key = q.items[0]
	q.items = q.items[1:]
	return key, true
}

// Len returns the number of queued keys.
func (q *FIFO) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// Close wakes every Get; later Adds are dropped.
func (q *FIFO) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}
