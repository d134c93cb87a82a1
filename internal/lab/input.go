package lab

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// File kinds a user may hand to a command, as sniffed by SniffFile.
const (
	KindPlan     = "plan"
	KindTrace    = "trace"
	KindScenario = "scenario"
	KindHTML     = "html"
	// KindVerdicts is a run's verdicts.json (reports.JSON).
	KindVerdicts = "verdicts"
	KindOther    = "other"
)

// CheckFile returns an error that says what to give instead when path
// cannot be read as a file: it does not exist, or it is a folder (a run's
// folder names the files inside it that would do). want describes the
// file the command needs ("a plan.json or trace.jsonl written by `cachelab
// run`").
func CheckFile(path, want string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such file: give %s", path, want)
	case err != nil:
		return fmt.Errorf("cannot read %s: %w (give %s)", path, err, want)
	case st.IsDir():
		var inside []string
		for _, f := range []string{PlanFile, TraceFile} {
			if _, err := os.Stat(filepath.Join(path, f)); err == nil {
				inside = append(inside, filepath.Join(path, f))
			}
		}
		if len(inside) > 0 {
			return fmt.Errorf("%s is a folder: give one of its files, %s", path, strings.Join(inside, " or "))
		}
		return fmt.Errorf("%s is a folder: give %s", path, want)
	}
	return nil
}

// SniffFile guesses what kind of file path is from its first line: a
// trace (JSON Lines with a header), a plan (a JSON object), a scenario
// file, an HTML report, or other. It returns KindOther when it cannot
// read the file.
func SniffFile(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return KindOther
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	first, _, _ := bytes.Cut(head, []byte("\n"))
	line := bytes.TrimSpace(first)
	switch {
	case isTraceHeader(line):
		return KindTrace
	case bytes.Equal(line, []byte("{")) && bytes.Contains(head, []byte("\n  \"verdicts\":")):
		return KindVerdicts // reports.JSON's document, indented
	case bytes.Equal(line, []byte("{")):
		return KindPlan // as `cachelab run` writes a plan: indented
	case bytes.HasPrefix(line, []byte("{")) && !bytes.Contains(line, []byte(`"plan":`)):
		return KindPlan
	case bytes.HasPrefix(line, []byte("<")):
		return KindHTML
	case bytes.HasPrefix(line, []byte("#")) || bytes.HasPrefix(line, []byte("scenario ")):
		return KindScenario
	}
	return KindOther
}
