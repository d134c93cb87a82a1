package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/reports"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

func listCmd(env *Env, args []string) int {
	if len(args) > 0 {
		fmt.Fprintf(env.Stderr, "cachelab list: takes no arguments, got %q\nRun `%s explain NAME` to read one scenario.\n", args, env.Prog)
		return ExitUsage
	}
	w := env.Stdout
	all, err := scenarios.All()
	if err != nil {
		printErr(env, "list", err)
	}
	fmt.Fprintf(w, "SCENARIOS (%d; `%s explain NAME` tells the story)\n", len(all), env.Prog)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, s := range all {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Name, s.EdgeLabels(), s.Title)
	}
	tw.Flush()

	subs := sim.Subjects()
	fmt.Fprintf(w, "\nSUBJECTS (%d; mutants carry one deliberate, documented bug)\n", len(subs))
	tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, s := range subs {
		kind := ""
		if s.Mutant {
			kind = "mutant"
		}
		summary := s.Summary
		if s.Source != "" {
			summary += " (" + s.Source + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Name, kind, summary)
	}
	tw.Flush()

	invs := lab.Invariants()
	fmt.Fprintf(w, "\nINVARIANTS (%d)\n", len(invs))
	tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, inv := range invs {
		fmt.Fprintf(tw, "  %s\t%s\n", inv.Name, inv.Summary)
	}
	tw.Flush()
	if err != nil {
		return ExitUnexpected
	}
	return ExitOK
}

func explainCmd(env *Env, args []string) int {
	if len(args) > 0 && args[0] == "--list" {
		return courseCmd(env, args[1:])
	}
	if len(args) != 1 {
		fmt.Fprintf(env.Stderr, "cachelab explain: give one scenario name or file, as `%s explain tombstone-after-410` (`%s list` shows them)\n", env.Prog, env.Prog)
		return ExitUsage
	}
	s, err := resolveScenario(args[0])
	if err != nil {
		printErr(env, "explain", err)
		return ExitUsage
	}
	Explain(env.Stdout, s, env.Prog)
	return ExitOK
}

// Explain writes a scenario's story: title, edge cases, sources, the
// narrative with each step, and the expected verdicts per subject with why.
func Explain(w io.Writer, s *scenarios.Scenario, prog string) {
	fmt.Fprintf(w, "%s: %s\n", s.Name, s.Title)
	fmt.Fprintf(w, "%s\n", strings.Repeat("=", len(s.Name)+2+len(s.Title)))
	fmt.Fprintf(w, "Edge cases: %s (EDGE-CASES.md)\n", s.EdgeLabels())
	if len(s.Sources) > 0 {
		fmt.Fprintf(w, "Sources:\n")
		for _, src := range s.Sources {
			fmt.Fprintf(w, "  - %s\n", src)
		}
	}
	fmt.Fprintf(w, "Plan: seed %d, default subject %s", s.Plan.Seed, s.Plan.Subject)
	if s.Plan.Deadline != 0 {
		fmt.Fprintf(w, ", deadline %s", s.Plan.Deadline)
	}
	fmt.Fprintf(w, "\n")
	if f := faultSummary(s.Plan.Faults); f != "" {
		fmt.Fprintf(w, "Faults: %s\n", f)
	}
	fmt.Fprintln(w)

	for _, b := range s.Narrative {
		if b.Kind == scenarios.BlockIntro {
			writePara(w, "", b.Text)
		}
	}
	// The timeline: objects, then steps, each after its narration.
	stepNote := map[int]string{}
	objNote := map[int]string{}
	for _, b := range s.Narrative {
		switch b.Kind {
		case scenarios.BlockStep:
			stepNote[b.Index] = b.Text
		case scenarios.BlockObject:
			objNote[b.Index] = b.Text
		}
	}
	fmt.Fprintf(w, "What happens\n------------\n")
	for i, o := range s.Plan.Objects {
		if note := objNote[i]; note != "" {
			fmt.Fprintln(w)
			writePara(w, "  # ", note)
		}
		fmt.Fprintf(w, "  at start  exists: %s\n", objectSummary(o))
	}
	for i, st := range s.Plan.Steps {
		if note := stepNote[i]; note != "" {
			fmt.Fprintln(w)
			writePara(w, "  # ", note)
		}
		fmt.Fprintf(w, "  at %-6s %s\n", st.At, StepSummary(st))
	}
	for _, b := range s.Narrative {
		if b.Kind == scenarios.BlockEnd {
			fmt.Fprintln(w)
			writePara(w, "  # ", b.Text)
		}
	}
	fmt.Fprintf(w, "\nExpected verdicts\n-----------------\n")
	why := map[int]string{}
	for _, b := range s.Narrative {
		if b.Kind == scenarios.BlockExpect {
			why[b.Index] = b.Text
		}
	}
	for _, subj := range s.Subjects() {
		var parts []string
		for _, e := range s.ExpectedFor(subj) {
			parts = append(parts, e.Invariant+"="+string(e.Status))
		}
		fmt.Fprintf(w, "  %s: %s\n", subj, strings.Join(parts, " "))
		for i, e := range s.Expect {
			if e.Subject == subj && why[i] != "" {
				writePara(w, "    # ", why[i])
			}
		}
	}
	fmt.Fprintf(w, "\nRun it: %s run %s\n", prog, s.Name)
}

// writePara writes text with prefix on every line and a blank line after.
func writePara(w io.Writer, prefix, text string) {
	for _, l := range strings.Split(text, "\n") {
		if l == "" {
			fmt.Fprintln(w, strings.TrimRight(prefix, " "))
			continue
		}
		fmt.Fprintf(w, "%s%s\n", prefix, l)
	}
	if prefix == "" {
		fmt.Fprintln(w)
	}
}

// StepSummary describes a step in one line, as a scenario file writes it.
func StepSummary(st sim.Step) string {
	parts := []string{st.Actor, st.Op}
	if st.Resource != "" {
		parts = append(parts, st.Resource)
	}
	if st.Name != "" {
		parts = append(parts, strings.TrimPrefix(st.Namespace+"/"+st.Name, "/"))
	}
	if st.Target != "" {
		parts = append(parts, "target="+st.Target)
	}
	if st.Verb != "" {
		parts = append(parts, "verb="+st.Verb)
	}
	if st.Code != 0 {
		parts = append(parts, fmt.Sprintf("code=%d", st.Code))
	}
	if st.Lag != 0 {
		parts = append(parts, fmt.Sprintf("lag=%d", st.Lag))
	}
	if st.For != 0 {
		parts = append(parts, "for="+st.For.String())
	}
	if st.MidReconcile {
		parts = append(parts, "midReconcile=true")
	}
	if st.NotOlderThan {
		parts = append(parts, "notOlderThan=true")
	}
	if len(st.Object) > 0 {
		parts = append(parts, objectSummary(st.Object))
	}
	if len(st.Patch) > 0 {
		parts = append(parts, string(st.Patch))
	}
	return strings.Join(parts, " ")
}

func objectSummary(raw []byte) string {
	s := string(raw)
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

func faultSummary(f sim.FaultPolicy) string {
	var parts []string
	if f.Latency.Kind != "" && f.Latency.Kind != "none" {
		switch f.Latency.Kind {
		case "fixed":
			parts = append(parts, "latency fixed "+f.Latency.Max.String())
		case "uniform":
			parts = append(parts, fmt.Sprintf("latency uniform %s..%s", f.Latency.Min, f.Latency.Max))
		case "exponential":
			parts = append(parts, fmt.Sprintf("latency exponential mean %s cap %s", f.Latency.Mean, f.Latency.Max))
		}
	}
	if f.DisconnectEvery != 0 {
		parts = append(parts, "disconnect about every "+f.DisconnectEvery.String())
	}
	if f.ExpireOnRewatch != 0 {
		parts = append(parts, fmt.Sprintf("410 on re-watch p=%g", f.ExpireOnRewatch))
	}
	if f.StaleReplicaLag != 0 {
		parts = append(parts, fmt.Sprintf("stale replica lag %d", f.StaleReplicaLag))
	}
	if f.ErrorRate != 0 {
		parts = append(parts, fmt.Sprintf("request errors p=%g %v", f.ErrorRate, f.ErrorCodes))
	}
	if f.UnknownOutcomeRate != 0 {
		parts = append(parts, fmt.Sprintf("unknown-outcome writes p=%g", f.UnknownOutcomeRate))
	}
	cb := f.ContractBreaking
	if cb.DropRate != 0 || cb.DuplicateRate != 0 || cb.ReorderInStream {
		parts = append(parts, fmt.Sprintf("CONTRACT-BREAKING drop=%g duplicate=%g reorder=%v", cb.DropRate, cb.DuplicateRate, cb.ReorderInStream))
	}
	return strings.Join(parts, "; ")
}

func versionCmd(env *Env, args []string) int {
	if len(args) > 0 {
		fmt.Fprintf(env.Stderr, "cachelab version: takes no arguments or flags, got %q\n", args)
		return ExitUsage
	}
	w := env.Stdout
	version := "(devel)"
	deps := map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				version += " " + s.Value[:12]
			}
		}
		for _, d := range bi.Deps {
			deps[d.Path] = d.Version
		}
	}
	fmt.Fprintf(w, "cachelab %s\n", version)
	fmt.Fprintf(w, "go        %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, m := range []string{"k8s.io/client-go", "k8s.io/apimachinery"} {
		if v := deps[m]; v != "" {
			fmt.Fprintf(w, "%-9s %s\n", strings.TrimPrefix(m, "k8s.io/"), v)
		}
	}
	fmt.Fprintf(w, "formats   plan v%d, trace v%d\n", sim.PlanVersion, sim.TraceVersion)
	return ExitOK
}

// courseCmd prints the guided course (explain --list) and, with --html
// FILE, writes it as an HTML page whose links point at the reports
// `cachelab run` writes beside it.
func courseCmd(env *Env, args []string) int {
	htmlFile := ""
	switch {
	case len(args) == 2 && args[0] == "--html":
		htmlFile = args[1]
	case len(args) != 0:
		fmt.Fprintf(env.Stderr, "cachelab explain --list: takes only --html FILE, got %q (as `%s explain --list --html out/course.html`)\n", args, env.Prog)
		return ExitUsage
	}
	page, err := lab.CoursePage(env.Prog)
	if err != nil {
		printErr(env, "explain", err)
		return ExitUnexpected
	}
	w := env.Stdout
	fmt.Fprintf(w, "The guided course: the 28 edge cases of EDGE-CASES.md as a path through the origin notes' questions.\n`%s explain NAME` tells a scenario's story, `%s run NAME` runs it.\n", env.Prog, env.Prog)
	for _, p := range page {
		fmt.Fprintf(w, "\n%s. %s\n", p.Letter, p.Question)
		for _, st := range p.Stops {
			fmt.Fprintf(w, "\n  %-4s %s\n", st.Label, st.Title)
			for _, l := range wrap(st.Lesson, 72) {
				fmt.Fprintf(w, "       %s\n", l)
			}
			if len(st.Scenarios) == 0 {
				fmt.Fprintf(w, "       (no scenario shows it yet)\n")
			}
			for _, sc := range st.Scenarios {
				fmt.Fprintf(w, "       -> %s\n", sc.Explain)
			}
		}
	}
	if htmlFile == "" {
		return ExitOK
	}
	var b bytes.Buffer
	if err := reports.Course(&b, page); err != nil {
		printErr(env, "explain", err)
		return ExitUnexpected
	}
	if err := os.WriteFile(htmlFile, b.Bytes(), 0o644); err != nil {
		printErr(env, "explain", err)
		return ExitUnexpected
	}
	fmt.Fprintf(w, "\nwrote %s\n", htmlFile)
	return ExitOK
}

// wrap splits text into lines of at most width characters, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
