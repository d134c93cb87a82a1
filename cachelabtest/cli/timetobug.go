package cli

import (
	"fmt"
	"path"
	"strings"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/sim"
)

func timeToBugCommand() command {
	return command{"time-to-bug", "plans and CPU to the first failure of each planted bug under random plans: median and max over several seeds, as a Markdown table",
		"[--subject PATTERN] [--seeds N] [--max N]",
		"cachelab time-to-bug                                  # every mutant, 5 seeds, up to 1000 plans each\n  cachelab time-to-bug --subject 'bellerophon/*' --seeds 3 --max 200", timeToBugCmd}
}

func timeToBugCmd(env *Env, args []string) int {
	fs := newFlagSet("time-to-bug")
	pattern := fs.String("subject", "", "only the mutants whose name matches this pattern (path.Match: 'bellerophon/*'; default every mutant)")
	seeds := fs.Int("seeds", 5, "campaigns per mutant: the first plans' seeds are 1, 1001, 2001, ... (each campaign runs random plans from its seed on)")
	max := fs.Int("max", 1000, "plans per campaign at most: a bug not found in that many is reported '> max'")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(env, "time-to-bug", fs, err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(env.Stderr, "cachelab time-to-bug: unexpected argument %q (the subjects are chosen with --subject)\n", pos[0])
		return ExitUsage
	}
	if *seeds < 1 || *max < 1 {
		fmt.Fprintf(env.Stderr, "cachelab time-to-bug: --seeds and --max must be 1 or more\n")
		return ExitUsage
	}
	if _, err := path.Match(*pattern, ""); err != nil {
		fmt.Fprintf(env.Stderr, "cachelab time-to-bug: --subject %q: %v\n", *pattern, err)
		return ExitUsage
	}
	subjects := timeToBugSubjects(*pattern)
	if len(subjects) == 0 {
		fmt.Fprintf(env.Stderr, "cachelab time-to-bug: no mutant matches %q (see `%s list`)\n", *pattern, env.Prog)
		return ExitUsage
	}
	opt := lab.TimeToBugOptions{Max: *max, OnCampaign: func(s string, c lab.Campaign) {
		found := "not found"
		if c.Found {
			found = fmt.Sprintf("first failure at plan %d (%s: %s)", c.Plans, c.Plan, strings.Join(c.Failed, ", "))
		}
		fmt.Fprintf(env.Stderr, "%s seed %d: %s, %s CPU\n", s, c.Seed, found, c.CPU)
	}}
	for i := range *seeds {
		opt.Seeds = append(opt.Seeds, 1+uint64(i)*1000)
	}
	host := env.Host
	if host == nil {
		host = lab.MainHost(1)
	}
	rows, err := lab.TimeToBug(host, subjects, opt)
	if err != nil {
		fmt.Fprintf(env.Stderr, "cachelab time-to-bug: %v\n", err)
		return ExitUnexpected
	}
	fmt.Fprintf(env.Stdout, "Random plans (those of `%s run --random`, from seeds %v), one at a time, to the first failing invariant (measurements apart), at most %d each:\n\n", env.Prog, opt.Seeds, *max)
	lab.WriteTimeToBug(env.Stdout, rows, *max)
	return ExitOK
}

// timeToBugSubjects lists the mutants whose name matches pattern ("":
// every mutant).
func timeToBugSubjects(pattern string) []string {
	var subjects []string
	for _, s := range sim.Subjects() {
		if ok, _ := path.Match(pattern, s.Name); (ok || pattern == "") && s.Mutant {
			subjects = append(subjects, s.Name)
		}
	}
	return subjects
}
