package sim

import (
	"time"

	"github.com/cachelab/cachelab/fakeapi"
)

// ServerRecorder records the observations of a fakeapi.Server that runs
// outside Run (`cachelab serve`, in real time) as a Trace, so that reports
// render what it served. It is a fakeapi.Observer.
type ServerRecorder struct {
	plan *Plan
	r    *recorder
}

// NewServerRecorder returns a recorder whose trace starts now and carries
// plan (the served session's description: its Name and Seed label the
// report; Subject may be empty). A nil plan gets a minimal one.
func NewServerRecorder(plan *Plan) *ServerRecorder {
	if plan == nil {
		plan = &Plan{Version: PlanVersion, Name: "serve"}
	}
	start := time.Now()
	now := func() time.Duration { return time.Since(start) }
	return &ServerRecorder{plan: plan, r: newRecorder(start, NewPolicy(plan, now), 0)}
}

// Observe implements fakeapi.Observer.
func (s *ServerRecorder) Observe(o fakeapi.Observation) { s.r.Observe(o) }

// Trace stops recording and returns everything recorded, with outcome.
func (s *ServerRecorder) Trace(outcome string) *Trace {
	end := s.r.now()
	return &Trace{Version: TraceVersion, Plan: s.plan, Records: s.r.close(), End: Duration(end), Outcome: outcome}
}
