package sim

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// Determinism. A plan fixes every choice the sim makes: the steps and their
// times, and every random draw of the fault policy (each from a stream named
// by what it is about, see Policy). It does not fix how the goroutines of
// client-go and of the subject interleave: synctest does not seed the
// scheduler. So a replay promises "same plan, same fault schedule" (the
// RecFault, RecCrash and RecRestart records: what, when, to whom) as long as
// the requests that draw faults come in the same order per client and
// resource, which holds for the usual one-informer-per-resource subject.
// client-go also draws from math/rand (backoff jitter, watch timeouts): Run
// seeds it from the plan (see seedClientGo). Handler calls, queue
// operations, the object a request fault lands on and the interleaving of
// streams may differ: after a relist, client-go hands objects out in Go map
// order, which is randomized. When schedules differ, DiffSchedules says
// where, and both traces are kept.

// FaultSchedule returns the records that make a run's fault schedule: its
// faults, crashes and restarts, with Pos cleared (positions depend on
// everything else the run recorded). Records of the same virtual instant are
// put in a canonical order: goroutines acting at the same instant record in
// any order.
func FaultSchedule(t *Trace) []Record {
	var out []Record
	for _, r := range t.Records {
		switch r.Kind {
		case RecFault, RecCrash, RecRestart:
			r.Pos = 0
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].At != out[j].At {
			return out[i].At < out[j].At
		}
		return scheduleKey(out[i]) < scheduleKey(out[j])
	})
	return out
}

// scheduleKey orders the schedule records of one instant.
func scheduleKey(r Record) string {
	return fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%d\x00%d", r.Kind, r.Fault, r.Actor, r.Target, r.Watcher, r.Verb, r.Resource, r.Code, r.Step)
}

// DiffSchedules compares the fault schedules of two traces of the same plan
// and says where they first differ ("" if they do not).
func DiffSchedules(a, b *Trace) string {
	fa, fb := FaultSchedule(a), FaultSchedule(b)
	for i := 0; i < len(fa) && i < len(fb); i++ {
		if !sameScheduled(fa[i], fb[i]) {
			return fmt.Sprintf("fault schedules differ at fault #%d (of %d and %d):\n  a: %s\n  b: %s",
				i, len(fa), len(fb), describeFault(fa[i]), describeFault(fb[i]))
		}
	}
	switch {
	case len(fa) > len(fb):
		return fmt.Sprintf("fault schedules differ: a has %d more faults, from #%d: %s", len(fa)-len(fb), len(fb), describeFault(fa[len(fb)]))
	case len(fb) > len(fa):
		return fmt.Sprintf("fault schedules differ: b has %d more faults, from #%d: %s", len(fb)-len(fa), len(fa), describeFault(fb[len(fa)]))
	}
	return ""
}

// sameScheduled compares two schedule records on what the plan fixes: when,
// which fault, on which client, watch, verb and resource. Not on which
// object a request fault landed: that is the object the subject happened to
// request next, and the order of a subject's requests after a relist
// follows client-go's map iteration, which Go randomizes.
func sameScheduled(a, b Record) bool {
	return a.At == b.At && a.Kind == b.Kind && a.Actor == b.Actor && a.Fault == b.Fault && a.Target == b.Target &&
		a.Watcher == b.Watcher && a.Verb == b.Verb && a.Resource == b.Resource &&
		a.Code == b.Code && a.ContractBreaking == b.ContractBreaking && a.Step == b.Step
}

// describeFault formats one schedule record for a diff.
func describeFault(r Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "at %s %s", r.At, r.Kind)
	for _, kv := range [][2]string{
		{"fault", r.Fault}, {"actor", r.Actor}, {"target", r.Target}, {"watcher", r.Watcher}, {"verb", r.Verb},
		{"resource", r.Resource}, {"object", strings.Trim(r.Namespace+"/"+r.Name, "/")}, {"detail", r.Detail},
	} {
		if kv[1] != "" {
			fmt.Fprintf(&b, " %s=%s", kv[0], kv[1])
		}
	}
	if r.Code != 0 {
		fmt.Fprintf(&b, " code=%d", r.Code)
	}
	if r.ContractBreaking {
		b.WriteString(" contract-breaking")
	}
	return b.String()
}

// Replay loads the plan file at path and runs it (see Run). A trace file
// (JSON Lines, as WriteTrace writes) may be given instead: its plan is run
// and the new fault schedule is compared with the recorded one; a
// difference is logged with t.Logf (both traces are returned to the caller
// to keep) and returned as the error.
func Replay(t *testing.T, path string) (*Trace, error) {
	t.Helper()
	if strings.HasSuffix(path, ".jsonl") {
		recorded, err := ReadTraceFile(path)
		if err != nil {
			return nil, err
		}
		if recorded.Plan == nil {
			return nil, fmt.Errorf("sim: %s: the trace has no plan to replay", path)
		}
		tr, err := Run(t, recorded.Plan)
		if err != nil {
			return tr, err
		}
		if d := DiffSchedules(recorded, tr); d != "" {
			t.Logf("replay of %s: %s", path, d)
			return tr, fmt.Errorf("sim: replay of %s: %s (a = recorded, b = replayed)", path, d)
		}
		return tr, nil
	}
	p, err := LoadPlanFile(path)
	if err != nil {
		return nil, err
	}
	return Run(t, p)
}
