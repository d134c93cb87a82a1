package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cachelab/cachelab/internal/lab"
)

// mergeCommand is `cachelab merge`: the output folders of a campaign's
// shards (`cachelab run --shard i/n`) joined into one index and JUnit file.
func mergeCommand() command {
	return command{"merge",
		"merge the output folders of a sharded campaign (run --shard i/n) into one index.html and junit.xml, or of a sharded hunt (hunt --shard i/n) into one table",
		"DIR... [--out DIR]   (a DIR may be a pattern, as /results/shard-*: merge expands it itself, so an image needs no shell)",
		"cachelab merge out/shard-0 out/shard-1 --out out/merged   # after: cachelab run --random 100 --shard 0/2 --out out/shard-0 (and 1/2)\n  cachelab merge out/hunt-0 out/hunt-1 --out out/hunt   # after: cachelab hunt --shard 0/2 --out out/hunt-0 (and 1/2)", mergeCmd}
}

func mergeFlags() (*flag.FlagSet, *string) {
	fs := newFlagSet("merge")
	return fs, fs.String("out", "out/merged", "folder for the merged index.html, junit.xml and results.json (each run's files stay in its shard's folder, linked from the index)")
}

func mergeCmd(env *Env, args []string) int {
	fs, out := mergeFlags()
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(env, "merge", fs, err)
	}
	if len(pos) == 0 {
		fmt.Fprintf(env.Stderr, "cachelab merge: give the output folders of every shard, as `%s merge out/shard-0 out/shard-1 --out out/merged`\n", env.Prog)
		return ExitUsage
	}
	if *out == "" {
		fmt.Fprintf(env.Stderr, "cachelab merge: --out must name a folder\n")
		return ExitUsage
	}
	pos, err = expandShardGlobs(pos)
	if err != nil {
		printErr(env, "merge", err)
		return ExitUsage
	}
	var hunts, others []string
	for _, d := range pos {
		if lab.IsHuntFolder(d) {
			hunts = append(hunts, d)
		} else {
			others = append(others, d)
		}
	}
	if len(hunts) > 0 {
		if len(others) > 0 {
			printErr(env, "merge", fmt.Errorf("%s: a hunt's %s; %s: none: give the folders of one hunt's shards (`cachelab hunt --shard i/n --out DIR`), or of one run's",
				strings.Join(hunts, ", "), lab.HuntFile, strings.Join(others, ", ")))
			return ExitUsage
		}
		return mergeHunt(env, pos, *out)
	}
	for _, d := range pos {
		if _, err := os.Stat(filepath.Join(d, lab.ResultsFile)); err != nil {
			printErr(env, "merge", fmt.Errorf("%s: no %s or %s: give a folder written by `cachelab run --out DIR` or `cachelab hunt --out DIR`", d, lab.ResultsFile, lab.HuntFile))
			return ExitUsage
		}
	}
	m, err := lab.MergeResults(pos)
	if err != nil {
		printErr(env, "merge", err)
		return ExitUsage
	}
	opt := lab.Options{Out: *out, Replay: func(path string) string { return env.Prog + " replay " + path }}
	if err := lab.WriteBatch(*out, m.Title, m.Results, opt); err != nil {
		printErr(env, "merge", err)
		return ExitUnexpected
	}
	if err := lab.WriteResults(*out, m.Title, lab.Shard{}, len(m.Results), m.Results); err != nil {
		printErr(env, "merge", err)
		return ExitUnexpected
	}
	unexpected := 0
	for _, r := range m.Results {
		if !r.OK() {
			unexpected++
		}
	}
	fmt.Fprintf(env.Stdout, "merged %s of %q from %d shards: %d as expected, %d unexpected.\n", plural(len(m.Results), "run"), m.Title, m.Shards, len(m.Results)-unexpected, unexpected)
	fmt.Fprintf(env.Stdout, "Reports: %s (JUnit: %s)\n", filepath.Join(*out, lab.IndexFile), filepath.Join(*out, lab.JUnitFile))
	if unexpected > 0 {
		return ExitUnexpected
	}
	return ExitOK
}

// expandShardGlobs expands the arguments that are patterns (as
// "/results/shard-*", which a container with no shell passes as is) into
// the folders they match, in order; a pattern that matches nothing is an
// error.
func expandShardGlobs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if !strings.ContainsAny(a, "*?[") {
			out = append(out, a)
			continue
		}
		m, err := filepath.Glob(a)
		if err != nil {
			return nil, fmt.Errorf("bad pattern %q: %w", a, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%q matches no shard folder", a)
		}
		out = append(out, m...)
	}
	return out, nil
}

// mergeHunt joins the --out folders of a hunt's shards (their hunt.json)
// into the whole campaign's table, in campaign order, and writes the
// merged hunt.json into out. Shards that generated other plans (another
// digest) are refused, never merged.
func mergeHunt(env *Env, dirs []string, out string) int {
	rep, m, err := lab.MergeHunt(dirs)
	if err != nil {
		printErr(env, "merge", err)
		return ExitUsage
	}
	fmt.Fprintf(env.Stdout, "merged %d shards of a hunt of %s: every shard generated the same %d plans (digest %s)", m.Shards, rep.Subject, m.Plans, lab.ShortDigest(m.Digest))
	if m.Missing > 0 {
		fmt.Fprintf(env.Stdout, "; %d not run (the shards stopped at their first failure)", m.Missing)
	}
	fmt.Fprintf(env.Stdout, "; runs and CPU are the shards' sums (each ran the references)\n")
	rep.WriteTable(env.Stdout)
	if f := rep.First(); f != nil {
		fmt.Fprintf(env.Stdout, "targeted: first failure at plan %d of %d (%s)\n", f.Index, rep.Generated, f.Class)
	} else {
		fmt.Fprintf(env.Stdout, "targeted: no failure in %d plans\n", len(rep.Rows))
	}
	if err := lab.WriteHunt(out, rep); err != nil {
		printErr(env, "merge", err)
		return ExitUnexpected
	}
	fmt.Fprintf(env.Stdout, "hunt record: %s\n", filepath.Join(out, lab.HuntFile))
	if len(rep.Failures()) > 0 {
		return ExitUnexpected
	}
	return ExitOK
}
