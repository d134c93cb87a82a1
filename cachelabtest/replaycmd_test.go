package cachelabtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The replay command a failure prints runs as printed from the module's
// root, where `go test ./...` is run: it names the package, and the plan
// path it gives is the one the test binary (started in the package's
// folder) reads: relative to the package when the plan is inside it, else
// absolute.
func TestTheReplayCommandRunsFromTheModuleRoot(t *testing.T) {
	root := filepath.Dir(startDir)
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("this test expects the package one folder below the module's root: %v", err)
	}
	rep := &reporter{top: "TestX/sub case"}
	inside := filepath.Join("testdata", "cachelab", "TestX", "plan.json")
	cmd := rep.replayCommand(inside)
	want := "go test ./cachelabtest -run '^TestX$/^sub case$' -v -cachelab.plan=testdata/cachelab/TestX/plan.json"
	if cmd != want {
		t.Fatalf("replay command\n  %s\nwant\n  %s", cmd, want)
	}
	// From the module's root, go test runs the binary in ./cachelabtest:
	// the plan path resolves there.
	pkg := strings.Fields(cmd)[2]
	if got := filepath.Join(root, pkg, "testdata", "cachelab", "TestX", "plan.json"); got != filepath.Join(startDir, inside) {
		t.Errorf("the plan resolves to %s from the module's root, want %s", got, filepath.Join(startDir, inside))
	}
	// A plan outside the package's folder (a test that moved to a scratch
	// folder) is given by its absolute path, quoted for the shell.
	dir := t.TempDir()
	outside := filepath.Join(dir, "a b", "plan.json")
	if cmd := rep.replayCommand(outside); !strings.HasSuffix(cmd, "-cachelab.plan='"+outside+"'") {
		t.Errorf("replay command %q: want the absolute path %q, quoted", cmd, outside)
	}
}
