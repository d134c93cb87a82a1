package campaign

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
)

var (
	shrinkTimeFlag = flag.Duration("upstream.shrinktime", 0, "wall-clock bound of one shrink (rapid's -rapid.shrinktime; 0: 10 minutes)")
	shrinkRunsFlag = flag.Int("upstream.shrinkruns", 200, "plans one shrink runs at most (each with its reference run); rapid's shrinker tries far more")
)

// Shrunk is what Shrink found.
type Shrunk struct {
	// From is the campaign's plan of the seed; Plan the smallest plan
	// rapid's shrinker found that still fails the invariant (From itself
	// when no smaller one did, or when From's failure did not repeat).
	From, Plan *sim.Plan
	// Runs counts the plans run (each with its fault-free reference run),
	// From's included; Capped tells that the shrink stopped at
	// -upstream.shrinkruns with smaller plans left to try.
	Runs   int
	Capped bool
	// StepsAt lists, for each smaller step count a failing plan reached,
	// the count and the run that reached it: how fast the shrink went.
	StepsAt [][2]int
	// Reproduced tells whether From failed the invariant again when rapid
	// ran it a second time (a plan that fails once in two runs, by a
	// goroutine interleaving the lab does not order, is not shrunk).
	Reproduced bool
}

// rapidMu serializes Shrink's use of rapid's process-wide flags.
var rapidMu sync.Mutex

// Shrink shrinks s's plan of seed, which fails invariant, with rapid: it
// runs rapid.Check with -rapid.seed=seed and one check, so that the first
// plan rapid draws from s.Gen is the campaign's plan of seed (checked: an
// error if not), and rapid's shrinker then runs smaller plans (fewer
// episodes, no fault, simpler actions, earlier times: plangen.Workload.Gen),
// keeping each that still fails invariant. rapid's flags are set for the
// call and restored (rapid has no other way in): -rapid.checks=1 (5 under
// -short), -rapid.nofailfile, -rapid.shrinktime (-upstream.shrinktime).
// Each plan runs through cachelabtest.Catch on t, with its reference run;
// the report folder of the last failing run (named after the plan, "-shrink")
// holds the smallest plan's files.
func Shrink(t *testing.T, s Subject, seed uint64, invariant string) (*Shrunk, error) {
	c := s.Controller
	from := s.Plan(seed)
	want, err := json.Marshal(from)
	if err != nil {
		return nil, err
	}
	res := &Shrunk{From: from}
	gen := s.Gen(c.Name)
	var (
		first    = true
		mismatch error
		failures int
		smallest *sim.Plan
		verdicts = map[string]bool{} // plan JSON: failed invariant
		calls    int                 // prop's calls past the first check
	)
	prop := func(rt *rapid.T) {
		p := gen.Draw(rt, "plan")
		p.Name = from.Name + "-shrink"
		if first {
			first = false
			q := p
			q.Name = from.Name
			if got, err := json.Marshal(&q); err != nil || string(got) != string(want) {
				mismatch = fmt.Errorf("campaign: rapid's first plan for -rapid.seed=%d is not the campaign's plan of seed %d (rapid's engine changed?): not shrunk", seed, seed)
				return
			}
		}
		if mismatch != nil || res.Runs >= *shrinkRunsFlag {
			// Past the bound every smaller plan rapid tries passes
			// unrun: it keeps the smallest failing one it had.
			res.Capped = res.Runs >= *shrinkRunsFlag
			return
		}
		key, _ := json.Marshal(&p)
		fails, seen := verdicts[string(key)]
		calls++
		if !seen || calls == 2 {
			// rapid asks again for plans it already ran (the draws it
			// shrinks are not all used): the verdict is remembered, but
			// for its second run of the first plan, which tells whether
			// the failure repeats.
			res.Runs++
			fails = false
			for _, f := range cachelabtest.Catch(t, c, cachelabtest.These(&p)) {
				for _, v := range f.Failed {
					fails = fails || v.Invariant == invariant
				}
			}
			verdicts[string(key)] = fails
		}
		if fails {
			failures++
			if smallest == nil || len(p.Steps) < len(smallest.Steps) {
				res.StepsAt = append(res.StepsAt, [2]int{len(p.Steps), res.Runs})
			}
			smallest = &p
			// The message names only the invariant: rapid keeps a
			// smaller plan when it fails with the same message.
			rt.Fatalf("%s failed %s", c.Name, invariant)
		}
	}
	checks := "1"
	if testing.Short() {
		checks = "5" // rapid runs checks/5 under -short
	}
	shrinkTime := *shrinkTimeFlag
	if shrinkTime <= 0 {
		shrinkTime = 600e9
	}
	rapidMu.Lock()
	defer rapidMu.Unlock()
	restore, err := setFlags(map[string]string{"rapid.seed": fmt.Sprint(seed), "rapid.checks": checks,
		"rapid.nofailfile": "true", "rapid.shrinktime": shrinkTime.String()})
	if err != nil {
		return nil, err
	}
	defer restore()
	ct := &catcher{T: t}
	rapid.Check(ct, prop)
	switch {
	case mismatch != nil:
		return nil, mismatch
	case failures == 0:
		return nil, fmt.Errorf("campaign: %s's plan of seed %d did not fail %s when rapid ran it", c.Name, seed, invariant)
	}
	// rapid runs the plan a second time before it shrinks; when that run
	// passes it reports a flaky test and does not shrink.
	res.Reproduced = !ct.flaky || res.Runs > 2
	res.Plan = smallest
	if len(smallest.Steps) > len(from.Steps) || !res.Reproduced {
		res.Plan = from
	}
	return res, nil
}

// shrinkAndLog shrinks s's plan of seed for invariant and logs and saves the
// result: the smallest plan is written to testdata/cachelab/<test>/shrunk/.
func shrinkAndLog(t *testing.T, s Subject, seed uint64, invariant string, rw *row) {
	res, err := Shrink(t, s, seed, invariant)
	if err != nil {
		t.Logf("shrink %s seed %d %s: %v", s.Controller.Name, seed, invariant, err)
		rw.shrunk = append(rw.shrunk, fmt.Sprintf("%s seed %d: %v", invariant, seed, err))
		return
	}
	dir := filepath.Join("testdata", "cachelab", t.Name(), "shrunk")
	file := filepath.Join(dir, fmt.Sprintf("%s-%s.json", res.From.Name, invariant))
	data, err := json.MarshalIndent(res.Plan, "", "  ")
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(file, data, 0o644)
	}
	if err != nil {
		t.Logf("shrink %s seed %d: %v", s.Controller.Name, seed, err)
	}
	line := fmt.Sprintf("%s seed %d: %d -> %d steps, %d runs", invariant, seed, len(res.From.Steps), len(res.Plan.Steps), res.Runs)
	if res.Capped {
		line += " (bound reached)"
	}
	if !res.Reproduced {
		line += " (its failure did not repeat on rapid's second run: not shrunk)"
	}
	line += " " + file
	rw.shrunk = append(rw.shrunk, line)
	t.Logf("shrunk %s %s:\n%s", s.Controller.Name, line, Steps(res.Plan))
}

// Steps lists p's initial objects and steps, one a line, for a log.
func Steps(p *sim.Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  faults: %s\n", oneLine(mustJSON(p.Faults)))
	for _, o := range p.Objects {
		fmt.Fprintf(&b, "  object: %s\n", oneLine(string(o)))
	}
	for _, st := range p.Steps {
		fmt.Fprintf(&b, "  step: %s\n", oneLine(mustJSON(st)))
	}
	return b.String()
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// setFlags sets the named flags and returns what restores them.
func setFlags(vals map[string]string) (func(), error) {
	old := map[string]string{}
	restore := func() {
		for k, v := range old {
			_ = flag.Set(k, v)
		}
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		f := flag.Lookup(k)
		if f == nil {
			restore()
			return nil, fmt.Errorf("campaign: no flag -%s (rapid's flags changed?)", k)
		}
		old[k] = f.Value.String()
		if err := flag.Set(k, vals[k]); err != nil {
			restore()
			return nil, errors.Join(fmt.Errorf("campaign: setting -%s", k), err)
		}
	}
	return restore, nil
}

// catcher is the testing.TB rapid reports to in Shrink: rapid's verdict
// (a failing plan found) does not fail the test, and its lines are
// dropped but for the flaky one; Name, Helper and Cleanup are the test's.
type catcher struct {
	*testing.T
	failed, flaky bool
}

// Errorf notes rapid's failure; a "flaky" one means the plan passed when
// rapid ran it again.
func (c *catcher) Errorf(format string, args ...any) {
	c.failed = true
	if strings.Contains(format, "flaky") {
		c.flaky = true
	}
}

// Error is Errorf.
func (c *catcher) Error(args ...any) { c.Errorf(fmt.Sprint(args...)) }

// Fatalf is Errorf.
func (c *catcher) Fatalf(format string, args ...any) { c.Errorf(format, args...) }

// Fatal is Errorf.
func (c *catcher) Fatal(args ...any) { c.Errorf(fmt.Sprint(args...)) }

// Fail notes a failure.
func (c *catcher) Fail() { c.failed = true }

// FailNow is Fail: rapid calls it last, so returning is stopping.
func (c *catcher) FailNow() { c.failed = true }

// Failed reports whether rapid found a failing plan.
func (c *catcher) Failed() bool { return c.failed }

// Log drops rapid's lines.
func (c *catcher) Log(...any) {}

// Logf drops rapid's lines.
func (c *catcher) Logf(string, ...any) {}
