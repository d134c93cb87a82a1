// Command cachelab runs, replays and reports cache-sync scenarios against
// real client-go informers and a fake API server, in virtual time.
//
// Run `cachelab --help`, or `make run` from the repository, to start.
//go:debug randseednop=0

// The line above lets sim seed math/rand's global source from a plan's seed,
// which client-go's backoff jitter draws from (see sim.seedClientGo).
package main

import (
	"io"
	"os"

	"k8s.io/klog/v2"

	lab "github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/cmd/cachelab/internal/cli"
	"github.com/cachelab/cachelab/sim"
)

func main() {
	// client-go logs reflector warnings (a broken watch, a 410) through
	// klog; in the lab those are the faults we inject, and the trace
	// records them. Keep them off the terminal unless asked for.
	if os.Getenv("CACHELAB_KLOG") == "" {
		klog.LogToStderr(false)
		klog.SetOutput(io.Discard)
	}
	sim.PrepareClientGo()
	env := &cli.Env{
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Prog:   cli.ProgName(os.Args[0]),
		TTY:    lab.IsTerminal(os.Stderr),
	}
	os.Exit(cli.Main(os.Args[1:], env))
}
