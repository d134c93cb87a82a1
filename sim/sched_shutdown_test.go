package sim_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim"
)

// backoffIgnoringContext is a subject with a goroutine that, once its
// context ends, waits out a backoff on the clock before it looks at the
// context again: client-go's reflector does this in watchList
// (`<-r.clock.After(r.delayHandler())`, up to 60 s, reflector.go:817)
// when a WatchList fails as the run ends.
type backoffIgnoringContext struct{}

func (backoffIgnoringContext) Start(ctx context.Context, env sim.Env) error {
	go func() {
		<-ctx.Done()
		<-time.After(59 * time.Second)
	}()
	return nil
}

var registerBackoffIgnoringContext = sync.OnceFunc(func() {
	sim.RegisterSubject(sim.SubjectInfo{Name: "test/backoff-ignoring-context", Summary: "a goroutine in a clock backoff when its context ends",
		New: func() sim.Subject { return backoffIgnoringContext{} }})
})

// A subject goroutine caught in a clock backoff that ignores its context
// (client-go's watchList backoff) when the run ends does not leave the
// bubble deadlocked: synctest stops the clock once the bubble's main
// goroutine has exited, so the run lets virtual time pass before it
// returns, and the goroutine ends. Without that, synctest ends the bubble
// with "deadlock: main bubble goroutine has exited but blocked goroutines
// remain" (2 of 10 enforced replays of informer-synced random-28).
func TestARunEndsWhileASubjectWaitsOutABackoffIgnoringItsContext(t *testing.T) {
	registerBackoffIgnoringContext()
	p := &sim.Plan{Version: 1, Seed: 1, Subject: "test/backoff-ignoring-context", Steps: []sim.Step{}}
	var tr *sim.Trace
	func() {
		defer func() {
			if x := recover(); x != nil {
				t.Fatalf("the run's bubble ended with goroutines blocked: %v", x)
			}
		}()
		var err error
		tr, err = sim.Run(t, p)
		if err != nil {
			t.Fatal(err)
		}
	}()
	if tr.Outcome != "quiet" {
		t.Fatalf("outcome %q, want quiet", tr.Outcome)
	}
}
