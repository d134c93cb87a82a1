package scenarios

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

const wellFormed = `# Intro paragraph one,
# still one.
#
# Intro paragraph two.
scenario tiny
title    A tiny scenario
edge     B7, 8
source   k/k#1: the first
source   k/k PR #2
seed     42
deadline 1m
quiet    45s
kubelet  readyAfter=1s
param    workers=2
faults   {latency: {kind: fixed, max: 100}, expireOnRewatch: 0.5}

# The object.
object {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default}, data: {k: "v", n: no, y: "1"}}

# A step with an indented body.
at 1s user create
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: b
    namespace: default

# A fault.
at 2500ms faults break pods target=bellerophon
at 3s faults stale-replica lag=3 for=10s
at 4s user patch configmaps default/a {data: {k: w}}
at 5s controller crash midReconcile=true
at 6s faults fail-next pods verb=list code=429
----
# Why the first.
bellerophon: eventual-convergence=pass tombstones=fail
naivecache: *=unknown
`

func TestParseReadsEveryDirectiveOfAWellFormedFile(t *testing.T) {
	s, err := Parse("data/tiny.txt", []byte(wellFormed))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "tiny" || s.Title != "A tiny scenario" || s.Plan.Name != "tiny" {
		t.Errorf("name/title = %q/%q/%q", s.Name, s.Title, s.Plan.Name)
	}
	if got := s.EdgeLabels(); got != "B7, B8" {
		t.Errorf("edges = %q, want B7, B8", got)
	}
	if len(s.Sources) != 2 || s.Sources[0] != (Source{"k/k#1", "the first"}) || s.Sources[1] != (Source{Ref: "k/k PR #2"}) {
		t.Errorf("sources = %+v", s.Sources)
	}
	p := s.Plan
	if p.Version != sim.PlanVersion || p.Seed != 42 || p.Deadline.D() != time.Minute || p.Quiet.D() != 45*time.Second || p.Kubelet == nil || p.Kubelet.ReadyAfter.D() != time.Second || p.SubjectParams["workers"] != "2" {
		t.Errorf("plan header = %+v", p)
	}
	if p.Subject != "bellerophon" {
		t.Errorf("default subject = %q, want the first expected subject", p.Subject)
	}
	if p.Faults.ExpireOnRewatch != 0.5 || p.Faults.Latency.Kind != "fixed" {
		t.Errorf("faults = %+v", p.Faults)
	}
	if len(p.Objects) != 1 || !strings.Contains(string(p.Objects[0]), `"data":{"k":"v","n":"no","y":"1"}`) {
		t.Errorf("objects = %s", p.Objects)
	}
	if len(p.Steps) != 6 {
		t.Fatalf("steps = %d, want 6", len(p.Steps))
	}
	var created map[string]any
	if err := json.Unmarshal(p.Steps[0].Object, &created); err != nil || created["kind"] != "ConfigMap" {
		t.Errorf("step 0 object = %s (%v)", p.Steps[0].Object, err)
	}
	want := []sim.Step{
		{At: sim.Duration(2500 * time.Millisecond), Actor: "faults", Op: "break", Resource: "pods", Target: "bellerophon"},
		{At: sim.Duration(3 * time.Second), Actor: "faults", Op: "stale-replica", Lag: 3, For: sim.Duration(10 * time.Second)},
	}
	for i, w := range want {
		g := p.Steps[i+1]
		g.Object, g.Patch = nil, nil
		if g.At != w.At || g.Actor != w.Actor || g.Op != w.Op || g.Resource != w.Resource || g.Target != w.Target || g.Lag != w.Lag || g.For != w.For {
			t.Errorf("step %d = %+v, want %+v", i+1, g, w)
		}
	}
	if st := p.Steps[3]; st.Namespace != "default" || st.Name != "a" || string(st.Patch) != `{"data":{"k":"w"}}` {
		t.Errorf("patch step = %+v patch %s", st, st.Patch)
	}
	if !p.Steps[4].MidReconcile || p.Steps[5].Code != 429 || p.Steps[5].Verb != "list" {
		t.Errorf("steps 4, 5 = %+v %+v", p.Steps[4], p.Steps[5])
	}
	if s.StepLines[1] != 29 || s.ObjectLines[0] != 18 {
		t.Errorf("step 1 line = %d (want 29), object line = %d (want 18)", s.StepLines[1], s.ObjectLines[0])
	}
	if s.Narrative[0].Kind != BlockIntro || s.Narrative[0].Text != "Intro paragraph one,\nstill one.\n\nIntro paragraph two." {
		t.Errorf("intro = %+v", s.Narrative[0])
	}
	if got := s.StepNarration(1); got != "A fault." {
		t.Errorf("narration of step 1 = %q", got)
	}
	if got := s.Subjects(); strings.Join(got, ",") != "bellerophon,naivecache" {
		t.Errorf("subjects = %q", got)
	}
	if e := s.ExpectedFor("bellerophon"); len(e) != 2 || e[1].Invariant != "tombstones" || e[1].Status != invariants.Fail || e[1].Line != 36 {
		t.Errorf("expectations = %+v", e)
	}
}

func TestParseErrorsNameTheLineAndWhatToDo(t *testing.T) {
	head := "scenario x\ntitle t\nedge 7\n"
	tail := "----\nbellerophon: eventual-convergence=pass\n"
	cases := []struct {
		name, file, want string
	}{
		{"no scenario line", "title t\n", "x.txt:1: the first directive must be `scenario NAME`"},
		{"name differs from file", "scenario y\n", "x.txt:1: scenario name \"y\" differs from the file name \"x\""},
		{"unknown directive", head + "colour blue\n", "x.txt:4: unknown directive \"colour\""},
		{"bad step time", head + "at soon user create\n" + tail, "x.txt:4: step time \"soon\""},
		{"steps out of order", head + "at 2s user delete pods a\nat 1s user delete pods b\n" + tail, "x.txt:5: step at 1s comes after a step at 2s"},
		{"unknown step argument", head + "at 1s user delete pods default/a colour=red\n" + tail, "x.txt:4: step: unknown argument \"colour\" (known: resource, ns,"},
		{"object without kind", head + "object {apiVersion: v1, metadata: {name: a}}\n" + tail, "x.txt:4: object: field kind is missing"},
		{"unbalanced braces", head + "object {apiVersion: v1, kind: ConfigMap\n" + tail, "x.txt:4: object: unbalanced braces"},
		{"bad faults field", head + "faults {lateness: 3}\n", "x.txt:4: faults: json: unknown field \"lateness\""},
		{"bad status", head + "at 1s user delete pods a\n----\nbellerophon: eventual-convergence=ok\n", "x.txt:6: expectation eventual-convergence=ok: the status must be pass, fail or unknown"},
		{"no steps", head + tail, "x.txt:5: no steps"},
		{"header after timeline", head + "at 1s user delete pods a\nseed 3\n" + tail, "x.txt:5: seed must come before the first `object` or `at` line"},
		{"duplicate header", head + "seed 1\nseed 2\n", "x.txt:5: seed given twice (first on line 4)"},
		{"bad kubelet", head + "kubelet ready=1s\n", "x.txt:4: kubelet \"ready=1s\": write `kubelet readyAfter=1s`"},
		{"edge out of range", "scenario x\ntitle t\nedge 29\n", "x.txt:3: edge \"29\": give EDGE-CASES.md entry numbers 1..28"},
		{"deadline before last step", head + "deadline 1s\nat 2s user delete pods a\n" + tail, "x.txt:4: deadline 1s is before the last step (at 2s)"},
		{"field the op does not use", head + "at 1s user patch-status bellerophons default/web target=x {status: {phase: x}}\n" + tail, "x.txt:4: steps[0].target: not used by op patch-status"},
		{"competitor without a patch", head + "competitor configmaps delay=1s\nat 1s user delete pods a\n" + tail, "x.txt:4: competitor: give the merge patch"},
		{"competitor with a bad delay", head + "competitor configmaps delay=soon {a: b}\nat 1s user delete pods a\n" + tail, "x.txt:4: competitor: delay=\"soon\""},
		{"update-status without a status", head + "at 1s user update-status bellerophons default/web {spec: {}}\n" + tail, "x.txt:4: steps[0].object: object lacks status"},
		{"unknown actor", head + "at 1s kubelet2 delete pods default/a\n" + tail, "x.txt:4: steps[0].actor: unknown actor \"kubelet2\""},
		{"stray indented line", head + "  apiVersion: v1\n", "x.txt:4: unexpected indented line"},
	}
	for _, tc := range cases {
		_, err := Parse("data/x.txt", []byte(tc.file))
		if err == nil {
			t.Errorf("%s: no error, want %q", tc.name, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q, want it to contain %q", tc.name, err, tc.want)
		}
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("%s: error %v does not wrap ErrSyntax", tc.name, err)
		}
	}
}

func TestNarrativeBeforeTheExpectationsEndsTheStory(t *testing.T) {
	text := "scenario x\ntitle t\nedge 7\nat 1s user delete configmaps default/a\n\n# Afterwards.\n\n# Still afterwards.\n----\n# Why.\nnaivecache: no-lost-deletes=pass\n"
	s, err := Parse("data/x.txt", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, b := range s.Narrative {
		kinds = append(kinds, string(b.Kind)+":"+b.Text)
	}
	if got := strings.Join(kinds, "|"); got != "end:Afterwards.\n\nStill afterwards.|expect:Why." {
		t.Errorf("narrative = %q", got)
	}
}

func TestCompareReportsOnlyVerdictsThatDifferFromTheExpectation(t *testing.T) {
	s, err := Parse("data/tiny.txt", []byte(wellFormed))
	if err != nil {
		t.Fatal(err)
	}
	got := s.Compare("bellerophon", []invariants.Verdict{
		{Invariant: "eventual-convergence", Status: invariants.Pass},
		{Invariant: "tombstones", Status: invariants.Pass, Reason: "every tombstone was unwrapped"},
		{Invariant: "per-object-order", Status: invariants.Fail},
	})
	if len(got) != 1 || got[0].Invariant != "tombstones" || got[0].Want != invariants.Fail || got[0].Got != invariants.Pass || got[0].Line != 36 {
		t.Errorf("mismatches = %+v, want only tombstones (want fail, got pass, line 36); per-object-order is not judged", got)
	}
	got = s.Compare("bellerophon", []invariants.Verdict{{Invariant: "eventual-convergence", Status: invariants.Pass}})
	if len(got) != 1 || got[0].Got != "" || !strings.Contains(got[0].String(), "no verdict was returned") {
		t.Errorf("a missing verdict: mismatches = %+v", got)
	}
	got = s.Compare("naivecache", []invariants.Verdict{
		{Invariant: "a", Status: invariants.Unknown},
		{Invariant: "b", Status: invariants.Fail},
	})
	if len(got) != 1 || got[0].Invariant != "b" || got[0].Want != invariants.Unknown {
		t.Errorf("a * expectation: mismatches = %+v, want b only", got)
	}
}

func TestTargetSubjectAimsAFaultAtTheSubjectUnderTest(t *testing.T) {
	text := "scenario x\ntitle t\nedge 7\nat 1s faults break pods target=subject\nat 2s faults break pods target=kubelet\n----\nbellerophon: eventual-convergence=pass\n"
	s, err := Parse("data/x.txt", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Plan.Steps[0].Target; got != "bellerophon" {
		t.Errorf("default plan: target %q, want the default subject bellerophon", got)
	}
	p := s.PlanFor("bellerophon/no-uid-check")
	if p.Steps[0].Target != "bellerophon/no-uid-check" || p.Steps[1].Target != "kubelet" {
		t.Errorf("PlanFor: targets %q, %q; want the subject's name, then kubelet unchanged", p.Steps[0].Target, p.Steps[1].Target)
	}
}

func TestPlanForCopiesThePlanForAnotherSubject(t *testing.T) {
	s, err := Parse("data/tiny.txt", []byte(wellFormed))
	if err != nil {
		t.Fatal(err)
	}
	p := s.PlanFor("naivecache")
	p.Steps[0].Op = "changed"
	p.SubjectParams["workers"] = "9"
	if p.Subject != "naivecache" || s.Plan.Subject != "bellerophon" || s.Plan.Steps[0].Op != "create" || s.Plan.SubjectParams["workers"] != "2" {
		t.Errorf("PlanFor shares state with the scenario: %+v", s.Plan)
	}
}

func TestNearNamesFindsTyposAndFragments(t *testing.T) {
	known := []string{"tombstone-after-410", "delete-recreate-during-gap", "crash-mid-reconcile", "conflict-stale-copy"}
	for name, want := range map[string]string{
		"tombstone-after-401": "tombstone-after-410",
		"tombstone":           "tombstone-after-410",
		"crash-mid-reconcil":  "crash-mid-reconcile",
		"delete-recreate":     "delete-recreate-during-gap",
	} {
		if got := NearNames(name, known); len(got) == 0 || got[0] != want {
			t.Errorf("NearNames(%q) = %q, want %q first", name, got, want)
		}
	}
	if got := NearNames("zzz", known); len(got) != 0 {
		t.Errorf("NearNames(zzz) = %q, want none", got)
	}
}

func TestGetOfAnUnknownNameListsTheNearNames(t *testing.T) {
	_, err := Get("tombstone-after-401")
	if !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), ": did you mean tombstone-after-410?") {
		t.Errorf("Get error = %v, want ErrUnknown suggesting tombstone-after-410", err)
	}
}

func TestEveryBuiltInScenarioParsesAndCoversTheEdgeCaseSections(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]int{}
	for _, s := range all {
		if len(s.Sources) == 0 {
			t.Errorf("%s: no source: every scenario names the upstream issue or PR it comes from", s.File)
		}
		if len(s.Narrative) == 0 {
			t.Errorf("%s: no narrative", s.File)
		}
		for _, n := range s.EdgeCases {
			sections[EdgeSection(n)]++
		}
		if got, err := Get(s.Name); err != nil || got != s {
			t.Errorf("Get(%q) = %v, %v", s.Name, got, err)
		}
	}
	if testing.Short() {
		return
	}
	for _, sec := range []string{"A", "B", "C", "D", "E"} {
		if sections[sec] == 0 {
			t.Errorf("no built-in scenario shows an edge case of section %s of EDGE-CASES.md", sec)
		}
	}
	if len(all) < 8 {
		t.Errorf("%d built-in scenarios, want at least 8", len(all))
	}
}

// A user's own file: no title, edge or expectations, no subject (the
// controller under test runs it), a competitor, and status steps that name
// their object and give only its status.
func TestAUserScenarioFileNeedsNoTitleEdgeOrExpectations(t *testing.T) {
	src := `scenario mine
# Another writer labels every Foo; the user scales web and sets its status.
competitor foos delay=500ms {metadata: {labels: {owner: other}}}
object {apiVersion: example.com/v1, kind: Foo, metadata: {name: web, namespace: default}, spec: {replicas: 1}}
at 1s user patch foos default/web {spec: {replicas: 3}}
at 2s user update-status foos default/web {status: {phase: Ready}}
at 3s competitor patch-status foos default/web {status: {phase: Degraded}}
`
	s, err := Parse("mine.txt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Plan.Subject != "" || len(s.Expect) != 0 || s.Title != "" {
		t.Errorf("subject %q, %d expectations, title %q: want none", s.Plan.Subject, len(s.Expect), s.Title)
	}
	c := s.Plan.Competitor
	if c == nil || c.Resource != "foos" || c.Delay.D() != 500*time.Millisecond || string(c.Patch) != `{"metadata":{"labels":{"owner":"other"}}}` {
		t.Errorf("competitor %+v", c)
	}
	st := s.Plan.Steps[1]
	if st.Op != "update-status" || st.Name != "web" || string(st.Object) != `{"status":{"phase":"Ready"}}` {
		t.Errorf("update-status step %+v", st)
	}
	if ps := s.Plan.Steps[2]; ps.Op != "patch-status" || string(ps.Patch) != `{"status":{"phase":"Degraded"}}` {
		t.Errorf("patch-status step %+v", ps)
	}
	if p := s.PlanFor("my-controller"); p.Subject != "my-controller" || p.Validate() != nil {
		t.Errorf("PlanFor: subject %q, validation %v", p.Subject, p.Validate())
	}
	if err := s.ValidateSubjects([]string{"bellerophon"}); err != nil {
		t.Errorf("a file naming no subject is run with the one under test: %v", err)
	}
	// The built-in catalogue requires what a user's file may leave out.
	err = CheckCatalogue(s)
	for _, want := range []string{"mine.txt:1: no `title`", "no `edge`", "mine.txt:7: no expectations"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckCatalogue: %v, want %q", err, want)
		}
	}
	// FormatPlan writes the competitor and the status steps back in the
	// file's syntax.
	out := FormatPlan(s.PlanFor("my-controller"))
	for _, want := range []string{`competitor foos delay=500ms {"metadata":{"labels":{"owner":"other"}}}`,
		`at 2s user update-status foos default/web {"status":{"phase":"Ready"}}`,
		`at 3s competitor patch-status foos default/web {"status":{"phase":"Degraded"}}`} {
		if !strings.Contains(out, want) {
			t.Errorf("FormatPlan lacks %q:\n%s", want, out)
		}
	}
}
