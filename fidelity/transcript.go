package fidelity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/google/go-cmp/cmp"
)

// Transcript is the normalized answers of one case from one server, as
// committed under testdata/transcripts/<case>.json.
type Transcript struct {
	// Case is the case's name.
	Case string `json:"case"`
	// Doc is what the case shows.
	Doc string `json:"doc,omitempty"`
	// Server is the version of the server that produced the answers
	// ("v1.37.1" for a real kube-apiserver).
	Server string `json:"server"`
	// Recorded is when (UTC, RFC 3339).
	Recorded string `json:"recorded,omitempty"`
	// Error is set when the case itself failed (not a server answer).
	Error string `json:"error,omitempty"`
	// Steps are the normalized answers, one per step.
	Steps []Answer `json:"steps"`
}

// RunCase runs c against the server of cfg (whose namespace must exist)
// and returns its raw answers. An error means the case's own logic failed
// (the answers so far are returned too).
func RunCase(ctx context.Context, c Case, cfg EnvConfig) (raw []RawAnswer, err error) {
	e, err := newEnv(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		e.closeWatches()
		if p := recover(); p != nil {
			f, ok := p.(caseFailure)
			if !ok {
				err = fmt.Errorf("fidelity: case %s panicked: %v\n%s", c.Name, p, debug.Stack())
			} else {
				err = fmt.Errorf("fidelity: case %s: %w", c.Name, f.err)
			}
		}
		raw = e.answers
	}()
	c.Run(e)
	return e.answers, nil
}

// TranscriptPath is where a case's transcript lives under dir.
func TranscriptPath(dir, name string) string { return filepath.Join(dir, name+".json") }

// ReadTranscript reads a case's transcript from dir.
func ReadTranscript(dir, name string) (Transcript, error) {
	var t Transcript
	data, err := os.ReadFile(TranscriptPath(dir, name))
	if err != nil {
		return t, fmt.Errorf("fidelity: transcript of %s: %w (record it with `make fidelity-record`)", name, err)
	}
	if err := json.Unmarshal(data, &t); err != nil {
		return t, fmt.Errorf("fidelity: transcript %s: %w", TranscriptPath(dir, name), err)
	}
	if t.Case != name {
		return t, fmt.Errorf("fidelity: transcript %s is of case %q", TranscriptPath(dir, name), t.Case)
	}
	return t, nil
}

// WriteTranscript writes t to dir (indented JSON, a newline at the end).
func WriteTranscript(dir string, t Transcript) error {
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(TranscriptPath(dir, t.Case), append(data, '\n'), 0o644)
}

// Difference is one step where two servers answered differently.
type Difference struct {
	Case string
	// Step is the step's name ("" when the step lists differ in length and
	// one side has no such step: then Index says where).
	Step string
	// Index is the step's position in the case (0-based).
	Index int
	// Real and Fake are the two answers (nil when a side has no such step).
	Real, Fake *Answer
}

// String shows the two answers side by side, as a diff (- real, + fake).
func (d Difference) String() string {
	return fmt.Sprintf("case %s, step %d %q (-real +fake):\n%s", d.Case, d.Index+1, d.Step, cmp.Diff(d.Real, d.Fake))
}

// Compare returns the steps of one case where the real server's answers
// and the fake's differ.
func Compare(name string, real, fake []Answer) []Difference {
	var out []Difference
	for i := 0; i < max(len(real), len(fake)); i++ {
		d := Difference{Case: name, Index: i}
		if i < len(real) {
			d.Real, d.Step = &real[i], real[i].Step
		}
		if i < len(fake) {
			d.Fake = &fake[i]
			if d.Step == "" {
				d.Step = fake[i].Step
			}
		}
		if d.Real == nil || d.Fake == nil || !cmp.Equal(*d.Real, *d.Fake) {
			out = append(out, d)
		}
	}
	return out
}

// KnownDifference is a difference kept on purpose, listed in
// testdata/known-differences.json.
type KnownDifference struct {
	// Case and Step name the step whose answers differ.
	Case string `json:"case"`
	Step string `json:"step"`
	// Why the fake keeps answering differently.
	Why string `json:"why"`
}

// ReadKnownDifferences reads the list of kept differences.
func ReadKnownDifferences(path string) ([]KnownDifference, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []KnownDifference
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("fidelity: %s: %w", path, err)
	}
	for i, k := range out {
		if k.Case == "" || k.Step == "" || k.Why == "" {
			return nil, fmt.Errorf("fidelity: %s: entry %d: case, step and why are all required", path, i+1)
		}
	}
	return out, nil
}

// Verdict sorts the differences of a run against the list of kept ones:
// unlisted are differences nobody decided to keep; stale are listed
// differences that no longer differ (the list must then shrink).
func Verdict(diffs []Difference, known []KnownDifference, casesRun map[string]bool) (unlisted []Difference, stale []KnownDifference) {
	type key struct{ c, s string }
	listed := map[key]bool{}
	for _, k := range known {
		listed[key{k.Case, k.Step}] = true
	}
	seen := map[key]bool{}
	for _, d := range diffs {
		k := key{d.Case, d.Step}
		if listed[k] {
			seen[k] = true
			continue
		}
		unlisted = append(unlisted, d)
	}
	for _, k := range known {
		if casesRun[k.Case] && !seen[key{k.Case, k.Step}] {
			stale = append(stale, k)
		}
	}
	return unlisted, stale
}
