package scenarios

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// Scenario is one named edge case: a Plan, the story that explains it, where
// it comes from, and how each subject is expected to fare.
type Scenario struct {
	// Name is the scenario's name; it is also its file's base name.
	Name string
	// Title is one line saying what the scenario shows.
	Title string
	// EdgeCases are the entry numbers of EDGE-CASES.md it shows (1..28).
	EdgeCases []int
	// Sources are the upstream issues and PRs the scenario comes from.
	Sources []Source
	// Narrative is the story, paragraph blocks in file order; a block written
	// just before a step narrates that step.
	Narrative []Block
	// Plan is the run. Plan.Subject is the scenario's default subject; a run
	// for another subject copies the Plan and sets Subject (see PlanFor).
	Plan sim.Plan
	// Expect are the expected verdicts, in file order.
	Expect []Expectation
	// Claims are the story's checkable sentences, in file order (see Claim).
	Claims []Claim
	// File is where the scenario was read from ("data/x.txt" for built-ins).
	File string
	// StepLines[i] is the line of Plan.Steps[i] in File.
	StepLines []int
	// ObjectLines[i] is the line of Plan.Objects[i] in File.
	ObjectLines []int

	// subjectTargets are the steps written with target=subject.
	subjectTargets []int
	// lastLine is the file's last non-blank line.
	lastLine int
}

// TargetSubject, as a step's target in a scenario file, stands for the
// subject under test: a fault aimed at "the controller" whichever subject
// runs (subjects' clients are named after them, "bellerophon/no-uid-check").
const TargetSubject = "subject"

// Source is one upstream reference.
type Source struct {
	// Ref is the reference as written ("k/k#69376", "k/k PR #82572").
	Ref string
	// Note says what the reference shows; optional.
	Note string
}

// String formats the source as written in a scenario file.
func (s Source) String() string {
	if s.Note == "" {
		return s.Ref
	}
	return s.Ref + ": " + s.Note
}

// BlockKind says what a narrative block is attached to.
type BlockKind string

// The kinds of narrative block.
const (
	// BlockIntro is narrative before the first object or step.
	BlockIntro BlockKind = "intro"
	// BlockObject narrates an initial object (Block.Index into Plan.Objects).
	BlockObject BlockKind = "object"
	// BlockStep narrates a step (Block.Index into Plan.Steps).
	BlockStep BlockKind = "step"
	// BlockExpect explains an expectation line (Block.Index into Expect,
	// the first expectation of that line).
	BlockExpect BlockKind = "expect"
	// BlockEnd is narrative after the last directive of the timeline.
	BlockEnd BlockKind = "end"
	// BlockClaim explains a claim (Block.Index into Claims).
	BlockClaim BlockKind = "claim"
)

// Block is one block of `#` narrative: paragraphs separated by a lone `#`.
type Block struct {
	Kind  BlockKind
	Index int
	// Text is the block's text; paragraphs are separated by "\n\n", lines
	// within a paragraph are joined with "\n".
	Text string
	// Line is the line of the block's first `#`.
	Line int
}

// Expectation is the expected status of one invariant for one subject.
type Expectation struct {
	Subject string
	// Invariant is an invariant's name, or "*" for every invariant that the
	// subject's other expectations do not name.
	Invariant string
	Status    invariants.Status
	// Line is the expectation's line in File.
	Line int
}

// Subjects returns the subjects named in the expectations, in file order.
func (s *Scenario) Subjects() []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range s.Expect {
		if !seen[e.Subject] {
			seen[e.Subject] = true
			out = append(out, e.Subject)
		}
	}
	return out
}

// ExpectedFor returns the expectations of one subject, in file order.
func (s *Scenario) ExpectedFor(subject string) []Expectation {
	var out []Expectation
	for _, e := range s.Expect {
		if e.Subject == subject {
			out = append(out, e)
		}
	}
	return out
}

// PlanFor returns a copy of the scenario's Plan that runs subject, with the
// steps written with target=subject aimed at subject's client. The copy
// shares no slice or map with the scenario.
func (s *Scenario) PlanFor(subject string) sim.Plan {
	p := s.Plan
	p.Subject = subject
	p.Objects = append(p.Objects[:0:0], p.Objects...)
	p.Steps = append(p.Steps[:0:0], p.Steps...)
	for _, i := range s.subjectTargets {
		p.Steps[i].Target = subject
	}
	if p.SubjectParams != nil {
		m := make(map[string]string, len(p.SubjectParams))
		for k, v := range p.SubjectParams {
			m[k] = v
		}
		p.SubjectParams = m
	}
	return p
}

// StepNarration returns the narrative written just before step i, or "".
func (s *Scenario) StepNarration(i int) string {
	for _, b := range s.Narrative {
		if b.Kind == BlockStep && b.Index == i {
			return b.Text
		}
	}
	return ""
}

// Mismatch is a verdict that differs from the scenario's expectation, or a
// claim of its story that its run does not bear out.
type Mismatch struct {
	Subject   string
	Invariant string
	// Claim is the claim's text, for a claim that does not hold (Invariant,
	// Want and Got are then empty, Reason says what the run shows).
	Claim string
	// Want is the expected status; Got is the verdict's status, or "" when
	// the check returned no verdict for the invariant.
	Want, Got invariants.Status
	// Reason is the verdict's reason, if any.
	Reason string
	// Line is the expectation's line in the scenario file.
	Line int
}

// String says what differs, in one line.
func (m Mismatch) String() string {
	if m.Claim != "" {
		return fmt.Sprintf("%s: the story claims %q (line %d), but %s", m.Subject, m.Claim, m.Line, m.Reason)
	}
	if m.Got == "" {
		return fmt.Sprintf("%s: %s: expected %s, but no verdict was returned for it (line %d)", m.Subject, m.Invariant, m.Want, m.Line)
	}
	return fmt.Sprintf("%s: %s: expected %s, got %s (line %d): %s", m.Subject, m.Invariant, m.Want, m.Got, m.Line, m.Reason)
}

// Compare returns the verdicts of a run of subject that differ from the
// scenario's expectations, in the order of the expectations. Invariants
// the scenario says nothing about for that subject (no line, no "*") are not
// judged. A "*" expectation applies to every verdict the subject's other
// expectations do not name.
func (s *Scenario) Compare(subject string, verdicts []invariants.Verdict) []Mismatch {
	exp := s.ExpectedFor(subject)
	byName := map[string]invariants.Verdict{}
	for _, v := range verdicts {
		byName[v.Invariant] = v
	}
	named := map[string]bool{}
	var star *Expectation
	var out []Mismatch
	for i, e := range exp {
		if e.Invariant == "*" {
			star = &exp[i]
			continue
		}
		named[e.Invariant] = true
		v, ok := byName[e.Invariant]
		switch {
		case !ok:
			out = append(out, Mismatch{Subject: subject, Invariant: e.Invariant, Want: e.Status, Line: e.Line})
		case v.Status != e.Status:
			out = append(out, Mismatch{Subject: subject, Invariant: e.Invariant, Want: e.Status, Got: v.Status, Reason: v.Reason, Line: e.Line})
		}
	}
	if star != nil {
		var rest []string
		for name := range byName {
			if !named[name] {
				rest = append(rest, name)
			}
		}
		sort.Strings(rest)
		for _, name := range rest {
			if v := byName[name]; v.Status != star.Status {
				out = append(out, Mismatch{Subject: subject, Invariant: name, Want: star.Status, Got: v.Status, Reason: v.Reason, Line: star.Line})
			}
		}
	}
	return out
}

// EdgeSection returns the section letter (A..E) of EDGE-CASES.md entry n, or
// "" if n is not an entry.
func EdgeSection(n int) string {
	switch {
	case n >= 1 && n <= 6:
		return "A"
	case n >= 7 && n <= 11:
		return "B"
	case n >= 12 && n <= 18:
		return "C"
	case n >= 19 && n <= 21:
		return "D"
	case n >= 22 && n <= 28:
		return "E"
	}
	return ""
}

// EdgeLabel formats entry n as "B7".
func EdgeLabel(n int) string { return EdgeSection(n) + fmt.Sprint(n) }

// EdgeLabels formats the scenario's edge cases as "B7, B8".
func (s *Scenario) EdgeLabels() string {
	var parts []string
	for _, n := range s.EdgeCases {
		parts = append(parts, EdgeLabel(n))
	}
	return strings.Join(parts, ", ")
}
