// Command bellerophon runs the Bellerophon operator (subjects/bellerophon,
// the same Controller the lab's scenarios judge, built by the same
// constructor) against a real API server, like any operator: it reads a
// kubeconfig, watches Bellerophons, Pods and ConfigMaps through client-go
// informers and reconciles until SIGINT or SIGTERM, then cancels its
// context, shuts its workqueue down, waits for its workers and informers
// and exits 0.
//
// Point it at `cachelab serve --crd subjects/bellerophon/config/crd.yaml
// --kubelet` (with a fault profile, to see it cope with a flaky server) or
// at a real cluster with the CRD installed:
//
//	bellerophon --kubeconfig out/serve/kubeconfig -v 1
//
// Flags: --kubeconfig (default $KUBECONFIG, then ~/.kube/config),
// --namespace (default all), --workers (default 2), -v (0 start and stop,
// 1 every reconcile and note, 2 also handler calls, queue operations, sync
// signals and client-go's own logs at that level), --leader-elect (default
// off; a coordination.k8s.io/v1 Lease in --leader-elect-namespace).
//
// The controller's external backup store (what its finalizer cleans) lives
// in the process's memory.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/subjects/bellerophon"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// options are the command's flags.
type options struct {
	kubeconfig, namespace string
	workers, verbosity    int
	leaderElect           bool
	leaseNamespace, lease string
}

func flags() (*flag.FlagSet, *options) {
	fs := flag.NewFlagSet("bellerophon", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := &options{}
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&o.namespace, "namespace", "", "watch and reconcile only this namespace (default: all)")
	fs.IntVar(&o.workers, "workers", 2, "reconcile workers")
	fs.IntVar(&o.verbosity, "v", 0, "log level: 0 start and stop, 1 every reconcile, 2 handlers, queue and sync signals")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "run only while holding a coordination.k8s.io/v1 Lease")
	fs.StringVar(&o.leaseNamespace, "leader-elect-namespace", "kube-system", "namespace of the leader election Lease")
	fs.StringVar(&o.lease, "leader-elect-lease", "bellerophon", "name of the leader election Lease")
	return fs, o
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stderr, true)
	stop()
	os.Exit(code)
}

// run parses args, then runs the controller until ctx ends, logging to
// stderr; it returns the exit code. With routeKlog, client-go's klog output
// goes through the same logger at the same verbosity (process-wide state,
// set before anything runs: only main asks for it).
func run(ctx context.Context, args []string, stderr io.Writer, routeKlog bool) int {
	fs, o := flags()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stderr, fs)
			return exitOK
		}
		fmt.Fprintf(stderr, "bellerophon: %v\nRun `bellerophon --help` for the flags.\n", err)
		return exitUsage
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "bellerophon: takes no arguments, got %q\nRun `bellerophon --help` for the flags.\n", fs.Args())
		return exitUsage
	}
	if o.workers < 1 {
		fmt.Fprintf(stderr, "bellerophon: --workers=%d: want at least 1\n", o.workers)
		return exitUsage
	}
	log := newLogger(stderr, o.verbosity, routeKlog)
	cfg, err := restConfig(o.kubeconfig)
	if err != nil {
		fmt.Fprintf(stderr, "bellerophon: %v\n", err)
		return exitUsage
	}
	env, err := newEnv(cfg, o.namespace, &logRecorder{log: log, start: time.Now()})
	if err != nil {
		fmt.Fprintf(stderr, "bellerophon: %v\n", err)
		return exitError
	}
	log.Info("starting", "server", cfg.Host, "namespace", orAll(o.namespace), "workers", o.workers, "leaderElect", o.leaderElect)

	runController := func(ctx context.Context) error {
		c, err := bellerophon.NewController(ctx, env, bellerophon.Options{Workers: o.workers, Backups: bellerophon.NewBackupStore()})
		if err != nil {
			return err
		}
		// Run returns once ctx ends and its queue is shut down, its
		// workers and informers have returned.
		return c.Run(ctx)
	}
	if o.leaderElect {
		err = runLeaderElected(ctx, cfg, o, log, runController)
	} else {
		err = runController(ctx)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Error("stopped", "err", err)
		return exitError
	}
	log.Info("shut down cleanly")
	return exitOK
}

func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, `Usage: bellerophon [--kubeconfig FILE] [--namespace NS] [--workers N] [-v N] [--leader-elect]

Runs the Bellerophon operator against the API server of a kubeconfig until
SIGINT or SIGTERM.

Flags:
`)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, `
Example:
  cachelab serve --crd subjects/bellerophon/config/crd.yaml --kubelet --faults faults.json &
  bellerophon --kubeconfig out/serve/kubeconfig -v 1
`)
}

func orAll(ns string) string {
	if ns == "" {
		return "(all)"
	}
	return ns
}

// restConfig loads the kubeconfig at path, or by the usual rules ($KUBECONFIG,
// ~/.kube/config) when path is empty, with an operator's client settings.
func restConfig(path string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if path != "" {
		rules.ExplicitPath = path
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		where := path
		if where == "" {
			where = "$KUBECONFIG or ~/.kube/config"
		}
		return nil, fmt.Errorf("loading the kubeconfig (%s): %w (give --kubeconfig FILE, e.g. the one `cachelab serve` prints)", where, err)
	}
	cfg.UserAgent = "bellerophon"
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}

// newLogger returns a text logger at the level of -v and, with routeKlog,
// routes client-go's klog output through it with klog's verbosity set to -v.
func newLogger(w io.Writer, v int, routeKlog bool) *slog.Logger {
	level := slog.LevelInfo
	switch {
	case v == 1:
		level = slog.LevelDebug
	case v >= 2:
		level = levelTrace
	}
	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
	if !routeKlog {
		return log
	}
	kfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(kfs)
	_ = kfs.Set("v", strconv.Itoa(v))
	klog.SetSlogLogger(log)
	return log
}

// runLeaderElected runs f while this process holds the Lease, and returns
// when ctx ends (releasing the Lease) or the lease is lost.
func runLeaderElected(ctx context.Context, cfg *rest.Config, o *options, log *slog.Logger, f func(context.Context) error) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	id := host + "_" + string(uuid.NewUUID())
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, o.leaseNamespace, o.lease,
		kube.CoreV1(), kube.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return err
	}
	var runErr error
	started, done := make(chan struct{}), make(chan struct{})
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   15 * time.Second,
		RenewDeadline:   10 * time.Second,
		RetryPeriod:     2 * time.Second,
		ReleaseOnCancel: true,
		Name:            "bellerophon",
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				close(started)
				defer close(done)
				log.Info("leading", "lease", o.leaseNamespace+"/"+o.lease, "identity", id)
				runErr = f(ctx)
			},
			OnStoppedLeading: func() { log.Info("stopped leading", "identity", id) },
		},
	})
	if err != nil {
		return err
	}
	// Run returns when ctx ends or the Lease is lost, without waiting for
	// OnStartedLeading (whose context it cancelled): wait for it here.
	le.Run(ctx)
	select {
	case <-started:
		<-done
	default:
		// Never led: ctx ended while waiting for the Lease.
		return ctx.Err()
	}
	if runErr == nil && ctx.Err() == nil {
		return errors.New("lost the leader election Lease")
	}
	return runErr
}
