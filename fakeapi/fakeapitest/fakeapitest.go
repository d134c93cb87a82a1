// Package fakeapitest helps tests of code running against a fakeapi.Server:
// a recording Observer and filters over what it recorded.
package fakeapitest

import (
	"sync"

	"github.com/cachelab/cachelab/fakeapi"
)

// Log is a fakeapi.Observer that records every observation. It is safe for
// concurrent use; its methods never call back into the server.
type Log struct {
	mu  sync.Mutex
	obs []fakeapi.Observation
}

var _ fakeapi.Observer = (*Log)(nil)

// Observe records o.
func (l *Log) Observe(o fakeapi.Observation) {
	l.mu.Lock()
	l.obs = append(l.obs, o)
	l.mu.Unlock()
}

// All returns a copy of every observation so far, in order.
func (l *Log) All() []fakeapi.Observation {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]fakeapi.Observation(nil), l.obs...)
}

// Kind returns the observations of one kind, in order.
func (l *Log) Kind(k fakeapi.ObservationKind) []fakeapi.Observation {
	return l.Where(func(o fakeapi.Observation) bool { return o.Kind == k })
}

// Where returns the observations keep accepts, in order.
func (l *Log) Where(keep func(fakeapi.Observation) bool) []fakeapi.Observation {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []fakeapi.Observation
	for _, o := range l.obs {
		if keep(o) {
			out = append(out, o)
		}
	}
	return out
}

// Requests returns the request observations (answers) for one verb ("" for
// all verbs), in order.
func (l *Log) Requests(verb string) []fakeapi.Observation {
	return l.Where(func(o fakeapi.Observation) bool {
		return o.Kind == fakeapi.ObsRequest && o.Request != nil && (verb == "" || o.Request.Verb == verb)
	})
}

// Reset forgets every observation so far.
func (l *Log) Reset() {
	l.mu.Lock()
	l.obs = nil
	l.mu.Unlock()
}
