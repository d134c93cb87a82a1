package lab

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w (give a plan.json or trace.jsonl written by `cachelab run`)", path, err)
	}
	first, _ := bufio.NewReader(f).ReadBytes('\n')
	f.Close()
	if isTraceHeader(first) {
		tr, err := readTraceFile(path)
		if err != nil {
			return nil, err
		}
		if tr.Plan == nil {
			return nil, fmt.Errorf("%s: the trace's header has no plan, so it cannot be replayed", path)
		}
		p := tr.Plan
		return &Input{Plan: p, Recorded: tr, RecordedPath: path, FromTrace: true}, nil
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

// normalized re-encodes a plan's JSON with defaults applied, so that a plan
// as written and as loaded compare equal.
func normalized(b []byte) string {
	var p sim.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return string(b)
	}
	applyDefaults(&p)
	out, _ := json.Marshal(&p)
	return string(out)
}

// FaultDiff compares the fault schedules of a recorded trace and a
// replayed one: their fault records ordered by virtual time, and by what
// they say within one instant (faults at the same instant, say a step's
// compaction and a request the subject sent at that instant, may be
// recorded in either order). same is true when they are equal; otherwise
// desc says where they first differ.
func FaultDiff(recorded, replayed *sim.Trace) (same bool, desc string) {
	a, b := faults(recorded), faults(replayed)
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i].key != b[i].key {
			return false, fmt.Sprintf("fault %d of the schedule differs: recorded %s (trace position %d), replayed %s (position %d)", i+1, a[i].key, a[i].pos, b[i].key, b[i].pos)
		}
	}
	switch {
	case len(a) > n:
		return false, fmt.Sprintf("the recorded trace has %d faults, the replay only %d; the first missing is %s (recorded position %d)", len(a), len(b), a[n].key, a[n].pos)
	case len(b) > n:
		return false, fmt.Sprintf("the replay has %d faults, the recorded trace only %d; the first extra is %s (replay position %d)", len(b), len(a), b[n].key, b[n].pos)
	}
	return true, fmt.Sprintf("same fault schedule as the recorded trace (%d faults)", len(a))
}

type faultKey struct {
	at  sim.Duration
	key string
	pos int
}

func faults(tr *sim.Trace) []faultKey {
	var out []faultKey
	if tr == nil {
		return nil
	}
	for _, r := range tr.Records {
		if r.Kind != sim.RecFault {
			continue
		}
		parts := []string{r.Fault, "at " + r.At.String()}
		for _, f := range []struct{ k, v string }{{"target", r.Target}, {"watcher", r.Watcher}, {"verb", r.Verb}, {"resource", r.Resource}, {"object", strings.Trim(r.Namespace+"/"+r.Name, "/")}, {"detail", r.Detail}} {
			if f.v != "" {
				parts = append(parts, f.k+"="+f.v)
			}
		}
		if r.Code != 0 {
			parts = append(parts, fmt.Sprintf("code=%d", r.Code))
		}
		out = append(out, faultKey{at: r.At, key: strings.Join(parts, " "), pos: r.Pos})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].at != out[j].at {
			return out[i].at < out[j].at
		}
		return out[i].key < out[j].key
	})
	return out
}

// ReplayTracePath is where a replay's trace is written next to the
// recorded one: "trace.jsonl" -> "trace.replay.jsonl".
func ReplayTracePath(recorded string) string {
	ext := filepath.Ext(recorded)
	return strings.TrimSuffix(recorded, ext) + ".replay" + ext
}

// WriteTraceFile writes tr to path as JSON Lines (sim.WriteTraceFile).
func WriteTraceFile(path string, tr *sim.Trace) error { return sim.WriteTraceFile(path, tr) }
