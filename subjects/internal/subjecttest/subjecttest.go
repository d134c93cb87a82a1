// Package subjecttest holds what the subjects' tests share: an in-memory
// sim.Recorder, a scripted ListerWatcher, and queries over recorded records.
// Tests only.
package subjecttest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/sim"
)

// Recorder is an in-memory sim.Recorder stamping Pos and At (virtual time
// since it was made).
type Recorder struct {
	mu    sync.Mutex
	start time.Time
	recs  []sim.Record
}

// NewRecorder returns a Recorder whose clock starts now.
func NewRecorder() *Recorder { return &Recorder{start: time.Now()} }

// Record implements sim.Recorder.
func (r *Recorder) Record(rec sim.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec.Pos = len(r.recs)
	rec.At = sim.Duration(time.Since(r.start))
	r.recs = append(r.recs, rec)
}

// Now implements sim.Recorder.
func (r *Recorder) Now() time.Duration { return time.Since(r.start) }

// Records returns a copy of the records so far.
func (r *Recorder) Records() []sim.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sim.Record(nil), r.recs...)
}

// Of returns the records of one kind.
func (r *Recorder) Of(kind sim.RecordKind) []sim.Record {
	var out []sim.Record
	for _, rec := range r.Records() {
		if rec.Kind == kind {
			out = append(out, rec)
		}
	}
	return out
}

// Notes returns the Detail of every note record.
func (r *Recorder) Notes() []string {
	var out []string
	for _, rec := range r.Of(sim.RecNote) {
		out = append(out, rec.Detail)
	}
	return out
}

// HasNote reports whether a note contains s.
func (r *Recorder) HasNote(s string) bool {
	for _, n := range r.Notes() {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// Signals returns the signal records of one signal name.
func (r *Recorder) Signals(name string) []sim.Record {
	var out []sim.Record
	for _, rec := range r.Of(sim.RecSignal) {
		if rec.Signal == name {
			out = append(out, rec)
		}
	}
	return out
}

// Dump formats records one a line, for failure messages.
func Dump(recs []sim.Record) string {
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "%4d %8s %-9s", r.Pos, r.At, r.Kind)
		for _, f := range []struct{ k, v string }{
			{"sig", r.Signal}, {"ev", r.EventType}, {"op", r.Op}, {"key", r.Key},
			{"name", r.Name}, {"uid", r.UID}, {"result", r.Result}, {"detail", r.Detail},
		} {
			if f.v != "" {
				fmt.Fprintf(&b, " %s=%s", f.k, f.v)
			}
		}
		if r.Kind == sim.RecSignal {
			fmt.Fprintf(&b, " value=%v", r.Value)
		}
		if r.RV != 0 {
			fmt.Fprintf(&b, " rv=%d", r.RV)
		}
		if r.Initial {
			b.WriteString(" initial")
		}
		if r.Tombstone {
			b.WriteString(" tombstone")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// ConfigMap returns a ConfigMap with the given identity and data.
func ConfigMap(ns, name, uid string, rv int, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), ResourceVersion: fmt.Sprint(rv)},
		Data:       data,
	}
}

// List returns a ConfigMapList at resourceVersion rv.
func List(rv int, cms ...*corev1.ConfigMap) *corev1.ConfigMapList {
	l := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: fmt.Sprint(rv)}}
	for _, cm := range cms {
		l.Items = append(l.Items, *cm.DeepCopy())
	}
	return l
}

// LW is a scripted ListerWatcher (with and without context). Each List and
// Watch call is answered by the next function of its script; the last one
// answers every call after it. It records the options of every call. It says
// WatchList semantics are unsupported, so a reflector lists then watches.
type LW struct {
	mu sync.Mutex
	// ListScript answers List calls in order.
	ListScript []func(opts metav1.ListOptions) (runtime.Object, error)
	// WatchScript answers Watch calls in order.
	WatchScript []func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	lists       []metav1.ListOptions
	watches     []metav1.ListOptions
}

// ListWithContext answers from ListScript.
func (l *LW) ListWithContext(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	l.mu.Lock()
	n := len(l.lists)
	l.lists = append(l.lists, opts)
	l.mu.Unlock()
	if len(l.ListScript) == 0 {
		return nil, fmt.Errorf("subjecttest: no list scripted")
	}
	return l.ListScript[min(n, len(l.ListScript)-1)](opts)
}

// WatchWithContext answers from WatchScript.
func (l *LW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	l.mu.Lock()
	n := len(l.watches)
	l.watches = append(l.watches, opts)
	l.mu.Unlock()
	if len(l.WatchScript) == 0 {
		return nil, fmt.Errorf("subjecttest: no watch scripted")
	}
	return l.WatchScript[min(n, len(l.WatchScript)-1)](ctx, opts)
}

// List is ListWithContext without a context.
func (l *LW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

// Watch is WatchWithContext without a context.
func (l *LW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

// IsWatchListSemanticsUnSupported tells reflectors to list, then watch.
func (l *LW) IsWatchListSemanticsUnSupported() bool { return true }

// Calls returns the options of every List and Watch call so far.
func (l *LW) Calls() (lists, watches []metav1.ListOptions) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]metav1.ListOptions(nil), l.lists...), append([]metav1.ListOptions(nil), l.watches...)
}

// Feed returns a watch script step whose watch sends events at the given
// virtual delays after it opens (each delay counted from the previous
// event), then stays open until ctx ends or Stop. Closing after the last
// event: set closeAfter.
func Feed(closeAfter bool, steps ...Step) func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return func(ctx context.Context, _ metav1.ListOptions) (watch.Interface, error) {
		ch := make(chan watch.Event)
		pw := &pipeWatch{ch: ch, stop: make(chan struct{})}
		go func() {
			defer close(ch)
			for _, s := range steps {
				t := time.NewTimer(s.After)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-pw.stop:
					t.Stop()
					return
				case <-t.C:
				}
				select {
				case ch <- s.Event:
				case <-ctx.Done():
					return
				case <-pw.stop:
					return
				}
			}
			if closeAfter {
				return
			}
			select {
			case <-ctx.Done():
			case <-pw.stop:
			}
		}()
		return pw, nil
	}
}

// Step is one scripted watch event, sent After the previous one.
type Step struct {
	After time.Duration
	Event watch.Event
}

// pipeWatch is a watch.Interface over a channel fed by a script goroutine
// that exits on Stop or when its context ends.
type pipeWatch struct {
	ch   chan watch.Event
	stop chan struct{}
	once sync.Once
}

// Stop ends the script goroutine; it may be called more than once.
func (p *pipeWatch) Stop() { p.once.Do(func() { close(p.stop) }) }

// ResultChan returns the scripted events; it closes when the script ends.
func (p *pipeWatch) ResultChan() <-chan watch.Event { return p.ch }

// Expired is a watch ERROR event saying 410 Expired.
func Expired() watch.Event {
	return watch.Event{Type: watch.Error, Object: &metav1.Status{
		Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired,
		Message: "too old resource version",
	}}
}
