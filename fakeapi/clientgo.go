package fakeapi

import (
	"context"
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

var prepareClientGoOnce sync.Once

// PrepareClientGo adapts process-wide client-go settings to clients of the
// fake server running in synctest bubbles. NewServer calls it (and so
// does fakeapi/http's NewPipe, and sim's runs); calling it again is
// harmless.
//
// utilruntime.HandleError (called by client-go's reflector on a failed list
// or watch, and by controllers on a failed reconcile) passes every error to
// utilruntime.ErrorHandlers, whose default includes a "rudimentary backoff"
// that sleeps minPeriod minus the time since the last error, read from a
// process-wide clock. Each bubble's clock starts at 2000-01-01, so in a later
// bubble that difference is huge and the sleep outlives the bubble: the
// erroring goroutine sleeps for virtual years (a manager's reflector, in
// issue 15) or synctest fails the run with "blocked goroutines remain". The
// replacement keeps logging every error through klog and drops only the
// backoff.
func PrepareClientGo() {
	prepareClientGoOnce.Do(func() {
		utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{
			func(ctx context.Context, err error, msg string, keysAndValues ...any) {
				klog.FromContext(ctx).Error(err, msg, keysAndValues...)
			},
		}
	})
}
