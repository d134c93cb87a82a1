package scenarios

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// Claim is a checkable sentence of a scenario's story ("five ConfigMaps",
// "the first flip is sound, the second is false, at about 13 s"), written
// below ---- as
//
//	claim SUBJECT: count KIND [key=value ...] OP N
//	claim SUBJECT: first KIND [key=value ...] at FROM..TO
//	claim SUBJECT: flips SIGNAL sound|false|all OP N
//	claim SUBJECT: flip SIGNAL N sound|false [at FROM..TO]
//
// and checked against the trace of that subject's run (CheckClaims):
//
//   - count: the number of records of KIND (a sim.RecordKind: write, handler,
//     signal, ...) whose fields match every key=value compares to N with OP
//     (=, !=, <, <=, >, >=).
//   - first: the first such record exists and happened between FROM and TO
//     (Go durations since the start, both included).
//   - flips: the number of judged flips to true of a sync signal (sound ones,
//     false positives, or all) compares to N.
//   - flip: the N-th judged flip to true of SIGNAL (from 1) is sound or false,
//     and, with at, happened between FROM and TO.
//
// Keys (the trace's JSON field names): actor, verb, resource, ns, name, uid,
// event, signal, value, op, key, result, handler, watcher, fault, target,
// code, initial, tombstone, step, watchList, lag. The value "subject" of actor or target
// stands for the subject under test. A resource matches by its plural
// ("bellerophons" matches "bellerophons.lab.cachelab.dev").
type Claim struct {
	// Subject is the subject whose run the claim speaks of.
	Subject string
	// Text is the claim as written after "SUBJECT:".
	Text string
	// Line is the claim's line in the scenario file.
	Line int

	form    string // count, first, flips, flip
	kind    sim.RecordKind
	filters []claimFilter
	op      string
	n       int
	signal  string
	sound   string // sound, false, all
	from    time.Duration
	to      time.Duration
	hasAt   bool
}

type claimFilter struct{ key, value string }

// claimKeys are the filter keys a claim may use.
var claimKeys = []string{"actor", "verb", "resource", "ns", "name", "uid", "event", "signal", "value", "op", "key", "result", "handler", "watcher", "fault", "target", "code", "initial", "tombstone", "step", "watchList", "lag"}

var claimOps = []string{"=", "!=", "<", "<=", ">", ">="}

const claimUsage = "write `claim SUBJECT: count KIND [key=value ...] OP N`, `claim SUBJECT: first KIND [key=value ...] at FROM..TO`, `claim SUBJECT: flips SIGNAL sound|false|all OP N` or `claim SUBJECT: flip SIGNAL N sound|false [at FROM..TO]`"

// parseClaim parses the text after "claim ".
func parseClaim(text string, n int) (Claim, error) {
	subj, rest, ok := strings.Cut(text, ":")
	subj = strings.TrimSpace(subj)
	if !ok || subj == "" || strings.ContainsAny(subj, " \t=") {
		return Claim{}, fmt.Errorf("claim %q: %s", text, claimUsage)
	}
	c := Claim{Subject: subj, Text: strings.TrimSpace(rest), Line: n}
	w := strings.Fields(rest)
	if len(w) == 0 {
		return Claim{}, fmt.Errorf("claim for %s says nothing: %s", subj, claimUsage)
	}
	c.form = w[0]
	switch c.form {
	case "count", "first":
		if len(w) < 2 {
			return Claim{}, fmt.Errorf("claim %q: name a record kind after %s (write, handler, signal, ...)", c.Text, c.form)
		}
		c.kind = sim.RecordKind(w[1])
		if !knownKind(c.kind) {
			return Claim{}, fmt.Errorf("claim %q: unknown record kind %q (known: %s)", c.Text, w[1], strings.Join(kindNames(), ", "))
		}
		i := 2
		for ; i < len(w) && strings.Contains(w[i], "="); i++ {
			if isOp(w[i]) {
				break
			}
			k, v, _ := strings.Cut(w[i], "=")
			if !contains(claimKeys, k) {
				return Claim{}, fmt.Errorf("claim %q: unknown key %q (known: %s)", c.Text, k, strings.Join(claimKeys, ", "))
			}
			c.filters = append(c.filters, claimFilter{k, v})
		}
		tail := w[i:]
		if c.form == "count" {
			if err := c.parseCompare(tail); err != nil {
				return Claim{}, err
			}
		} else if err := c.parseAt(tail, true); err != nil {
			return Claim{}, err
		}
	case "flips":
		if len(w) < 3 {
			return Claim{}, fmt.Errorf("claim %q: write `flips SIGNAL sound|false|all OP N`", c.Text)
		}
		if err := c.parseSignal(w[1]); err != nil {
			return Claim{}, err
		}
		c.sound = w[2]
		if c.sound != "sound" && c.sound != "false" && c.sound != "all" {
			return Claim{}, fmt.Errorf("claim %q: %q: say which flips to count: sound, false or all", c.Text, w[2])
		}
		if err := c.parseCompare(w[3:]); err != nil {
			return Claim{}, err
		}
	case "flip":
		if len(w) < 4 {
			return Claim{}, fmt.Errorf("claim %q: write `flip SIGNAL N sound|false [at FROM..TO]`", c.Text)
		}
		if err := c.parseSignal(w[1]); err != nil {
			return Claim{}, err
		}
		k, err := strconv.Atoi(w[2])
		if err != nil || k < 1 {
			return Claim{}, fmt.Errorf("claim %q: %q: number the flip from 1, as `flip %s 2 false`", c.Text, w[2], c.signal)
		}
		c.n = k
		c.sound = w[3]
		if c.sound != "sound" && c.sound != "false" {
			return Claim{}, fmt.Errorf("claim %q: %q: a flip is sound or false", c.Text, w[3])
		}
		if err := c.parseAt(w[4:], false); err != nil {
			return Claim{}, err
		}
	default:
		return Claim{}, fmt.Errorf("claim %q: unknown form %q: %s", c.Text, c.form, claimUsage)
	}
	return c, nil
}

func (c *Claim) parseSignal(s string) error {
	if !contains(invariants.SignalNames(), s) {
		return fmt.Errorf("claim %q: unknown signal %q (known: %s)", c.Text, s, strings.Join(invariants.SignalNames(), ", "))
	}
	c.signal = s
	return nil
}

func (c *Claim) parseCompare(w []string) error {
	if len(w) != 2 || !isOp(w[0]) {
		return fmt.Errorf("claim %q: end with a comparison OP N (OP one of %s), as `= 5`", c.Text, strings.Join(claimOps, " "))
	}
	n, err := strconv.Atoi(w[1])
	if err != nil || n < 0 {
		return fmt.Errorf("claim %q: %q is not a count: give a whole number", c.Text, w[1])
	}
	c.op, c.n = w[0], n
	return nil
}

func (c *Claim) parseAt(w []string, required bool) error {
	if len(w) == 0 && !required {
		return nil
	}
	if len(w) != 2 || w[0] != "at" {
		return fmt.Errorf("claim %q: end with `at FROM..TO`, as `at 13s..14s`", c.Text)
	}
	a, b, ok := strings.Cut(w[1], "..")
	from, err1 := time.ParseDuration(a)
	to, err2 := time.ParseDuration(b)
	if !ok || err1 != nil || err2 != nil || from < 0 || to < from {
		return fmt.Errorf("claim %q: %q: give a window of virtual time FROM..TO with FROM <= TO, as 13s..14s", c.Text, w[1])
	}
	c.from, c.to, c.hasAt = from, to, true
	return nil
}

func isOp(s string) bool { return contains(claimOps, s) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func kindNames() []string {
	return []string{string(sim.RecRequest), string(sim.RecWrite), string(sim.RecList), string(sim.RecWatchOpen), string(sim.RecWatchClose),
		string(sim.RecSent), string(sim.RecDelivered), string(sim.RecFault), string(sim.RecCompact), string(sim.RecHandler), string(sim.RecSignal),
		string(sim.RecQueue), string(sim.RecReconcile), string(sim.RecCache), string(sim.RecNote), string(sim.RecStep), string(sim.RecCrash),
		string(sim.RecRestart), string(sim.RecDesired), string(sim.RecFinal), string(sim.RecLog)}
}

func knownKind(k sim.RecordKind) bool { return contains(kindNames(), string(k)) }

// field returns the value of a claim key in r, as written in a claim.
func field(r *sim.Record, key string) string {
	switch key {
	case "actor":
		return r.Actor
	case "verb":
		return r.Verb
	case "resource":
		return r.Resource
	case "ns":
		return r.Namespace
	case "name":
		return r.Name
	case "uid":
		return r.UID
	case "event":
		return r.EventType
	case "signal":
		return r.Signal
	case "value":
		return strconv.FormatBool(r.Value)
	case "op":
		return r.Op
	case "key":
		return r.Key
	case "result":
		return r.Result
	case "handler":
		return r.Handler
	case "watcher":
		return r.Watcher
	case "fault":
		return r.Fault
	case "target":
		return r.Target
	case "code":
		return strconv.Itoa(r.Code)
	case "initial":
		return strconv.FormatBool(r.Initial)
	case "tombstone":
		return strconv.FormatBool(r.Tombstone)
	case "step":
		return strconv.Itoa(r.Step)
	case "watchList":
		return strconv.FormatBool(r.WatchList)
	case "lag":
		return strconv.FormatInt(r.Lag, 10)
	}
	return ""
}

func (c *Claim) matches(r *sim.Record, subject string) bool {
	if r.Kind != c.kind {
		return false
	}
	for _, f := range c.filters {
		want, got := f.value, field(r, f.key)
		if (f.key == "actor" || f.key == "target") && want == TargetSubject {
			want = subject
		}
		if f.key == "resource" {
			got, _, _ = strings.Cut(got, ".")
			want, _, _ = strings.Cut(want, ".")
		}
		if got != want {
			return false
		}
	}
	return true
}

func compare(got int, op string, want int) bool {
	switch op {
	case "=":
		return got == want
	case "!=":
		return got != want
	case "<":
		return got < want
	case "<=":
		return got <= want
	case ">":
		return got > want
	case ">=":
		return got >= want
	}
	return false
}

// Check checks the claim against tr, a trace of a run of subject. It
// returns "" when the claim holds, else what the trace shows instead.
func (c *Claim) Check(subject string, tr *sim.Trace) string {
	if tr == nil {
		return "there is no trace"
	}
	switch c.form {
	case "count":
		n := 0
		for i := range tr.Records {
			if c.matches(&tr.Records[i], subject) {
				n++
			}
		}
		if !compare(n, c.op, c.n) {
			return fmt.Sprintf("the run has %d such record(s)", n)
		}
	case "first":
		for i := range tr.Records {
			r := &tr.Records[i]
			if c.matches(r, subject) {
				if at := r.At.D(); at < c.from || at > c.to {
					return fmt.Sprintf("the first one is #%d at %s", r.Pos, at)
				}
				return ""
			}
		}
		return "the run has no such record"
	case "flips", "flip":
		var rep invariants.SignalReport
		for _, r := range invariants.SyncSoundness(tr) {
			if r.Signal == c.signal {
				rep = r
			}
		}
		if c.form == "flips" {
			n := 0
			for _, j := range rep.Judged {
				if c.sound == "all" || j.Sound == (c.sound == "sound") {
					n++
				}
			}
			if !compare(n, c.op, c.n) {
				return fmt.Sprintf("the run has %d %s flip(s) of %s (%s)", n, c.sound, c.signal, describeFlips(rep.Judged))
			}
			return ""
		}
		if len(rep.Judged) < c.n {
			return fmt.Sprintf("%s flipped to true %d time(s) (%s)", c.signal, len(rep.Judged), describeFlips(rep.Judged))
		}
		j := rep.Judged[c.n-1]
		if j.Sound != (c.sound == "sound") || c.hasAt && (j.At.D() < c.from || j.At.D() > c.to) {
			return fmt.Sprintf("flip %d of %s is %s", c.n, c.signal, describeFlip(j))
		}
	}
	return ""
}

func describeFlip(j invariants.FlipJudgement) string {
	s := "sound"
	if !j.Sound {
		s = "false"
	}
	return fmt.Sprintf("%s, #%d at %s", s, j.Pos, j.At.D())
}

func describeFlips(js []invariants.FlipJudgement) string {
	if len(js) == 0 {
		return "no judged flip"
	}
	var parts []string
	for i, j := range js {
		if i == 6 {
			parts = append(parts, fmt.Sprintf("... %d more", len(js)-i))
			break
		}
		parts = append(parts, describeFlip(j))
	}
	return strings.Join(parts, "; ")
}

// ClaimsFor returns the claims about subject, in file order.
func (s *Scenario) ClaimsFor(subject string) []Claim {
	var out []Claim
	for _, c := range s.Claims {
		if c.Subject == subject {
			out = append(out, c)
		}
	}
	return out
}

// CheckClaims checks the scenario's claims about subject against tr, a
// trace of its run, and returns one Mismatch per claim that does not hold.
func (s *Scenario) CheckClaims(subject string, tr *sim.Trace) []Mismatch {
	var out []Mismatch
	for _, c := range s.ClaimsFor(subject) {
		if got := c.Check(subject, tr); got != "" {
			out = append(out, Mismatch{Subject: subject, Claim: c.Text, Reason: got, Line: c.Line})
		}
	}
	return out
}
