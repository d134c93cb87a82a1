package bellerophon

import (
	"slices"
	"testing"

	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/sim"
)

// doneChecker is a cache.DoneChecker already done.
type doneChecker struct{}

func (doneChecker) Name() string { return "done" }
func (doneChecker) Done() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// syncedInformer is an informer that has synced, with an empty store.
type syncedInformer struct {
	cache.SharedIndexInformer
	store cache.Store
}

func (i syncedInformer) HasSyncedChecker() cache.DoneChecker { return doneChecker{} }
func (i syncedInformer) GetStore() cache.Store               { return i.store }

// syncedRegistration is a handler registration that has synced.
type syncedRegistration struct{}

func (syncedRegistration) HasSynced() bool                     { return true }
func (syncedRegistration) HasSyncedChecker() cache.DoneChecker { return doneChecker{} }

// TestSignalsThatFlipTogetherAreRecordedInOneOrder: when one check finds
// informer-synced, handler-synced and rv-synced all true at once, it
// records them in that order every time. They came from a Go map's
// iteration before (issue 16: most built-in runs' records differed from
// run to run there).
func TestSignalsThatFlipTogetherAreRecordedInOneOrder(t *testing.T) {
	var first []string
	for i := range 30 {
		rec := newTestRecorder()
		s := newSignals(recorder{actor: "b", rec: rec}, 0)
		s.add(ResourcePods, syncedInformer{store: cache.NewStore(cache.MetaNamespaceKeyFunc)}, syncedRegistration{})
		s.start()
		s.check()
		var order []string
		for _, r := range rec.where(func(r sim.Record) bool { return r.Kind == sim.RecSignal && r.Value }) {
			order = append(order, r.Signal+"/"+r.Resource)
		}
		if i == 0 {
			first = order
			want := []string{SignalInformerSynced + "/pods", SignalHandlerSynced + "/pods", SignalRVSynced + "/pods",
				SignalInformerSynced + "/", SignalHandlerSynced + "/", SignalRVSynced + "/"}
			if !slices.Equal(order, want) {
				t.Fatalf("signals recorded %v, want %v", order, want)
			}
			continue
		}
		if !slices.Equal(order, first) {
			t.Fatalf("check %d recorded the signals as %v, the first as %v", i+1, order, first)
		}
	}
}
