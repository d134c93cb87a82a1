package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// ErrSyntax is wrapped by every error Parse returns for a malformed file.
var ErrSyntax = errors.New("scenarios: malformed scenario file")

// ParseError is a malformed line of a scenario file.
type ParseError struct {
	File string
	Line int
	// Msg says what is wrong and what to do.
	Msg string
}

// Error formats the error as "file:line: msg".
func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Unwrap makes errors.Is(err, ErrSyntax) true.
func (e *ParseError) Unwrap() error { return ErrSyntax }

// directives lists the header directives, for error messages.
var directives = []string{"scenario", "title", "edge", "source", "subject", "seed", "deadline", "quiet", "kubelet", "competitor", "access", "param", "faults", "object", "at"}

// stepKeys are the key=value arguments of an `at` step.
var stepKeys = []string{"resource", "ns", "name", "target", "code", "verb", "lag", "for", "midReconcile", "notOlderThan", "patchType", "afterWrite", "asOf"}

var nameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

// line is one physical line with its number.
type line struct {
	n    int
	text string
}

// Parse reads a scenario file. file names it in errors (and its base name,
// without extension, must equal the `scenario` name). See the package
// documentation for the format.
func Parse(file string, data []byte) (*Scenario, error) {
	p := &parser{file: file, s: &Scenario{File: file}}
	p.s.Plan.Version = sim.PlanVersion
	raw := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	for i, t := range raw {
		p.lines = append(p.lines, line{n: i + 1, text: t})
	}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.s, nil
}

type parser struct {
	file  string
	s     *Scenario
	lines []line
	i     int

	pending      []string // `#` lines of the block being read
	pendingLine  int
	inExpect     bool
	seen         map[string]int // header directive -> line, for duplicates
	sawTimeline  bool
	lastStepAt   time.Duration
	deadlineLine int
}

func (p *parser) errf(n int, format string, args ...any) error {
	return &ParseError{File: p.file, Line: n, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) parse() error {
	p.seen = map[string]int{}
	for p.i = 0; p.i < len(p.lines); p.i++ {
		l := p.lines[p.i]
		t := strings.TrimRight(l.text, " \t")
		switch {
		case strings.HasPrefix(t, "#"):
			if len(p.pending) == 0 {
				p.pendingLine = l.n
			}
			p.pending = append(p.pending, strings.TrimPrefix(strings.TrimPrefix(t, "#"), " "))
			continue
		case strings.TrimSpace(t) == "":
			// A blank line ends a paragraph of narrative.
			if len(p.pending) > 0 && p.pending[len(p.pending)-1] != "" {
				p.pending = append(p.pending, "")
			}
			continue
		case t == "----":
			if p.inExpect {
				return p.errf(l.n, "a second ---- line: the expectations section is already open (one ---- per file)")
			}
			// Narrative left above ---- ends the timeline's story.
			p.flush(BlockEnd, 0)
			p.inExpect = true
			continue
		case t[0] == ' ' || t[0] == '\t':
			return p.errf(l.n, "unexpected indented line: an indented body must follow `object`, `faults` or an `at ... create|update|patch` step directly")
		}
		var err error
		if p.inExpect {
			err = p.expectLine(l)
		} else {
			err = p.directive(l)
		}
		if err != nil {
			return err
		}
	}
	if len(p.pending) > 0 {
		p.flush(BlockEnd, 0)
	}
	return p.finish()
}

// flush attaches the pending narrative block, if any.
func (p *parser) flush(kind BlockKind, index int) {
	if len(p.pending) == 0 {
		return
	}
	var paras []string
	var cur []string
	for _, t := range p.pending {
		if strings.TrimSpace(t) == "" {
			if len(cur) > 0 {
				paras = append(paras, strings.Join(cur, "\n"))
				cur = nil
			}
			continue
		}
		cur = append(cur, t)
	}
	if len(cur) > 0 {
		paras = append(paras, strings.Join(cur, "\n"))
	}
	if len(paras) > 0 {
		p.s.Narrative = append(p.s.Narrative, Block{Kind: kind, Index: index, Text: strings.Join(paras, "\n\n"), Line: p.pendingLine})
	}
	p.pending = nil
}

// body returns the object body of a directive: the inline `{...}` text after
// the directive (possibly continued on following lines until the braces
// balance), or the indented lines below it, converted from YAML to JSON.
func (p *parser) body(l line, inline string, what string) (json.RawMessage, bool, error) {
	text := inline
	if text != "" {
		depth := braceDepth(text)
		for depth > 0 && p.i+1 < len(p.lines) {
			p.i++
			next := p.lines[p.i].text
			text += "\n" + next
			depth += braceDepth(next)
		}
		if depth != 0 {
			return nil, false, p.errf(l.n, "%s: unbalanced braces in %q: close every { with a }", what, firstLine(inline))
		}
	} else {
		var block []string
		for p.i+1 < len(p.lines) {
			next := p.lines[p.i+1].text
			if strings.TrimSpace(next) == "" || !(next[0] == ' ' || next[0] == '\t') {
				break
			}
			block = append(block, next)
			p.i++
		}
		if len(block) == 0 {
			return nil, false, nil
		}
		text = dedent(block)
	}
	j, err := yamlToJSON(text)
	if err != nil {
		return nil, false, p.errf(l.n, "%s: not valid YAML/JSON: %v", what, err)
	}
	return j, true, nil
}

// yamlToJSON converts a YAML (1.2: only true and false are booleans, so a
// key n or a value no stays a string) or JSON document to JSON.
func yamlToJSON(text string) (json.RawMessage, error) {
	var v any
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%v (keys must be strings)", err)
	}
	return b, nil
}

func braceDepth(s string) int {
	d := 0
	inQuote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote != 0:
			if c == '\\' {
				i++
			} else if c == inQuote {
				inQuote = 0
			}
		case c == '"' || c == '\'':
			inQuote = c
		case c == '{' || c == '[':
			d++
		case c == '}' || c == ']':
			d--
		}
	}
	return d
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

func dedent(block []string) string {
	indent := -1
	for _, b := range block {
		n := len(b) - len(strings.TrimLeft(b, " \t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	var buf bytes.Buffer
	for _, b := range block {
		buf.WriteString(strings.ReplaceAll(b[indent:], "\t", "  "))
		buf.WriteByte('\n')
	}
	return buf.String()
}

// splitDirective splits "word rest" and returns the inline body (from the
// first `{` outside quotes) separately.
func splitArgs(rest string) (args []string, inline string) {
	if i := strings.IndexByte(rest, '{'); i >= 0 {
		inline = strings.TrimSpace(rest[i:])
		rest = rest[:i]
	}
	return strings.Fields(rest), inline
}

func (p *parser) once(l line, word string) error {
	if prev, ok := p.seen[word]; ok {
		return p.errf(l.n, "%s given twice (first on line %d): keep one", word, prev)
	}
	p.seen[word] = l.n
	return nil
}

func (p *parser) directive(l line) error {
	t := strings.TrimSpace(l.text)
	word, rest, _ := strings.Cut(t, " ")
	rest = strings.TrimSpace(rest)
	if len(p.seen) == 0 && word != "scenario" {
		return p.errf(l.n, "the first directive must be `scenario NAME`, got %q", word)
	}
	switch word {
	case "scenario", "title", "subject", "seed", "deadline", "quiet", "kubelet", "competitor", "access", "faults":
		if p.sawTimeline {
			return p.errf(l.n, "%s must come before the first `object` or `at` line (header directives go at the top)", word)
		}
		if err := p.once(l, word); err != nil {
			return err
		}
	case "edge", "source", "param":
		if p.sawTimeline {
			return p.errf(l.n, "%s must come before the first `object` or `at` line (header directives go at the top)", word)
		}
		if len(p.seen) == 0 {
			return p.errf(l.n, "the first directive must be `scenario NAME`")
		}
	}
	switch word {
	case "scenario":
		p.flush(BlockIntro, 0)
		if !nameRE.MatchString(rest) {
			return p.errf(l.n, "scenario name %q: use lower-case letters, digits and dashes (e.g. tombstone-after-410)", rest)
		}
		if base := strings.TrimSuffix(path.Base(p.file), path.Ext(p.file)); base != rest && p.file != "" && !strings.HasPrefix(p.file, "<") {
			return p.errf(l.n, "scenario name %q differs from the file name %q: rename one so they match", rest, base)
		}
		p.s.Name = rest
		p.s.Plan.Name = rest
	case "title":
		p.flush(BlockIntro, 0)
		if rest == "" {
			return p.errf(l.n, "title is empty: say in one line what the scenario shows")
		}
		p.s.Title = rest
	case "edge":
		p.flush(BlockIntro, 0)
		for _, f := range strings.FieldsFunc(rest, func(r rune) bool { return r == ',' || r == ' ' }) {
			f = strings.TrimLeft(f, "ABCDE")
			n, err := strconv.Atoi(f)
			if err != nil || EdgeSection(n) == "" {
				return p.errf(l.n, "edge %q: give EDGE-CASES.md entry numbers 1..28, as `edge 7` or `edge B7, B8`", f)
			}
			p.s.EdgeCases = append(p.s.EdgeCases, n)
		}
		if len(p.s.EdgeCases) == 0 {
			return p.errf(l.n, "edge: give at least one EDGE-CASES.md entry number (1..28)")
		}
	case "source":
		p.flush(BlockIntro, 0)
		if rest == "" {
			return p.errf(l.n, "source is empty: give an upstream reference, as `source k/k#69376: what it shows`")
		}
		ref, note, _ := strings.Cut(rest, ": ")
		p.s.Sources = append(p.s.Sources, Source{Ref: strings.TrimSpace(ref), Note: strings.TrimSpace(note)})
	case "subject":
		p.flush(BlockIntro, 0)
		if rest == "" || strings.ContainsAny(rest, " \t") {
			return p.errf(l.n, "subject: give one registered subject name, as `subject bellerophon`")
		}
		p.s.Plan.Subject = rest
	case "seed":
		p.flush(BlockIntro, 0)
		n, err := strconv.ParseUint(rest, 10, 64)
		if err != nil {
			return p.errf(l.n, "seed %q: give a non-negative integer, as `seed 42`", rest)
		}
		p.s.Plan.Seed = n
	case "deadline":
		p.flush(BlockIntro, 0)
		d, err := time.ParseDuration(rest)
		if err != nil || d <= 0 {
			return p.errf(l.n, "deadline %q: give a positive Go duration, as `deadline 2m`", rest)
		}
		p.s.Plan.Deadline = sim.Duration(d)
		p.deadlineLine = l.n
	case "quiet":
		p.flush(BlockIntro, 0)
		d, err := time.ParseDuration(rest)
		if err != nil || d <= 0 {
			return p.errf(l.n, "quiet %q: give a positive Go duration, as `quiet 45s` (how long nothing must happen for the run to end)", rest)
		}
		p.s.Plan.Quiet = sim.Duration(d)
	case "kubelet":
		p.flush(BlockIntro, 0)
		k, v, ok := strings.Cut(rest, "=")
		d, err := time.ParseDuration(v)
		if !ok || k != "readyAfter" || err != nil || d < 0 {
			return p.errf(l.n, "kubelet %q: write `kubelet readyAfter=1s` (the kubelet marks each Pod Running and Ready that long after it sees it)", rest)
		}
		p.s.Plan.Kubelet = &sim.Kubelet{ReadyAfter: sim.Duration(d)}
	case "competitor":
		p.flush(BlockIntro, 0)
		return p.competitor(l, rest)
	case "access":
		p.flush(BlockIntro, 0)
		if rest != "direct" && rest != "http" {
			return p.errf(l.n, "access %q: use direct or http", rest)
		}
		p.s.Plan.Access = rest
	case "param":
		p.flush(BlockIntro, 0)
		k, v, ok := strings.Cut(rest, "=")
		if !ok || k == "" {
			return p.errf(l.n, "param %q: write `param key=value`", rest)
		}
		if p.s.Plan.SubjectParams == nil {
			p.s.Plan.SubjectParams = map[string]string{}
		}
		p.s.Plan.SubjectParams[k] = v
	case "faults":
		p.flush(BlockIntro, 0)
		j, ok, err := p.body(l, rest, "faults")
		if err != nil {
			return err
		}
		if !ok {
			return p.errf(l.n, "faults: give the fault policy inline, as `faults {latency: {kind: fixed, max: 100ms}}`, or indented below")
		}
		j, err = durationsToNanos(j)
		if err != nil {
			return p.errf(l.n, "faults: %v", err)
		}
		dec := json.NewDecoder(bytes.NewReader(j))
		dec.DisallowUnknownFields()
		var fp sim.FaultPolicy
		if err := dec.Decode(&fp); err != nil {
			return p.errf(l.n, "faults: %v (fields are those of sim.FaultPolicy: latency, disconnectEvery, expireOnRewatch, staleReplicaLag, errorRate, errorCodes, unknownOutcomeRate, contractBreaking)", err)
		}
		p.s.Plan.Faults = fp
	case "object":
		p.sawTimeline = true
		p.flush(BlockObject, len(p.s.Plan.Objects))
		j, ok, err := p.body(l, rest, "object")
		if err != nil {
			return err
		}
		if !ok {
			return p.errf(l.n, "object: give the object inline, as `object {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default}}`, or indented below")
		}
		if err := checkObject(j); err != nil {
			return p.errf(l.n, "object: %v", err)
		}
		p.s.Plan.Objects = append(p.s.Plan.Objects, j)
		p.s.ObjectLines = append(p.s.ObjectLines, l.n)
	case "at":
		p.sawTimeline = true
		p.flush(BlockStep, len(p.s.Plan.Steps))
		return p.step(l, rest)
	default:
		return p.errf(l.n, "unknown directive %q (known: %s; expectations go below a ---- line)", word, strings.Join(directives, ", "))
	}
	return nil
}

// competitor parses `competitor RESOURCE [delay=DUR] {patch}`: another
// controller, informer-fed, that keeps every object of RESOURCE in the
// shape of the JSON merge patch, delay after it sees one (sim.Competitor).
func (p *parser) competitor(l line, rest string) error {
	usage := "write `competitor RESOURCE [delay=DUR] {merge patch}`, as `competitor configmaps delay=1s {metadata: {labels: {owner: other}}}`"
	args, inline := splitArgs(rest)
	if len(args) == 0 || strings.Contains(args[0], "=") {
		return p.errf(l.n, "competitor: name the resource it writes: %s", usage)
	}
	c := &sim.Competitor{Resource: args[0]}
	for _, a := range args[1:] {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k != "delay" {
			return p.errf(l.n, "competitor: unexpected %q: %s", a, usage)
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return p.errf(l.n, "competitor: delay=%q: give a Go duration, as delay=500ms", v)
		}
		c.Delay = sim.Duration(d)
	}
	j, ok, err := p.body(l, inline, "competitor")
	if err != nil {
		return err
	}
	if !ok {
		return p.errf(l.n, "competitor: give the merge patch it enforces: %s", usage)
	}
	c.Patch = j
	p.s.Plan.Competitor = c
	return nil
}

// durationFields are the FaultPolicy fields that hold a sim.Duration.
var durationFields = map[string]bool{"min": true, "max": true, "mean": true, "disconnectEvery": true}

// durationsToNanos rewrites Go duration strings ("1.5s") in the duration
// fields of a fault policy as nanoseconds, which every sim.Duration reads.
func durationsToNanos(j json.RawMessage) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		return nil, err
	}
	var walk func(v any) error
	walk = func(v any) error {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for k, x := range m {
			if s, isStr := x.(string); isStr && durationFields[k] {
				d, err := time.ParseDuration(s)
				if err != nil {
					return fmt.Errorf("%s: %q is not a Go duration (write 1.5s, 200ms)", k, s)
				}
				m[k] = int64(d)
			}
			if err := walk(x); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func checkObject(j json.RawMessage) error {
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		return fmt.Errorf("must be a mapping with apiVersion, kind and metadata")
	}
	for _, k := range []string{"apiVersion", "kind"} {
		if s, _ := m[k].(string); s == "" {
			return fmt.Errorf("field %s is missing: every object needs apiVersion, kind and metadata.name", k)
		}
	}
	md, _ := m["metadata"].(map[string]any)
	if name, _ := md["name"].(string); name == "" {
		return fmt.Errorf("field metadata.name is missing: every object needs apiVersion, kind and metadata.name")
	}
	return nil
}

// step parses `at DUR ACTOR OP [RESOURCE] [NS/NAME] [key=value ...] [{body}]`.
func (p *parser) step(l line, rest string) error {
	args, inline := splitArgs(rest)
	usage := "write `at TIME ACTOR OP [RESOURCE] [NS/NAME] [key=value ...] [{object}]`, as `at 5s user delete pods default/web-0`"
	if len(args) < 3 {
		return p.errf(l.n, "step %q is too short: %s", rest, usage)
	}
	d, err := time.ParseDuration(args[0])
	if err != nil || d < 0 {
		return p.errf(l.n, "step time %q: give a Go duration since the start, as 5s or 1m30s", args[0])
	}
	if d < p.lastStepAt {
		return p.errf(l.n, "step at %s comes after a step at %s: list steps in time order", d, p.lastStepAt)
	}
	p.lastStepAt = d
	st := sim.Step{At: sim.Duration(d), Actor: args[1], Op: args[2]}
	bare := 0
	for _, a := range args[3:] {
		k, v, isKV := strings.Cut(a, "=")
		if !isKV {
			switch bare {
			case 0:
				st.Resource = a
			case 1:
				if ns, name, ok := strings.Cut(a, "/"); ok {
					st.Namespace, st.Name = ns, name
				} else {
					st.Name = a
				}
			default:
				return p.errf(l.n, "step: unexpected word %q: after OP come RESOURCE and NS/NAME, then key=value arguments (%s)", a, strings.Join(stepKeys, ", "))
			}
			bare++
			continue
		}
		switch k {
		case "resource":
			st.Resource = v
		case "ns":
			st.Namespace = v
		case "name":
			st.Name = v
		case "target":
			st.Target = v
			if v == TargetSubject {
				p.s.subjectTargets = append(p.s.subjectTargets, len(p.s.Plan.Steps))
			}
		case "verb":
			st.Verb = v
		case "patchType":
			st.PatchType = v
		case "code":
			n, err := strconv.Atoi(v)
			if err != nil || n < 100 || n > 599 {
				return p.errf(l.n, "step: code=%q: give an HTTP status, as code=429", v)
			}
			st.Code = n
		case "lag":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return p.errf(l.n, "step: lag=%q: give a number of revisions, as lag=3", v)
			}
			st.Lag = n
		case "for":
			fd, err := time.ParseDuration(v)
			if err != nil || fd < 0 {
				return p.errf(l.n, "step: for=%q: give a Go duration, as for=10s", v)
			}
			st.For = sim.Duration(fd)
		case "midReconcile":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return p.errf(l.n, "step: midReconcile=%q: use true or false", v)
			}
			st.MidReconcile = b
		case "notOlderThan":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return p.errf(l.n, "step: notOlderThan=%q: use true or false", v)
			}
			st.NotOlderThan = b
		case "afterWrite":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return p.errf(l.n, "step: afterWrite=%q: give the subject's write to crash after, counted from 1, as afterWrite=2", v)
			}
			st.AfterWrite = n
		case "asOf":
			if _, _, err := sim.ParseMoment(v); err != nil {
				return p.errf(l.n, "step: asOf=%v", err)
			}
			st.AsOf = v
		default:
			return p.errf(l.n, "step: unknown argument %q (known: %s)", k, strings.Join(stepKeys, ", "))
		}
	}
	j, ok, err := p.body(l, inline, "step")
	if err != nil {
		return err
	}
	if ok {
		switch st.Op {
		case "patch", "patch-status":
			st.Patch = j
		case "update-status":
			// Only its status is written: the plan's validation says what
			// else it needs (a name, a resource or apiVersion and kind).
			st.Object = j
		default:
			if err := checkObject(j); err != nil {
				return p.errf(l.n, "step %s object: %v", st.Op, err)
			}
			st.Object = j
		}
	}
	p.s.Plan.Steps = append(p.s.Plan.Steps, st)
	p.s.StepLines = append(p.s.StepLines, l.n)
	return nil
}

// CheckCatalogue returns what a built-in scenario lacks that a user's file
// may leave out: a `title`, an `edge` line and expectations (every
// built-in scenario says what it shows, which edge cases, and how each
// subject fares). Errors name the file and line.
func CheckCatalogue(s *Scenario) error {
	first := 1
	var errs []error
	bad := func(n int, msg string) { errs = append(errs, &ParseError{File: s.File, Line: n, Msg: msg}) }
	if s.Title == "" {
		bad(first, "no `title` line: say in one line what the scenario shows")
	}
	if len(s.EdgeCases) == 0 {
		bad(first, "no `edge` line: name the EDGE-CASES.md entries the scenario shows, as `edge 7`")
	}
	if len(s.Expect) == 0 {
		bad(s.lastLine, "no expectations: add a ---- line, then `SUBJECT: invariant=pass|fail ...` lines")
	}
	return errors.Join(errs...)
}

// expectLine parses `SUBJECT: invariant=status ...`.
func (p *parser) expectLine(l line) error {
	t := strings.TrimSpace(l.text)
	if rest, ok := strings.CutPrefix(t, "claim "); ok {
		c, err := parseClaim(rest, l.n)
		if err != nil {
			return p.errf(l.n, "%v", err)
		}
		p.flush(BlockClaim, len(p.s.Claims))
		p.s.Claims = append(p.s.Claims, c)
		return nil
	}
	subj, rest, ok := strings.Cut(t, ":")
	subj = strings.TrimSpace(subj)
	if !ok || subj == "" || strings.ContainsAny(subj, " \t=") {
		return p.errf(l.n, "expectation %q: write `SUBJECT: invariant=pass|fail|unknown ...`, as `bellerophon: eventual-convergence=pass`", t)
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return p.errf(l.n, "expectation for %s names no invariant: add invariant=pass|fail|unknown", subj)
	}
	p.flush(BlockExpect, len(p.s.Expect))
	for _, f := range fields {
		inv, st, ok := strings.Cut(f, "=")
		status := invariants.Status(st)
		if !ok || inv == "" {
			return p.errf(l.n, "expectation %q: write invariant=pass|fail|unknown", f)
		}
		if status != invariants.Pass && status != invariants.Fail && status != invariants.Unknown {
			return p.errf(l.n, "expectation %s=%s: the status must be pass, fail or unknown", inv, st)
		}
		for _, prev := range p.s.Expect {
			if prev.Subject == subj && prev.Invariant == inv {
				return p.errf(l.n, "expectation %s for %s given twice (first on line %d): keep one", inv, subj, prev.Line)
			}
		}
		p.s.Expect = append(p.s.Expect, Expectation{Subject: subj, Invariant: inv, Status: status, Line: l.n})
	}
	return nil
}

func (p *parser) finish() error {
	s := p.s
	last := 1
	for _, l := range p.lines {
		if strings.TrimSpace(l.text) != "" {
			last = l.n
		}
	}
	// A user's file needs no title, edge or expectations (its plan runs
	// with the controller under test, every failed verdict reported); the
	// built-in catalogue requires them (see CheckCatalogue).
	switch {
	case s.Name == "":
		return p.errf(1, "no `scenario NAME` line: a scenario file starts with one")
	case len(s.Plan.Steps) == 0:
		return p.errf(last, "no steps: add at least one `at TIME ACTOR OP ...` line")
	}
	s.lastLine = last
	for _, c := range s.Claims {
		if len(s.ExpectedFor(c.Subject)) == 0 {
			return p.errf(c.Line, "claim about %s, which no expectation line names: only the subjects with a `%s: invariant=STATUS` line run", c.Subject, c.Subject)
		}
	}
	if s.Plan.Subject == "" && len(s.Expect) > 0 {
		s.Plan.Subject = s.Expect[0].Subject
	}
	s.Plan = s.PlanFor(s.Plan.Subject)
	if p.deadlineLine > 0 && s.Plan.Deadline.D() < p.lastStepAt {
		return p.errf(p.deadlineLine, "deadline %s is before the last step (at %s): make it later", s.Plan.Deadline, p.lastStepAt)
	}
	return p.validatePlan()
}

var planFieldRE = regexp.MustCompile(`^(steps|objects)\[(\d+)\]`)

// validatePlan checks the Plan as sim will (ops, fields each op uses,
// values) and reports the first problem at the line of its step or object.
func (p *parser) validatePlan() error {
	plan := p.s.Plan
	if plan.Subject == "" {
		// A user's file may leave the subject to the run: the
		// controller under test (PlanFor).
		plan.Subject = "the-controller-under-test"
	}
	err := plan.Validate()
	if err == nil {
		return nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var pe *sim.PlanError
		if !errors.As(e, &pe) {
			continue
		}
		line := p.seen["scenario"]
		if m := planFieldRE.FindStringSubmatch(pe.Field); m != nil {
			i, _ := strconv.Atoi(m[2])
			switch {
			case m[1] == "steps" && i < len(p.s.StepLines):
				line = p.s.StepLines[i]
			case m[1] == "objects" && i < len(p.s.ObjectLines):
				line = p.s.ObjectLines[i]
			}
		}
		return p.errf(line, "%s: %s", pe.Field, pe.Msg)
	}
	return p.errf(p.seen["scenario"], "the plan is not valid: %v", err)
}
