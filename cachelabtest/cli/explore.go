package cli

import (
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/sim"
)

// exploreCommand is `cachelab explore`: every delivery schedule of a small
// plan within a deviation bound.
func exploreCommand() command {
	return command{"explore",
		"run a plan under every delivery schedule within a bound (which request or event goes first when several are ready) and report what fails",
		"PLAN|TRACE|SCENARIO [--subject S] [--deviations K] [--max N] [--timeout D] [--no-reduction] [--out DIR]",
		"cachelab explore delete-recreate-during-gap --subject bellerophon/no-uid-check --deviations 1\n  cachelab explore out/random-3/bellerophon_no-expectations/plan.json --max 500", exploreCmd}
}

type exploreOptions struct {
	subject    string
	deviations int
	max        int
	timeout    time.Duration
	noReduce   bool
	out        string
}

func exploreFlags() (*flag.FlagSet, *exploreOptions) {
	o := &exploreOptions{}
	fs := newFlagSet("explore")
	fs.StringVar(&o.subject, "subject", "", "the subject to explore (default: the plan's; for a scenario, its default subject)")
	fs.IntVar(&o.deviations, "deviations", 2, "how many turns of a schedule may differ from the canonical order (the bound)")
	fs.IntVar(&o.max, "max", 200, "stop after this many distinct schedules")
	fs.DurationVar(&o.timeout, "timeout", 0, "stop after this much wall-clock time (0: no limit)")
	fs.BoolVar(&o.noReduce, "no-reduction", false, "run every schedule, also those the partial-order reduction proves equivalent to one run")
	fs.StringVar(&o.out, "out", "out/explore", "folder for each failing schedule's plan.json and trace.jsonl (\"\" writes nothing)")
	return fs, o
}

func exploreCmd(env *Env, args []string) int {
	fs, o := exploreFlags()
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(env, "explore", fs, err)
	}
	if len(pos) != 1 {
		fmt.Fprintf(env.Stderr, "cachelab explore: give one plan, trace or scenario, as `%s explore delete-recreate-during-gap --subject bellerophon/no-uid-check`\n", env.Prog)
		return ExitUsage
	}
	switch {
	case o.deviations < 1:
		fmt.Fprintf(env.Stderr, "cachelab explore: --deviations must be at least 1, got %d\n", o.deviations)
		return ExitUsage
	case o.max < 1:
		fmt.Fprintf(env.Stderr, "cachelab explore: --max must be at least 1, got %d\n", o.max)
		return ExitUsage
	case o.timeout < 0:
		fmt.Fprintf(env.Stderr, "cachelab explore: --timeout must not be negative, got %s\n", o.timeout)
		return ExitUsage
	}
	var p *sim.Plan
	if looksLikeFile(pos[0]) && (lab.SniffFile(pos[0]) == lab.KindPlan || lab.SniffFile(pos[0]) == lab.KindTrace) {
		in, err := lab.LoadInput(pos[0])
		if err != nil {
			printErr(env, "explore", err)
			return ExitUsage
		}
		p = in.Plan
	} else {
		s, err := resolveScenario(pos[0])
		if err != nil {
			printErr(env, "explore", err)
			return ExitUsage
		}
		subject := o.subject
		if subject == "" {
			subject = s.Plan.Subject
		}
		q := s.PlanFor(subject)
		p = &q
	}
	if o.subject != "" {
		p.Subject = o.subject
	}
	if err := checkSubject(p.Subject); err != nil {
		printErr(env, "explore", err)
		return ExitUsage
	}
	p.Schedule = nil
	host := env.Host
	if host == nil {
		host = lab.MainHost(1)
	}
	out := o.out
	if out != "" {
		out = filepath.Join(out, filepath.FromSlash(lab.RunID(p)))
	}
	w := env.Stdout
	fmt.Fprintf(w, "exploring plan %q, subject %s, seed %d: schedules within %d deviation(s) of the canonical order, at most %d\n", p.Name, p.Subject, p.Seed, o.deviations, o.max)
	res, err := lab.ExplorePlan(host, p, lab.ExploreOptions{
		MaxSchedules: o.max, MaxDeviations: o.deviations, MaxWall: o.timeout, Out: out, NoReduction: o.noReduce,
		Replay: func(path string) string { return env.Prog + " replay " + path },
	})
	if err != nil {
		printErr(env, "explore", err)
		return ExitUnexpected
	}
	fmt.Fprint(w, res.Summary())
	if len(res.Failing) == 0 {
		fmt.Fprintf(w, "no schedule failed an invariant of the subject\n")
		return ExitOK
	}
	fmt.Fprintf(w, "%d of %d schedules failed an invariant of the subject:\n", len(res.Failing), res.Schedules+res.Equivalent)
	for i, f := range res.Failing {
		if i == 10 {
			fmt.Fprintf(w, "  ... and %d more in %s\n", len(res.Failing)-10, out)
			break
		}
		if f.Equivalent {
			fmt.Fprintf(w, "  schedule %d (not run: equivalent to schedule %d): %v", f.N, f.SameAs, f.Failed)
		} else {
			fmt.Fprintf(w, "  schedule %d (%d deviation(s)): %v", f.N, f.Deviations, f.Failed)
		}
		if f.Replay != "" {
			fmt.Fprintf(w, "\n    replay: %s", f.Replay)
		}
		fmt.Fprintln(w)
	}
	return ExitUnexpected
}
