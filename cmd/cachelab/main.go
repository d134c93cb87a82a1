// Command cachelab runs, replays and reports cache-sync scenarios against
// real client-go informers and a fake API server, in virtual time.
//
// Run `cachelab --help`, or `make run` from the repository, to start. The
// command is package cachelabtest/cli: to build your own, with your own
// subjects registered, see cli.Run.
//go:debug randseednop=0

// The line above lets sim seed math/rand's global source from a plan's seed,
// which client-go's backoff jitter draws from (see sim.seedClientGo).
package main

import (
	"os"

	"github.com/cachelab/cachelab/cachelabtest/cli"

	// The lab's subjects register themselves with sim when imported.
	_ "github.com/cachelab/cachelab/subjects/bellerophon"
	_ "github.com/cachelab/cachelab/subjects/legacy"
	_ "github.com/cachelab/cachelab/subjects/naivecache"
)

func main() { os.Exit(cli.Run()) }
