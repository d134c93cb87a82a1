package lab

import (
	"context"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// PrepareClientGo adapts process-wide client-go settings to runs in
// synctest bubbles. Call it once, before any run.
//
// utilruntime.HandleError (called by client-go and by subjects on a failed
// reconcile) passes every error to utilruntime.ErrorHandlers, whose default
// includes a "rudimentary backoff" that sleeps minPeriod minus the time
// since the last error. Its last-error time is taken from the wall clock
// when the package initialises; inside a bubble the clock starts in 2000,
// so the difference is hugely negative and the sleep lasts for centuries of
// virtual time: the erroring goroutine never returns and the bubble ends
// with it blocked ("deadlock: main bubble goroutine has exited but blocked
// goroutines remain"). The errors are still logged through klog.
func PrepareClientGo() {
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{
		func(ctx context.Context, err error, msg string, keysAndValues ...any) {
			klog.FromContext(ctx).Error(err, msg, keysAndValues...)
		},
	}
}
