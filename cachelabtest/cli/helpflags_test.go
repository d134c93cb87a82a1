package cli

import (
	"regexp"
	"strings"
	"testing"
)

// Every command's --help names each flag's argument with one word: Go's
// flag package takes the first `backquoted` text of a usage as the
// argument's name, and a usage that quoted a command ("`cachelab merge`
// joins the shards' folders") printed "-shard cachelab merge" in run's and
// hunt's help, "-campaign cachelab run --random N" in bench's.
func TestEveryFlagsArgumentIsNamedInOneWord(t *testing.T) {
	flagLine := regexp.MustCompile(`^  -(\S+)(?: (.*))?$`)
	for _, c := range commands() {
		code, out, errs := run(t, c.name, "--help")
		help := out + errs
		if code != ExitOK && code != ExitUsage {
			t.Errorf("%s --help exited %d", c.name, code)
		}
		for _, line := range strings.Split(help, "\n") {
			m := flagLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			if arg := m[2]; strings.Contains(arg, " ") {
				t.Errorf("%s --help: flag -%s's argument is named %q, not one word", c.name, m[1], arg)
			}
		}
	}
}
