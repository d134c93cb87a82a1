package campaign

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

var reproduceFlag = flag.Int("upstream.reproduce", 0, "with -cachelab.plan (a saved run: its plan.json, trace.jsonl and verdicts.json): replay it N times, each following the recorded delivery schedule, and log how many replays reproduced its failed verdicts, in how many attempts, and which order each attempt that could not follow met (client-go's, the controller's own choice of objects, or neither)")

// Reproduction is what Reproduce measured: the lab's count of the replays
// (lab.Reproduction) and each replay's attempts and divergences.
type Reproduction struct {
	lab.Reproduction
	// Replays are the replays' traces (each with Attempts and
	// Divergences), in order.
	Replays []*sim.Trace
}

// Reproduce replays the run saved in dir (plan.json, trace.jsonl and
// verdicts.json, as a failing plan's files are written) n times against
// c, each following the recorded run's delivery schedule
// (lab.FollowRecorded: an attempt that cannot follow it is started over,
// up to sim.ReplayAttempts times), judged as the campaign judges
// (matches-reference included), and compares each with the recorded
// verdicts. Where an attempt could not follow, its divergence says which
// order it met: client-go's handing out of a batch
// (sim.IsMapOrderDivergence), the controller's own choice of the objects it
// acts on (sim.IsSubjectOrderDivergence: the Job controller's Pods to
// delete), or neither (an order the lab should have decided). The error
// says what is missing from dir, or that the run is not c's.
func Reproduce(t *testing.T, c cachelabtest.Controller, dir string, n int) (*Reproduction, error) {
	t.Helper()
	if n < 1 {
		return nil, fmt.Errorf("reproduce %d times: want at least 1", n)
	}
	in, err := lab.LoadInput(filepath.Join(dir, lab.PlanFile))
	if err != nil {
		return nil, err
	}
	if in.Recorded == nil {
		return nil, fmt.Errorf("%s has no %s beside its plan: there is no recorded run to follow and compare with", dir, lab.TraceFile)
	}
	if in.Plan.Subject != c.Name {
		return nil, fmt.Errorf("%s is a run of %s, not of %s", dir, in.Plan.Subject, c.Name)
	}
	// The recorded run's verdicts are required beside it (its
	// matches-reference, which lab.Reproduce compares the replays with).
	if _, err := readVerdicts(filepath.Join(dir, lab.VerdictsFile)); err != nil {
		return nil, err
	}
	if err := cachelabtest.Register(c); err != nil {
		return nil, err
	}
	if len(lab.FollowRecorded(in.Plan, in.Recorded).Schedule) == 0 {
		return nil, fmt.Errorf("%s: the recorded run has no delivery schedule to follow", dir)
	}
	// Registered, c is judged as Test judges it: lab.Reproduce judges
	// the replays and the recorded run with matches-reference and the
	// health verdicts, the recorded run's matches-reference from its
	// verdicts.json.
	counted, results, err := lab.Reproduce(lab.TestHost(t), in, n)
	if err != nil {
		return nil, err
	}
	rep := &Reproduction{Reproduction: counted}
	for _, r := range results {
		rep.Replays = append(rep.Replays, r.Trace)
	}
	return rep, nil
}

// Summary is the reproduction in lines: the lab's count, then per replay
// how it followed the recorded run (lab.HowFollowed: its attempt, and the
// distinct divergences of the attempts that could not, each with the order
// it met).
func (r *Reproduction) Summary() string {
	var b strings.Builder
	b.WriteString(r.String())
	for i, tr := range r.Replays {
		if tr == nil {
			fmt.Fprintf(&b, "\nreplay %d: did not run", i+1)
			continue
		}
		fmt.Fprintf(&b, "\nreplay %d: %s", i+1, strings.ReplaceAll(lab.HowFollowed(tr), "\n", "\n  "))
	}
	for _, d := range r.Differences {
		b.WriteString("\n" + d)
	}
	return b.String()
}

// reproduceSaved is Run's -upstream.reproduce: the saved run of plan (a
// plan.json path, relative to the package's folder) replayed n times
// against the subject it was recorded with, and Reproduce's summary
// logged.
func reproduceSaved(t *testing.T, plan string, n int, subjects []Subject) {
	t.Helper()
	dir := filepath.Dir(plan)
	in, err := lab.LoadInput(plan)
	if err != nil {
		t.Fatalf("-upstream.reproduce: %v", err)
	}
	for _, s := range subjects {
		if s.Controller.Name != in.Plan.Subject {
			continue
		}
		rep, err := Reproduce(t, s.Controller, dir, n)
		if err != nil {
			t.Fatalf("-upstream.reproduce: %v", err)
		}
		t.Logf("%s, %d replays of %s:\n%s", s.Controller.Name, n, dir, rep.Summary())
		return
	}
	var names []string
	for _, s := range subjects {
		names = append(names, s.Controller.Name)
	}
	t.Fatalf("-upstream.reproduce: %s is a run of %s, which is not among this campaign's subjects (%s)", plan, in.Plan.Subject, strings.Join(names, ", "))
}

// readVerdicts reads the verdicts of a saved run (verdicts.json).
func readVerdicts(path string) ([]invariants.Verdict, error) {
	vs, err := lab.ReadVerdicts(path)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, fmt.Errorf("the recorded run's verdicts: %w (a failing plan's files hold %s beside its plan)", err, lab.VerdictsFile)
	}
	return vs, err
}
