package reports

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cachelab/cachelab/invariants"
)

// JSONVersion is the version of the document JSON writes.
const JSONVersion = 1

// jsonReport is the document JSON writes; its field order is the output's.
type jsonReport struct {
	Version  int               `json:"version"`
	Scenario string            `json:"scenario"`
	Subject  string            `json:"subject"`
	Seed     uint64            `json:"seed"`
	Status   invariants.Status `json:"status"`
	Outcome  string            `json:"outcome,omitempty"`
	End      string            `json:"end,omitempty"`
	Records  int               `json:"records"`
	Replay   string            `json:"replay,omitempty"`
	Verdicts []jsonVerdict     `json:"verdicts"`
}

// jsonVerdict mirrors invariants.Verdict with a field order owned here, so
// the output stays stable if the contract grows.
type jsonVerdict struct {
	Invariant string `json:"invariant"`
	// Status is pass, fail or unknown for a property; sound, unsound or
	// unknown for a measurement (Measurement true).
	Status      string `json:"status"`
	Measurement bool   `json:"measurement,omitempty"`
	// NotApplicable marks an unknown property the subject gave nothing
	// to judge (invariants.Verdict.NotApplicable).
	NotApplicable bool   `json:"notApplicable,omitempty"`
	Reason        string `json:"reason"`
	Positions     []int  `json:"positions,omitempty"`
	// At is where the evidence departs (the first failure); Trigger what
	// set it in motion.
	At      *int   `json:"at,omitempty"`
	Trigger *int   `json:"trigger,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// JSON writes run's verdicts as an indented JSON document for CI: version,
// scenario, subject, seed, overall status (fail if any property failed,
// unknown if any is unknown; measurements never count, see OverallStatus),
// the trace's outcome, end and record count,
// the replay command and the verdicts, always in that order. Trace may be
// nil; the plan (Run.Plan or Trace.Plan) is required.
func JSON(w io.Writer, run Run) error {
	p := run.plan()
	if p == nil {
		return ErrNoPlan
	}
	doc := jsonReport{
		Version:  JSONVersion,
		Scenario: p.Name,
		Subject:  p.Subject,
		Seed:     p.Seed,
		Status:   OverallStatus(run.Verdicts),
		Replay:   run.ReplayCommand,
		Verdicts: make([]jsonVerdict, 0, len(run.Verdicts)),
	}
	if t := run.Trace; t != nil {
		doc.Outcome = t.Outcome
		doc.End = t.End.String()
		doc.Records = run.recordCount()
	}
	for _, v := range run.Verdicts {
		doc.Verdicts = append(doc.Verdicts, jsonVerdict{
			Invariant: v.Invariant, Status: v.Label(), Measurement: v.Measurement || invariants.IsMeasurement(v.Invariant),
			NotApplicable: v.NotApplicable && v.Status == invariants.Unknown, Reason: v.Reason,
			Positions: v.Positions, At: v.At, Trigger: v.Trigger, Detail: v.Detail,
		})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("reports: encoding JSON: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// JUnit XML documents, as Jenkins, GitLab and GitHub reporters read them.
type junitSuite struct {
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",cdata"`
}

// junitText is an element whose text is written as CDATA, so that newlines
// and quotes stay readable in the file.
type junitText struct {
	Text string `xml:",cdata"`
}

// JUnitSuiteName is the name of the one testsuite JUnit writes.
const JUnitSuiteName = "cachelab"

// JUnit writes runs as a JUnit XML document for CI: one testsuite
// ("cachelab"), one testcase per run named "<scenario>/<subject>" in the
// order given. A run with a failed verdict gets a <failure> listing each
// failed invariant's reason, positions and detail, then the replay
// command; a run whose trace outcome is "error: ..." gets an <error>; a run
// with no verdict at all is <skipped>. Unknown verdicts and measurements
// (sound or unsound sync definitions) do not fail a testcase and are
// listed in its system-out. Every run needs a plan.
func JUnit(w io.Writer, runs []Run) error {
	suite := junitSuite{Name: JUnitSuiteName, Cases: make([]junitCase, 0, len(runs))}
	for i, run := range runs {
		p := run.plan()
		if p == nil {
			return fmt.Errorf("reports: JUnit run %d (title %q): %w", i, run.Title, ErrNoPlan)
		}
		c := junitCase{Name: caseName(p), Classname: JUnitSuiteName + "." + nameOr(p.Name, "unnamed")}
		var failed, unknown, passed, measured []invariants.Verdict
		for _, v := range run.Verdicts {
			switch {
			case v.Measurement || invariants.IsMeasurement(v.Invariant):
				measured = append(measured, v)
			case v.Status == invariants.Fail:
				failed = append(failed, v)
			case v.Status == invariants.Pass:
				passed = append(passed, v)
			default:
				unknown = append(unknown, v)
			}
		}
		if run.Trace != nil && strings.HasPrefix(run.Trace.Outcome, "error") {
			c.Error = &junitProblem{Message: run.Trace.Outcome, Type: "run-error", Body: withReplay("the run itself failed: "+run.Trace.Outcome+"\n", run.ReplayCommand)}
			suite.Errors++
		}
		switch {
		case len(failed) > 0:
			names := make([]string, len(failed))
			var body strings.Builder
			for j, v := range failed {
				names[j] = v.Invariant
				writeVerdict(&body, v)
			}
			c.Failure = &junitProblem{
				Message: fmt.Sprintf("%d of %d invariants failed: %s", len(failed), len(run.Verdicts)-len(measured), strings.Join(names, ", ")),
				Type:    "invariant",
				Body:    withReplay(body.String(), run.ReplayCommand),
			}
			suite.Failures++
		case len(run.Verdicts) == 0 && c.Error == nil:
			c.Skipped = &junitProblem{Message: "no invariant was checked"}
			suite.Skipped++
		}
		var out strings.Builder
		fmt.Fprintf(&out, "seed %d", p.Seed)
		if run.Trace != nil {
			fmt.Fprintf(&out, ", %d records, ended %s at %s", run.recordCount(), nameOr(run.Trace.Outcome, "(no outcome)"), run.Trace.End)
		}
		out.WriteString("\n")
		for _, v := range passed {
			fmt.Fprintf(&out, "pass %s\n", v.Invariant)
		}
		for _, v := range unknown {
			fmt.Fprintf(&out, "unknown %s: %s\n", v.Invariant, v.Reason)
		}
		for _, v := range measured {
			fmt.Fprintf(&out, "measured %s %s: %s\n", v.Label(), v.Invariant, v.Reason)
		}
		c.SystemOut = &junitText{Text: out.String()}
		suite.Cases = append(suite.Cases, c)
	}
	suite.Tests = len(suite.Cases)
	b, err := xml.MarshalIndent(suite, "", "  ")
	if err != nil {
		return fmt.Errorf("reports: encoding JUnit XML: %w", err)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// writeVerdict writes a failed verdict for a JUnit failure body.
func writeVerdict(b *strings.Builder, v invariants.Verdict) {
	fmt.Fprintf(b, "%s: %s\n", v.Invariant, v.Reason)
	if len(v.Positions) > 0 {
		ps := make([]string, len(v.Positions))
		for i, p := range v.Positions {
			ps[i] = "#" + strconv.Itoa(p)
		}
		fmt.Fprintf(b, "  trace positions: %s\n", strings.Join(ps, " "))
	}
	if v.Detail != "" {
		for _, line := range strings.Split(strings.TrimRight(v.Detail, "\n"), "\n") {
			fmt.Fprintf(b, "  | %s\n", line)
		}
	}
}

func withReplay(body, cmd string) string {
	if cmd == "" {
		return body
	}
	return body + "replay: " + cmd + "\n"
}
