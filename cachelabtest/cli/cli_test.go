package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

func TestMain(m *testing.M) {
	sim.PrepareClientGo() // as main does
	if args := os.Getenv(childArgsEnv); args != "" {
		// A child process of a test: cachelab itself (see runChild).
		os.Exit(childMain(args))
	}
	os.Exit(m.Run())
}

// run calls the command's entry function in-process, as main does, with a
// host that runs bubbles under t.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb, Host: lab.TestHost(t), Prog: "cachelab"}
	code = Main(args, env)
	return code, out.String(), errb.String()
}

func TestListShowsScenariosSubjectsAndInvariants(t *testing.T) {
	code, out, errs := run(t, "list")
	if code != ExitOK {
		t.Fatalf("list exited %d: %s", code, errs)
	}
	for _, want := range []string{
		"SCENARIOS (", "tombstone-after-410", "B7", "A delete missed during a watch gap",
		"SUBJECTS (", "naivecache",
		"INVARIANTS (",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("list output lacks %q:\n%s", want, out)
		}
	}
}

func TestExplainTellsTheStoryStepByStepWithSourcesAndExpectations(t *testing.T) {
	code, out, errs := run(t, "explain", "delete-recreate-during-gap")
	if code != ExitOK {
		t.Fatalf("explain exited %d: %s", code, errs)
	}
	for _, want := range []string{
		"delete-recreate-during-gap: Delete + recreate during a watch gap",
		"Edge cases: B8",
		"  - k/k#69376: ReplicaSet stuck",
		"What happens",
		"  # ... and the user deletes \"web\". The finalizer keeps it terminating",
		"  at 11s    user delete bellerophons default/web",
		"Expected verdicts",
		"bellerophon/no-uid-check: eventual-convergence=fail",
		"    # The mutant keys its expectations by name",
		"Run it: cachelab run delete-recreate-during-gap",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain output lacks %q:\n%s", want, out)
		}
	}
	// The narration of a step comes right before the step.
	if i, j := strings.Index(out, "and the user deletes \"web\""), strings.Index(out, "user delete bellerophons default/web"); i < 0 || j < i {
		t.Errorf("the step's narration is not printed before the step:\n%s", out)
	}
}

func TestUnknownScenarioErrorListsTheNearNames(t *testing.T) {
	for _, args := range [][]string{{"explain", "tombstone-after-401"}, {"run", "tombstone-after-401"}} {
		code, out, errs := run(t, args...)
		if code != ExitUsage {
			t.Errorf("%q exited %d, want %d (usage)", args, code, ExitUsage)
		}
		want := `unknown scenario "tombstone-after-401": did you mean tombstone-after-410?`
		if !strings.Contains(errs, want) || !strings.Contains(errs, "Run `cachelab list` to see every scenario") {
			t.Errorf("%q stderr = %q, want it to contain %q and point to `cachelab list`", args, errs, want)
		}
		if out != "" {
			t.Errorf("%q printed on stdout: %q", args, out)
		}
	}
}

func TestUnknownCommandAndFlagSayWhatToDo(t *testing.T) {
	code, _, errs := run(t, "runn")
	if code != ExitUsage || !strings.Contains(errs, `unknown command "runn": did you mean`) || !strings.Contains(errs, " run") {
		t.Errorf("runn: code %d, stderr %q", code, errs)
	}
	code, _, errs = run(t, "run", "--bogus")
	if code != ExitUsage || !strings.Contains(errs, "flag provided but not defined: -bogus") || !strings.Contains(errs, "cachelab run --help") {
		t.Errorf("run --bogus: code %d, stderr %q", code, errs)
	}
	code, _, errs = run(t, "run", "--subject", "bellerophn")
	if code != ExitUsage || !strings.Contains(errs, `unknown subject "bellerophn"`) {
		t.Errorf("run --subject bellerophn: code %d, stderr %q", code, errs)
	}
}

func TestEveryCommandHasHelpWithAnExample(t *testing.T) {
	for _, c := range commands() {
		code, out, _ := run(t, c.name, "--help")
		if code != ExitOK {
			t.Errorf("%s --help exited %d", c.name, code)
		}
		if !strings.Contains(out, "Usage: cachelab "+c.name) || !strings.Contains(out, "Example:\n  cachelab "+c.name) {
			t.Errorf("%s --help lacks usage or example:\n%s", c.name, out)
		}
	}
	// A command with flags lists each of them under Flags:.
	for cmd, flags := range map[string][]string{
		"run": {"-random", "-seed", "-subject", "-out", "-timeout", "-shard"}, "merge": {"-out"}, "replay": {"-subject"}, "report": {"-o"},
		"serve": {"-crd", "-faults", "-address"}, "bench": {"-runs", "-access", "-procs"},
		"admin": {"-kubeconfig", "-resource-version", "-reset", "-f", "-o", "-abrupt"},
	} {
		_, out, _ := run(t, cmd, "--help")
		_, fl, ok := strings.Cut(out, "\nFlags:\n")
		for _, f := range flags {
			if !ok || !strings.Contains(fl, "  "+f+" ") && !strings.Contains(fl, "  "+f+"\n") {
				t.Errorf("%s --help does not list %s under Flags:\n%s", cmd, f, out)
			}
		}
	}
	code, out, _ := run(t, "--help")
	if code != ExitOK || !strings.Contains(out, "Commands:") {
		t.Errorf("--help: code %d\n%s", code, out)
	}
}

func TestParseInterspersedAcceptsFlagsAfterNames(t *testing.T) {
	fs, o := runFlags()
	pos, err := parseInterspersed(fs, []string{"a", "--subject", "s", "b", "--out=x", "--", "--c"})
	if err != nil || strings.Join(pos, ",") != "a,b,--c" || o.subject != "s" || o.out != "x" {
		t.Errorf("pos=%q subject=%q out=%q err=%v", pos, o.subject, o.out, err)
	}
}

func TestBadPlanFileErrorNamesTheFieldAndLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.json")
	plan := `{
  "version": 1,
  "seed": 3,
  "subject": "naivecache",
  "steps": [
    {"at": "1s", "actor": "user", "op": "delete", "resource": "configmaps", "namespace": "default", "name": "a"},
    {"at": "2s", "actor": "kubelet2", "op": "delete"}
  ]
}
`
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"run", "replay"} {
		code, _, errs := run(t, cmd, path)
		if code != ExitUsage {
			t.Errorf("%s of a bad plan exited %d, want %d", cmd, code, ExitUsage)
		}
		want := path + `:7: steps[1].actor: unknown actor "kubelet2" (known: user, competitor, kubelet, faults, controller)`
		if !strings.Contains(errs, want) {
			t.Errorf("%s stderr = %q, want it to contain %q", cmd, errs, want)
		}
	}
}

func TestBadScenarioFileErrorNamesTheLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mine.txt")
	text := "scenario mine\ntitle t\nedge 7\nat 1s user delete configmaps default/a colour=red\n----\nnaivecache: no-lost-deletes=pass\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := run(t, "explain", path)
	want := path + `:4: step: unknown argument "colour"`
	if code != ExitUsage || !strings.Contains(errs, want) {
		t.Errorf("code %d, stderr %q, want it to contain %q", code, errs, want)
	}
}

// TestRunOfOneScenarioWritesTheOutFilesAndReplaysThem runs a built-in
// scenario for one subject, checks every file it writes, then replays the
// written plan and the written trace.
func TestRunOfOneScenarioWritesTheOutFilesAndReplaysThem(t *testing.T) {
	out := t.TempDir()
	code, stdout, errs := run(t, "run", "tombstone-after-410", "--subject", "naivecache", "--out", out)
	if code != ExitOK {
		t.Fatalf("run exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, errs)
	}
	// The naive cache fails no-lost-deletes as the scenario expects: an
	// expected failure, reported as caught, and the run is "ok".
	if !strings.Contains(stdout, "ok    tombstone-after-410  naivecache") || !strings.Contains(stdout, "caught as expected: eventual-convergence, no-lost-deletes") {
		t.Errorf("run output lacks the ok line with the caught failure:\n%s", stdout)
	}
	if !strings.Contains(stdout, "1 run in ") || !strings.Contains(stdout, "1 as expected, 0 unexpected") {
		t.Errorf("run output lacks the summary:\n%s", stdout)
	}
	dir := filepath.Join(out, "tombstone-after-410", "naivecache")
	for _, f := range []string{"plan.json", "trace.jsonl", "report.html", "verdicts.json"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil || st.Size() == 0 {
			t.Errorf("%s: %v (size %d)", f, err, sizeOf(st))
		}
	}
	for _, f := range []string{"index.html", "junit.xml"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if f == "index.html" && !strings.Contains(string(b), `href="tombstone-after-410/naivecache/report.html"`) {
			t.Errorf("index.html does not link the run's report")
		}
		if f == "junit.xml" && (!strings.Contains(string(b), `failures="0"`) || !strings.Contains(string(b), "pass no-lost-deletes")) {
			t.Errorf("junit.xml should pass the expected failure and say so:\n%s", b)
		}
	}
	if !strings.Contains(stdout, "Reports: "+filepath.Join(out, "index.html")) {
		t.Errorf("run does not print where the index is:\n%s", stdout)
	}

	// Replay the written plan: same scenario, judged again, compared with
	// the trace written next to it, both traces kept.
	// It reproduces the expected failure: replay exits 1, saying why.
	code, stdout, errs = run(t, "replay", filepath.Join(dir, "plan.json"))
	if code != ExitUnexpected || !strings.Contains(stdout, "exit 1: the replayed run failed eventual-convergence, no-lost-deletes, as its scenario expects") {
		t.Fatalf("replay exited %d, want %d with why\nstdout:\n%s\nstderr:\n%s", code, ExitUnexpected, stdout, errs)
	}
	for _, want := range []string{
		"judged by scenario tombstone-after-410",
		"fail    no-lost-deletes",
		"fault schedule: same fault schedule as the recorded trace",
		"kept both traces: recorded " + filepath.Join(dir, "trace.jsonl") + ", replayed " + filepath.Join(dir, "trace.replay.jsonl"),
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("replay output lacks %q:\n%s", want, stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "trace.replay.jsonl")); err != nil {
		t.Errorf("the replayed trace was not kept: %v", err)
	}

	// A trace file replays too: its header holds the plan.
	code, stdout, _ = run(t, "replay", filepath.Join(dir, "trace.jsonl"))
	if code != ExitUnexpected || !strings.Contains(stdout, "fault schedule: same") {
		t.Errorf("replay of the trace exited %d:\n%s", code, stdout)
	}

	// And report renders a trace on its own.
	html := filepath.Join(t.TempDir(), "r.html")
	code, stdout, errs = run(t, "report", filepath.Join(dir, "trace.jsonl"), "-o", html)
	if code != ExitOK || !strings.Contains(stdout, "wrote "+html) || !strings.Contains(stdout, "no-lost-deletes") {
		t.Errorf("report exited %d: %s %s", code, stdout, errs)
	}
}

func TestRunOfAPlanThatFailsUnexpectedlyExitsNonZeroAndPrintsTheReplayCommand(t *testing.T) {
	// The scenario expects naivecache to fail no-lost-deletes; run it as a
	// bare plan file, where no expectation applies: every fail counts.
	s, err := scenarios.Get("tombstone-after-410")
	if err != nil {
		t.Fatal(err)
	}
	p := s.PlanFor("naivecache")
	p.Name = "my-plan"
	path := filepath.Join(t.TempDir(), "my-plan.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Save(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := t.TempDir()
	code, stdout, _ := run(t, "run", path, "--out", out)
	if code != ExitUnexpected {
		t.Errorf("exit %d, want %d", code, ExitUnexpected)
	}
	replay := "replay: cachelab replay " + filepath.Join(out, "my-plan", "naivecache", "plan.json")
	if !strings.Contains(stdout, "FAIL  my-plan  naivecache") || !strings.Contains(stdout, "unexpected: no-lost-deletes") || !strings.Contains(stdout, replay) {
		t.Errorf("output lacks the FAIL line, the unexpected verdict or %q:\n%s", replay, stdout)
	}
}

func TestRandomRunsAreNamedBySeed(t *testing.T) {
	code, stdout, errs := run(t, "run", "--random", "2", "--seed", "40", "--subject", "informer-realfifo", "--out", "")
	if code == ExitUsage {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"random-40", "random-41", "2 runs in "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

func sizeOf(st os.FileInfo) int64 {
	if st == nil {
		return 0
	}
	return st.Size()
}

func TestWatchdogNamesTheRunsStillGoingAndExits(t *testing.T) {
	var errb bytes.Buffer
	exited := make(chan int, 1)
	env := &Env{Stderr: &errb, Exit: func(code int) { exited <- code }}
	started := time.Now()
	stop := watchdog(env, 10*time.Millisecond, func() map[string]time.Time { return map[string]time.Time{"a/bellerophon": started} })
	defer stop()
	if code := <-exited; code != ExitUnexpected {
		t.Errorf("exit code %d, want %d", code, ExitUnexpected)
	}
	if !strings.Contains(errb.String(), "a run took longer than 10ms (--timeout): a/bellerophon") {
		t.Errorf("stderr = %q", errb.String())
	}
}

// The limit is per run: a campaign of 10,000 short runs on a busy machine
// takes longer than --timeout and is not stopped (it was, at 6,993 runs
// after 10 minutes, when the limit was the whole batch's).
func TestWatchdogLimitsEachRunNotTheBatch(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	running := map[string]time.Time{
		"random-1/bellerophon": now.Add(-11 * time.Minute),
		"random-2/bellerophon": now.Add(-9 * time.Minute),
		"random-3/bellerophon": now.Add(-10*time.Minute - time.Nanosecond),
	}
	got := overdue(now, running, 10*time.Minute)
	want := []string{"random-1/bellerophon", "random-3/bellerophon"}
	if !slices.Equal(got, want) {
		t.Errorf("overdue = %q, want %q", got, want)
	}
	if got := overdue(now, map[string]time.Time{"random-2/bellerophon": now.Add(-time.Minute)}, 10*time.Minute); len(got) != 0 {
		t.Errorf("a run of 1 minute is overdue under a 10 minute limit: %q", got)
	}
}

func TestServeRejectsABadFaultProfileAndStrayArgumentsBeforeListening(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "faults.json")
	if err := os.WriteFile(bad, []byte(`{"errorRate": 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "serve", "--faults", bad, "--kubeconfig", filepath.Join(dir, "kc"), "--trace", "")
	if code != ExitUsage || !strings.Contains(stderr, "cachelab serve:") || !strings.Contains(stderr, "errorRate") {
		t.Fatalf("serve with errorRate 2: exit %d, stderr %q; want exit %d naming errorRate", code, stderr, ExitUsage)
	}
	code, _, stderr = run(t, "serve", "--crd", filepath.Join(dir, "missing.yaml"), "--kubeconfig", filepath.Join(dir, "kc"), "--trace", "", "--address", "127.0.0.1:0")
	if code != ExitUsage || !strings.HasPrefix(stderr, "cachelab serve: CRD file") || !strings.Contains(stderr, "missing.yaml") {
		t.Fatalf("serve with a missing CRD file: exit %d, stderr %q; want exit %d, prefixed once, naming the file", code, stderr, ExitUsage)
	}
	code, _, stderr = run(t, "serve", "now")
	if code != ExitUsage || !strings.Contains(stderr, "takes no arguments") {
		t.Fatalf("serve now: exit %d, stderr %q; want a usage error", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "kc")); err == nil {
		t.Fatal("a refused serve wrote a kubeconfig")
	}
}

func TestClientGoErrorLogsStayOffTheTerminal(t *testing.T) {
	// As main sets klog up; an ERROR line still went to stderr.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	if code, _, errs := run(t, "version"); code != ExitOK {
		os.Stderr = saved
		t.Fatalf("version exited %d: %s", code, errs)
	}
	klog.ErrorS(errors.New("injected by cachelab's fault policy"), "Failed to watch")
	klog.Flush()
	os.Stderr = saved
	w.Close()
	got, _ := io.ReadAll(r)
	if len(got) > 0 {
		t.Errorf("client-go's klog wrote to stderr during a command: %q", got)
	}
}

// TestWrongInputsSayWhatWasWrongAndWhatToGiveInstead hands each command
// the wrong kind of file or value a new user might: a run's folder, a plan
// where a trace is wanted, a scenario where a plan is wanted, a cut-short
// trace, a duration without its unit, a negative count.
func TestWrongInputsSayWhatWasWrongAndWhatToGiveInstead(t *testing.T) {
	dir := t.TempDir()
	runDir := filepath.Join(dir, "random-1", "bellerophon")
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := scenarios.Get("tombstone-after-410")
	if err != nil {
		t.Fatal(err)
	}
	p := s.PlanFor("naivecache")
	var buf bytes.Buffer
	if err := p.Save(&buf); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(runDir, lab.PlanFile)
	cut := filepath.Join(dir, "cut.jsonl")
	scen := filepath.Join(dir, "mine.txt")
	verdicts := filepath.Join(runDir, lab.VerdictsFile)
	for name, data := range map[string]string{
		verdicts: "{\n  \"version\": 1,\n  \"scenario\": \"random-1\",\n  \"subject\": \"bellerophon\",\n  \"seed\": 1,\n  \"status\": \"pass\",\n  \"records\": 3,\n  \"verdicts\": []\n}\n",
		plan:     buf.String(),
		cut:      "{\"version\":1,\"records\":3}\n{\"pos\":0,\"at\":\"0s\",\"ki",
		scen:     "# my scenario\nscenario mine\n",
	} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", runDir}, runDir + " is a folder: give one of its files, " + plan},
		{[]string{"report", runDir}, runDir + " is a folder: give one of its files, " + plan},
		{[]string{"run", runDir}, runDir + " is a folder"},
		{[]string{"explain", dir}, dir + " is a folder: give a scenario name"},
		{[]string{"report", plan}, plan + " is a plan, not a trace: `cachelab replay " + plan + "` runs it"},
		{[]string{"explain", plan}, "not a scenario file: `cachelab replay " + plan + "` runs it again"},
		{[]string{"replay", scen}, scen + " is a scenario file, not a plan: run it with `cachelab run " + scen + "`"},
		{[]string{"report", cut, "-o", filepath.Join(dir, "r.html")}, cut + " is cut short"},
		{[]string{"replay", filepath.Join(dir, "nope.json")}, "nope.json: no such file: give a plan.json or trace.jsonl"},
		{[]string{"run", "--timeout", "5", "--random", "1"}, "--timeout takes a duration with its unit"},
		{[]string{"run", "--random", "-3"}, "--random must be the number of random plans to run (1 or more), got -3"},
		{[]string{"serve", "--kubelet=maybe"}, "--kubelet takes true or false"},
		{[]string{"serve", "--kubelet-ready-after", "-5s"}, "--kubelet-ready-after must be a duration of 0 or more (as 2s), got -5s"},
		{[]string{"run", "--parallel", "-1", "--random", "1"}, "--parallel must be the number of runs at a time (1 or more), got -1"},
		{[]string{"report", verdicts}, verdicts + " is a run's verdicts (verdicts.json), not a trace"},
		{[]string{"replay", verdicts}, verdicts + " is a run's verdicts (verdicts.json), not a plan"},
		{[]string{"version", "--short"}, `takes no arguments or flags, got ["--short"]`},
	} {
		code, out, errs := run(t, c.args...)
		if code != ExitUsage {
			t.Errorf("%q exited %d, want %d (usage); stdout %s", c.args, code, ExitUsage, out)
		}
		if !strings.Contains(errs, c.want) {
			t.Errorf("%q: stderr lacks %q:\n%s", c.args, c.want, errs)
		}
		if strings.Contains(errs, "goroutine ") || strings.Contains(errs, "panic") {
			t.Errorf("%q: a panic or stack trace:\n%s", c.args, errs)
		}
	}
}

func TestExplainAndRunCheckAScenarioFilesSubjectsAndInvariantsAtTheirLine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mine.txt")
	text := "scenario mine\ntitle t\nedge 7\nat 1s user delete configmaps default/a\n----\nnaivecach: no-lost-delete=fail\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"explain", "run"} {
		code, _, errs := run(t, cmd, file)
		if code != ExitUsage {
			t.Errorf("%s of a file with an unknown subject exited %d, want %d", cmd, code, ExitUsage)
		}
		for _, want := range []string{
			file + `: unknown subject "naivecach": did you mean naivecache?`, // the plan's subject: no line (scenarios)
			file + `:6: unknown invariant "no-lost-delete": did you mean no-lost-deletes?`,
		} {
			if !strings.Contains(errs, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", cmd, want, errs)
			}
		}
	}
}

// TestReplayOfAStandalonePlanKeepsItsTraceForReport: `cachelab report
// plan.json` says replay writes the trace; it does, beside the plan.
func TestReplayOfAStandalonePlanKeepsItsTraceForReport(t *testing.T) {
	dir := t.TempDir()
	s, err := scenarios.Get("tombstone-after-410")
	if err != nil {
		t.Fatal(err)
	}
	p := s.PlanFor("naivecache")
	var buf bytes.Buffer
	if err := p.Save(&buf); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(dir, "mine.json")
	if err := os.WriteFile(plan, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, errs := run(t, "replay", plan)
	want := filepath.Join(dir, "mine.replay.jsonl")
	if !strings.Contains(out, "trace: "+want) {
		t.Errorf("replay does not name the trace it wrote:\n%s\n%s", out, errs)
	}
	if _, err := os.Stat(want); err != nil {
		t.Fatalf("no trace beside the plan: %v", err)
	}
	if code, _, errs := run(t, "report", want, "-o", filepath.Join(dir, "r.html")); code != 0 {
		t.Errorf("report of the replay's trace exited %d: %s", code, errs)
	}
}

// TestExploreReportsCoverageAndSavesEachFailingSchedule: a small plan
// whose every schedule within one deviation fails no-duplicate-children
// (bellerophon/timeout-as-failure in unknown-outcome-write; the plan of
// no-read-your-writes used before failed only by its 409s, which issue 27
// made a measurement); the
// summary gives the coverage, each failing schedule is saved with its
// replay command, and the saved plan of a schedule the reduction did not
// run replays exactly the schedule it predicted, failing the same way.
func TestExploreReportsCoverageAndSavesEachFailingSchedule(t *testing.T) {
	out := t.TempDir()
	code, stdout, errs := run(t, "explore", filepath.Join("testdata", "explore-timeout-as-failure-unknown-outcome-write.json"), "--deviations", "1", "--out", out)
	if code != ExitUnexpected {
		t.Fatalf("exit %d, want %d (failing schedules): %s\n%s", code, ExitUnexpected, errs, stdout)
	}
	// How many schedules one deviation reaches follows from the canonical
	// run's choice points (the subject's handler and worker turns are
	// choice points too): the summary must count them all covered, and
	// every one failed.
	covered := regexp.MustCompile(`(\d+) distinct schedules covered: (\d+) run, (\d+) equivalent to one run`).FindStringSubmatch(stdout)
	if covered == nil || covered[1] == "1" {
		t.Fatalf("no coverage summary over more than one schedule:\n%s", stdout)
	}
	n, _ := strconv.Atoi(covered[1])
	ran, _ := strconv.Atoi(covered[2])
	equiv, _ := strconv.Atoi(covered[3])
	if ran+equiv != n || equiv == 0 {
		t.Errorf("covered %d = %d run + %d equivalent: want the sum, with some left to the reduction", n, ran, equiv)
	}
	for _, want := range []string{"covered the whole space within the bound", fmt.Sprintf("%d of %d schedules failed", n, n), "replay: cachelab replay "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	m := regexp.MustCompile(`\(not run: equivalent to schedule \d+\): \[no-duplicate-children[^\]]*\]\n    replay: cachelab replay (\S+)`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no failing schedule left unrun by the reduction, with its replay command:\n%s", stdout)
	}
	saved, err := sim.LoadPlanFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, errs = run(t, "replay", m[1])
	if code == ExitUsage || !strings.Contains(stdout, "fail    no-duplicate-children") {
		t.Fatalf("replaying %s: exit %d, no no-duplicate-children failure: %s\n%s", m[1], code, errs, stdout)
	}
	tr, err := sim.ReadTraceFile(strings.TrimSuffix(m[1], ".json") + ".replay.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if diff := sim.DiffDeliverySchedules(saved.Schedule, tr.Schedule); diff != "" {
		t.Fatalf("the replay did not release the predicted schedule: %s", diff)
	}
	if code, _, errs := run(t, "explore", "delete-recreate-during-gap", "--deviations", "0"); code != ExitUsage || !strings.Contains(errs, "--deviations must be at least 1") {
		t.Errorf("--deviations 0: exit %d, %q", code, errs)
	}
}

// replay exits 1 when the replayed run fails a property (it reproduces a
// failure, as docs/errors-and-expectations.md says) and 0 when it fails
// none: the correct controller's run of the same scenario.
func TestReplayExitsOneWhenItReproducesAFailureAndZeroWhenNothingFails(t *testing.T) {
	out := t.TempDir()
	if code, stdout, errs := run(t, "run", "tombstone-after-410", "--out", out); code != ExitOK {
		t.Fatalf("run exited %d\n%s\n%s", code, stdout, errs)
	}
	for subject, want := range map[string]int{"naivecache": ExitUnexpected, "informer-realfifo": ExitOK} {
		code, stdout, errs := run(t, "replay", filepath.Join(out, "tombstone-after-410", subject, "plan.json"))
		if code != want {
			t.Errorf("replay of %s exited %d, want %d\n%s\n%s", subject, code, want, stdout, errs)
		}
	}
}

// A campaign's summary says how many property verdicts could not judge,
// unknown and n/a apart, and why (issue 27 item 3).
func TestRunSummarySaysHowManyVerdictsCouldNotJudge(t *testing.T) {
	code, stdout, errs := run(t, "run", "--random", "2", "--seed", "40", "--subject", "informer-realfifo", "--out", "")
	if code == ExitUsage {
		t.Fatalf("exit %d: %s", code, errs)
	}
	t.Log(stdout)
	if !regexp.MustCompile(`Could not judge, of \d+ property verdicts in 2 runs, \d+ unknown \(\d+\.\d%\), \d+ n/a \(\d+\.\d%\)`).MatchString(stdout) {
		t.Errorf("output lacks the share of verdicts that could not judge:\n%s", stdout)
	}
}

// TestTimeToBugChoosesEveryMutantByDefault: without --subject, every
// mutant (names hold a '/', which a path.Match "*" does not cross);
// checked through the subjects chosen, not by running them: a --max of 0
// is refused before anything runs, and a pattern matching nothing says so.
func TestTimeToBugChoosesEveryMutantByDefault(t *testing.T) {
	var stderr strings.Builder
	env := &Env{Stdout: io.Discard, Stderr: &stderr, Prog: "cachelab"}
	if code := Main([]string{"time-to-bug", "--subject", "nothing/*"}, env); code != ExitUsage || !strings.Contains(stderr.String(), "no mutant matches") {
		t.Errorf("a pattern matching nothing: exit %d, %q", code, stderr.String())
	}
	if got := timeToBugSubjects(""); len(got) < 12 {
		t.Errorf("the default chose %d mutants, want every mutant: %v", len(got), got)
	}
	if got := timeToBugSubjects("bellerophon/*"); len(got) == 0 || len(got) >= len(timeToBugSubjects("")) {
		t.Errorf("bellerophon/* chose %v", got)
	}
}
