package scenarios

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cachelab/cachelab/sim"
)

// FormatPlan writes p as readable lines in the timeline syntax of a
// scenario file (subject, seed, faults, competitor, `object {...}`, `at TIME ACTOR OP
// [RESOURCE] [NS/NAME] [key=value ...] [{body}]`): how property tests show
// a generated or shrunk plan, instead of Go's dump of its JSON bytes.
func FormatPlan(p sim.Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan %s: subject %s, seed %d", nameOr(p.Name, "(unnamed)"), p.Subject, p.Seed)
	if p.Deadline != 0 {
		fmt.Fprintf(&b, ", deadline %s", p.Deadline.D())
	}
	b.WriteString("\n")
	if f, err := json.Marshal(p.Faults); err == nil && string(f) != "{}" {
		fmt.Fprintf(&b, "faults %s\n", f)
	}
	if c := p.Competitor; c != nil {
		line := "competitor " + c.Resource
		if c.Delay != 0 {
			line += " delay=" + fmtDur(c.Delay.D())
		}
		fmt.Fprintf(&b, "%s %s\n", line, compact(c.Patch))
	}
	for _, o := range p.Objects {
		fmt.Fprintf(&b, "object %s\n", compact(o))
	}
	for _, st := range p.Steps {
		b.WriteString(FormatStep(st))
		b.WriteString("\n")
	}
	return b.String()
}

// FormatStep writes one step as a scenario file's `at` line.
func FormatStep(st sim.Step) string {
	parts := []string{"at", fmtDur(st.At.D()), st.Actor, st.Op}
	if st.Resource != "" {
		parts = append(parts, st.Resource)
	}
	switch {
	case st.Namespace != "" && st.Name != "":
		parts = append(parts, st.Namespace+"/"+st.Name)
	case st.Name != "":
		parts = append(parts, st.Name)
	case st.Namespace != "":
		parts = append(parts, "ns="+st.Namespace)
	}
	kv := func(k, v string) { parts = append(parts, k+"="+v) }
	if st.Target != "" {
		kv("target", st.Target)
	}
	if st.Verb != "" {
		kv("verb", st.Verb)
	}
	if st.Code != 0 {
		kv("code", strconv.Itoa(st.Code))
	}
	if st.Lag != 0 {
		kv("lag", strconv.FormatInt(st.Lag, 10))
	}
	if st.For != 0 {
		kv("for", fmtDur(st.For.D()))
	}
	if st.MidReconcile {
		kv("midReconcile", "true")
	}
	if st.NotOlderThan {
		kv("notOlderThan", "true")
	}
	if st.AfterWrite != 0 {
		kv("afterWrite", strconv.Itoa(st.AfterWrite))
	}
	if st.AsOf != "" {
		kv("asOf", st.AsOf)
	}
	if st.PatchType != "" {
		kv("patchType", st.PatchType)
	}
	if len(st.Object) > 0 {
		parts = append(parts, compact(st.Object))
	}
	if len(st.Patch) > 0 {
		parts = append(parts, compact(st.Patch))
	}
	return strings.Join(parts, " ")
}

func fmtDur(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	return d.String()
}

func compact(j json.RawMessage) string {
	var v any
	if json.Unmarshal(j, &v) != nil {
		return string(j)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(j)
	}
	return string(b)
}

func nameOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
