package lab

import (
	"fmt"
	"sync"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// namedCheck is one invariant as the judge runs it: check is given the
// options whose Stop closes when the judge's limit passes.
type namedCheck struct {
	name  string
	check func(*sim.Trace, invariants.Options) invariants.Verdict
}

// allChecks returns every invariant, in check order.
func allChecks() []namedCheck {
	var out []namedCheck
	for _, inv := range invariants.All() {
		out = append(out, namedCheck{name: inv.Name, check: inv.CheckWith})
	}
	return out
}

// checkWithin judges tr with checks, one after the other, within limit of
// wall time (the per-run watchdog's, -cachelab.timeout; 0: no limit). A
// judge is pure work on the trace and ends, but on a trace of hundreds of
// thousands of records a check that grows faster than the trace could
// outlast go test's -timeout, which ends the whole test binary with no
// verdict and no saved plan. When limit passes, the check under way and
// those not started are Unknown, saying that judging stopped and where;
// the checks already done keep their verdicts. The check under way is
// told through invariants.Options.Stop, which closes at the limit: the
// checks that take long on large traces look at it as they walk the trace
// and return within a few thousand records; one that does not goes on in
// the background until it returns. Its verdict is dropped either way.
func checkWithin(tr *sim.Trace, checks []namedCheck, limit time.Duration) []invariants.Verdict {
	if limit <= 0 {
		out := make([]invariants.Verdict, 0, len(checks))
		opts := invariants.Options{}.Shared()
		for _, c := range checks {
			out = append(out, c.check(tr, opts))
		}
		return out
	}
	var (
		mu    sync.Mutex
		out   = make([]invariants.Verdict, 0, len(checks))
		stop  bool
		ended = make(chan struct{})
		halt  = make(chan struct{})
		opts  = invariants.Options{Stop: halt}.Shared()
	)
	start := time.Now()
	go func() {
		defer close(ended)
		for _, c := range checks {
			mu.Lock()
			stopped := stop
			mu.Unlock()
			if stopped {
				return
			}
			v := c.check(tr, opts)
			mu.Lock()
			if !stop {
				out = append(out, v)
			}
			mu.Unlock()
		}
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-ended:
		return out
	case <-timer.C:
	}
	mu.Lock()
	defer mu.Unlock()
	stop = true
	close(halt)
	res := append([]invariants.Verdict(nil), out...)
	records := 0
	if tr != nil {
		records = len(tr.Records)
	}
	after := time.Since(start).Round(time.Millisecond)
	for i := len(res); i < len(checks); i++ {
		what := "before this invariant started"
		if i == len(out) {
			what = "while this invariant was judging"
		}
		reason := fmt.Sprintf("judging stopped after %s of wall time (-cachelab.timeout, the per-run watchdog's limit), %s: the trace has %d records and %s took longer; the %d invariant(s) before it were judged. A larger -cachelab.timeout (0: no limit) judges it fully",
			after, what, records, checks[len(out)].name, len(out))
		res = append(res, invariants.Verdict{Invariant: checks[i].name, Status: invariants.Unknown, Reason: reason,
			Short: "judging stopped at the wall-time limit", Measurement: invariants.IsMeasurement(checks[i].name)})
	}
	return res
}
