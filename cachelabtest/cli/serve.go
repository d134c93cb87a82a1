package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cachelab/cachelab/fakeapi/serve"
	"github.com/cachelab/cachelab/sim"
)

// serveOptions are the flags of `cachelab serve`.
type serveOptions struct {
	address, token, kubeconfig, faults, trace string
	crds, seeds                               listFlag
	verbosity                                 int
	kubelet                                   bool
	kubeletReadyAfter                         time.Duration
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func serveFlags() (*flag.FlagSet, *serveOptions) {
	fs := newFlagSet("serve")
	o := &serveOptions{}
	fs.StringVar(&o.address, "address", serve.DefaultAddress, "TCP address to listen on (loopback unless you say otherwise)")
	fs.StringVar(&o.token, "token", "", "bearer token clients must send (default: a random one)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", filepath.Join("out", "serve", "kubeconfig"), "where to write the kubeconfig")
	fs.StringVar(&o.faults, "faults", "", "fault profile file (JSON; change it live with PUT /admin/faults)")
	fs.StringVar(&o.trace, "trace", filepath.Join("out", "serve", "trace.jsonl"), "where to write the trace of everything served, at shutdown (\"\" = none)")
	fs.Var(&o.crds, "crd", "CustomResourceDefinition file to serve (repeatable)")
	fs.Var(&o.seeds, "seed-objects", "YAML or JSON file of objects to create at start (repeatable)")
	fs.BoolVar(&o.kubelet, "kubelet", false, "run a kubelet-like actor that makes every Pod Running and Ready (the fake runs no containers)")
	fs.DurationVar(&o.kubeletReadyAfter, "kubelet-ready-after", 0, "with --kubelet, how long after a Pod appears it becomes Ready")
	fs.IntVar(&o.verbosity, "v", 0, "log level: 0 admin actions and shutdown, 1 every request")
	return fs, o
}

// serveCmd runs the fake API server in real time until SIGINT or SIGTERM.
func serveCmd(env *Env, args []string) int {
	fs, o := serveFlags()
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(env, "serve", fs, err)
	}
	if len(pos) != 0 {
		fmt.Fprintf(env.Stderr, "cachelab serve: takes no arguments, got %q\nRun `%s serve --help` for the flags and an example.\n", pos, env.Prog)
		return ExitUsage
	}
	if o.kubeletReadyAfter < 0 {
		fmt.Fprintf(env.Stderr, "cachelab serve: --kubelet-ready-after must be a duration of 0 or more (as 2s), got %s\n", o.kubeletReadyAfter)
		return ExitUsage
	}
	opts := serve.Options{Address: o.address, Token: o.token, KubeconfigPath: o.kubeconfig, CRDFiles: o.crds, SeedFiles: o.seeds,
		Kubelet: o.kubelet, KubeletReadyAfter: o.kubeletReadyAfter}
	if o.faults != "" {
		if opts.Faults, err = serve.LoadFaults(o.faults); err != nil {
			printErr(env, "serve", err)
			return ExitUsage
		}
	}
	level := slog.LevelInfo
	if o.verbosity > 0 {
		level = slog.LevelDebug
	}
	opts.Logger = slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level}))
	var rec *sim.ServerRecorder
	if o.trace != "" {
		rec = sim.NewServerRecorder(&sim.Plan{Version: sim.PlanVersion, Name: "serve"})
		opts.Server.Observer = rec
	}
	if dir := filepath.Dir(o.kubeconfig); o.kubeconfig != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			printErr(env, "serve", err)
			return ExitUnexpected
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	running, err := serve.Serve(ctx, opts)
	if err != nil {
		printErr(env, "serve", err)
		return ExitUsage
	}
	fmt.Fprintf(env.Stdout, "cachelab serve: a fake Kubernetes API server at %s\n", running.URL)
	if running.KubeconfigPath != "" {
		abs, _ := filepath.Abs(running.KubeconfigPath)
		fmt.Fprintf(env.Stdout, "  export KUBECONFIG=%s\n", abs)
	}
	fmt.Fprintf(env.Stdout, "  admin:   %s admin fault|compact|snapshot|close-watches (with that KUBECONFIG)\n", env.Prog)
	fmt.Fprintf(env.Stdout, "           or curl -k -H 'Authorization: Bearer %s' %s/admin/faults  (also /admin/compact, /admin/snapshot, /metrics)\n", running.Token, running.URL)
	fmt.Fprintln(env.Stdout, "  Ctrl-C stops it and writes the trace.")
	werr := running.Wait()
	code := ExitOK
	if werr != nil {
		printErr(env, "serve", werr)
		code = ExitUnexpected
	}
	if rec != nil {
		if err := writeServedTrace(o.trace, rec.Trace("shutdown")); err != nil {
			printErr(env, "serve", err)
			return ExitUnexpected
		}
		fmt.Fprintf(env.Stdout, "wrote %s; render it with `%s report %s`\n", o.trace, env.Prog, o.trace)
	}
	return code
}

// writeServedTrace writes tr as JSON Lines to path, creating its folder.
func writeServedTrace(path string, tr *sim.Trace) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return sim.WriteTraceFile(path, tr)
}
