package sim

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cachelab/cachelab/fakeapi"
)

// The deterministic scheduler.
//
// Goroutines inside client-go and the subject interleave as Go's scheduler
// pleases (synctest does not seed it), but everything that crosses the API
// boundary is the sim's to order: a request's answer, a watch event's
// delivery, a fault the policy injects on its own timer. The scheduler holds
// each of them as a ticket until the run loop gives it its turn. The run
// loop (the only goroutine of the run that calls synctest.Wait) waits until
// every other goroutine of the bubble is durably blocked, then releases ONE
// ready ticket, waits again, and so on: the reactions to one release
// (a handler call, a reconcile, the next request) all happen before the next
// release. Which ticket goes first is decided by data, not by timing: the
// earliest due time, then the turn at which it was asked for, then its key,
// a name made of what the ticket is about (the client, verb, resource,
// object and the n-th such request of that client; the watch and the n-th
// event on it), so two runs of one plan release the same tickets in the
// same order. The keys of released tickets, in order, are the run's
// delivery schedule (Trace.Schedule); a plan may carry one to enforce
// (Plan.Schedule), which replay uses.
//
// Turns of the subject's own. A release may wake several goroutines of the
// subject at once (a handler's Add wakes a worker while the handler goes on
// to its next object). The recording wrappers make each of them ask for a
// turn (Env.Turn) before it records or acts: a handler call, a worker's Get.
// A turn is a ticket like the others, due at once, so the two run one after
// the other in the canonical order of their keys ("turn <actor> <name>
// #n"), or in the order a plan's Schedule names. The watches' own timers
// (periodic bookmarks, the bookmark before a timeout, the timeout) are
// tickets too ("timer <watch> <name> #n"), so a bookmark never races an
// event or a request that comes at the same instant.
//
// What stays free: the order in which client-go hands one batch to a
// handler. A WatchList's initial objects and a relist's deletions come out
// of a Go map (reflector.go's temporary store, the FIFO's known objects),
// in an order Go randomizes; a handler takes them one at a time, so only
// the first is ever ready. And which object the subject acts on, given the
// same answers and events: a controller may pick it from a Go map of its
// own (the Job controller deletes the first Pods of its lister's list,
// which comes out of a map and is sorted with ties), so it asks about
// another object (IsSubjectOrderDivergence). A plan whose Schedule names
// another order than the one a run got cannot be followed: the run is
// started over, up to ReplayAttempts times, until the order recurs (see
// RunInBubble), and each attempt's divergence says which order it met.

// tally counts the releases of one request base at one instant.
type tally struct {
	n     int
	label string
}

// errSchedulerClosed fails requests still waiting when the run ends.
var errSchedulerClosed = errors.New("sim: the run ended before this request was served")

// DefaultLivelockAfter is Plan.LivelockAfter when the plan sets none.
const DefaultLivelockAfter = 2000

// ticket is one thing waiting for its turn.
type ticket struct {
	key    string
	base   string // the key without its ordinal, for the livelock tally
	client string // the requesting client (requests)
	turn   int    // the scheduler's turn count when it was asked for
	due    time.Duration
	// ch is closed when the ticket is released or not served (the
	// scheduler closes, its client crashed); a turn's ticket (reused)
	// instead receives one token when it is released (see turn).
	ch     chan struct{}
	reused bool
	err    error  // set before ch is closed if the ticket was not served
	fn     func() // an action: run by the run loop instead of waking a goroutine
	gone   bool
	label  string // a request's label, in words (livelock reports; "" for other tickets)
	verb   string // the request's verb ("" if the ticket is no request)
	// object is the object a subject's turn is about ("" for other
	// tickets): client-go's order, not the scheduler's, decides it.
	object string
	// ent is entry(), built with key when object is set.
	ent string
	// A request's ticket is numbered (its key set, its latency drawn)
	// only when the run loop next decides (keyPendingLocked): at is when
	// it was asked for, cost draws its latency from its key, body returns
	// what it sends (fakeapi.RequestInfo.Body), digest is body's digest
	// once needed.
	at     time.Duration
	cost   func(key string) time.Duration
	body   func() []byte
	digest string
}

// entry is t as the delivery schedule writes it: its key, and for a turn
// about an object, " @" and the object.
func (t *ticket) entry() string {
	switch {
	case t.object == "":
		return t.key
	case t.ent != "":
		return t.ent
	}
	return t.key + objectSep + t.object
}

// objectSep separates a schedule entry's key from its object.
const objectSep = " @"

// splitEntry splits a schedule entry into its key and object.
func splitEntry(e string) (key, object string) {
	if i := strings.LastIndex(e, objectSep); i >= 0 && strings.HasPrefix(e, "turn ") {
		return e[:i], e[i+len(objectSep):]
	}
	return e, ""
}

// scheduler implements fakeapi.Scheduler for one run.
type scheduler struct {
	now    func() time.Duration
	policy *Policy

	mu      sync.Mutex
	pending []*ticket
	notify  chan struct{} // capacity 1: "a ticket was added"
	// listening is true while the run loop waits in pump's select, the
	// only time it needs notify: everywhere else it reads the queue after
	// synctest.Wait, once every goroutine that could add a ticket is
	// blocked (see wake).
	listening atomic.Bool
	turns     int
	counts    map[string]int
	// unkeyed counts the waiting requests not yet numbered (see
	// enqueueRequest).
	unkeyed int
	// turnBases are the subject turns' bases ("turn <actor> <what>") and
	// their counts, by actor and what, built once: a run asks for hundreds
	// of turns (676 of the standard scenario's 1,019 releases).
	turnBases map[[2]string]*turnBase
	// free are turn tickets whose goroutine got its turn, for the next
	// turns: a turn's ticket and channel are otherwise two allocations
	// on every turn (see turn).
	free []*ticket
	// arena holds the keys and entries of the tickets, written one after
	// the other into shared blocks (see keyLocked).
	arena  strings.Builder
	closed bool
	keys   []string // released keys, in order (the delivery schedule)

	// enforce is a recorded schedule to follow; diverged is the turn at
	// which the run first could not (-1: never), divergence says why.
	// With abortOnDivergence the run stops there (it will be started
	// over) instead of going on in the canonical order.
	enforce           []string
	diverged          int
	divergence        string
	abortOnDivergence bool
	// choices, when recording (exploration), are the turns at which more
	// than one ticket was ready.
	recordChoices bool
	choices       []ChoicePoint
	// tickets, when recording choices, are the tickets asked for, in the
	// order asked; disturbed are the turns at which a waiting ticket was
	// withdrawn or failed. Explore's reduction reads them.
	tickets   []ticketInfo
	disturbed []int
	// random, when set, picks among the ready tickets at random instead
	// of canonically (random schedules, see ExploreRandom).
	random *rand.Rand

	// Livelock detection: releases of requests at one virtual instant,
	// per base key.
	limit    int
	instant  time.Duration
	tally    map[string]*tally
	livelock string
}

var (
	_ fakeapi.Scheduler      = (*Policy)(nil)
	_ fakeapi.TimerScheduler = (*Policy)(nil)
	_ fakeapi.InitialOrderer = (*Policy)(nil)
)

func newScheduler(now func() time.Duration, policy *Policy, enforce []string, limit int) *scheduler {
	if limit <= 0 {
		limit = DefaultLivelockAfter
	}
	return &scheduler{
		now: now, policy: policy,
		notify:    make(chan struct{}, 1),
		counts:    map[string]int{},
		turnBases: map[[2]string]*turnBase{},
		enforce:   enforce,
		diverged:  -1,
		limit:     limit,
		tally:     map[string]*tally{},
	}
}

// unscheduledKey marks the context of a run made without the scheduler.
type unscheduledKey struct{}

// WithoutScheduler returns ctx marked so that RunInBubble runs the plan
// without the deterministic scheduler: requests are answered and events
// delivered as soon as goroutines get there, as before the scheduler
// existed. It exists to measure what the scheduler costs (cachelab bench
// --access direct,direct-unscheduled); such a run is not reproducible.
func WithoutScheduler(ctx context.Context) context.Context {
	return context.WithValue(ctx, unscheduledKey{}, true)
}

// ungatedKey marks a context whose requests are not scheduled: the run
// loop's own (the user's steps), which it serves itself.
type ungatedKey struct{}

// ungated returns ctx with its requests exempt from scheduling.
func ungated(ctx context.Context) context.Context { return context.WithValue(ctx, ungatedKey{}, true) }

// wake tells the run loop a ticket was added, when it is listening: a
// turn's ticket is added while the run loop is in synctest.Wait, where a
// notice would only be drained again.
func (s *scheduler) wake() {
	if !s.listening.Load() {
		return
	}
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// requestKey names a request: client, verb, resource, object; the ordinal
// is added by the caller.
func requestKey(req fakeapi.RequestInfo) (base, label string) {
	verb := req.Verb
	if req.Subresource != "" {
		verb += "/" + req.Subresource
	}
	obj := ResourceName(req.Resource)
	if req.Namespace != "" {
		obj += "/" + req.Namespace
	}
	if req.Name != "" {
		obj += "/" + req.Name
	}
	return "req " + req.Client + " " + verb + " " + obj, req.Client + ": " + verb + " " + obj
}

// enqueue adds a ticket for the next occurrence of base (its key is base
// plus the occurrence's number), due at due, or at cost(key) after due when
// cost is set, and woken on release; nil if the scheduler has closed. verb
// is a request's verb, "" for a sleep.
func (s *scheduler) enqueue(base, label, client, verb string, due time.Duration, cost func(key string) time.Duration) *ticket {
	return s.enqueueTicket(&ticket{base: base, label: label, client: client, verb: verb, due: due}, cost)
}

// enqueueTicket adds t (base, label, client, verb, object and due set).
func (s *scheduler) enqueueTicket(t *ticket, cost func(key string) time.Duration) *ticket {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	n := s.counts[t.base] + 1
	s.counts[t.base] = n
	s.keyLocked(t, n)
	if cost != nil {
		t.due += cost(t.key)
	}
	t.turn, t.ch = s.turns, make(chan struct{})
	s.pending = append(s.pending, t)
	s.logLocked(t)
	s.mu.Unlock()
	s.wake()
	return t
}

// enqueueRequest adds a request's ticket (base, label, client, verb, at,
// cost and body set) without numbering it: requests alike but for what
// they send (creates with generateName from several goroutines) reach the
// scheduler in whatever order Go runs their goroutines, so the n-th such
// request is decided when the run loop next looks, every goroutine then
// blocked, by what each sends (keyPendingLocked). nil if the scheduler has
// closed.
func (s *scheduler) enqueueRequest(t *ticket) *ticket {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	t.due, t.turn, t.ch = t.at, s.turns, make(chan struct{})
	s.pending = append(s.pending, t)
	s.unkeyed++
	s.mu.Unlock()
	s.wake()
	return t
}

// keyPendingLocked numbers the waiting requests not yet numbered
// (enqueueRequest): by the time they were asked for, then by base, then by
// the digest of what they send, so that requests alike but for their
// content get the same ordinals, latencies and fault draws in every run;
// requests that send the same thing keep the order they came in, which
// nothing can tell apart. Then each gets its key, its latency (cost) and
// its place in the exploration's log.
func (s *scheduler) keyPendingLocked() {
	if s.unkeyed == 0 {
		return
	}
	lazy := make([]*ticket, 0, s.unkeyed)
	for _, t := range s.pending {
		if t.key == "" {
			lazy = append(lazy, t)
		}
	}
	s.unkeyed = 0
	if len(lazy) > 1 {
		slices.SortStableFunc(lazy, func(a, b *ticket) int {
			if c := cmp.Compare(a.at, b.at); c != 0 {
				return c
			}
			if c := strings.Compare(a.base, b.base); c != 0 {
				return c
			}
			return strings.Compare(a.contentDigest(), b.contentDigest())
		})
	}
	for _, t := range lazy {
		n := s.counts[t.base] + 1
		s.counts[t.base] = n
		s.keyLocked(t, n)
		if t.cost != nil {
			t.due = t.at + t.cost(t.key)
		}
		s.logLocked(t)
	}
}

// settle numbers the waiting requests (keyPendingLocked) before the run
// loop takes some of them away (a crash fails its process's requests, and
// their goroutines withdraw them as their context ends): those requests
// keep the numbers they would have had, whichever of the two comes first.
func (s *scheduler) settle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keyPendingLocked()
}

// contentDigest returns the digest of what t's request sends ("" for
// none), computed once.
func (t *ticket) contentDigest() string {
	if t.digest == "" && t.body != nil {
		sum := sha256.Sum256(t.body())
		t.digest = hex.EncodeToString(sum[:8])
	}
	return t.digest
}

// keyLocked sets t's key (t.base, " #" and n) and, for a turn about an
// object, its entry (the key, " @" and the object; the key is its prefix).
// They are written into the arena, a block of a few kilobytes the keys of
// many tickets share: a key is kept for the whole run (the delivery
// schedule), so one allocation per block instead of one per ticket. A
// strings.Builder only appends, so a string taken from it stays valid
// when more is written or when a new block is started.
func (s *scheduler) keyLocked(t *ticket, n int) {
	var num [20]byte
	digits := strconv.AppendInt(num[:0], int64(n), 10)
	size := len(t.base) + 2 + len(digits)
	if t.object != "" {
		size += len(objectSep) + len(t.object)
	}
	s.arenaLocked(size)
	start := s.arena.Len()
	s.arena.WriteString(t.base)
	s.arena.WriteString(" #")
	s.arena.Write(digits)
	keyEnd := s.arena.Len()
	if t.object != "" {
		s.arena.WriteString(objectSep)
		s.arena.WriteString(t.object)
	}
	all := s.arena.String()
	t.key = all[start:keyEnd]
	if t.object != "" {
		t.ent = all[start:]
	}
}

// arenaLocked makes room for size more bytes in the arena: a new block
// when the current one has less left.
func (s *scheduler) arenaLocked(size int) {
	if s.arena.Cap()-s.arena.Len() < size {
		s.arena = strings.Builder{}
		s.arena.Grow(max(arenaBlock, size))
	}
}

// arenaBlock is the size of the arena's blocks: about 60 keys.
const arenaBlock = 4096

// turnBase is the base of one actor's turns of one kind, and how many it
// asked for.
type turnBase struct {
	base string
	n    int
}

// wait blocks until t is released (its error, if it was failed) or ctx
// ends (ctx's error; the ticket is withdrawn).
func (s *scheduler) wait(ctx context.Context, t *ticket) error {
	select {
	case <-t.ch:
		return t.err
	case <-ctx.Done():
		s.withdraw(t)
		return ctx.Err()
	}
}

// awaitRequest blocks until req's turn (see fakeapi.Scheduler).
func (s *scheduler) awaitRequest(ctx context.Context, req fakeapi.RequestInfo, cost func(key string) time.Duration) error {
	if exempt(req.Client) || ctx.Value(ungatedKey{}) != nil {
		return nil
	}
	base, label := requestKey(req)
	t := s.enqueueRequest(&ticket{base: base, label: label, client: req.Client, verb: req.Verb, at: s.now(), cost: cost, body: req.Body})
	if t == nil {
		return errSchedulerClosed
	}
	return s.wait(ctx, t)
}

// awaitDelivery asks for the turn of the seq-th event of watch w.
func (s *scheduler) awaitDelivery(watcher string, seq int) (<-chan struct{}, func()) {
	now := s.now()
	s.mu.Lock()
	// The watch's client: its name is "client/resource#n" (WatcherName).
	client := watcher[:max(strings.LastIndexByte(watcher, '/'), 0)]
	var num [20]byte
	digits := strconv.AppendInt(num[:0], int64(seq), 10)
	s.arenaLocked(len("event ") + len(watcher) + 2 + len(digits))
	start := s.arena.Len()
	s.arena.WriteString("event ")
	s.arena.WriteString(watcher)
	baseEnd := s.arena.Len()
	s.arena.WriteString(" #")
	s.arena.Write(digits)
	key := s.arena.String()[start:]
	t := &ticket{key: key, base: key[:baseEnd-start], client: client, turn: s.turns, due: now, ch: make(chan struct{})}
	if s.closed {
		close(t.ch)
	} else {
		s.pending = append(s.pending, t)
		s.logLocked(t)
	}
	s.mu.Unlock()
	s.wake()
	return t.ch, func() { s.withdraw(t) }
}

// sleep waits until virtual time now+d, woken in its turn (see Env.Sleep).
// A sleep asked for once ctx has ended returns at once (see turn).
func (s *scheduler) sleep(ctx context.Context, actor, name string, d time.Duration) {
	if ctx.Err() != nil {
		return
	}
	if t := s.enqueue("sleep "+actor+" "+name, "", actor, "", s.now()+d, nil); t != nil {
		_ = s.wait(ctx, t)
	}
}

// turn waits for actor's turn to do what says, to object (see Env.Turn).
//
// A turn's ticket is used again for a later turn once its goroutine got
// its turn: nothing else holds it then (the run loop dropped it when it
// released it). A turn that ends otherwise (its process's context ended,
// the scheduler closed) leaves its ticket alone.
//
// A turn asked for once ctx has ended (a goroutine of a crashed process
// that has not stopped yet: a handler called for a notification still
// buffered, a worker's last Get) returns at once and takes no ordinal:
// which of them get there before the process's goroutines end is Go's
// scheduling, and an ordinal they took would shift the keys of every later
// turn of the restarted process, which a replay could then not follow.
// Turns asked for before the crash are in the queue when it comes (the
// run loop crashes a process only once the bubble is idle), the same in
// every run, and are withdrawn.
func (s *scheduler) turn(ctx context.Context, actor, what, object string) {
	if ctx.Err() != nil {
		return
	}
	now := s.now()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	tb := s.turnBases[[2]string{actor, what}]
	if tb == nil {
		tb = &turnBase{base: "turn " + actor + " " + what}
		s.turnBases[[2]string{actor, what}] = tb
	}
	tb.n++
	var t *ticket
	if n := len(s.free); n > 0 {
		t = s.free[n-1]
		s.free = s.free[:n-1]
		*t = ticket{ch: t.ch, reused: true}
	} else {
		t = &ticket{ch: make(chan struct{}, 1), reused: true}
	}
	t.base, t.client, t.object, t.due, t.turn = tb.base, actor, object, now, s.turns
	s.keyLocked(t, tb.n)
	s.pending = append(s.pending, t)
	s.logLocked(t)
	s.mu.Unlock()
	s.wake()
	select {
	case _, open := <-t.ch:
		if open {
			s.mu.Lock()
			s.free = append(s.free, t)
			s.mu.Unlock()
		}
	case <-ctx.Done():
		s.withdraw(t)
	}
}

// awaitTimer asks for the turn of watch watcher's timer name, due d from
// now (see fakeapi.TimerScheduler). The channel is nil once the scheduler
// has closed (the run is ending).
func (s *scheduler) awaitTimer(watcher, name string, d time.Duration) (<-chan struct{}, func()) {
	client := watcher[:max(strings.LastIndexByte(watcher, '/'), 0)]
	t := s.enqueue("timer "+watcher+" "+name, "", client, "", s.now()+d, nil)
	if t == nil {
		return nil, func() {}
	}
	return t.ch, func() { s.withdraw(t) }
}

// at queues fn to be run by the run loop at virtual time due, in its turn,
// and returns its ticket (to withdraw it).
func (s *scheduler) at(due time.Duration, key string, fn func()) *ticket {
	t := &ticket{key: key, base: key, due: due, fn: fn, ch: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return t
	}
	t.turn = s.turns
	s.pending = append(s.pending, t)
	s.logLocked(t)
	s.mu.Unlock()
	s.wake()
	return t
}

// withdraw removes a ticket that will not be used.
func (s *scheduler) withdraw(t *ticket) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t.gone = true
	if i := slices.Index(s.pending, t); i >= 0 {
		s.pending = slices.Delete(s.pending, i, i+1)
		if s.recordChoices {
			s.disturbed = append(s.disturbed, s.turns)
		}
	}
}

// less orders ready tickets: earliest due, then earliest asked, then key.
func less(a, b *ticket) int {
	if c := cmp.Compare(a.due, b.due); c != 0 {
		return c
	}
	if c := cmp.Compare(a.turn, b.turn); c != 0 {
		return c
	}
	return strings.Compare(a.key, b.key)
}

// nextDue returns the earliest due time of the waiting tickets, -1 if none.
func (s *scheduler) nextDue() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keyPendingLocked()
	next := time.Duration(-1)
	for _, t := range s.pending {
		if next < 0 || t.due < next {
			next = t.due
		}
	}
	return next
}

// next removes and returns the ticket to release now, nil if none is due.
func (s *scheduler) next(now time.Duration) *ticket {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keyPendingLocked()
	if s.abortOnDivergence && s.diverged >= 0 {
		return nil
	}
	best := -1
	for i, c := range s.pending {
		if c.due <= now && (best < 0 || less(c, s.pending[best]) < 0) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	// The ready tickets in canonical order, when a shuffle or the
	// exploration's choice points need them (best is ready[0]).
	var ready []*ticket
	if s.random != nil || s.recordChoices {
		for _, c := range s.pending {
			if c.due <= now {
				ready = append(ready, c)
			}
		}
		slices.SortFunc(ready, less)
	}
	if s.random != nil && len(s.keys) >= len(s.enforce) {
		best = slices.Index(s.pending, ready[s.random.IntN(len(ready))])
	}
	// A recorded schedule picks its own ticket among the ready ones. A
	// subject's turn must also be about the recorded object: another one
	// is client-go handing out a batch in another order.
	if n := len(s.keys); n < len(s.enforce) && s.diverged < 0 {
		want := s.enforce[n]
		key, object := splitEntry(want)
		j := slices.IndexFunc(s.pending, func(c *ticket) bool { return c.key == key && c.due <= now })
		if j >= 0 && s.pending[j].object == object {
			best = j
		} else {
			got := ""
			if j >= 0 {
				got = s.pending[j].object
			}
			s.diverged = n
			s.divergence = s.divergenceLocked(n, want, got, now)
			if s.abortOnDivergence {
				return nil
			}
		}
	}
	if s.recordChoices {
		if len(ready) > 1 {
			cp := ChoicePoint{Turn: len(s.keys)}
			for _, c := range ready {
				cp.Ready = append(cp.Ready, c.entry())
			}
			s.choices = append(s.choices, cp)
		}
	}
	t := s.pending[best]
	s.pending = slices.Delete(s.pending, best, best+1)
	s.turns++
	s.keys = append(s.keys, t.entry())
	if t.verb != "" {
		// A request: the livelock tally.
		if now != s.instant {
			s.instant = now
			clear(s.tally)
		}
		c := s.tally[t.base]
		if c == nil {
			c = &tally{label: t.label}
			s.tally[t.base] = c
		}
		c.n++
		if c.n >= s.limit && s.livelock == "" {
			s.livelock = s.livelockReportLocked(now)
		}
	}
	return t
}

// divergenceLocked says why turn n could not release want: the same turn
// about another object (got: client-go's order), or what was ready
// instead.
func (s *scheduler) divergenceLocked(n int, want, got string, now time.Duration) string {
	if got != "" {
		_, object := splitEntry(want)
		return fmt.Sprintf("at t=%s, turn %d: the schedule names %q, but client-go handed out %s before %s %s", now, n, want, got, object, mapOrderNote)
	}
	if others := s.otherObjectsLocked(want, now); len(others) > 0 {
		return fmt.Sprintf("at t=%s, turn %d: the schedule names %q, but %s asked about %s instead %s", now, n, want, others[0], strings.Join(others[1:], ", "), subjectOrderNote)
	}
	var ready []string
	for _, c := range s.pending {
		if c.due <= now {
			ready = append(ready, c.entry())
		}
	}
	slices.Sort(ready)
	if len(ready) > 6 {
		ready = append(ready[:6], fmt.Sprintf("... %d more", len(ready)-6))
	}
	return fmt.Sprintf("at t=%s, turn %d: the schedule names %q; ready: %s", now, n, want, strings.Join(ready, ", "))
}

// mapOrderNote ends the divergences at client-go's order within a batch.
const mapOrderNote = "(its order within a batch: Go's map order)"

// IsMapOrderDivergence reports whether d (one of Trace.Divergences) is
// client-go handing a batch out in another order than the schedule's: a
// subject's turn due at that point of the schedule was about another
// object than the recorded one. That order is Go's map iteration (a
// WatchList's objects, a relist's deletions), which no run decides. Any
// other divergence (the schedule names a turn that is not ready) is an
// order the lab should have decided and did not.
func IsMapOrderDivergence(d string) bool { return strings.Contains(d, mapOrderNote) }

// subjectOrderNote ends the divergences at the subject's own choice of
// object.
const subjectOrderNote = "(which object it acts on is its own order, decided inside it from the same answers and events: a lister's Go map order, a sort with ties; not the lab's)"

// IsSubjectOrderDivergence reports whether d (one of Trace.Divergences) is
// the subject choosing another object to act on than the recorded run
// did: the schedule names a request of the subject about one object, the
// run gave the subject the same answers, events and turns up to there, and
// the subject asked about another object of the same resource instead (it
// never asked about the recorded one). Which object a controller acts on
// is its own order: the Job controller deletes the first Pods of a list
// its lister builds from a Go map, sorted with ties. No run decides it;
// a replay starts over until the subject picks the same object again.
func IsSubjectOrderDivergence(d string) bool { return strings.Contains(d, subjectOrderNote) }

// otherObjectsLocked returns, when want is a request of a client that is
// not the lab's own (labActor) about a named object that no waiting
// ticket is for, the client followed by the
// objects of the same resource (and namespace) its ready requests are
// about instead, sorted; nil otherwise.
func (s *scheduler) otherObjectsLocked(want string, now time.Duration) []string {
	if !strings.HasPrefix(want, "req ") || slices.ContainsFunc(s.pending, func(c *ticket) bool { return c.key == want }) {
		return nil
	}
	var client, object string
	for _, c := range s.pending {
		if c.verb != "" && c.client != "" && !labActor(c.client) {
			if o, ok := requestObject(want, c.client); ok {
				client, object = c.client, o
				break
			}
		}
	}
	cut := strings.LastIndexByte(object, '/')
	if cut <= 0 {
		return nil
	}
	var others []string
	for _, c := range s.pending {
		if c.due > now || c.client != client || c.verb == "" {
			continue
		}
		o, ok := requestObject(c.key, client)
		if !ok || o == object || strings.LastIndexByte(o, '/') != cut || o[:cut] != object[:cut] {
			continue
		}
		if !slices.Contains(others, o) {
			others = append(others, o)
		}
	}
	if len(others) == 0 {
		return nil
	}
	slices.Sort(others)
	return append([]string{client}, others...)
}

// labActor reports whether client is one of the lab's own actors, whose
// order is the lab's: the kubelet, the competitor, the user's steps and
// the run's own clients.
func labActor(client string) bool {
	switch client {
	case clientKubelet, ClientCompetitor, ClientUser, ClientSetup, ClientSim:
		return true
	}
	return false
}

// requestObject returns the object ("resource/namespace/name") of key, a
// request's key ("req <client> <verb> <object> #n"), when it is client's.
func requestObject(key, client string) (string, bool) {
	rest, ok := strings.CutPrefix(key, "req "+client+" ")
	if !ok {
		return "", false
	}
	f := strings.Fields(rest)
	if len(f) != 3 || !strings.HasPrefix(f[2], "#") {
		return "", false
	}
	return f[1], true
}

// aborted returns why the run stopped at a divergence ("" if it did not).
func (s *scheduler) aborted() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.abortOnDivergence || s.diverged < 0 {
		return ""
	}
	return s.divergence
}

// livelockReportLocked names the busiest loops of the current instant.
func (s *scheduler) livelockReportLocked(now time.Duration) string {
	type kv struct {
		base string
		n    int
	}
	var top []kv
	for b, c := range s.tally {
		if c.n >= s.limit/4 {
			top = append(top, kv{b, c.n})
		}
	}
	sort.Slice(top, func(i, j int) bool {
		if top[i].n != top[j].n {
			return top[i].n > top[j].n
		}
		return top[i].base < top[j].base
	})
	if len(top) > 4 {
		top = top[:4]
	}
	parts := make([]string, 0, len(top))
	for _, e := range top {
		parts = append(parts, fmt.Sprintf("%s %d times", s.tally[e.base].label, e.n))
	}
	return fmt.Sprintf("livelock: at t=%s the virtual clock stopped while requests went on: %s", now, strings.Join(parts, ", "))
}

// release gives t its turn: wakes its goroutine, or runs its action.
func (s *scheduler) release(t *ticket) {
	if t.fn != nil {
		t.fn()
		return
	}
	if t.reused {
		// A turn's channel has room for this one token: a ticket is
		// released once, and only one that is not released is closed
		// (close). The turn's goroutine tells the two apart.
		t.ch <- struct{}{}
		return
	}
	close(t.ch)
}

// stopped reports whether the run must stop: a livelock, or a divergence
// from the schedule to follow that starts the run over (livelocked and
// aborted, under one lock: the run loop asks at every turn).
func (s *scheduler) stopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.livelock != "" || (s.abortOnDivergence && s.diverged >= 0)
}

// livelocked returns the livelock report, "" if none.
func (s *scheduler) livelocked() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.livelock
}

// close fails every waiting request and refuses new ones.
func (s *scheduler) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	for _, t := range s.pending {
		if t.fn == nil {
			t.err = errSchedulerClosed
			close(t.ch)
		}
	}
	s.pending = nil
}

// errCrashed fails the requests a crashed process was waiting on.
var errCrashed = errors.New("sim: the process crashed before this request reached the server")

// failClient fails the requests of client still waiting for their turn: a
// crashed process's requests in flight never reach the server.
func (s *scheduler) failClient(client string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = slices.DeleteFunc(s.pending, func(t *ticket) bool {
		if t.fn != nil || t.client != client || strings.HasPrefix(t.base, "sleep ") || strings.HasPrefix(t.base, "turn ") || strings.HasPrefix(t.base, "timer ") {
			return false
		}
		t.err = errCrashed
		close(t.ch)
		if s.recordChoices {
			s.disturbed = append(s.disturbed, s.turns)
		}
		return true
	})
}

// ChoicePoint is a turn of a run at which more than one ticket was ready:
// the scheduler released Ready[0] (the canonical choice) unless a plan's
// Schedule said otherwise; any other could have gone first. Or a turn at
// which client-go could have handed out another object of a batch first
// (Orders).
type ChoicePoint struct {
	// Turn is the index of the turn in the delivery schedule.
	Turn int `json:"turn"`
	// Ready are the keys of the tickets ready at that turn, in canonical
	// order.
	Ready []string `json:"ready"`
	// Orders, at a subject's handler turn that took one object of a batch
	// client-go hands out in Go's map order (a WatchList's objects, a
	// relist's deletions, a resync), are the same turn about each other
	// object of the batch still to come: client-go could have handed any
	// of them out first (see batchOrders). A schedule naming one is
	// followed by starting over until client-go's order gives it, as a
	// replay does.
	Orders []string `json:"orders,omitempty"`
}

// ticketKind says what releasing a ticket does, for Explore's reduction.
type ticketKind uint8

const (
	kindRead   ticketKind = iota // a get, list or watch request is served
	kindWrite                    // any other request is served
	kindEvent                    // a watch event is delivered
	kindSleep                    // an actor's deliberate delay ends (Env.Sleep)
	kindAction                   // the run loop runs an action (a drawn disconnect)
	kindTurn                     // a subject's goroutine takes its turn (Env.Turn)
)

// ticketInfo is what the exploration's reduction knows of a ticket.
type ticketInfo struct {
	key    string
	client string
	kind   ticketKind
	turn   int           // the turn at which it was asked for
	due    time.Duration // when it became ready
}

// logLocked records t, when recording choices.
func (s *scheduler) logLocked(t *ticket) {
	if !s.recordChoices {
		return
	}
	k := kindSleep
	switch {
	case t.fn != nil:
		k = kindAction
	case strings.HasPrefix(t.key, "event "), strings.HasPrefix(t.key, "timer "):
		// A watch's timer, like an event, wakes the watch's client
		// and changes when its next event asks for a turn.
		k = kindEvent
	case strings.HasPrefix(t.key, "turn "):
		k = kindTurn
	case t.verb == "get" || t.verb == "list" || t.verb == "watch":
		k = kindRead
	case t.verb != "":
		k = kindWrite
	}
	s.tickets = append(s.tickets, ticketInfo{key: t.entry(), client: t.client, kind: k, turn: t.turn, due: t.due})
}

// choicePoints returns the recorded choice points.
func (s *scheduler) choicePoints() []ChoicePoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.choices)
}

// ticketLog returns the recorded tickets and disturbed turns.
func (s *scheduler) ticketLog() ([]ticketInfo, []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keyPendingLocked()
	return slices.Clone(s.tickets), slices.Clone(s.disturbed)
}

// schedule returns the released keys so far, where enforcement diverged
// and why.
func (s *scheduler) schedule() (keys []string, diverged int, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.keys), s.diverged, s.divergence
}

// AwaitTimer implements fakeapi.TimerScheduler: with a scheduler, a
// watch's timer fires in its turn; without one (ok false) the watch uses
// its clock.
func (p *Policy) AwaitTimer(w fakeapi.WatcherInfo, name string, d time.Duration) (fire <-chan struct{}, cancel func(), ok bool) {
	if p.sched == nil || exempt(w.Client) {
		return nil, nil, false
	}
	fire, cancel = p.sched.awaitTimer(p.WatcherName(w), name, d)
	return fire, cancel, true
}

// OrderInitial implements fakeapi.InitialOrderer. A run that follows a
// recorded schedule has the server send a WatchList's objects in the order
// in which the recorded run's watching client next took them up (its
// first turns or requests about each, after the watch's own turn), instead
// of by key. client-go's reflector puts them into a map and its handlers
// get them in the map's order, which for up to 8 objects is the order they
// came in, rotated to start at a random one of 8 slots: the recorded order
// (itself one such rotation of what the server sent) comes first in
// (9-n)/8 of the attempts for n objects, instead of 1/8 when the recorded
// run did not get the server's first object first. Only a reflector's map
// sees the order; each object's events and the delivery turns are the
// same. Objects the schedule does not name from there keep the server's
// order, after the named ones.
func (p *Policy) OrderInitial(w fakeapi.WatcherInfo, events []fakeapi.EventInfo) []int {
	if p.sched == nil || exempt(w.Client) {
		return nil
	}
	return p.sched.orderInitial(w.Client, ResourceName(w.Resource), events)
}

// orderInitial orders events by the first entry about their object that
// client's turns (or requests to resource) have in the schedule to follow
// from the current turn on (see Policy.OrderInitial); nil when there is no
// schedule to follow.
func (s *scheduler) orderInitial(client, resource string, events []fakeapi.EventInfo) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.enforce) == 0 || s.diverged >= 0 {
		return nil
	}
	keys := make([]string, len(events))
	want := make(map[string]bool, len(events))
	for i, ev := range events {
		keys[i] = ev.Name
		if ev.Namespace != "" {
			keys[i] = ev.Namespace + "/" + ev.Name
		}
		want[keys[i]] = true
	}
	turn, req := "turn "+client+" ", "req "+client+" "
	ranks := make(map[string]int, len(events))
	for _, e := range s.enforce[min(len(s.keys), len(s.enforce)):] {
		var key string
		switch {
		case strings.HasPrefix(e, turn):
			_, object := splitEntry(e)
			key = object[strings.LastIndexByte(object, ' ')+1:]
		case strings.HasPrefix(e, req):
			// "req <client> <verb> <resource>/<namespace>/<name> #n"
			f := strings.Fields(e[len(req):])
			if len(f) < 2 {
				continue
			}
			if k, ok := strings.CutPrefix(f[1], resource+"/"); ok {
				key = k
			}
		}
		if key == "" || !want[key] {
			continue
		}
		if _, seen := ranks[key]; !seen {
			ranks[key] = len(ranks)
			if len(ranks) == len(want) {
				break
			}
		}
	}
	rank := func(i int) int {
		if r, ok := ranks[keys[i]]; ok {
			return r
		}
		return len(events)
	}
	order := make([]int, len(events))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rank(a), rank(b)) })
	return order
}

// ScheduleDigest is a short digest of a delivery schedule (the keys of its
// turns, in order): two runs with the same digest released the same
// requests and events in the same order. The objects of the subject's
// turns are left out: they are client-go's order, not the scheduler's.
func ScheduleDigest(keys []string) string {
	h := sha256.New()
	for _, k := range keys {
		k, _ = splitEntry(k)
		h.Write([]byte(k))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// ScheduleKeys returns a delivery schedule's keys without the objects of
// the subject's turns ("turn x handler pods #3 @ADDED default/a" becomes
// "turn x handler pods #3"): what the scheduler decides, without the order
// in which client-go handed a batch out.
func ScheduleKeys(schedule []string) []string {
	out := make([]string, len(schedule))
	for i, e := range schedule {
		out[i], _ = splitEntry(e)
	}
	return out
}

// DiffDeliverySchedules says where two delivery schedules first differ
// ("" if they are the same).
func DiffDeliverySchedules(a, b []string) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return fmt.Sprintf("delivery schedules differ at turn %d (of %d and %d): a: %s, b: %s", i, len(a), len(b), a[i], b[i])
		}
	}
	if len(a) != len(b) {
		return fmt.Sprintf("delivery schedules differ in length: %d and %d turns (the first %d are the same)", len(a), len(b), min(len(a), len(b)))
	}
	return ""
}
