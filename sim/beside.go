package sim

import (
	"context"
	"fmt"

	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ClientBeside is the client name of SubjectInfo.Beside's Env: the helper
// actors a subject runs beside it for the whole run (a cluster's
// controllers name their own clients from Env.RESTConfig).
const ClientBeside = "beside"

// checkBeside says what is wrong with info's run-scoped settings.
func checkBeside(info SubjectInfo) error {
	if info.ExternalGC && info.Beside == nil {
		return fmt.Errorf("sim: subject %s: ExternalGC leaves garbage collection to a collector that Beside runs, and Beside is nil: without one, a deleted owner's dependents stay forever (set Beside, e.g. upstream/cluster's with its GarbageCollector, or drop ExternalGC)", info.Name)
	}
	return nil
}

// startBeside starts info.Beside, if any, once for the run: on a context of
// its own (a crash of the subject does not end it; stop and shutdown do),
// with clients named ClientBeside. Like startSubject, it runs Beside on a
// goroutine while the run loop gives its requests their turns.
func (r *run) startBeside() error {
	if r.info.Beside == nil {
		return nil
	}
	name := ClientBeside
	ctx, cancel := context.WithCancel(r.ctx)
	r.besideCancel = cancel
	env, ctx := r.helperEnv(ctx, name)
	var err error
	if !r.callUntilDeadline(cancel, func() { err = r.info.Beside(ctx, env) }) {
		return fmt.Errorf("sim: subject %s: Beside did not return before the deadline %s (it must return once its actors are started)", r.info.Name, r.plan.Deadline)
	}
	if err != nil {
		cancel()
		return fmt.Errorf("sim: subject %s: Beside: %w", r.info.Name, err)
	}
	return nil
}

// helperEnv returns the Env of a helper actor of the run (Beside, the
// webhooks' Setup): clients named name bound to ctx, and ctx with a logger
// that records into the trace as name.
func (r *run) helperEnv(ctx context.Context, name string) (Env, context.Context) {
	client := r.srv.Client(name).BoundTo(ctx)
	env := Env{
		Name:       name,
		Kube:       client.Clientset(),
		Dynamic:    client.Dynamic(),
		RESTConfig: r.restConfig(name),
		Rec:        actorRecorder{r.rec, name},
		Params:     r.plan.SubjectParams,
		ListerWatcher: func(gvr schema.GroupVersionResource, ns string) cache.ListerWatcherWithContext {
			return client.ListerWatcher(gvr, ns)
		},
	}
	return env, klog.NewContext(ctx, newTraceLogger(r.rec, name))
}

// callUntilDeadline calls f on a goroutine of its own while the run loop
// gives the requests it makes their turns, until f returns or the plan's
// deadline passes; then it cancels (f's context), lets the run drain, and
// returns false. Starting the subject, Beside and the webhooks' Setup go
// through it.
func (r *run) callUntilDeadline(cancel context.CancelFunc, f func()) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	r.pump(r.plan.Deadline.D(), done, false)
	select {
	case <-done:
		return true
	default:
		cancel()
		r.pump(r.now(), done, true)
		return false
	}
}
