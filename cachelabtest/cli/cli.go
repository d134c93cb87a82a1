// Package cli is the cachelab command line: it parses flags and arguments,
// calls package cachelabtest (and scenarios, sim, invariants) and prints.
// It holds no logic of its own beyond formatting.
//
// It is public so that you can build your own cachelab binary with your
// own subjects registered (see Run): cmd/cachelab is one such binary,
// with the lab's subjects.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// Exit codes.
const (
	// ExitOK: everything went as expected.
	ExitOK = 0
	// ExitUnexpected: at least one verdict was unexpected (or a run
	// failed). For replay: the replayed run failed a property, expected
	// by its scenario or not (it reproduces a failure), or could not run.
	ExitUnexpected = 1
	// ExitUsage: bad arguments or input files.
	ExitUsage = 2
	// ExitNotReproduced: a replay did not reproduce the recorded run's
	// failed invariants (cachelab replay).
	ExitNotReproduced = 3
)

// Env is what a command runs with: its streams, and how it gets a
// *testing.T for synctest bubbles.
type Env struct {
	Stdout, Stderr io.Writer
	// Host runs the bubbles (lab.MainHost in the command, lab.TestHost in
	// tests).
	Host lab.Host
	// Prog is how the user invokes cachelab, for the replay commands it
	// prints ("cachelab", "go run ./cmd/cachelab").
	Prog string
	// TTY, when true, draws the progress bar in place.
	TTY bool
	// Exit ends the process (os.Exit when nil); only the run watchdog
	// calls it.
	Exit func(code int)
	// Getenv reads the environment (os.Getenv when nil): `run` reads
	// JOB_COMPLETION_INDEX and CACHELAB_SHARDS from it.
	Getenv func(string) string
}

// ProgName guesses how the user ran the command from os.Args[0]: a binary
// built by `go run` lives in a temporary go-build folder.
func ProgName(arg0 string) string {
	if strings.Contains(arg0, "go-build") || strings.Contains(arg0, string(filepath.Separator)+"exe"+string(filepath.Separator)) {
		return "go run ./cmd/cachelab"
	}
	return "cachelab"
}

type command struct {
	name    string
	summary string
	usage   string // after "cachelab NAME "
	example string
	run     func(env *Env, args []string) int
}

func commands() []command {
	return []command{
		{"run", "run scenarios or random plans in virtual time, write traces and reports", "[NAME|FILE ...] [--random N --seed S] [--subject S] [--out DIR]",
			"cachelab run                                  # every scenario x every subject it names\n  cachelab run tombstone-after-410 --subject bellerophon/tombstone-not-unwrapped\n  cachelab run --random 20 --seed 7             # 20 random plans against bellerophon", runCmd},
		{"replay", "re-run a saved plan (or a trace's plan) and compare with the recorded run", "FILE",
			"cachelab replay out/tombstone-after-410/bellerophon/plan.json", replayCmd},
		{"report", "render a trace file as an HTML report", "TRACE [-o FILE.html]",
			"cachelab report out/tombstone-after-410/bellerophon/trace.jsonl -o /tmp/r.html", reportCmd},
		{"list", "list the scenarios, subjects and invariants", "",
			"cachelab list", listCmd},
		{"explain", "tell a scenario's story, its sources and expected verdicts; --list: the guided course over the 28 edge cases", "NAME|FILE | --list [--html FILE]",
			"cachelab explain delete-recreate-during-gap", explainCmd},
		{"serve", "serve the fake API server in real time (TLS, token, kubeconfig, live faults) for your own controller or kubectl", "[--faults FILE] [--crd FILE] [--seed-objects FILE] [--address ADDR]",
			"cachelab serve --crd subjects/bellerophon/config/crd.yaml --faults faults.json\n  export KUBECONFIG=$PWD/out/serve/kubeconfig; kubectl get pods -w", serveCmd},
		{"admin", "call a running `cachelab serve`'s admin endpoints: compact history, change faults live, snapshot state", adminUsage, adminExample, adminCmd},
		mergeCommand(),
		benchCommand(),
		exploreCommand(),
		huntCommand(),
		timeToBugCommand(),
		{"version", "print the versions of cachelab, Go, client-go and the file formats", "",
			"cachelab version", versionCmd},
	}
}

// Main runs the command line args (without the program name) and returns
// the exit code.
func Main(args []string, env *Env) int {
	quietClientGo()
	if env.Prog == "" {
		env.Prog = "cachelab"
	}
	if len(args) == 0 || isHelp(args[0]) || args[0] == "help" {
		if len(args) > 1 && args[0] == "help" {
			return Main([]string{args[1], "--help"}, env)
		}
		usage(env.Stdout, env)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			if len(args) > 1 && hasHelp(args[1:]) {
				commandHelp(env.Stdout, env, c)
				return ExitOK
			}
			return c.run(env, args[1:])
		}
	}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	fmt.Fprintf(env.Stderr, "cachelab: unknown command %q%s\nRun `%s --help` for usage.\n", args[0], scenarios.Suggest(args[0], names), env.Prog)
	return ExitUsage
}

// quietClientGo keeps client-go's klog lines (a broken watch, a request
// error, an Event the server rejected: the faults the lab injects, which
// the trace records) off the terminal, unless $CACHELAB_KLOG is set.
// Sending klog to a discarding logger is needed: with only
// klog.SetOutput(io.Discard), klog still copies ERROR lines to stderr.
func quietClientGo() {
	if os.Getenv("CACHELAB_KLOG") == "" {
		klog.SetLogger(logr.Discard())
	}
}

func isHelp(a string) bool { return a == "-h" || a == "--help" || a == "-help" }

func hasHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelp(a) {
			return true
		}
	}
	return false
}

func usage(w io.Writer, env *Env) {
	fmt.Fprintf(w, `cachelab: see what "in sync" means for a Kubernetes controller's cache.

Real client-go informers and controllers run against an in-memory API server
that drops, delays and expires watches, in virtual time. Every run leaves a
trace, a replayable plan and an HTML report.

Usage:
  %[1]s COMMAND [arguments]

Commands:
`, env.Prog)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, `
Start here:
  %[1]s run                 # every built-in scenario, then open out/index.html
  %[1]s explain tombstone-after-410
  %[1]s COMMAND --help      # a command's flags, with an example
`, env.Prog)
}

func commandHelp(w io.Writer, env *Env, c command) {
	fmt.Fprintf(w, "Usage: %s %s %s\n\n%s.\n", env.Prog, c.name, c.usage, upperFirst(c.summary))
	if fs := flagsOf(c.name); fs != nil {
		fmt.Fprintf(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	ex := strings.ReplaceAll(c.example, "cachelab ", env.Prog+" ")
	fmt.Fprintf(w, "\nExample:\n  %s\n", ex)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// flagsOf returns a command's flag set (for help), or nil.
func flagsOf(name string) *flag.FlagSet {
	switch name {
	case "run":
		f, _ := runFlags()
		return f
	case "report":
		f, _ := reportFlags()
		return f
	case "replay":
		f, _ := replayFlags()
		return f
	case "serve":
		f, _ := serveFlags()
		return f
	case "bench":
		f, _ := benchFlags()
		return f
	case "merge":
		f, _ := mergeFlags()
		return f
	case "explore":
		f, _ := exploreFlags()
		return f
	case "hunt":
		f, _ := huntFlags()
		return f
	case "admin":
		f, _ := adminFlags("admin")
		return f
	}
	return nil
}

// parseInterspersed parses flags that may come after positional
// arguments ("run NAME --subject S") and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// newFlagSet returns a flag set whose errors are returned, not printed.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// flagError prints a flag parsing error with what to do: for a bad value,
// what the flag takes.
func flagError(env *Env, cmd string, fs *flag.FlagSet, err error) int {
	msg := err.Error()
	if name, ok := badValueFlag(msg); ok && fs != nil {
		if f := fs.Lookup(name); f != nil {
			if g, ok := f.Value.(flag.Getter); ok {
				switch g.Get().(type) {
				case time.Duration:
					msg += fmt.Sprintf(" (--%s takes a duration with its unit, such as 30s, 1m30s or 250ms)", name)
				case int, int64:
					msg += fmt.Sprintf(" (--%s takes a whole number)", name)
				case uint, uint64:
					msg += fmt.Sprintf(" (--%s takes a whole number, 0 or more)", name)
				case bool:
					msg += fmt.Sprintf(" (--%s takes true or false, as --%s=false)", name, name)
				}
			}
		}
	}
	fmt.Fprintf(env.Stderr, "cachelab %s: %s\nRun `%s %s --help` for the flags and an example.\n", cmd, msg, env.Prog, cmd)
	return ExitUsage
}

// badValueFlag returns the flag named by the flag package's "invalid value
// ... for flag -NAME: ..." error.
func badValueFlag(msg string) (string, bool) {
	_, rest, ok := strings.Cut(strings.Replace(msg, " for flag -", " for -", 1), " for -")
	if !ok || !strings.HasPrefix(msg, "invalid ") {
		return "", false
	}
	name, _, _ := strings.Cut(rest, ":")
	return name, true
}

// subjectNames lists the registered subjects' names.
func subjectNames() []string {
	var out []string
	for _, s := range sim.Subjects() {
		out = append(out, s.Name)
	}
	return out
}

// checkSubject returns an error naming the near subjects if name is not
// registered.
// defaultSubject is the subject a command runs when --subject is not
// given: the lab's Bellerophon when this binary has it (cachelab), else
// the one controller registered with cachelabtest.Register (your own
// cachelab binary); with none or several, an error that says so.
func defaultSubject() (string, error) {
	_, lab1 := sim.LookupSubject("bellerophon")
	return defaultSubjectOf(lab1, lab.JudgedAsTestSubjects())
}

// defaultSubjectOf is defaultSubject given whether the binary has the
// lab's Bellerophon and the controllers it registers.
func defaultSubjectOf(hasBellerophon bool, registered []string) (string, error) {
	switch {
	case hasBellerophon:
		return "bellerophon", nil
	case len(registered) == 1:
		return registered[0], nil
	case len(registered) == 0:
		return "", fmt.Errorf("give --subject: this binary has neither the lab's bellerophon nor a controller registered with cachelabtest.Register\nRun `cachelab list` to see every subject.")
	}
	return "", fmt.Errorf("give --subject: this binary registers several controllers (%s)", strings.Join(registered, ", "))
}

func checkSubject(name string) error {
	if _, ok := sim.LookupSubject(name); ok {
		return nil
	}
	return fmt.Errorf("unknown subject %q%s\nRun `cachelab list` to see every subject.", name, scenarios.Suggest(name, subjectNames()))
}

// resolveScenario returns the scenario called arg, or read from the file
// arg names; errors list near names.
func resolveScenario(arg string) (*scenarios.Scenario, error) {
	if looksLikeFile(arg) {
		if err := lab.CheckFile(arg, "a scenario name (`cachelab list` shows them) or a scenario file like scenarios/data/tombstone-after-410.txt"); err != nil {
			return nil, err
		}
		switch lab.SniffFile(arg) {
		case lab.KindPlan, lab.KindTrace:
			return nil, fmt.Errorf("%s is a plan or trace (JSON), not a scenario file: `cachelab replay %s` runs it again", arg, arg)
		case lab.KindHTML:
			return nil, fmt.Errorf("%s is an HTML report, not a scenario file: open it in a browser", arg)
		}
		s, err := scenarios.LoadFile(arg)
		if err != nil {
			return nil, err
		}
		// A file is checked whole, each error at its line: its subjects
		// and invariants too, not only its syntax.
		if err := s.Validate(subjectNames(), lab.InvariantNames()); err != nil {
			return nil, err
		}
		return s, nil
	}
	s, err := scenarios.Get(arg)
	if err != nil {
		return nil, fmt.Errorf("%w\nRun `cachelab list` to see every scenario, or give a scenario file's path.", err)
	}
	return s, nil
}

func looksLikeFile(arg string) bool {
	if strings.ContainsAny(arg, "/\\") || strings.HasSuffix(arg, ".json") || strings.HasSuffix(arg, ".jsonl") || strings.HasSuffix(arg, ".txt") {
		return true
	}
	_, err := os.Stat(arg)
	return err == nil
}

// printErr prints err for command cmd; multi-line errors are indented.
func printErr(env *Env, cmd string, err error) {
	msg := strings.ReplaceAll(err.Error(), "`cachelab ", "`"+env.Prog+" ")
	// A package named like the command prefixes its errors with it
	// ("serve: ..."), as a library should; the line says it already.
	msg = strings.TrimPrefix(msg, cmd+": ")
	var pe *scenarios.ParseError
	if errors.As(err, &pe) && !strings.Contains(msg, "\n") {
		msg = pe.Error()
	}
	lines := strings.Split(msg, "\n")
	fmt.Fprintf(env.Stderr, "cachelab %s: %s\n", cmd, lines[0])
	for _, l := range lines[1:] {
		fmt.Fprintf(env.Stderr, "  %s\n", l)
	}
}
