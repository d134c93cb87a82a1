package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/sim"
)

// newEnv builds the sim.Env the Bellerophon constructor takes from a real
// rest.Config, as the sim's "http" access path does over its pipe: a typed
// clientset, a dynamic client, and sim.RESTListerWatchers (typed objects
// for core/v1, unstructured ones for Bellerophons). A
// non-empty namespace confines every list and watch to it.
func newEnv(cfg *rest.Config, namespace string, rec sim.Recorder) (sim.Env, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return sim.Env{}, fmt.Errorf("building the clientset: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return sim.Env{}, fmt.Errorf("building the dynamic client: %w", err)
	}
	listWatch := sim.RESTListerWatchers(kube, dyn)
	lw := func(gvr schema.GroupVersionResource, ns string) cache.ListerWatcherWithContext {
		if namespace != "" {
			ns = namespace
		}
		return listWatch(gvr, ns)
	}
	return sim.Env{Name: "bellerophon", Kube: kube, Dynamic: dyn, ListerWatcher: lw, Rec: rec}, nil
}

// levelTrace is -v 2's slog level, below Debug.
const levelTrace = slog.LevelDebug - 4

// logRecorder is the sim.Recorder of a real process: it logs the records
// the controller makes instead of keeping a trace. Reconcile failures and
// notes are logged at Debug (-v 1) with every reconcile; handler calls,
// queue operations and sync signals at levelTrace (-v 2).
type logRecorder struct {
	log   *slog.Logger
	start time.Time
}

var _ sim.Recorder = (*logRecorder)(nil)

// Now returns the time since the process started.
func (r *logRecorder) Now() time.Duration { return time.Since(r.start) }

// Record logs rec.
func (r *logRecorder) Record(rec sim.Record) {
	ctx := context.Background()
	switch rec.Kind {
	case sim.RecReconcile:
		if rec.Op == "end" {
			r.log.Log(ctx, slog.LevelDebug, "reconciled", "key", rec.Key, "result", rec.Result)
		}
	case sim.RecNote:
		r.log.Log(ctx, slog.LevelDebug, "note", "detail", rec.Detail)
	case sim.RecSignal:
		r.log.Log(ctx, levelTrace, "sync signal", "signal", rec.Signal, "resource", rec.Resource, "value", rec.Value)
	case sim.RecHandler:
		r.log.Log(ctx, levelTrace, "handler", "handler", rec.Handler, "event", rec.EventType, "resource", rec.Resource,
			"object", rec.Namespace+"/"+rec.Name, "rv", rec.RV, "initial", rec.Initial, "tombstone", rec.Tombstone)
	case sim.RecQueue:
		r.log.Log(ctx, levelTrace, "queue", "op", rec.Op, "key", rec.Key)
	default:
		r.log.Log(ctx, levelTrace, string(rec.Kind), "detail", rec.Detail)
	}
}
