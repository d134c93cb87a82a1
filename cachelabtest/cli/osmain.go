package cli

import (
	"io"
	"os"

	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/sim"
)

// Run runs the cachelab command on the process's arguments and streams
// and returns its exit code: a main package's whole body. The subjects
// the command knows are those registered with sim when it runs: import
// the packages that register them (the lab's own, subjects/bellerophon,
// subjects/naivecache, subjects/legacy; and your own, calling
// sim.RegisterSubject from init) in the main package, as database/sql
// drivers are:
//
//	//go:debug randseednop=0
//	package main
//
//	import (
//		"os"
//
//		"github.com/cachelab/cachelab/cachelabtest/cli"
//		_ "github.com/cachelab/cachelab/subjects/bellerophon"
//		_ "example.com/you/yourcontroller/labsubject"
//	)
//
//	func main() { os.Exit(cli.Run()) }
//
// The //go:debug line lets a plan's seed seed client-go's backoff jitter
// (math/rand's global source), as in the lab's own binary.
//
// client-go's klog output is discarded unless CACHELAB_KLOG is set.
func Run() int {
	// client-go logs reflector warnings (a broken watch, a 410) through
	// klog; in the lab those are the faults we inject, and the trace
	// records them. Keep them off the terminal unless asked for.
	if os.Getenv("CACHELAB_KLOG") == "" {
		klog.LogToStderr(false)
		klog.SetOutput(io.Discard)
	}
	sim.PrepareClientGo()
	env := &Env{
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Prog:   ProgName(os.Args[0]),
		TTY:    lab.IsTerminal(os.Stderr),
	}
	return Main(os.Args[1:], env)
}
