package legacy

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cachelab/cachelab/sim"
	st "github.com/cachelab/cachelab/subjects/internal/subjecttest"
)

// TestInformerSubjectsConvergeOnTheFakeServerWithoutFaults: both informer
// paths run the mirror controller to convergence against the real fake
// server and leave a full trace.
func TestInformerSubjectsConvergeOnTheFakeServerWithoutFaults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		subject func() sim.Subject
		signal  string
	}{
		{DeltaFIFOName, func() sim.Subject { return NewDeltaFIFO() }, SignalFIFOSynced},
		{RealFIFOName, func() sim.Subject { return NewRealFIFO() }, SignalHandlerSynced},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := st.MirrorStory(t, tc.subject(), tc.name, nil)
				synctest.Wait()
				st.RequireFullTrace(t, rec)
				if len(rec.Signals(tc.signal)) == 0 {
					t.Errorf("no %s signal recorded", tc.signal)
				}
			})
		})
	}
}

// TestInformerSubjectsDeliverATombstoneForADeleteLostInA410Gap is the
// informers' side of the naive cache's lost delete (EDGE-CASES 7): b is
// deleted while the watch holds its events, the watch expires, and the
// relist hands OnDelete a DeletedFinalStateUnknown for b (and for b-mirror,
// which the server's garbage collector removed with it).
func TestInformerSubjectsDeliverATombstoneForADeleteLostInA410Gap(t *testing.T) {
	for _, tc := range []struct {
		name    string
		subject func() sim.Subject
	}{
		{DeltaFIFOName, func() sim.Subject { return NewDeltaFIFO() }},
		{RealFIFOName, func() sim.Subject { return NewRealFIFO() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				lab := st.NewLab(t, ctx, st.DelayWatchEventsOf(tc.name, time.Second), "a", "b")
				lab.Start(t, ctx, tc.subject(), tc.name, nil)
				time.Sleep(5 * time.Second)
				synctest.Wait()
				lab.RequireDesired(t, ctx, "before the gap")
				gapAt := len(lab.Rec.Records())
				lab.DeleteDuringGap(t, ctx, "b")
				time.Sleep(5 * time.Second)
				synctest.Wait()
				// Objects known before the gap must leave through tombstones.
				// Objects made after it may be deleted by the watch: the
				// relist hands out its deletions in map order, so the
				// controller can reconcile b (on b-mirror's tombstone) while
				// b is still in its cache, recreate b-mirror, and see the
				// garbage collector delete that orphan through the watch.
				before := map[string]bool{}
				for _, r := range lab.Rec.Records()[:gapAt] {
					if r.Kind == sim.RecHandler {
						before[r.UID] = true
					}
				}
				tombs := map[string]bool{}
				for _, r := range lab.Rec.Records()[gapAt:] {
					if r.Kind == sim.RecHandler && r.EventType == "DELETED" && before[r.UID] {
						if !r.Tombstone {
							t.Errorf("delete of %s (uid %s, known before the gap) is not a tombstone: the watch delivered it\n%s", r.Name, r.UID, st.Dump(lab.Rec.Records()[gapAt:]))
						}
						tombs[r.Name] = true
					}
				}
				if !tombs["b"] || !tombs["b-mirror"] {
					t.Errorf("tombstones for %v, want b and b-mirror\n%s", tombs, st.Dump(lab.Rec.Records()[gapAt:]))
				}
				lab.RequireDesired(t, ctx, "after the gap")
				cancel()
				synctest.Wait()
			})
		})
	}
}
