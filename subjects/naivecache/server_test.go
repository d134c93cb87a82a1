package naivecache

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/sim"
	st "github.com/cachelab/cachelab/subjects/internal/subjecttest"
)

// TestNaiveCacheConvergesOnTheFakeServerWithoutFaults: with no fault the
// naive automaton does its job: mirrors are created, follow their source and
// go with it, and the trace holds every kind of subject record.
func TestNaiveCacheConvergesOnTheFakeServerWithoutFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := st.MirrorStory(t, New(), Name, nil)
		synctest.Wait()
		st.RequireFullTrace(t, rec)
	})
}

// TestQuiescenceSaysSyncedWhileTheControllersOwnWriteIsInFlight is
// EDGE-CASES 4 on the real fake server: every watch event reaches the naive
// cache 1s after it was sent, ten times the quiet window. The controller
// creates a-mirror at 100ms, on the first "synced"; for the next second the
// server has a-mirror, the cache does not, and the signal says synced.
func TestQuiescenceSaysSyncedWhileTheControllersOwnWriteIsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		lab := st.NewLab(t, ctx, st.DelayWatchEventsOf(Name, time.Second), "a")
		s := New()
		lab.Start(t, ctx, s, Name, nil)

		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		if _, err := lab.User.Get(ctx, st.ConfigMaps, "ns", "a-mirror", metav1.GetOptions{}); err != nil {
			t.Fatalf("a-mirror not on the server at 500ms: %v\n%s", err, st.Dump(lab.Rec.Records()))
		}
		if _, ok := s.Cache().Get("ns/a-mirror"); ok {
			t.Fatalf("a-mirror already cached at 500ms: the watch was not delayed")
		}
		got := flips(lab.Rec)
		if want := []flip{{0, false}, {100 * time.Millisecond, true}}; !slices.Equal(got, want) {
			t.Fatalf("flips by 500ms %v, want %v: synced, with a-mirror in flight", got, want)
		}

		time.Sleep(time.Second)
		synctest.Wait()
		want := []flip{{0, false}, {100 * time.Millisecond, true}, {1100 * time.Millisecond, false}, {1200 * time.Millisecond, true}}
		if got := flips(lab.Rec); !slices.Equal(got, want) {
			t.Errorf("flips by 1.5s %v, want %v\n%s", got, want, st.Dump(lab.Rec.Records()))
		}
		if _, ok := s.Cache().Get("ns/a-mirror"); !ok {
			t.Errorf("a-mirror not cached at 1.5s")
		}
		cancel()
		synctest.Wait()
	})
}

// TestNaiveCacheKeepsAnObjectDeletedDuringA410Gap: b is deleted while the
// watch holds its events, then the watch expires (410) and the queued
// delete is lost with it. The naive relist has no rule for keys a list no
// longer holds: b and its mirror stay cached for good, and nothing ever
// makes the controller look at b again. (Both informer subjects deliver a
// DeletedFinalStateUnknown tombstone here.)
func TestNaiveCacheKeepsAnObjectDeletedDuringA410Gap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		lab := st.NewLab(t, ctx, st.DelayWatchEventsOf(Name, time.Second), "a", "b")
		s := New()
		lab.Start(t, ctx, s, Name, nil)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got := s.Cache().Keys(); !slices.Equal(got, []string{"ns/a", "ns/a-mirror", "ns/b", "ns/b-mirror"}) {
			t.Fatalf("cache before the gap %v, want a, b and their mirrors\n%s", got, st.Dump(lab.Rec.Records()))
		}
		gapAt := len(lab.Rec.Records())
		lab.DeleteDuringGap(t, ctx, "b")
		time.Sleep(5 * time.Second)
		synctest.Wait()

		if got := s.Cache().Keys(); !slices.Equal(got, []string{"ns/a", "ns/a-mirror", "ns/b", "ns/b-mirror"}) {
			t.Errorf("cache after the gap %v: want b and b-mirror still there", got)
		}
		for _, n := range []string{"b", "b-mirror"} {
			if _, err := lab.User.Get(ctx, st.ConfigMaps, "ns", n, metav1.GetOptions{}); err == nil {
				t.Errorf("%s still on the server: the recipe did not delete it", n)
			}
		}
		after := lab.Rec.Records()[gapAt:]
		var relist *sim.Record
		for _, r := range after {
			if r.Kind == sim.RecHandler && r.EventType == "DELETED" {
				t.Errorf("handler saw a delete after the gap: %+v", r)
			}
			if r.Kind == sim.RecReconcile && r.Key == "ns/b" {
				t.Errorf("b reconciled after the gap: something noticed it: %+v", r)
			}
			if r.Kind == sim.RecCache && r.Detail == "relist" {
				relist = &r
			}
		}
		if relist == nil || len(relist.Objects) != 4 || relist.Objects[2].Name != "b" || relist.Objects[3].Name != "b-mirror" {
			t.Errorf("want a relist whose snapshot still holds b and b-mirror\n%s", st.Dump(after))
		}
		cancel()
		synctest.Wait()
	})
}
