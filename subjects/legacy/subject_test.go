package legacy

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/sim"
	st "github.com/cachelab/cachelab/subjects/internal/subjecttest"
)

// listAB is a scripted ListerWatcher: a list of a and b at resourceVersion
// 10, then a watch that stays open and quiet.
func listAB() *st.LW {
	return &st.LW{
		ListScript: []func(metav1.ListOptions) (runtime.Object, error){
			func(metav1.ListOptions) (runtime.Object, error) {
				return st.List(10, st.ConfigMap("ns", "a", "uid-a", 9, nil), st.ConfigMap("ns", "b", "uid-b", 10, nil)), nil
			},
		},
		WatchScript: []func(context.Context, metav1.ListOptions) (watch.Interface, error){st.Feed(false)},
	}
}

func startOn(t *testing.T, ctx context.Context, s sim.Subject, name string, lw *st.LW) *st.Recorder {
	t.Helper()
	rec := st.NewRecorder()
	err := s.Start(ctx, sim.Env{Name: name, Kube: fake.NewClientset(), Rec: rec,
		ListerWatcher: func(schema.GroupVersionResource, string) cache.ListerWatcherWithContext { return lw }})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return rec
}

// positions finds the first record matching each predicate; -1 if none.
func position(recs []sim.Record, match func(sim.Record) bool) int {
	for _, r := range recs {
		if match(r) {
			return r.Pos
		}
	}
	return -1
}

// TestDeltaFIFOSubjectSeesSyncedWhileHandlingTheLastInitialItem is
// EDGE-CASES 3 inside the assembled informer: the synced channel, sampled in
// process, is already closed when b, the last item of the initial list, is
// handled with isInInitialList=true.
func TestDeltaFIFOSubjectSeesSyncedWhileHandlingTheLastInitialItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		rec := startOn(t, ctx, NewDeltaFIFO(), DeltaFIFOName, listAB())
		time.Sleep(time.Second)
		synctest.Wait()
		recs := rec.Records()
		sigs := rec.Signals(SignalFIFOSynced)
		if len(sigs) != 2 || sigs[0].Value || !strings.Contains(sigs[0].Detail, "ns/a") ||
			!sigs[1].Value || !strings.Contains(sigs[1].Detail, "ns/b (isInInitialList=true)") {
			t.Fatalf("fifo-synced samples: want false at ns/a then true at ns/b (isInInitialList=true)\n%s", st.Dump(recs))
		}
		hb := position(recs, func(r sim.Record) bool { return r.Kind == sim.RecHandler && r.Name == "b" && r.Initial })
		if hb < sigs[1].Pos {
			t.Errorf("initial handler call for b at %d, want after fifo-synced=true at %d\n%s", hb, sigs[1].Pos, st.Dump(recs))
		}
		// The workers' wait (cache.WaitFor on the channel) and the process
		// call race from the moment the channel closes: the note comes after
		// the false sample, in either order with the true one.
		start := position(recs, func(r sim.Record) bool { return r.Kind == sim.RecNote && strings.HasPrefix(r.Detail, "workers start") })
		if start < sigs[0].Pos {
			t.Errorf("workers should start once the channel closed\n%s", st.Dump(recs))
		}
		cancel()
		synctest.Wait()
	})
}

// TestRealFIFOSubjectSignalsHandlerSyncedAfterEveryInitialHandlerCall: the
// registration's HasSynced is done only after the handler returned on both
// initial items, and the workers wait for it.
func TestRealFIFOSubjectSignalsHandlerSyncedAfterEveryInitialHandlerCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		rec := startOn(t, ctx, NewRealFIFO(), RealFIFOName, listAB())
		time.Sleep(time.Second)
		synctest.Wait()
		recs := rec.Records()
		hs := position(recs, func(r sim.Record) bool { return r.Kind == sim.RecSignal && r.Signal == SignalHandlerSynced && r.Value })
		is := position(recs, func(r sim.Record) bool { return r.Kind == sim.RecSignal && r.Signal == SignalInformerSynced && r.Value })
		if hs < 0 || is < 0 {
			t.Fatalf("missing %s or %s\n%s", SignalHandlerSynced, SignalInformerSynced, st.Dump(recs))
		}
		for _, n := range []string{"a", "b"} {
			h := position(recs, func(r sim.Record) bool { return r.Kind == sim.RecHandler && r.Name == n && r.Initial })
			if h < 0 || h > hs {
				t.Errorf("initial handler call for %s at %d, want before %s at %d\n%s", n, h, SignalHandlerSynced, hs, st.Dump(recs))
			}
		}
		first := position(recs, func(r sim.Record) bool { return r.Kind == sim.RecReconcile })
		if first < hs {
			t.Errorf("first reconcile at %d, before %s at %d", first, SignalHandlerSynced, hs)
		}
		cancel()
		synctest.Wait()
	})
}

func TestStartRejectsBadParametersByName(t *testing.T) {
	for _, s := range []sim.Subject{NewDeltaFIFO(), NewRealFIFO()} {
		for want, params := range map[string]map[string]string{
			`unknown subject parameter "resyncPeriod"`: {"resyncPeriod": "1s"},
			`workers="none"`:          {ParamWorkers: "none"},
			`resync="-1s"`:            {ParamResync: "-1s"},
			`dropEndBookmark="maybe"`: {ParamDropEndBookmark: "maybe"},
		} {
			err := s.Start(t.Context(), sim.Env{Kube: fake.NewClientset(), Rec: st.NewRecorder(), Params: params,
				ListerWatcher: func(schema.GroupVersionResource, string) cache.ListerWatcherWithContext { return &st.LW{} }})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%T params %v: err %v, want one containing %q", s, params, err, want)
			}
		}
		if err := s.Start(t.Context(), sim.Env{}); err == nil {
			t.Errorf("%T: Start with an empty Env succeeded", s)
		}
		if err := s.Start(t.Context(), sim.Env{Kube: fake.NewClientset(), Rec: st.NewRecorder(), Params: map[string]string{ParamHandlerDelay: "-1s"},
			ListerWatcher: func(schema.GroupVersionResource, string) cache.ListerWatcherWithContext { return &st.LW{} }}); err == nil {
			t.Errorf("%T: Start with a negative handlerDelay succeeded", s)
		}
	}
	err := NewDeltaFIFO().Start(t.Context(), sim.Env{Kube: fake.NewClientset(), Rec: st.NewRecorder(), Params: map[string]string{ParamHandlerDelay: "1s"},
		ListerWatcher: func(schema.GroupVersionResource, string) cache.ListerWatcherWithContext { return &st.LW{} }})
	if err == nil || !strings.Contains(err.Error(), "stops virtual time") {
		t.Errorf("DeltaFIFO subject with a handlerDelay: err %v, want the explanation", err)
	}
}
