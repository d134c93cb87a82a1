package sim

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/fakeapi"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// fakeNow is a settable virtual clock for policy tests.
type fakeNow struct{ t time.Duration }

func (f *fakeNow) now() time.Duration { return f.t }

func newTestPolicy(p *Plan) (*Policy, *fakeNow) {
	clk := &fakeNow{}
	p.ApplyDefaults()
	return NewPolicy(p, clk.now), clk
}

func latencies(pol *Policy, w fakeapi.WatcherInfo, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = pol.EventDelay(w, fakeapi.EventInfo{Type: watch.Added, RV: int64(i + 1)})
	}
	return out
}

func TestLatencyDrawsArePureFunctionsOfSeedClientResourceAndOrdinal(t *testing.T) {
	plan := func(seed uint64) *Plan {
		return &Plan{Seed: seed, Faults: FaultPolicy{Latency: Distribution{Kind: "uniform", Min: Duration(time.Millisecond), Max: Duration(time.Second)}},
			Steps: []Step{{At: Duration(time.Hour)}}}
	}
	w := fakeapi.WatcherInfo{ID: 17, Client: "ctrl", Resource: podsGVR}
	a, _ := newTestPolicy(plan(1))
	b, _ := newTestPolicy(plan(1))
	// b sees another client's watch first: global watch IDs differ, the
	// per-(client, resource) ordinal does not.
	b.EventDelay(fakeapi.WatcherInfo{ID: 3, Client: "other", Resource: podsGVR}, fakeapi.EventInfo{})
	wb := w
	wb.ID = 99
	la, lb := latencies(a, w, 50), latencies(b, wb, 50)
	for i := range la {
		if la[i] != lb[i] {
			t.Fatalf("draw %d: %s vs %s: same seed, client, resource and ordinal must draw the same", i, la[i], lb[i])
		}
		if la[i] < time.Millisecond || la[i] > time.Second {
			t.Fatalf("draw %d = %s outside [1ms, 1s]", i, la[i])
		}
	}
	if a.WatcherName(w) != "ctrl/pods#1" {
		t.Errorf("watcher name %q, want ctrl/pods#1", a.WatcherName(w))
	}
	// The second watch of the same client and resource has its own stream.
	second := latencies(a, fakeapi.WatcherInfo{ID: 18, Client: "ctrl", Resource: podsGVR}, 50)
	c, _ := newTestPolicy(plan(2))
	other := latencies(c, w, 50)
	same2, sameSeed := 0, 0
	for i := range la {
		if second[i] == la[i] {
			same2++
		}
		if other[i] == la[i] {
			sameSeed++
		}
	}
	if same2 > 5 || sameSeed > 5 {
		t.Errorf("streams not independent: %d equal draws with the next ordinal, %d with another seed (of 50)", same2, sameSeed)
	}
}

func TestDistributionDraws(t *testing.T) {
	r := stream(5, "test")
	if d := (Distribution{Kind: "fixed", Max: Duration(3 * time.Second)}).Draw(r); d != 3*time.Second {
		t.Errorf("fixed 3s drew %s", d)
	}
	if d := (Distribution{}).Draw(r); d != 0 {
		t.Errorf("none drew %s", d)
	}
	u := Distribution{Kind: "uniform", Min: Duration(10 * time.Millisecond), Max: Duration(20 * time.Millisecond)}
	lo, hi := time.Hour, time.Duration(0)
	for range 10000 {
		d := u.Draw(r)
		lo, hi = min(lo, d), max(hi, d)
	}
	if lo < 10*time.Millisecond || hi > 20*time.Millisecond || lo > 10100*time.Microsecond || hi < 19900*time.Microsecond {
		t.Errorf("uniform [10ms, 20ms] drew range [%s, %s]", lo, hi)
	}
	e := Distribution{Kind: "exponential", Mean: Duration(100 * time.Millisecond), Max: Duration(time.Hour)}
	var sum float64
	const n = 20000
	for range n {
		sum += float64(e.Draw(r))
	}
	if mean := time.Duration(sum / n); math.Abs(float64(mean-100*time.Millisecond)) > float64(5*time.Millisecond) {
		t.Errorf("exponential mean 100ms drew mean %s", mean)
	}
	capped := Distribution{Kind: "exponential", Mean: Duration(time.Second), Max: Duration(500 * time.Millisecond)}
	atCap := 0
	for range 1000 {
		d := capped.Draw(r)
		if d > 500*time.Millisecond {
			t.Fatalf("capped exponential drew %s > cap 500ms", d)
		}
		if d == 500*time.Millisecond {
			atCap++
		}
	}
	// P(X > 0.5s) for mean 1s is exp(-0.5) ~ 0.61.
	if atCap < 550 || atCap > 670 {
		t.Errorf("capped exponential hit the cap %d/1000 times, want ~607", atCap)
	}
	if d := (Distribution{Kind: "exponential", Mean: Duration(time.Second)}).Draw(stream(1, "x")); d > 10*time.Second {
		t.Errorf("exponential without max must cap at 10*mean, drew %s", d)
	}
}

func req(client, verb, rv string) fakeapi.RequestInfo {
	return fakeapi.RequestInfo{Client: client, Verb: verb, Resource: podsGVR, Namespace: "default", ResourceVersion: rv}
}

func TestRandomRequestErrorsFollowErrorRateAndSpareUserAndSetup(t *testing.T) {
	pol, clk := newTestPolicy(&Plan{Seed: 9, Faults: FaultPolicy{ErrorRate: 0.2}, Steps: []Step{{At: Duration(time.Minute)}}})
	counts := map[int]int{}
	const n = 5000
	for range n {
		f := pol.BeforeRequest(req("ctrl", "get", ""))
		if f.Err == nil {
			continue
		}
		st, ok := f.Err.(apierrors.APIStatus)
		if !ok {
			t.Fatalf("fault error %T is not an API status", f.Err)
		}
		c := int(st.Status().Code)
		counts[c]++
		if f.Name != "error-"+strconv.Itoa(c) {
			t.Fatalf("fault name %q for code %d", f.Name, c)
		}
		if c == http.StatusTooManyRequests {
			if s, ok := apierrors.SuggestsClientDelay(f.Err); !ok || s != 1 {
				t.Fatalf("429 without Retry-After 1: %v %v", s, ok)
			}
		}
	}
	total := counts[429] + counts[500] + counts[503]
	if total < n*17/100 || total > n*23/100 || len(counts) != 3 {
		t.Errorf("errors %v (total %d of %d), want ~20%% spread over 429, 500, 503", counts, total, n)
	}
	for _, c := range []string{ClientUser, ClientSetup, ClientSim} {
		for range 200 {
			if f := pol.BeforeRequest(req(c, "create", "")); f.Err != nil || f.ApplyThenTimeout {
				t.Fatalf("random fault hit client %q: %+v", c, f)
			}
		}
	}
	clk.t = time.Minute + 1 // Until defaults to the last step's time.
	for range 500 {
		if f := pol.BeforeRequest(req("ctrl", "get", "")); f.Err != nil {
			t.Fatalf("random fault drawn at Until: %v", f.Err)
		}
	}
}

func TestArmedFaultsHitTheNextMatchingRequestOnce(t *testing.T) {
	p := &Plan{Seed: 1, Steps: []Step{
		{At: 0, Actor: "faults", Op: "fail-next", Code: 410, Verb: "watch", Target: "ctrl"},
		{At: 0, Actor: "faults", Op: "timeout-next-write", Resource: "pods"},
	}}
	pol, _ := newTestPolicy(p)
	pol.Arm(0)
	pol.Arm(1)
	if f := pol.BeforeRequest(req("other", "watch", "5")); f.Err != nil {
		t.Fatalf("fail-next for ctrl hit client other: %v", f.Err)
	}
	if f := pol.BeforeRequest(req("ctrl", "list", "")); f.Err != nil {
		t.Fatalf("fail-next for watch hit a list: %v", f.Err)
	}
	f := pol.BeforeRequest(req("ctrl", "watch", "5"))
	if !apierrors.IsResourceExpired(f.Err) || f.Name != "fail-next-410" {
		t.Fatalf("armed 410 on watch: got %v (%q)", f.Err, f.Name)
	}
	if f := pol.BeforeRequest(req("ctrl", "watch", "5")); f.Err != nil {
		t.Fatalf("fail-next fired twice: %v", f.Err)
	}
	if f := pol.BeforeRequest(req("user", "get", "")); f.ApplyThenTimeout {
		t.Fatal("timeout-next-write hit a get")
	}
	if f := pol.BeforeRequest(req("user", "update", "")); !f.ApplyThenTimeout || f.Name != FaultTimeoutNextWrite {
		t.Fatalf("timeout-next-write did not hit the user's update: %+v", f)
	}
	if f := pol.BeforeRequest(req("user", "update", "")); f.ApplyThenTimeout {
		t.Fatal("timeout-next-write fired twice")
	}
}

func TestStaleReplicaServesOnlyResourceVersionZero(t *testing.T) {
	p := &Plan{Seed: 1, Faults: FaultPolicy{StaleReplicaLag: 2}, Steps: []Step{
		{At: Duration(time.Second), Actor: "faults", Op: "stale-replica", Lag: 7, For: Duration(time.Second)},
	}}
	pol, clk := newTestPolicy(p)
	if f := pol.BeforeRequest(req("ctrl", "list", "0")); f.ReplicaLag != 2 || f.Name != FaultStaleReplica {
		t.Fatalf("list at RV 0: %+v, want lag 2", f)
	}
	if f := pol.BeforeRequest(req("ctrl", "list", "")); f.ReplicaLag != 0 {
		t.Fatalf("consistent list served stale: %+v", f)
	}
	clk.t = time.Second
	latest := attachServerAt(t, pol, 10)
	if held := pol.StaleReplica(0); held != latest-7 {
		t.Fatalf("replica held at %d, want 7 behind the latest %d", held, latest)
	}
	if f := pol.BeforeRequest(req("ctrl", "watch", "0")); f.ReplicaAt != latest-7 || f.ReplicaLag != 2 {
		t.Fatalf("watch at RV 0 in the step's window: %+v, want held at %d (and the policy's lag 2)", f, latest-7)
	}
	clk.t = 2 * time.Second
	if f := pol.BeforeRequest(req("ctrl", "list", "0")); f.ReplicaLag != 2 || f.ReplicaAt != 0 {
		t.Fatalf("after the window: %+v, want lag 2 and no held replica", f)
	}
}

// attachServerAt attaches a server to pol after n writes and returns its
// latest revision.
func attachServerAt(t *testing.T, pol *Policy, n int) int64 {
	t.Helper()
	srv := fakeapi.NewServer(fakeapi.Options{})
	c := srv.Client("setup")
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%d", i), Namespace: "default"}}
		if _, err := c.Create(context.Background(), gvr, "default", cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pol.Attach(srv)
	return srv.ResourceVersion()
}

func TestStaleReplicaIsHeldInTimeNotByACountOfWrites(t *testing.T) {
	p := &Plan{Seed: 1, Steps: []Step{
		{At: Duration(time.Second), Actor: "faults", Op: "stale-replica", Lag: 1, Target: "ctrl"},
	}}
	pol, clk := newTestPolicy(p)
	clk.t = time.Second
	srv := fakeapi.NewServer(fakeapi.Options{})
	pol.Attach(srv)
	c := srv.Client("ctrl")
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	create := func(name string) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
		if _, err := c.Create(context.Background(), gvr, "default", cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("a")
	create("b")
	held := pol.StaleReplica(0)
	// The controller writes three times: the replica stays where it was.
	create("c")
	create("d")
	create("e")
	f := pol.BeforeRequest(req("ctrl", "list", "0"))
	if f.ReplicaAt != held || held != srv.ResourceVersion()-4 {
		t.Fatalf("after three more writes: %+v, want the replica still held at %d (latest %d)", f, held, srv.ResourceVersion())
	}
	// A plain watch from the replica's revision is served by it; one from
	// beyond it is not.
	if f := pol.BeforeRequest(req("ctrl", "watch", strconv.FormatInt(held, 10))); f.ReplicaAt != held {
		t.Fatalf("watch from the held revision: %+v, want served by the replica", f)
	}
	if f := pol.BeforeRequest(req("ctrl", "watch", strconv.FormatInt(held+1, 10))); f.ReplicaAt != 0 {
		t.Fatalf("watch from beyond the held revision: %+v, want not served by the replica", f)
	}
	if f := pol.BeforeRequest(req("other", "list", "0")); f.ReplicaAt != 0 {
		t.Fatalf("another client's list: %+v, want not served by the target's replica", f)
	}
}

func TestExpireOnRewatchHitsOnlyResumingWatches(t *testing.T) {
	pol, _ := newTestPolicy(&Plan{Seed: 3, Faults: FaultPolicy{ExpireOnRewatch: 1}, Steps: []Step{{At: Duration(time.Hour)}}})
	for _, rv := range []string{"", "0"} {
		if f := pol.BeforeRequest(req("ctrl", "watch", rv)); f.Err != nil {
			t.Fatalf("watch from RV %q got %v", rv, f.Err)
		}
	}
	wl := req("ctrl", "watch", "12")
	wl.SendInitialEvents = true
	if f := pol.BeforeRequest(wl); f.Err != nil {
		t.Fatalf("WatchList got %v", f.Err)
	}
	if f := pol.BeforeRequest(req("ctrl", "watch", "12")); !apierrors.IsResourceExpired(f.Err) || f.Name != FaultExpireOnRewatch {
		t.Fatalf("re-watch from 12 with probability 1: %+v", f)
	}
}

func TestHoldDelaysEventsSentDuringItUntilItEnds(t *testing.T) {
	p := &Plan{Seed: 1, Deadline: Duration(time.Minute), Steps: []Step{
		{At: Duration(10 * time.Second), Actor: "faults", Op: "hold", Resource: "pods"},
		{At: Duration(15 * time.Second), Actor: "faults", Op: "release", Resource: "configmaps"},
		{At: Duration(18 * time.Second), Actor: "faults", Op: "release", Resource: "pods"},
	}}
	if end := HoldEnd(p.Steps, 0, time.Minute); end != 18*time.Second {
		t.Fatalf("HoldEnd = %s, want 18s (the matching release)", end)
	}
	pol, clk := newTestPolicy(p)
	w := fakeapi.WatcherInfo{ID: 1, Client: "ctrl", Resource: podsGVR}
	clk.t = 10 * time.Second
	if end := pol.Hold(0); end != 18*time.Second {
		t.Fatalf("Hold returned %s, want 18s", end)
	}
	// Sent at 12s, asked at 12s: held 6s.
	clk.t = 12 * time.Second
	pol.WatchSent(w)
	if d := pol.EventDelay(w, fakeapi.EventInfo{}); d != 6*time.Second {
		t.Fatalf("event sent at 12s: delay %s, want 6s", d)
	}
	// Sent at 13s, asked at 17s (behind the first): still by the send time.
	clk.t = 13 * time.Second
	pol.WatchSent(w)
	clk.t = 17 * time.Second
	if d := pol.EventDelay(w, fakeapi.EventInfo{}); d != 5*time.Second {
		t.Fatalf("event sent at 13s: delay %s, want 5s", d)
	}
	// Asked before it was observed as sent (same instant): sent now.
	clk.t = 19 * time.Second
	if d := pol.EventDelay(w, fakeapi.EventInfo{}); d != 0 {
		t.Fatalf("event after the hold: delay %s, want 0", d)
	}
	pol.WatchSent(w)
	other := fakeapi.WatcherInfo{ID: 2, Client: "ctrl", Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}}
	clk.t = 12 * time.Second
	pol.WatchSent(other)
	if d := pol.EventDelay(other, fakeapi.EventInfo{}); d != 0 {
		t.Fatalf("hold on pods delayed configmaps by %s", d)
	}
}

func TestDisconnectDelaysAreDrawnPerWatchWithinTwiceTheMean(t *testing.T) {
	p := &Plan{Seed: 11, Faults: FaultPolicy{DisconnectEvery: Duration(10 * time.Second)}}
	a, _ := newTestPolicy(p.Clone())
	b, _ := newTestPolicy(p.Clone())
	abrupt := 0
	for i := range 200 {
		w := fakeapi.WatcherInfo{ID: fakeapi.WatcherID(i + 1), Client: "ctrl", Resource: podsGVR}
		da, xa, ok := a.DisconnectDelay(w)
		db, xb, _ := b.DisconnectDelay(w)
		if !ok || da != db || xa != xb {
			t.Fatalf("watch %d: %s/%v vs %s/%v", i, da, xa, db, xb)
		}
		if da < 0 || da > 20*time.Second {
			t.Fatalf("disconnect delay %s outside [0, 20s]", da)
		}
		if xa {
			abrupt++
		}
	}
	if abrupt < 70 || abrupt > 130 {
		t.Errorf("%d of 200 disconnects abrupt, want about half", abrupt)
	}
}

func TestStaleReplicaNotOlderThanAlsoServesReadsAtAGivenRV(t *testing.T) {
	p := &Plan{Seed: 1, Steps: []Step{
		{At: Duration(time.Second), Actor: "faults", Op: "stale-replica", Lag: 3},
		{At: Duration(time.Second), Actor: "faults", Op: "stale-replica", Lag: 5, NotOlderThan: true, For: Duration(time.Second)},
	}}
	pol, clk := newTestPolicy(p)
	clk.t = time.Second
	latest := attachServerAt(t, pol, 12)
	pol.StaleReplica(0)
	if f := pol.BeforeRequest(req("ctrl", "list", "11")); f.ReplicaAt != 0 {
		t.Fatalf("list at RV 11 without notOlderThan served by the replica: %+v", f)
	}
	pol.StaleReplica(1)
	for _, verb := range []string{"list", "watch"} {
		r := req("ctrl", verb, "11")
		r.SendInitialEvents = verb == "watch"
		if f := pol.BeforeRequest(r); f.ReplicaAt != latest-5 || f.Name != FaultStaleReplica {
			t.Fatalf("%s at RV 11 in a notOlderThan window: %+v, want held at %d", verb, f, latest-5)
		}
	}
	if f := pol.BeforeRequest(req("ctrl", "list", "0")); f.ReplicaAt != latest-5 {
		t.Fatalf("list at RV 0: %+v, want the replica further behind (%d)", f, latest-5)
	}
	if f := pol.BeforeRequest(req("ctrl", "list", "")); f.ReplicaAt != 0 || f.ReplicaLag != 0 {
		t.Fatalf("consistent list served stale: %+v", f)
	}
	clk.t = 2 * time.Second
	if f := pol.BeforeRequest(req("ctrl", "list", "11")); f.ReplicaAt != 0 {
		t.Fatalf("after the notOlderThan window: %+v, want not served by the replica", f)
	}
}
