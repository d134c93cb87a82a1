package invariants

import (
	"sync"

	"github.com/cachelab/cachelab/sim"
)

// shared is what several checks of one trace would each compute alike,
// computed once for them (Options.Shared): the sync-soundness reports of
// every signal (one verdict per signal, each of which judged all of them),
// the server replays' removals and write facts, and each write's flattened
// JSON (each check that replays the server or compares an object's fields
// parsed every write's JSON again).
type shared struct {
	mu   sync.Mutex
	tr   *sim.Trace
	n    int
	sync []SignalReport
	// rm and facts are replayParts(tr), made once (rm nil: not yet); the
	// sync-soundness index and the other checks' server replays share
	// them.
	rm    removals
	facts map[int]writeFacts
	// flat is each write's flatten, by position (nil: positions are not
	// indexes, no cache).
	flat map[int]map[string]string
	// indexed is positionsAreIndexes(tr), known once checked.
	indexed, checked bool
}

// replayParts returns replayParts(s.tr), made once; s.mu is held.
func (s *shared) replayParts() (removals, map[int]writeFacts) {
	if s.rm == nil {
		s.rm, s.facts = removalsOf(s.tr), nil
		if s.indexed {
			s.facts = map[int]writeFacts{}
		}
	}
	return s.rm, s.facts
}

// Shared returns o with a cache that the checks called with it (and with
// its copies) share: what one check of a trace computes that another needs
// too is computed once. Give one Shared options to the checks of one
// trace, which must not change between them; a check of another trace (or
// of the same one grown) starts the cache over. The checks sharing it run
// one at a time (a server replay writes to the shared write facts).
func (o Options) Shared() Options {
	o.shared = &shared{}
	return o
}

// forTrace locks the cache for tr, emptied when it last served another
// trace or tr had another length; the caller unlocks it.
func (s *shared) forTrace(tr *sim.Trace) *shared {
	s.mu.Lock()
	if s.tr != tr || s.n != len(tr.Records) {
		s.tr, s.n, s.sync, s.rm, s.facts, s.flat, s.checked = tr, len(tr.Records), nil, nil, nil, nil, false
	}
	if !s.checked {
		s.indexed, s.checked = positionsAreIndexes(tr), true
	}
	return s
}

// syncSoundness returns SyncSoundness(tr), once per shared trace.
func (o Options) syncSoundness(tr *sim.Trace) []SignalReport {
	if o.shared == nil {
		return SyncSoundness(tr)
	}
	s := o.shared.forTrace(tr)
	defer s.mu.Unlock()
	if s.sync == nil {
		rm, facts := s.replayParts()
		s.sync = syncSoundness(tr, rm, facts)
	}
	return s.sync
}

// newServer returns an empty server replay of tr; with a shared cache its
// removals and write facts are the other replays' of the same trace.
func (o Options) newServer(tr *sim.Trace) *server {
	if o.shared == nil {
		return newServer(tr)
	}
	s := o.shared.forTrace(tr)
	defer s.mu.Unlock()
	if !s.indexed {
		return newServer(tr)
	}
	return newServerWith(s.replayParts())
}

// flatten returns flatten(r.Object) for write r of tr; with a shared cache,
// once per record. The map returned is shared: read it, never change it.
func (o Options) flatten(tr *sim.Trace, r sim.Record) map[string]string {
	if o.shared == nil {
		return flatten(r.Object)
	}
	s := o.shared.forTrace(tr)
	defer s.mu.Unlock()
	if !s.indexed {
		return flatten(r.Object)
	}
	if s.flat == nil {
		s.flat = map[int]map[string]string{}
	}
	m, ok := s.flat[r.Pos]
	if !ok {
		m = flatten(r.Object)
		s.flat[r.Pos] = m
	}
	return m
}
