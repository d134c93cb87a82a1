// Command cachelab is the cachelab CLI (cachelabtest/cli) built with
// kube-apiserver's own strategies behind the fake's built-in kinds
// (package kubestrategies): every fake server it starts, in `run`,
// `serve`, `bench` and the rest, defaults, prepares and validates
// Deployments, Pods, Services, RBAC objects and the other kinds of
// kubestrategies.Kinds with k8s.io/kubernetes' registry code.
//
// Build it with `make kube-strategies` (out/cachelab-kube). Set
// CACHELAB_KUBE_STRATEGIES=off to run the same binary on the lab's
// hand-written rules, e.g. to compare `cachelab bench` both ways.
//go:debug randseednop=0

// The line above lets sim seed math/rand's global source from a plan's
// seed, as cmd/cachelab's does.
package main

import (
	"fmt"
	"os"

	"github.com/cachelab/cachelab/cachelabtest/cli"
	"github.com/cachelab/cachelab/kubestrategies"

	// The lab's subjects register themselves with sim when imported.
	_ "github.com/cachelab/cachelab/subjects/bellerophon"
	_ "github.com/cachelab/cachelab/subjects/legacy"
	_ "github.com/cachelab/cachelab/subjects/naivecache"
)

func main() {
	switch v := os.Getenv("CACHELAB_KUBE_STRATEGIES"); v {
	case "", "on":
	case "off":
		kubestrategies.Unregister()
	default:
		fmt.Fprintf(os.Stderr, "cachelab: CACHELAB_KUBE_STRATEGIES must be on or off, got %q\n", v)
		os.Exit(2)
	}
	os.Exit(cli.Run())
}
