// Package sim owns time and goroutines: it turns a Plan into a Trace.
//
// A Plan (plan.go) is plain, versioned JSON: the subject to run, the access
// path, the initial objects, a timeline of steps at virtual times, the fault
// policy's parameters and one seed from which every random choice is drawn.
// Run builds a fakeapi.Server, the fault policy (built on the server's hooks),
// the actors and the subject inside a testing/synctest bubble, plays the
// timeline, and records everything into a Trace (trace.go): the only thing
// invariants and reports read.
//
// sim knows no subject by name: subjects register a factory with
// RegisterSubject (as database/sql drivers do), and a Plan names one.
//
// Entry points: Run (from a test: makes the bubble), RunInBubble (already
// inside one, e.g. a rapid.SyncTest property), Bubble (a bubble from a
// benchmark or a CLI), Replay (a plan file, or a trace file whose fault
// schedule is checked), LoadPlan/Save and ReadTrace/WriteTrace (the files).
//
// Determinism: the plan fixes the steps and every draw of the fault policy
// (NewPolicy documents how draws are keyed), and Run seeds client-go's
// math/rand jitter from it; goroutine interleavings stay free. So the same
// plan gives the same fault schedule (FaultSchedule, DiffSchedules), not
// necessarily the same handler order. See replay.go.
package sim
