package fakeapi

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// ListerWatcher is what Client.ListerWatcher returns: both client-go
// interfaces, so the value can be handed to cache.NewSharedIndexInformer
// (which takes a cache.ListerWatcher) and to code that wants the context
// variant.
type ListerWatcher interface {
	cache.ListerWatcher
	cache.ListerWatcherWithContext
}

// ListerWatcherOptions configures Client.ListerWatcherWithOptions.
type ListerWatcherOptions struct {
	// DisableWatchList makes the ListerWatcher report
	// IsWatchListSemanticsUnSupported, as client-go's fake clientsets do:
	// reflectors built on it LIST then WATCH even when the WatchListClient
	// feature gate is on. Optional; default false (WatchList is used).
	DisableWatchList bool
	// TweakListOptions, optional, edits the options of every list and watch
	// (label or field selectors), like informers' TweakListOptionsFunc.
	TweakListOptions func(*metav1.ListOptions)
}

// ListerWatcher returns a cache.ListerWatcher for one resource that supports
// WatchList semantics (informers built on it use WatchList when the client-go
// feature gate is on). Objects are typed for built-in kinds and
// *unstructured.Unstructured for CRDs.
func (c *Client) ListerWatcher(gvr schema.GroupVersionResource, ns string) ListerWatcher {
	return c.ListerWatcherWithOptions(gvr, ns, ListerWatcherOptions{})
}

// ListerWatcherWithOptions is ListerWatcher with options, e.g. to opt out of
// WatchList.
func (c *Client) ListerWatcherWithOptions(gvr schema.GroupVersionResource, ns string, opts ListerWatcherOptions) ListerWatcher {
	return &listerWatcher{c: c, gvr: gvr, ns: ns, opts: opts}
}

// listerWatcher sends the reflector's lists and watches to a Client.
type listerWatcher struct {
	c    *Client
	gvr  schema.GroupVersionResource
	ns   string
	opts ListerWatcherOptions
}

var _ ListerWatcher = (*listerWatcher)(nil)

func (lw *listerWatcher) tweak(o metav1.ListOptions) metav1.ListOptions {
	if lw.opts.TweakListOptions != nil {
		lw.opts.TweakListOptions(&o)
	}
	return o
}

// ListWithContext lists the resource.
func (lw *listerWatcher) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	return lw.c.List(ctx, lw.gvr, lw.ns, lw.tweak(o))
}

// WatchWithContext watches the resource.
func (lw *listerWatcher) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return lw.c.Watch(ctx, lw.gvr, lw.ns, lw.tweak(o))
}

// List lists the resource.
func (lw *listerWatcher) List(o metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), o)
}

// Watch watches the resource.
func (lw *listerWatcher) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), o)
}

// IsWatchListSemanticsUnSupported tells client-go's reflector whether to
// skip WatchList (see k8s.io/client-go/util/watchlist).
func (lw *listerWatcher) IsWatchListSemanticsUnSupported() bool { return lw.opts.DisableWatchList }
