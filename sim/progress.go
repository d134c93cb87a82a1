package sim

import (
	"context"
	"sync/atomic"
)

// progressKey is the context key of WithProgress.
type progressKey struct{}

// WithProgress returns ctx under which a run (RunInBubble) adds one to n
// for every record it makes. A watchdog outside the bubble, which cannot
// read the bubble's clock, tells by it a run that is slow (starved of CPU
// on a loaded machine: records keep coming) from one that is stuck.
func WithProgress(ctx context.Context, n *atomic.Int64) context.Context {
	return context.WithValue(ctx, progressKey{}, n)
}

// progressOf returns the counter WithProgress put in ctx, or nil.
func progressOf(ctx context.Context) *atomic.Int64 {
	n, _ := ctx.Value(progressKey{}).(*atomic.Int64)
	return n
}
