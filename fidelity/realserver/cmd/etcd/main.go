// Command etcd is a single-member etcd for the fidelity real server: go.etcd.io/etcd's
// embed package, at the version k8s.io/kubernetes's go.mod names, started on loopback.
//
// It exists so that `make real-apiserver` needs nothing but the Go module proxy: the
// upstream etcd binary is a download this machine cannot make.
//
// Usage:
//
//	etcd --data-dir DIR [--listen-client-url URL] [--listen-peer-url URL] ...
//	etcd compact --endpoint URL   # compact at the current revision, as kube-apiserver does
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "compact" {
		if err := compact(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "etcd:", err)
			os.Exit(1)
		}
		return
	}
	dataDir := flag.String("data-dir", "", "directory for etcd's data (required)")
	clientURL := flag.String("listen-client-url", "http://127.0.0.1:2379", "URL etcd serves clients on (loopback only)")
	peerURL := flag.String("listen-peer-url", "http://127.0.0.1:2380", "URL etcd serves peers on (loopback only)")
	name := flag.String("name", "cachelab", "member name")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	quota := flag.Int64("quota-backend-bytes", 0, "backend size quota in bytes (0: etcd's default)")
	noFsync := flag.Bool("unsafe-no-fsync", false, "disable fsync (faster, loses data on a crash)")
	flag.Parse()
	if err := run(*dataDir, *clientURL, *peerURL, *name, *logLevel, *quota, *noFsync); err != nil {
		fmt.Fprintln(os.Stderr, "etcd:", err)
		os.Exit(1)
	}
}

func run(dataDir, clientURL, peerURL, name, logLevel string, quota int64, noFsync bool) error {
	if dataDir == "" {
		return fmt.Errorf("--data-dir is required (a directory for etcd's data)")
	}
	cu, err := url.Parse(clientURL)
	if err != nil {
		return fmt.Errorf("--listen-client-url %q: %v", clientURL, err)
	}
	pu, err := url.Parse(peerURL)
	if err != nil {
		return fmt.Errorf("--listen-peer-url %q: %v", peerURL, err)
	}
	cfg := embed.NewConfig()
	cfg.Name = name
	cfg.Dir = dataDir
	cfg.LogLevel = logLevel
	cfg.ListenClientUrls = []url.URL{*cu}
	cfg.AdvertiseClientUrls = []url.URL{*cu}
	cfg.ListenPeerUrls = []url.URL{*pu}
	cfg.AdvertisePeerUrls = []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(name)
	cfg.UnsafeNoFsync = noFsync
	if quota > 0 {
		cfg.QuotaBackendBytes = quota
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
		fmt.Fprintf(os.Stderr, "etcd: ready, serving clients on %s\n", clientURL)
	case <-time.After(60 * time.Second):
		e.Server.Stop()
		return fmt.Errorf("not ready after 60s")
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case s := <-sig:
		fmt.Fprintf(os.Stderr, "etcd: %v, stopping\n", s)
		return nil
	case err := <-e.Err():
		return err
	}
}
