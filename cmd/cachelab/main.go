// Command cachelab runs, replays and reports cache-sync scenarios against
// real client-go informers and a fake API server, in virtual time.
//
// Run `cachelab --help`, or `make run` from the repository, to start.
package main

import (
	"os"

	"github.com/cachelab/cachelab/cmd/cachelab/internal/cli"
	"github.com/cachelab/cachelab/cmd/cachelab/internal/lab"
)

func main() {
	env := &cli.Env{
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Prog:   cli.ProgName(os.Args[0]),
		TTY:    lab.IsTerminal(os.Stderr),
	}
	os.Exit(cli.Main(os.Args[1:], env))
}
