package lab_test

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
	_ "github.com/cachelab/cachelab/subjects/bellerophon"
	_ "github.com/cachelab/cachelab/subjects/legacy"
	_ "github.com/cachelab/cachelab/subjects/naivecache"
)

// divergence is how two runs of one plan differ (issue 16): where their
// delivery schedules first differ, where the records at the API boundary
// first differ, and whether a client's handlers saw one batch of objects
// in another order before that.
type divergence struct {
	// schedule is the index of the first differing schedule key, -1 when
	// the schedules are the same; keyA and keyB are the keys there.
	schedule   int
	keyA, keyB string
	// boundary is true when the API-boundary records (answers and
	// deliveries) differ; boundaryPos is the position in the first run's
	// trace of the first difference (its record count if past its end).
	boundary    bool
	boundaryPos int
	// permuted is true when one client's handlers were called on the same
	// objects in another order in the two runs: client-go handing out a
	// batch in Go map order (the WatchList's temporary store,
	// reflector.go:901; a relist's deletions from its known objects).
	// permutedPos is the position in the first run's trace of the first
	// handler call out of order; permutation says what.
	permuted    bool
	permutedPos int
	permutation string
}

// explained reports whether the runs' schedules differ only downstream of
// a handler batch client-go gave out in map order: the first handler call
// out of order comes before the first differing answer or delivery (a
// handler call caused by a delivery in another order comes after it). A
// difference not explained so is a cause to look for in the lab's own
// code.
func (d divergence) explained() bool {
	if d.schedule < 0 {
		return true
	}
	return d.permuted && (!d.boundary || d.permutedPos < d.boundaryPos)
}

func (d divergence) String() string {
	if d.schedule < 0 {
		return "same schedule"
	}
	s := fmt.Sprintf("schedule differs at turn %d (%q vs %q)", d.schedule, d.keyA, d.keyB)
	if d.boundary {
		s += fmt.Sprintf("; first differing answer or delivery: record %d", d.boundaryPos)
	}
	if d.permuted {
		s += fmt.Sprintf("; record %d: %s", d.permutedPos, d.permutation)
	} else {
		s += "; no handler batch in another order"
	}
	return s
}

// diverge compares two traces of one plan.
func diverge(a, b *sim.Trace) divergence {
	d := divergence{schedule: -1}
	if i := firstDiff(a.Schedule, b.Schedule); i >= 0 {
		d.schedule = i
		d.keyA, d.keyB = at(a.Schedule, i), at(b.Schedule, i)
	}
	ba, pa := boundary(a)
	bb, _ := boundary(b)
	if i := firstDiff(ba, bb); i >= 0 {
		d.boundary = true
		d.boundaryPos = len(a.Records)
		if i < len(pa) {
			d.boundaryPos = pa[i]
		}
	}
	d.permuted, d.permutedPos, d.permutation = permutation(a, b)
	return d
}

// at is s[i], or "(end)" past its end.
func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(end)"
}

// firstDiff is the first index where a and b differ, -1 if equal.
func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// boundary lists the trace's answered requests and delivered watch
// events, each projected to what the API boundary decided, in record order,
// with their positions.
func boundary(t *sim.Trace) (recs []string, pos []int) {
	for i, r := range t.Records {
		if r.Kind != sim.RecRequest && r.Kind != sim.RecDelivered {
			continue
		}
		recs = append(recs, fmt.Sprintf("%s %s %s %s %s/%s/%s %s %s %d",
			r.At, r.Kind, r.Actor, r.Verb, r.Resource, r.Namespace, r.Name, r.Watcher, r.EventType, r.Code))
		pos = append(pos, i)
	}
	return recs, pos
}

// handlerCalls lists the trace's handler calls per client and resource, in
// record order, with their positions.
func handlerCalls(t *sim.Trace) (keys []string, calls map[string][]string, pos map[string][]int) {
	calls, pos = map[string][]string{}, map[string][]int{}
	for i, r := range t.Records {
		if r.Kind != sim.RecHandler {
			continue
		}
		k := r.Actor + " " + r.Resource
		if _, ok := calls[k]; !ok {
			keys = append(keys, k)
		}
		calls[k] = append(calls[k], fmt.Sprintf("%s %s/%s rv %d", r.EventType, r.Namespace, r.Name, r.RV))
		pos[k] = append(pos[k], i)
	}
	return keys, calls, pos
}

// permutation finds the earliest handler call (by position in a) where
// one client's handler calls in a and b first differ by order: each run's
// call there comes later in the other's.
func permutation(a, b *sim.Trace) (bool, int, string) {
	keys, ca, pa := handlerCalls(a)
	_, cb, _ := handlerCalls(b)
	found, first, what := false, 0, ""
	for _, k := range keys {
		x, y := ca[k], cb[k]
		i := firstDiff(x, y)
		if i < 0 || i >= len(x) || i >= len(y) {
			continue
		}
		if !slices.Contains(y[i+1:], x[i]) || !slices.Contains(x[i+1:], y[i]) {
			continue
		}
		if !found || pa[k][i] < first {
			found, first = true, pa[k][i]
			what = fmt.Sprintf("%s's handlers were called on %q before %q in one run and after it in the other", k, x[i], y[i])
		}
	}
	return found, first, what
}

// TestDivergenceIsExplainedOnlyByAPermutedHandlerBatch checks the
// classifier TestBuiltinRunsHaveOneSchedule relies on, on traces built by
// hand: a schedule difference preceded by handler calls in another order is
// client-go's; one without, or one after a differing answer or delivery, is
// not.
func TestDivergenceIsExplainedOnlyByAPermutedHandlerBatch(t *testing.T) {
	handler := func(at sim.Duration, name string) sim.Record {
		return sim.Record{At: at, Kind: sim.RecHandler, Actor: "c", Resource: "configmaps", EventType: "ADDED", Namespace: "default", Name: name}
	}
	request := func(at sim.Duration, name string) sim.Record {
		return sim.Record{At: at, Kind: sim.RecRequest, Actor: "c", Verb: "create", Resource: "configmaps", Namespace: "default", Name: name, Code: 201}
	}
	trace := func(schedule []string, recs ...sim.Record) *sim.Trace {
		for i := range recs {
			recs[i].Pos = i
		}
		return &sim.Trace{Schedule: schedule, Records: recs, End: 10}
	}
	ab := []string{"req c create configmaps/default/a-mirror #1", "req c create configmaps/default/b-mirror #1"}
	ba := []string{ab[1], ab[0]}

	same := diverge(trace(ab, handler(0, "a"), handler(0, "b")), trace(ab, handler(0, "a"), handler(0, "b")))
	if same.schedule != -1 || !same.explained() {
		t.Errorf("identical traces: %v, explained %v", same, same.explained())
	}
	mapOrder := diverge(
		trace(ab, handler(0, "a"), handler(0, "b"), request(0, "a-mirror"), request(0, "b-mirror")),
		trace(ba, handler(0, "b"), handler(0, "a"), request(0, "b-mirror"), request(0, "a-mirror")))
	if mapOrder.schedule != 0 || !mapOrder.permuted || !mapOrder.explained() {
		t.Errorf("handlers in another order, then the requests: %v, explained %v; want explained", mapOrder, mapOrder.explained())
	}
	unexplained := diverge(
		trace(ab, handler(0, "a"), handler(0, "b"), request(0, "a-mirror"), request(0, "b-mirror")),
		trace(ba, handler(0, "a"), handler(0, "b"), request(0, "b-mirror"), request(0, "a-mirror")))
	if unexplained.schedule != 0 || unexplained.permuted || unexplained.explained() {
		t.Errorf("same handler order, requests swapped: %v, explained %v; want not explained", unexplained, unexplained.explained())
	}
	delayed := diverge(
		trace(ab, handler(0, "a"), handler(2, "b"), request(4, "a-mirror"), request(4, "b-mirror")),
		trace(ba, handler(0, "b"), handler(2, "a"), request(4, "b-mirror"), request(4, "a-mirror")))
	if !delayed.explained() {
		t.Errorf("slow handlers in another order, then the requests: %v; want explained", delayed)
	}
	delivered := func(at sim.Duration, name string) sim.Record {
		return sim.Record{At: at, Kind: sim.RecDelivered, Actor: "c", Resource: "configmaps", Watcher: "c/configmaps#1", EventType: "ADDED", Namespace: "default", Name: name}
	}
	served := diverge(
		trace(ab, delivered(0, "a"), delivered(0, "b"), handler(0, "a"), handler(0, "b"), request(0, "a-mirror")),
		trace(ba, delivered(0, "b"), delivered(0, "a"), handler(0, "b"), handler(0, "a"), request(0, "b-mirror")))
	if !served.permuted || served.explained() {
		t.Errorf("the server delivered in another order, then handlers and requests followed: %v, explained %v; want not explained", served, served.explained())
	}
	later := diverge(
		trace(ab, request(0, "a-mirror"), request(0, "b-mirror"), handler(5, "a"), handler(5, "b")),
		trace(ba, request(0, "b-mirror"), request(0, "a-mirror"), handler(5, "b"), handler(5, "a")))
	if !later.permuted || later.explained() {
		t.Errorf("requests swapped, handlers in another order only after them: %v, explained %v; want not explained", later, later.explained())
	}
	different := diverge(
		trace(ab, handler(0, "a"), handler(0, "b")),
		trace(ba, handler(0, "a"), handler(0, "c")))
	if different.permuted || different.explained() {
		t.Errorf("handlers on different objects: %v, explained %v; want no permutation", different, different.explained())
	}
}

// TestBuiltinRunsHaveOneSchedule runs every built-in scenario x subject
// CACHELAB_DETERMINISM times (make determinism), each in its own bubble,
// and prints per run how many distinct delivery schedules and record
// sequences it had. It fails when two runs' schedules differ without a
// handler batch in another order before (see divergence.explained): a
// cause of nondeterminism in the lab's own code. KUBE_FEATURE_WatchListClient=false
// (client-go's own feature gate) takes the WatchList, and its map order, away.
func TestBuiltinRunsHaveOneSchedule(t *testing.T) {
	k, _ := strconv.Atoi(os.Getenv("CACHELAB_DETERMINISM"))
	if k <= 1 {
		t.Skip("set CACHELAB_DETERMINISM=runs (>= 2) per built-in run (make determinism)")
	}
	all, err := scenarios.All()
	if err != nil {
		t.Fatal(err)
	}
	var base []lab.Job
	for _, s := range all {
		base = append(base, lab.ScenarioJobs(s, "")...)
	}
	var jobs []lab.Job
	for range k {
		jobs = append(jobs, base...)
	}
	results, hostOut := lab.RunBatch(lab.TestHost(t), jobs, lab.Options{Parallel: 2})
	if hostOut != "" {
		t.Fatal(hostOut)
	}
	byID := map[string][]*sim.Trace{}
	for _, r := range results {
		if r.Err != nil || r.Trace == nil {
			t.Fatalf("%s: %v", r.Job.ID, r.Err)
		}
		byID[r.Job.ID] = append(byID[r.Job.ID], r.Trace)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| run | distinct schedules (of %d runs) | distinct records | first difference |\n| --- | --- | --- | --- |\n", k)
	sameSchedule, sameRecords := 0, 0
	var unexplained []string
	for _, j := range base {
		traces := byID[j.ID]
		schedules, records := distinct(traces, func(a, b *sim.Trace) bool { return slices.Equal(a.Schedule, b.Schedule) }),
			distinct(traces, func(a, b *sim.Trace) bool { return reflect.DeepEqual(a.Records, b.Records) })
		if schedules == 1 {
			sameSchedule++
		}
		if records == 1 {
			sameRecords++
		}
		note := ""
		for _, tr := range traces[1:] {
			d := diverge(traces[0], tr)
			if d.schedule < 0 {
				continue
			}
			if note == "" || !d.explained() {
				note = d.String()
			}
			if !d.explained() {
				unexplained = append(unexplained, j.ID+": "+d.String())
				break
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s |\n", j.ID, schedules, records, note)
	}
	fmt.Fprintf(&b, "\n%d/%d built-in runs had one schedule over %d runs each; %d/%d had identical records.\n", sameSchedule, len(base), k, sameRecords, len(base))
	t.Log("\n" + b.String())
	for _, u := range unexplained {
		t.Errorf("schedules differ with no handler batch in another order first (a cause in the lab's code?): %s", u)
	}
}

// distinct counts the classes of traces under same.
func distinct(traces []*sim.Trace, same func(a, b *sim.Trace) bool) int {
	var reps []*sim.Trace
	for _, t := range traces {
		if !slices.ContainsFunc(reps, func(r *sim.Trace) bool { return same(r, t) }) {
			reps = append(reps, t)
		}
	}
	return len(reps)
}
