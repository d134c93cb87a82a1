package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/fakeapi"
)

// Contract-breaking fault names (RecFault with ContractBreaking set).
const (
	FaultDrop      = "drop"      // a watch event silently dropped
	FaultDuplicate = "duplicate" // a watch event delivered twice
	FaultReorder   = "reorder"   // two events of one stream swapped
)

// fakeapi's hooks can only delay events, in order: they cannot drop,
// duplicate or reorder within a stream (the API never does). The sim
// injects those contract-breaking faults between the server and the
// subject, in the watches of the ListerWatchers it hands out through
// Env.ListerWatcher. Subjects that watch through Env.Kube or Env.Dynamic
// are not affected.

// breakingLW wraps the subject's ListerWatcher with contract-breaking
// faults.
type breakingLW struct {
	inner  fakeapi.ListerWatcher
	r      *run
	client string
	gvr    schema.GroupVersionResource
}

var (
	_ cache.ListerWatcher            = (*breakingLW)(nil)
	_ cache.ListerWatcherWithContext = (*breakingLW)(nil)
)

func newBreakingLW(inner fakeapi.ListerWatcher, r *run, client string, gvr schema.GroupVersionResource) *breakingLW {
	return &breakingLW{inner: inner, r: r, client: client, gvr: gvr}
}

// ListWithContext lists through the server, untouched.
func (b *breakingLW) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	return b.inner.ListWithContext(ctx, o)
}

// WatchWithContext opens a watch whose events may be dropped, duplicated or
// swapped, as the plan's ContractBreaking asks.
func (b *breakingLW) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	w, err := b.inner.WatchWithContext(ctx, o)
	if err != nil {
		return nil, err
	}
	res := ResourceName(b.gvr)
	n := b.r.policy.nextOrdinal("contract/" + b.client + "/" + res)
	bw := &breakingWatch{
		inner:  w,
		out:    make(chan watch.Event),
		stop:   make(chan struct{}),
		rng:    stream(b.r.plan.Seed, "contract-breaking", b.client, res, strconv.Itoa(n)),
		cb:     b.r.plan.Faults.ContractBreaking,
		until:  b.r.policy.until,
		now:    b.r.now,
		record: b.r.rec.record,
		client: b.client,
		res:    res,
	}
	go bw.run()
	return bw, nil
}

// List lists (cache.ListerWatcher).
func (b *breakingLW) List(o metav1.ListOptions) (runtime.Object, error) {
	return b.ListWithContext(context.Background(), o)
}

// Watch watches (cache.ListerWatcher).
func (b *breakingLW) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return b.WatchWithContext(context.Background(), o)
}

// IsWatchListSemanticsUnSupported forwards the inner ListerWatcher's answer.
func (b *breakingLW) IsWatchListSemanticsUnSupported() bool {
	if u, ok := b.inner.(interface{ IsWatchListSemanticsUnSupported() bool }); ok {
		return u.IsWatchListSemanticsUnSupported()
	}
	return false
}

// breakingWatch forwards a watch's events, breaking the API's promises at
// the rates of the plan: only ADDED, MODIFIED and DELETED events are
// touched (never bookmarks or errors), and only before Until.
type breakingWatch struct {
	inner    watch.Interface
	out      chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
	rng      *rand.Rand
	cb       ContractBreaking
	until    time.Duration
	now      func() time.Duration
	record   func(Record)
	client   string
	res      string
}

// Stop ends the watch.
func (w *breakingWatch) Stop() {
	w.stopOnce.Do(func() {
		close(w.stop)
		w.inner.Stop()
	})
}

// ResultChan returns the (broken) events.
func (w *breakingWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *breakingWatch) fault(name string, ev watch.Event, detail string) {
	rec := Record{Kind: RecFault, Actor: ActorFaults, Fault: name, ContractBreaking: true, Target: w.client,
		Resource: w.res, EventType: string(ev.Type), Detail: detail}
	if m, err := meta.Accessor(ev.Object); err == nil {
		rec.Namespace, rec.Name, rec.UID = m.GetNamespace(), m.GetName(), string(m.GetUID())
		rec.RV, _ = strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	}
	w.record(rec)
}

func (w *breakingWatch) send(ev watch.Event) bool {
	select {
	case w.out <- ev:
		return true
	case <-w.stop:
		return false
	}
}

func (w *breakingWatch) run() {
	defer close(w.out)
	defer w.inner.Stop()
	var held *watch.Event // an event kept back to be swapped with the next
	in := w.inner.ResultChan()
	for {
		var ev watch.Event
		var ok bool
		select {
		case ev, ok = <-in:
		case <-w.stop:
			return
		}
		if !ok {
			if held != nil {
				w.send(*held)
			}
			return
		}
		data := ev.Type == watch.Added || ev.Type == watch.Modified || ev.Type == watch.Deleted
		if !data || w.now() > w.until {
			if held != nil {
				if !w.send(*held) {
					return
				}
				held = nil
			}
			if !w.send(ev) {
				return
			}
			continue
		}
		// Fixed number of draws per event, so later draws do not depend on
		// earlier outcomes.
		drop, dup, swap := w.rng.Float64() < w.cb.DropRate, w.rng.Float64() < w.cb.DuplicateRate, w.rng.IntN(2) == 0
		if drop {
			w.fault(FaultDrop, ev, "event dropped")
			continue
		}
		if held != nil {
			w.fault(FaultReorder, ev, fmt.Sprintf("delivered before the event of resourceVersion %s", rvOf(held.Object)))
			if !w.send(ev) || !w.send(*held) {
				return
			}
			held = nil
		} else if w.cb.ReorderInStream && swap {
			e := ev
			held = &e
			continue
		} else if !w.send(ev) {
			return
		}
		if dup {
			w.fault(FaultDuplicate, ev, "event delivered twice")
			if !w.send(ev) {
				return
			}
		}
	}
}

func rvOf(obj runtime.Object) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetResourceVersion()
	}
	return "?"
}
