package sim_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/cachelab/cachelab/sim"
)

// lateTurnTaker takes one turn when it starts and, once its process's
// context has ended (a crash), asks for one more from a goroutine of the
// dying process, as a client-go handler or worker still running after the
// crash does.
type lateTurnTaker struct{}

func (lateTurnTaker) Start(ctx context.Context, env sim.Env) error {
	go func() {
		env.Turn(ctx, "handler x", "start")
		<-ctx.Done()
		env.Turn(ctx, "handler x", "after the crash")
	}()
	return nil
}

var registerLateTurnTaker = sync.OnceFunc(func() {
	sim.RegisterSubject(sim.SubjectInfo{Name: "test/late-turns", Summary: "asks for a turn after its process ended", New: func() sim.Subject { return lateTurnTaker{} }})
})

// A goroutine of a crashed process that asks for a turn after its context
// ended gets none and takes no ordinal: whether it gets there before the
// process's last goroutine ends is Go's scheduling, and an ordinal it took
// would shift every later turn of the restarted process (random-9208 of
// bellerophon/informer-synced, seeds 9201..: "the schedule names handler
// ... #14; ready: ... #13" at a crash and restart, in replays of either
// binary). The restarted process's turn follows the first one's.
func TestADyingProcessTakesNoTurn(t *testing.T) {
	registerLateTurnTaker()
	p := &sim.Plan{Version: 1, Seed: 1, Subject: "test/late-turns", Steps: []sim.Step{
		{At: sim.Duration(1e9), Actor: "controller", Op: "crash"},
		{At: sim.Duration(2e9), Actor: "controller", Op: "restart"},
	}}
	tr := run(t, p)
	var turns []string
	for _, k := range tr.Schedule {
		if strings.HasPrefix(k, "turn ") {
			turns = append(turns, k)
		}
	}
	want := []string{"turn test/late-turns handler x #1 @start", "turn test/late-turns handler x #2 @start"}
	if strings.Join(turns, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the subject's turns: %q, want %q", turns, want)
	}
}
