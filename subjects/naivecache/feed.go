package naivecache

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// origin says where an event fed to the cache came from.
type origin int

const (
	fromInitialList origin = iota // the first list: Initial in the trace
	fromRelist                    // a list after a 410, replayed as create events
	fromWatch                     // a watch event
)

// feed is the notes' main loop, steps 1 to 4, on a raw watch: list once,
// watch from the list's resourceVersion, apply each event to the cache, hand
// it to the handler. It returns when ctx is cancelled.
func (s *Subject) feed(ctx context.Context, lw cache.ListerWatcherWithContext) {
	needList, first := true, true
	for ctx.Err() == nil {
		if needList {
			if err := s.list(ctx, lw, first); err != nil {
				s.note(fmt.Sprintf("list failed: %v; retrying in %s", err, s.retryDelay))
				s.sleep(ctx, s.retryDelay)
				continue
			}
			needList, first = false, false
		}
		w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: s.lastRV})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if isExpired(err) {
				s.note(fmt.Sprintf("watch from resourceVersion %q refused: %v; relisting", s.lastRV, err))
				needList = true
				continue
			}
			s.note(fmt.Sprintf("watch from resourceVersion %q failed: %v; retrying in %s", s.lastRV, err, s.retryDelay))
			s.sleep(ctx, s.retryDelay)
			continue
		}
		events, expired := s.drain(ctx, w)
		w.Stop()
		switch {
		case ctx.Err() != nil:
			return
		case expired:
			needList = true
		case events == 0:
			// The notes say nothing here; without a pause a server that
			// closes every watch at once would spin this loop forever.
			s.note(fmt.Sprintf("watch from resourceVersion %q closed with no event; re-watching in %s", s.lastRV, s.retryDelay))
			s.sleep(ctx, s.retryDelay)
		default:
			s.note(fmt.Sprintf("watch closed after %d events; re-watching from resourceVersion %q", events, s.lastRV))
		}
	}
}

// list lists every object and feeds each to the cache as a create event. On
// a relist, keys the list does not contain are left in the cache: the notes
// have no rule for "absent from a list", only for events.
func (s *Subject) list(ctx context.Context, lw cache.ListerWatcherWithContext, first bool) error {
	obj, err := lw.ListWithContext(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	lm, err := meta.ListAccessor(obj)
	if err != nil {
		return fmt.Errorf("list answer %T is not a list: %v", obj, err)
	}
	items, err := meta.ExtractList(obj)
	if err != nil {
		return fmt.Errorf("list answer %T has no items: %v", obj, err)
	}
	o := fromInitialList
	if !first {
		o = fromRelist
		s.note(fmt.Sprintf("relist at resourceVersion %s: %d items replayed as create events; cached keys absent from the list are kept", lm.GetResourceVersion(), len(items)))
	}
	for _, it := range items {
		s.handle(watch.Event{Type: watch.Added, Object: it}, o)
	}
	s.lastRV = lm.GetResourceVersion()
	if !first {
		s.snapshot("relist")
	}
	return nil
}

// drain reads one watch until it closes, ctx is cancelled, or an ERROR event
// says the resourceVersion expired. It returns the number of object events.
func (s *Subject) drain(ctx context.Context, w watch.Interface) (events int, expired bool) {
	for {
		select {
		case <-ctx.Done():
			return events, false
		case ev, ok := <-w.ResultChan():
			if !ok {
				return events, false
			}
			switch ev.Type {
			case watch.Error:
				err := apierrors.FromObject(ev.Object)
				if isExpired(err) {
					s.note(fmt.Sprintf("watch error: %v; relisting", err))
					return events, true
				}
				s.note(fmt.Sprintf("watch error: %v; waiting for the watch to close", err))
			case watch.Bookmark:
				// Not asked for; if one comes anyway its resourceVersion is
				// as good as any.
				if rv := rvOf(ev.Object); rv != "" {
					s.lastRV = rv
				}
			default:
				events++
				s.handle(ev, fromWatch)
				if rv := rvOf(ev.Object); rv != "" {
					s.lastRV = rv
				}
			}
		}
	}
}

// isExpired reports a 410: Gone or Expired.
func isExpired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

func rvOf(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}

// sleep waits d or until ctx is cancelled.
func (s *Subject) sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
