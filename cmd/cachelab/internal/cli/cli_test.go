package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/cmd/cachelab/internal/lab"
)

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
		"  # While it is disconnected, the user deletes \"web\" ...",
		"  at 5.1s   user delete bellerophons default/web",
		"Expected verdicts",
		"bellerophon/no-uid-check: eventual-convergence=fail",
		"    # The mutant keys its state by name only",
		"Run it: cachelab run delete-recreate-during-gap",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain output lacks %q:\n%s", want, out)
		}
	}
	// The narration of a step comes right before the step.
	if i, j := strings.Index(out, "the user deletes \"web\""), strings.Index(out, "user delete bellerophons default/web"); i < 0 || j < i {
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
	if code != ExitUsage || !strings.Contains(errs, `unknown command "runn": did you mean run?`) {
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
