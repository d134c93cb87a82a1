package cli

import (
	"io"
	"strings"
	"testing"
)

// hunt refuses an unknown --order before anything runs.
func TestHuntRefusesAnUnknownOrder(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hunt", "--order", "bogus"}, "--order \"bogus\""},
	} {
		var stderr strings.Builder
		env := &Env{Stdout: io.Discard, Stderr: &stderr, Prog: "cachelab"}
		if code := Main(c.args, env); code != ExitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, stderr.String(), ExitUsage, c.want)
		}
	}
}
