package sim_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/sim"
)

// loggingSubject logs through its context's logger, as client-go v0.37
// does (klog.FromContext), and through the global klog, as old code does.
type loggingSubject struct{}

func (loggingSubject) Start(ctx context.Context, env sim.Env) error {
	logger := klog.FromContext(ctx).WithName("worker").WithValues("key", "default/a")
	logger.Info("synced", "n", 3)
	logger.V(4).Info("chatter that is not recorded")
	logger.Error(errors.New("boom"), "Server rejected event")
	klog.Info("global klog line")
	return nil
}

func init() {
	sim.RegisterSubject(sim.SubjectInfo{Name: "sim-test/logging", Summary: "logs through klog (sim tests only)",
		New: func() sim.Subject { return loggingSubject{} }})
}

func TestWhatASubjectLogsWithItsContextGoesIntoTheTraceAndGlobalKlogIsQuiet(t *testing.T) {
	var stderr bytes.Buffer
	klog.SetOutput(&stderr)
	p := plan(sim.Step{At: at(time.Second), Actor: "controller", Op: "crash"})
	p.Subject = "sim-test/logging"
	var tr *sim.Trace
	var err error
	synctest.Test(t, func(t *testing.T) { tr, err = sim.RunInBubble(t.Context(), p) })
	if err != nil {
		t.Fatal(err)
	}
	logs := find(tr, func(r sim.Record) bool { return r.Kind == sim.RecLog })
	if len(logs) != 2 {
		t.Fatalf("%d log records, want 2 (V(4) is not recorded): %+v", len(logs), logs)
	}
	if l := logs[0]; l.Actor != "sim-test/logging" || l.Op != "info" || l.Detail != "worker: synced key=default/a n=3" {
		t.Errorf("info record = %+v", l)
	}
	if l := logs[1]; l.Op != "error" || l.Reason != "boom" || !strings.HasPrefix(l.Detail, "worker: Server rejected event") {
		t.Errorf("error record = %+v", l)
	}
	if strings.Contains(stderr.String(), "global klog line") {
		t.Errorf("global klog wrote %q although %s is unset", stderr.String(), sim.KlogEnv)
	}
}
