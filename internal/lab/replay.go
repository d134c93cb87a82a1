package lab

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// Input is what a replay starts from: a plan, and the trace recorded when
// it ran before, if known.
type Input struct {
	// Plan is the plan to run.
	Plan *sim.Plan
	// Recorded is the trace of an earlier run of Plan, or nil.
	Recorded *sim.Trace
	// RecordedPath is the file Recorded was read from.
	RecordedPath string
	// FromTrace is true when the input file was a trace.
	FromTrace bool
}

// LoadInput reads a plan file (JSON) or a trace file (JSON Lines whose
// header holds the plan). For a plan file, a trace.jsonl next to it is
// taken as its recorded run.
func LoadInput(path string) (*Input, error) {
	const want = "a plan.json or trace.jsonl written by `cachelab run`"
	if err := CheckFile(path, want); err != nil {
		return nil, err
	}
	switch SniffFile(path) {
	case KindScenario:
		return nil, fmt.Errorf("%s is a scenario file, not a plan: run it with `cachelab run %s`", path, path)
	case KindHTML:
		return nil, fmt.Errorf("%s is an HTML report, not a plan: give the plan.json or trace.jsonl of its run", path)
	case KindVerdicts:
		return nil, fmt.Errorf("%s is a run's verdicts (verdicts.json), not a plan: give the plan.json or trace.jsonl next to it", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w (give %s)", path, err, want)
	}
	first, _ := bufio.NewReader(f).ReadBytes('\n')
	f.Close()
	if isTraceHeader(first) {
		tr, err := readTraceFile(path)
		if err != nil {
			return nil, traceReadError(path, err)
		}
		if tr.Plan == nil {
			return nil, fmt.Errorf("%s: the trace's header has no plan, so it cannot be replayed", path)
		}
		if !replayable(tr) {
			return nil, fmt.Errorf("%s was recorded by `cachelab serve` (your own clients, in real time), not from a plan, so there is nothing to replay: render it with `cachelab report %s`", path, path)
		}
		p := tr.Plan
		return &Input{Plan: p, Recorded: tr, RecordedPath: path, FromTrace: true}, nil
	}
	if strings.HasSuffix(path, ".jsonl") {
		return nil, fmt.Errorf("%s: its first line is not a trace header, so it is not a whole trace written by cachelab (give %s)", path, want)
	}
	p, err := loadPlanFile(path)
	if err != nil {
		return nil, err
	}
	in := &Input{Plan: p}
	sibling := filepath.Join(filepath.Dir(path), TraceFile)
	if _, err := os.Stat(sibling); err == nil {
		if tr, err := readTraceFile(sibling); err == nil {
			in.Recorded, in.RecordedPath = tr, sibling
		}
	}
	return in, nil
}

// FollowRecorded returns p set to follow the delivery schedule of its
// recorded run (Plan.Schedule = recorded.Schedule), so that a replay
// releases the same requests, events and turns of the subject in the same
// order, and starts over where client-go hands a batch out in another map
// order (sim.ReplayAttempts): p itself when p names a schedule of its own,
// or recorded has none, is another plan's run, or was written before runs
// recorded their attempts (its schedule has no turns of the subject to
// follow): WhyNotFollowed says which. Reproduce (cachelab replay, make
// reproduction) replays through it.
func FollowRecorded(p *sim.Plan, recorded *sim.Trace) *sim.Plan {
	if p == nil || len(p.Schedule) > 0 || WhyNotFollowed(p, recorded) != "" {
		return p
	}
	q := p.Clone()
	q.Schedule = slices.Clone(recorded.Schedule)
	return q
}

// ReadSavedRun reads the trace of the run whose files were written in dir
// (TraceFile), as a failing plan's are (cachelabtest writes a failing
// random plan's under testdata/cachelab/<test>/random); nil when dir holds
// none, or one that cannot be read.
func ReadSavedRun(dir string) *sim.Trace {
	tr, err := readTraceFile(filepath.Join(dir, TraceFile))
	if err != nil {
		return nil
	}
	return tr
}

// FollowSaved returns p set to follow the delivery schedule of saved, a run
// whose files were written before (ReadSavedRun), when saved is a run of
// p: a plan drawn again (rapid replaying its failfile, or the same
// -rapid.seed) then replays the interleaving of the run that failed, with
// the bounded restarts of FollowRecorded, instead of the canonical order.
// saved's plan may name the schedule it followed itself (a saved run that
// was such a replay): it is compared without it. p itself otherwise.
func FollowSaved(p *sim.Plan, saved *sim.Trace) *sim.Plan {
	if p == nil || saved == nil || saved.Plan == nil || len(p.Schedule) > 0 {
		return p
	}
	rec := *saved
	rec.Plan = saved.Plan.Clone()
	rec.Plan.Schedule = nil
	return FollowRecorded(p, &rec)
}

// sameRun reports whether tr's plan is p (a trace.jsonl beside a plan
// file may be another run's).
func sameRun(p, q *sim.Plan) bool {
	if q == nil {
		return false
	}
	a, err1 := json.Marshal(p)
	b, err2 := json.Marshal(q)
	return err1 == nil && err2 == nil && normalized(a) == normalized(b)
}

// replayable reports whether tr comes from a plan a run can replay: one
// with a subject (a `cachelab serve` trace has none).
func replayable(tr *sim.Trace) bool { return tr.Plan != nil && tr.Plan.Subject != "" }

// traceReadError adds what to do to an error reading a trace file.
func traceReadError(path string, err error) error {
	msg := err.Error()
	if strings.Contains(msg, "unexpected EOF") || strings.Contains(msg, "truncated") {
		return fmt.Errorf("%w\n%s is cut short (a run or `cachelab serve` stopped while writing it?): run it again for a whole trace", err, path)
	}
	return fmt.Errorf("%w\n%s is not a trace written by cachelab (its first line must be the trace header)", err, path)
}

// isTraceHeader reports whether line is a trace file's header: a JSON
// object with a "records" count.
func isTraceHeader(line []byte) bool {
	var h map[string]json.RawMessage
	if err := json.Unmarshal(bytes.TrimSpace(line), &h); err != nil {
		return false
	}
	_, ok := h["records"]
	return ok
}

// MatchScenario returns the built-in scenario that p is a run of (same
// name, and the same plan as the scenario's for p's subject), or nil.
func MatchScenario(p *sim.Plan) *scenarios.Scenario {
	s, err := scenarios.Get(p.Name)
	if err != nil {
		return nil
	}
	want := s.PlanFor(p.Subject)
	a, err1 := json.Marshal(&want)
	b, err2 := json.Marshal(p)
	if err1 != nil || err2 != nil {
		return nil
	}
	wa, wb := normalized(a), normalized(b)
	if wa != wb {
		return nil
	}
	return s
}

// normalized re-encodes a plan's JSON normalized (sim.Plan.Normalize: no
// steps as an empty list, ...) with defaults applied, as a run records its
// plan, so that a plan as written, as loaded and as a trace records it
// compare equal.
func normalized(b []byte) string {
	var p sim.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return string(b)
	}
	p.Normalize()
	applyDefaults(&p)
	out, _ := json.Marshal(&p)
	return string(out)
}

// FaultDiff compares the fault schedules of a recorded trace and a
// replayed one with sim.DiffSchedules (which orders the faults of one
// instant canonically and ignores which object a request fault landed on,
// since client-go hands objects out in map order after a relist). same is
// true when they are equal; desc says so, or where they first differ, with
// "a" the recorded trace and "b" the replay.
func FaultDiff(recorded, replayed *sim.Trace) (same bool, desc string) {
	if d := sim.DiffSchedules(recorded, replayed); d != "" {
		return false, d + " (a = the recorded trace, b = the replay)"
	}
	return true, fmt.Sprintf("same fault schedule as the recorded trace (%d faults, crashes and restarts)", len(sim.FaultSchedule(recorded)))
}

// ReplayTracePath is where a replay's trace is written next to the
// recorded one: "trace.jsonl" -> "trace.replay.jsonl".
func ReplayTracePath(recorded string) string {
	ext := filepath.Ext(recorded)
	return strings.TrimSuffix(recorded, ext) + ".replay" + ext
}

// WriteTraceFile writes tr to path as JSON Lines (sim.WriteTraceFile).
func WriteTraceFile(path string, tr *sim.Trace) error { return sim.WriteTraceFile(path, tr) }
