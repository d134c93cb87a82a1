package reports

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/invariants"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ (review the diff before committing)")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s: review the diff before committing", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file: %v (run `go test ./reports -run %s -update` to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output; if the change is intended, rerun with -update and review the diff.\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

func TestJSONOfFailingRunMatchesGolden(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, fixtureFailing()); err != nil {
		t.Fatal(err)
	}
	golden(t, "failing.json", b.Bytes())
}

func TestJSONStatesOverallStatusAndKeepsPositions(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, fixtureFailing()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Scenario string `json:"scenario"`
		Subject  string `json:"subject"`
		Seed     uint64 `json:"seed"`
		Status   string `json:"status"`
		Records  int    `json:"records"`
		Verdicts []struct {
			Invariant string `json:"invariant"`
			Positions []int  `json:"positions"`
		} `json:"verdicts"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("JSON output does not parse: %v\n%s", err, b.Bytes())
	}
	if doc.Scenario != "missed-delete-during-disconnect" || doc.Subject != "naivecache" || doc.Seed != 42 {
		t.Errorf("scenario/subject/seed = %q/%q/%d, want missed-delete-during-disconnect/naivecache/42", doc.Scenario, doc.Subject, doc.Seed)
	}
	if doc.Status != "fail" || doc.Records != 24 || len(doc.Verdicts) != 3 {
		t.Errorf("status=%q records=%d verdicts=%d, want fail, 24, 3", doc.Status, doc.Records, len(doc.Verdicts))
	}
	if got := doc.Verdicts[0].Positions; len(got) != 3 || got[0] != 22 || got[1] != 20 || got[2] != 23 {
		t.Errorf("convergence positions = %v, want [22 20 23]", got)
	}
}

func TestJSONWithoutPlanSaysWhatToSet(t *testing.T) {
	err := JSON(&bytes.Buffer{}, Run{})
	if !errors.Is(err, ErrNoPlan) || !strings.Contains(err.Error(), "Run.Plan") {
		t.Fatalf("JSON(Run{}) error = %v, want ErrNoPlan naming Run.Plan", err)
	}
}

func TestJUnitOfThreeRunsMatchesGolden(t *testing.T) {
	var b bytes.Buffer
	if err := JUnit(&b, []Run{fixtureFailing(), fixturePassing(), fixtureErrored()}); err != nil {
		t.Fatal(err)
	}
	golden(t, "runs.junit.xml", b.Bytes())
}

func TestJUnitHasOneTestcasePerScenarioAndSubject(t *testing.T) {
	var b bytes.Buffer
	if err := JUnit(&b, []Run{fixtureFailing(), fixturePassing(), fixtureErrored()}); err != nil {
		t.Fatal(err)
	}
	var suite struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Body    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(b.Bytes(), &suite); err != nil {
		t.Fatalf("JUnit output does not parse as XML: %v\n%s", err, b.Bytes())
	}
	if suite.Name != "cachelab" || suite.Tests != 3 || suite.Failures != 1 || suite.Errors != 1 {
		t.Errorf("suite %q tests=%d failures=%d errors=%d, want cachelab 3 1 1", suite.Name, suite.Tests, suite.Failures, suite.Errors)
	}
	want := []string{"missed-delete-during-disconnect/naivecache", "missed-delete-during-disconnect/bellerophon", "broken-run/legacy-deltafifo"}
	for i, w := range want {
		if i >= len(suite.Cases) || suite.Cases[i].Name != w {
			t.Fatalf("testcases = %+v, want names %v", suite.Cases, want)
		}
	}
	f := suite.Cases[0].Failure
	if f == nil {
		t.Fatal("the failing run has no <failure>")
	}
	for _, s := range []string{"convergence", "still holds default/web-1", "#22 #20 #23", "cachelab replay out/missed-delete-during-disconnect/naivecache/plan.json"} {
		if !strings.Contains(f.Body, s) {
			t.Errorf("failure body lacks %q:\n%s", s, f.Body)
		}
	}
	if suite.Cases[1].Failure != nil || suite.Cases[1].Error != nil {
		t.Errorf("the passing run has a failure or error: %+v", suite.Cases[1])
	}
	if e := suite.Cases[2].Error; e == nil || !strings.Contains(e.Message, `no such resource "widgets"`) {
		t.Errorf("the errored run's <error> = %+v, want the trace outcome", e)
	}
}

func TestJUnitNamesTheRunWithoutPlan(t *testing.T) {
	err := JUnit(&bytes.Buffer{}, []Run{fixturePassing(), {Title: "orphan"}})
	if !errors.Is(err, ErrNoPlan) || !strings.Contains(err.Error(), "run 1") || !strings.Contains(err.Error(), "orphan") {
		t.Fatalf("error = %v, want ErrNoPlan naming run 1 \"orphan\"", err)
	}
}

func TestOverallStatusFailBeatsUnknownBeatsPass(t *testing.T) {
	p := invariants.Verdict{Status: invariants.Pass}
	u := invariants.Verdict{Status: invariants.Unknown}
	f := invariants.Verdict{Status: invariants.Fail}
	cases := []struct {
		vs   []invariants.Verdict
		want invariants.Status
	}{
		{nil, invariants.Unknown},
		{[]invariants.Verdict{p, p}, invariants.Pass},
		{[]invariants.Verdict{p, u}, invariants.Unknown},
		{[]invariants.Verdict{u, f, p}, invariants.Fail},
	}
	for _, c := range cases {
		if got := OverallStatus(c.vs); got != c.want {
			t.Errorf("OverallStatus(%v) = %s, want %s", c.vs, got, c.want)
		}
	}
}
