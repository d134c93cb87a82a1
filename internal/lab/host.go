package lab

import (
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"
)

// Host runs body with a *testing.T, which synctest bubbles need. It returns
// false when the testing framework reports a failure (a run that failed its
// *testing.T, for example a bubble with goroutines left running), and the
// framework's own output for such failures.
//
// A command gets its T from MainHost; a test passes its own T with TestHost.
type Host func(body func(t *testing.T)) (ok bool, output string)

// TestHost runs body in a subtest of t, so that parallel subtests started
// by body finish before it returns.
func TestHost(t *testing.T) Host {
	return func(body func(t *testing.T)) (bool, string) {
		ok := t.Run("cachelab", body)
		return ok, ""
	}
}

var mainHostOnce sync.Mutex

// MainHost runs body as the only test of a testing.M built with
// testing.MainStart, the way `go test` binaries run tests. It can be used
// once per process: the testing package's flags and state are global. The
// testing framework's own output (PASS/FAIL lines, logs of failed runs) is
// captured and returned rather than printed.
func MainHost(parallel int) Host {
	return func(body func(t *testing.T)) (bool, string) {
		mainHostOnce.Lock()
		defer mainHostOnce.Unlock()
		tests := []testing.InternalTest{{Name: "cachelab", F: body}}
		m := testing.MainStart(noDeps{}, tests, nil, nil, nil)
		if parallel < 1 {
			parallel = 1
		}
		// m.Run parses the process's flags unless already parsed: parse
		// none, then set the few testing flags we rely on.
		if !flag.Parsed() {
			_ = flag.CommandLine.Parse(nil)
		}
		_ = flag.Set("test.parallel", fmt.Sprint(parallel))
		_ = flag.Set("test.timeout", "0")

		// testing prints PASS/FAIL and failure logs on os.Stdout: capture.
		saved := os.Stdout
		tmp, err := os.CreateTemp("", "cachelab-testing-*.log")
		if err == nil {
			os.Stdout = tmp
		}
		code := m.Run()
		os.Stdout = saved
		var out []byte
		if tmp != nil {
			_, _ = tmp.Seek(0, io.SeekStart)
			out, _ = io.ReadAll(tmp)
			tmp.Close()
			os.Remove(tmp.Name())
		}
		if code == 0 {
			return true, ""
		}
		return false, string(out)
	}
}

// noDeps implements the testing package's testDeps for MainStart: no
// profiling, fuzzing or coverage; every test matches.
type noDeps struct{}

func (noDeps) ImportPath() string                          { return "github.com/cachelab/cachelab/cmd/cachelab" }
func (noDeps) ModulePath() string                          { return "github.com/cachelab/cachelab" }
func (noDeps) MatchString(pat, str string) (bool, error)   { return true, nil }
func (noDeps) SetPanicOnExit0(bool)                        {}
func (noDeps) StartCPUProfile(io.Writer) error             { return nil }
func (noDeps) StopCPUProfile()                             {}
func (noDeps) StartTestLog(io.Writer)                      {}
func (noDeps) StopTestLog() error                          { return nil }
func (noDeps) WriteProfileTo(string, io.Writer, int) error { return nil }
func (noDeps) CoordinateFuzzing(time.Duration, int64, time.Duration, int64, int, []corpusEntry, []reflect.Type, string, string) error {
	return nil
}
func (noDeps) RunFuzzWorker(func(corpusEntry) error) error              { return nil }
func (noDeps) ReadCorpus(string, []reflect.Type) ([]corpusEntry, error) { return nil, nil }
func (noDeps) CheckCorpus([]any, []reflect.Type) error                  { return nil }
func (noDeps) ResetCoverage()                                           {}
func (noDeps) SnapshotCoverage()                                        {}
func (noDeps) InitRuntimeCoverage() (string, func(string, string) (string, error), func() float64) {
	return "", nil, nil
}

// corpusEntry is the testing package's corpusEntry (an alias of this
// unnamed struct type), so noDeps satisfies its testDeps interface.
type corpusEntry = struct {
	Parent     string
	Path       string
	Data       []byte
	Values     []any
	Generation int
	IsSeed     bool
}
