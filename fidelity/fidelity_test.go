package fidelity

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cachelab/cachelab/fakeapi"
	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
)

const (
	transcriptDir  = "testdata/transcripts"
	knownDiffsPath = "testdata/known-differences.json"
	// fakeWait bounds waits on the fake (virtual time: free).
	fakeWait = 30 * time.Second
)

// runOnFake runs c against a fresh fake server over the in-memory pipe,
// inside a synctest bubble, and returns its normalized answers.
func runOnFake(t *testing.T, c Case) ([]Answer, error) {
	t.Helper()
	var (
		raw    []RawAnswer
		runErr error
	)
	synctest.Test(t, func(t *testing.T) {
		// Configured as the real server and `cachelab serve` are
		// (NewFakeServer turns on what they always have).
		srv, err := NewFakeServer(fakeapi.Options{})
		if err != nil {
			t.Fatal(err)
		}
		pipe := fakehttp.NewPipe(fakehttp.NewHandler(srv, fakehttp.Options{}))
		defer pipe.Close()
		defer srv.Close()
		ctx := context.Background()
		cfg := pipe.RESTConfig("fidelity")
		// The user agent the recording's requests carried on the wire (a
		// bare rest.RESTClientFor sets none, so Go's HTTP client sends its
		// own); the default fieldManager of a write comes from it. The
		// typed clientset sets client-go's own on both.
		cfg.UserAgent = "Go-http-client/2.0"
		if err := createNamespace(ctx, cfg, c.Namespace()); err != nil {
			t.Fatal(err)
		}
		raw, runErr = RunCase(ctx, c, EnvConfig{
			Namespace: c.Namespace(),
			Config:    cfg,
			Compact:   func(context.Context) error { return srv.Compact(srv.ResourceVersion()) },
			Wait:      fakeWait,
		})
	})
	return Normalize(raw), runErr
}

func TestCorpusHasAtLeastFortyUniquelyNamedCases(t *testing.T) {
	if len(Cases) < 40 {
		t.Errorf("the corpus has %d cases, want at least 40", len(Cases))
	}
	label := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	seen := map[string]bool{}
	for _, c := range Cases {
		if seen[c.Name] {
			t.Errorf("case %s is listed twice", c.Name)
		}
		seen[c.Name] = true
		if !label.MatchString(c.Namespace()) || len(c.Namespace()) > 63 {
			t.Errorf("case %s: namespace %q is not a DNS label", c.Name, c.Namespace())
		}
		if c.Doc == "" {
			t.Errorf("case %s has no Doc", c.Name)
		}
	}
}

// TestCorpusMatchesRealKubeAPIServer replays every case against the fake
// and compares its normalized answers with the transcript recorded from a
// real kube-apiserver. Differences listed in known-differences.json are
// kept on purpose; any other fails, and so does a listed one that no
// longer differs.
func TestCorpusMatchesRealKubeAPIServer(t *testing.T) {
	if _, err := os.Stat(transcriptDir); os.IsNotExist(err) {
		t.Skipf("no transcripts in %s yet: record them with `make fidelity-record`", transcriptDir)
	}
	known, err := ReadKnownDifferences(knownDiffsPath)
	if err != nil {
		t.Fatal(err)
	}
	var all []Difference
	ran := map[string]bool{}
	identical := 0
	for _, c := range Cases {
		want, err := ReadTranscript(transcriptDir, c.Name)
		if err != nil {
			t.Error(err)
			continue
		}
		if want.Error != "" {
			t.Errorf("case %s: the recording failed (%s): record again", c.Name, want.Error)
			continue
		}
		got, err := runOnFake(t, c)
		if err != nil {
			t.Errorf("case %s failed on the fake: %v", c.Name, err)
			continue
		}
		ran[c.Name] = true
		diffs := Compare(c.Name, want.Steps, got)
		if len(diffs) == 0 {
			identical++
		}
		all = append(all, diffs...)
	}
	unlisted, stale := Verdict(all, known, ran)
	for _, d := range unlisted {
		t.Errorf("the fake differs from kube-apiserver: %s", d)
	}
	for _, k := range stale {
		t.Errorf("known difference no longer differs: case %s, step %q (%s): remove it from %s", k.Case, k.Step, k.Why, knownDiffsPath)
	}
	t.Logf("%d/%d cases identical to the recorded transcripts; %d kept differences", identical, len(Cases), len(known))
}

// TestComparisonFailsOnATamperedTranscript proves the comparison can
// fail: a recorded answer with one changed field is an unlisted
// difference naming its case and step.
func TestComparisonFailsOnATamperedTranscript(t *testing.T) {
	c := caseNamed(t, "update-stale-resource-version")
	got, err := runOnFake(t, c)
	if err != nil {
		t.Fatal(err)
	}
	if d := Compare(c.Name, got, got); len(d) != 0 {
		t.Fatalf("a run compared with itself differs: %v", d)
	}
	tampered := append([]Answer(nil), got...)
	i := stepIndex(t, tampered, "update a with the first resourceVersion")
	tampered[i].Code = 200
	tampered[i].Reason = ""
	diffs := Compare(c.Name, tampered, got)
	if len(diffs) != 1 || diffs[0].Step != "update a with the first resourceVersion" {
		t.Fatalf("want one difference at the tampered step, got %v", diffs)
	}
	if s := diffs[0].String(); !strings.Contains(s, c.Name) || !strings.Contains(s, "Conflict") {
		t.Errorf("the difference does not show the case and both answers:\n%s", s)
	}
	unlisted, _ := Verdict(diffs, nil, map[string]bool{c.Name: true})
	if len(unlisted) != 1 {
		t.Errorf("an unlisted difference was not reported: %v", unlisted)
	}
	// Listed, it is kept; listed but gone, it is stale.
	known := []KnownDifference{{Case: c.Name, Step: "update a with the first resourceVersion", Why: "test"}}
	if unlisted, stale := Verdict(diffs, known, map[string]bool{c.Name: true}); len(unlisted) != 0 || len(stale) != 0 {
		t.Errorf("a listed difference: unlisted %v, stale %v", unlisted, stale)
	}
	if _, stale := Verdict(nil, known, map[string]bool{c.Name: true}); len(stale) != 1 {
		t.Errorf("a listed difference that no longer differs is not stale: %v", stale)
	}
	// A missing step differs too.
	if d := Compare(c.Name, got, got[:len(got)-1]); len(d) != 1 || d[0].Fake != nil {
		t.Errorf("a missing step: %v", d)
	}
}

func caseNamed(t *testing.T, name string) Case {
	t.Helper()
	for _, c := range Cases {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no case %s", name)
	return Case{}
}

func stepIndex(t *testing.T, answers []Answer, step string) int {
	t.Helper()
	for i, a := range answers {
		if a.Step == step {
			return i
		}
	}
	t.Fatalf("no step %q in %v", step, answers)
	return -1
}

// TestDumpFakeTranscripts writes the fake's transcripts to the directory
// in CACHELAB_FIDELITY_DUMP, to read them beside the real ones.
func TestDumpFakeTranscripts(t *testing.T) {
	dir := os.Getenv("CACHELAB_FIDELITY_DUMP")
	if dir == "" {
		t.Skip("set CACHELAB_FIDELITY_DUMP=DIR to write the fake's transcripts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range Cases {
		got, err := runOnFake(t, c)
		tr := Transcript{Case: c.Name, Doc: c.Doc, Server: fakehttp.DefaultVersion.GitVersion, Steps: got}
		if err != nil {
			tr.Error = err.Error()
		}
		if err := WriteTranscript(dir, tr); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("wrote %d transcripts to %s", len(Cases), filepath.Clean(dir))
}
