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
package sim
