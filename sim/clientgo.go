package sim

import (
	"sync"

	"github.com/cachelab/cachelab/fakeapi"
)

var prepareClientGoOnce sync.Once

// PrepareClientGo adapts process-wide client-go settings to runs in synctest
// bubbles. RunInBubble calls it; calling it again is harmless.
//
// utilruntime.HandleError (called by client-go's reflector on a failed list
// or watch, and by subjects on a failed reconcile) passes every error to
// utilruntime.ErrorHandlers, whose default includes a "rudimentary backoff"
// that sleeps minPeriod minus the time since the last error, read from a
// process-wide clock. Each bubble's clock starts at 2000-01-01, so in a later
// bubble that difference is huge and the sleep outlives the bubble: the
// erroring goroutine never returns and synctest fails the run with "blocked
// goroutines remain". fakeapi.PrepareClientGo replaces it with a handler
// that keeps logging every error through klog and drops only the backoff.
func PrepareClientGo() {
	prepareClientGoOnce.Do(func() {
		QuietGlobalKlog()
		fakeapi.PrepareClientGo()
	})
}
