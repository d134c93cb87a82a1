package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// compactRevKey is the key kube-apiserver's compactor keeps the last compacted revision
// in (k8s.io/apiserver/pkg/storage/etcd3/compact.go); the apiserver watches it to learn
// the compacted revision, so an outside compaction must write it as the apiserver would.
const compactRevKey = "compact_rev_key"

// compact runs `etcd compact --endpoint URL`: compacts etcd at its current revision the
// way kube-apiserver's compactor does (a compare-and-swap on compact_rev_key, then
// Compact), and prints the compacted revision. Everything older is gone: a watch or list
// from an older resourceVersion gets 410 Gone from the apiserver.
func compact(args []string) error {
	fs := flag.NewFlagSet("compact", flag.ContinueOnError)
	endpoint := fs.String("endpoint", "", "etcd client URL (ETCD_ENDPOINT in /tmp/realserver.env)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *endpoint == "" {
		return fmt.Errorf("compact: --endpoint is required (ETCD_ENDPOINT from /tmp/realserver.env)")
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{*endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		return fmt.Errorf("compact: connect to %s: %v", *endpoint, err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	get, err := cli.Get(ctx, compactRevKey)
	if err != nil {
		return fmt.Errorf("compact: get %s: %v", compactRevKey, err)
	}
	var version int64
	if len(get.Kvs) > 0 {
		version = get.Kvs[0].Version
	}
	rev := get.Header.Revision
	txn, err := cli.Txn(ctx).If(
		clientv3.Compare(clientv3.Version(compactRevKey), "=", version),
	).Then(
		clientv3.OpPut(compactRevKey, strconv.FormatInt(rev, 10)),
	).Commit()
	if err != nil {
		return fmt.Errorf("compact: update %s: %v", compactRevKey, err)
	}
	if !txn.Succeeded {
		return fmt.Errorf("compact: %s changed concurrently (the apiserver compacted at the same time); try again", compactRevKey)
	}
	if _, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		return fmt.Errorf("compact: at revision %d: %v", rev, err)
	}
	fmt.Fprintln(os.Stdout, rev)
	return nil
}
