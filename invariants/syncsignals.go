package invariants

import (
	"fmt"
	"sort"
	"time"

	"github.com/cachelab/cachelab/sim"
)

// The sync-signal names a subject records (RecSignal.Signal), and
// SignalDesired for the sim's RecDesired records.
const (
	SignalInformer   = "informer-synced"
	SignalHandler    = "handler-synced"
	SignalFIFO       = "fifo-synced"
	SignalQuiescence = "quiescence-synced"
	SignalRV         = "rv-synced"
	SignalDesired    = "desired"
	// SignalLastSyncRV is "the informer's LastSyncResourceVersion() is
	// not empty" used as a sync signal (EDGE-CASES 6), judged, as
	// handler-synced is, by what the handler has seen.
	SignalLastSyncRV = "lastsync-rv"
)

// SignalNames lists the sync definitions SyncSoundness judges, in table order.
func SignalNames() []string {
	return []string{SignalInformer, SignalHandler, SignalFIFO, SignalLastSyncRV, SignalQuiescence, SignalRV, SignalDesired}
}

// initialListSignal reports whether a signal promises only the initial list
// (informer, handler and FIFO HasSynced, a LastSyncResourceVersion that is
// set), rather than "caught up now".
func initialListSignal(s string) bool {
	return s == SignalInformer || s == SignalHandler || s == SignalFIFO || s == SignalLastSyncRV
}

const contractSyncInitial = `client-go v0.37.2 tools/cache: SharedInformer.HasSynced ` +
	`"returns true if the shared informer's store has been informed by at least one ` +
	`full LIST of the authoritative state"; ResourceEventHandlerRegistration.HasSynced ` +
	`"reports if both the parent informer has synced and all pre-sync events have been ` +
	`delivered" to the handler (k/k#113763, EDGE 1); the legacy DeltaFIFO's ` +
	`HasSyncedChecker closes once the initial items are popped (EDGE 3); a controller ` +
	`that waits for informer.LastSyncResourceVersion() != "" takes it for the same ` +
	`promise, which it never made (EDGE 6).
Checked at every flip to true (per process incarnation): every object live on the ` +
	`server when the incarnation's initial list (RecList or RecWatchOpen) of the ` +
	`signal's resource started must already have reached, at that RV or later, the ` +
	`store (informer-synced: a delivered watch event or a list at that RV or later) or ` +
	`the handler (handler-synced, fifo-synced, lastsync-rv: a handler call), unless the server ` +
	`removed it before the flip. A flip that misses one is a false positive. Latency is ` +
	`the time from the moment the last required object arrived to the flip.`

const contractSyncNow = `A "synced" signal used to decide that the cache is caught up ` +
	`("no event for 10x the loop time", ORIGIN.md; "cache RV >= the RV of our last ` +
	`write", KEP-5647 and EDGE 24; "desired == actual") promises that the cache holds ` +
	`the server's current state (EDGE 4).
Checked at every flip to true: the subject has received (watch event, handler call ` +
	`or list at that RV or later) every object live on the server at the flip in the ` +
	`watched resources at its current RV, and a deletion of every removed object it had ` +
	`received. A flip that misses one is a false positive. Latency is the time from the ` +
	`moment the last required change arrived to the flip.`

func syncInvariant(signal string) Invariant {
	contract, summary := contractSyncNow, "flips to true only once the cache holds the server's current state"
	if initialListSignal(signal) {
		contract, summary = contractSyncInitial, "flips to true only once the initial list reached the store or handler"
	}
	return Invariant{
		Name:     NameSyncSoundnessPrefix + signal,
		Summary:  fmt.Sprintf("%s %s", signal, summary),
		Contract: contract,
		check: func(tr *sim.Trace, opts Options) Verdict {
			for _, rep := range opts.syncSoundness(tr) {
				if rep.Signal == signal {
					return rep.Verdict()
				}
			}
			return unknown("", "no report")
		},
	}
}

// SignalReport is one sync definition's record on one trace.
type SignalReport struct {
	// Signal is the definition's name (SignalNames).
	Signal string `json:"signal"`
	// Present is true when the trace has any record of the signal.
	Present bool `json:"present"`
	// Flips counts the flips to true that were judged.
	Flips int `json:"flips"`
	// FalsePositives counts the flips at which the cache lagged what the
	// signal promises.
	FalsePositives int `json:"falsePositives"`
	// Positions holds, per false positive, the flip's position followed by
	// the position of the server write the cache lacked.
	Positions []int `json:"positions,omitempty"`
	// Latencies holds, per sound flip, the virtual time from true sync to
	// the flip.
	Latencies []time.Duration `json:"latencies,omitempty"`
	// Examples explain the first false positives.
	Examples []string `json:"examples,omitempty"`
	// Judged lists every judged flip to true, in trace order.
	Judged []FlipJudgement `json:"judged,omitempty"`
}

// FlipJudgement is the judgement of one flip to true of a sync signal.
type FlipJudgement struct {
	// Pos and At are the flip's record position and virtual time.
	Pos int          `json:"pos"`
	At  sim.Duration `json:"at"`
	// Actor is who recorded the flip.
	Actor string `json:"actor"`
	// Sound is true when the cache held what the signal promises.
	Sound bool `json:"sound"`
	// Missing is, for a false flip, the position of the server write the
	// cache lacked; -1 for a sound one.
	Missing int `json:"missing"`
}

// Verdict turns the report into the sync-soundness/<signal> verdict.
func (r SignalReport) Verdict() Verdict {
	name := NameSyncSoundnessPrefix + r.Signal
	switch {
	case !r.Present:
		return unknown(name, fmt.Sprintf("the trace has no %q signal records: the subject does not expose this definition", r.Signal))
	case r.Flips == 0:
		return unknown(name, fmt.Sprintf("%q never claimed synced: there is no flip to judge", r.Signal))
	case r.FalsePositives > 0:
		v := fail(name, fmt.Sprintf("%q claimed synced %d time(s) out of %d while the cache lagged: %s", r.Signal, r.FalsePositives, r.Flips, r.Examples[0]), firstN(r.Positions, 12)...)
		if len(r.Examples) > 1 {
			v.Detail = fmt.Sprint(r.Examples)
		}
		return v
	}
	return pass(name, fmt.Sprintf("%q flipped to true %d time(s), each after the cache really held what it promises (median latency %s)", r.Signal, r.Flips, median(r.Latencies)))
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// arrival is one thing that told the subject about an object: a watch
// event, a handler call, or a list at RV.
type arrival struct {
	pos     int
	at      time.Duration
	rv      int64
	deleted bool
	handler string // handler calls: the registration
	store   bool   // watch events and lists reach the store
}

// listing is one list (or watch start) by the subject.
type listing struct {
	pos       int
	at        time.Duration
	resource  string
	namespace string
	rv        int64 // RecList's RV; 0 for a watch start
	isList    bool
}

// syncIndex pre-indexes what the subject received.
type syncIndex struct {
	tr       *sim.Trace
	inc      incarnations
	byUID    map[string]map[string][]arrival // actor -> uid -> arrivals, in order
	listings map[string][]listing            // actor -> lists and watch starts
	handles  map[string]map[string]bool      // actor/handler -> resources handled
	watched  map[string]map[string]bool      // actor -> resources listed or watched or handled
	// rm and facts are the server replays' removals and write facts,
	// computed once for the trace rather than once per flip.
	rm    removals
	facts map[int]writeFacts
	// prefix is the server replayed up to (not including) record index
	// prefixNext: flips judged in order of position extend it, where
	// each flip replayed the trace from its start.
	prefix     *server
	prefixNext int
}

// newSyncIndex indexes tr; rm and facts are its server replays' removals
// and write-fact cache (replayParts).
func newSyncIndex(tr *sim.Trace, rm removals, facts map[int]writeFacts) *syncIndex {
	ix := &syncIndex{tr: tr, inc: newIncarnations(tr), byUID: map[string]map[string][]arrival{},
		listings: map[string][]listing{}, handles: map[string]map[string]bool{}, watched: map[string]map[string]bool{},
		rm: rm, facts: facts}
	add := func(actor, uid string, a arrival) {
		m := ix.byUID[actor]
		if m == nil {
			m = map[string][]arrival{}
			ix.byUID[actor] = m
		}
		m[uid] = append(m[uid], a)
	}
	mark := func(m map[string]map[string]bool, k, res string) {
		if m[k] == nil {
			m[k] = map[string]bool{}
		}
		m[k][normResource(res)] = true
	}
	for _, r := range tr.Records {
		switch r.Kind {
		case sim.RecDelivered:
			if isObjectEvent(r.EventType) && r.UID != "" {
				add(r.Actor, r.UID, arrival{pos: r.Pos, at: r.At.D(), rv: r.RV, deleted: r.EventType == "DELETED", store: true})
			}
		case sim.RecHandler:
			if isObjectEvent(r.EventType) {
				mark(ix.handles, r.Actor+"/"+r.Handler, r.Resource)
				mark(ix.watched, r.Actor, r.Resource)
				if r.UID != "" {
					rv := r.RV
					if r.Tombstone {
						rv = 1<<62 - 1 // a tombstone settles the object whatever its stale RV
					}
					add(r.Actor, r.UID, arrival{pos: r.Pos, at: r.At.D(), rv: rv, deleted: r.EventType == "DELETED", handler: r.Handler})
				}
			}
		case sim.RecList, sim.RecWatchOpen:
			if r.Resource != "" {
				mark(ix.watched, r.Actor, r.Resource)
				ix.listings[r.Actor] = append(ix.listings[r.Actor], listing{pos: r.Pos, at: r.At.D(), resource: normResource(r.Resource),
					namespace: r.Namespace, rv: r.RV, isList: r.Kind == sim.RecList})
			}
		}
	}
	return ix
}

// flip is one flip to true of a signal.
type flip struct {
	rec    sim.Record
	signal string
}

// flips finds every false->true change of each signal, per actor, scope
// and process incarnation.
func flips(tr *sim.Trace, inc incarnations) (map[string][]flip, map[string]bool) {
	out := map[string][]flip{}
	present := map[string]bool{}
	last := map[string]bool{}
	main := mainSubjectActor(tr)
	for _, r := range tr.Records {
		var sig string
		switch r.Kind {
		case sim.RecSignal:
			sig = r.Signal
		case sim.RecDesired:
			sig = SignalDesired
			// desired == actual is the sim's verdict on the server; it
			// speaks for the subject's caches.
			r.Actor = main
		default:
			continue
		}
		present[sig] = true
		id := fmt.Sprintf("%s|%s|%s|%s|%s|%d", sig, r.Actor, normResource(r.Resource), r.Namespace, r.Handler, inc.of(r.Actor, r.Pos))
		if r.Value && !last[id] {
			out[sig] = append(out[sig], flip{rec: r, signal: sig})
		}
		last[id] = r.Value
	}
	return out, present
}

// mainSubjectActor is the subject actor with the most handler calls (the
// one RecDesired speaks for).
func mainSubjectActor(tr *sim.Trace) string {
	n := map[string]int{}
	subj := subjectActors(tr)
	for _, r := range tr.Records {
		if r.Kind == sim.RecHandler || r.Kind == sim.RecDelivered && subj[r.Actor] {
			n[r.Actor]++
		}
	}
	best := ""
	for _, a := range sortedStrings(n) {
		if best == "" || n[a] > n[best] {
			best = a
		}
	}
	if best == "" && tr.Plan != nil {
		best = tr.Plan.Subject
	}
	return best
}

// requirement is one object state the cache must hold at a flip.
type requirement struct {
	uid      string
	key      key
	rv       int64 // the state's RV; for a deletion, the removal's RV
	deleted  bool  // the cache must have learned of the object's removal
	writePos int   // the write that produced the state
}

// SyncSoundness judges every sync definition on tr: how often it claimed
// synced while the cache lagged (false positives) and how long after true
// sync it flipped (latency). It returns one report per SignalNames entry.
func SyncSoundness(tr *sim.Trace) []SignalReport {
	if tr == nil {
		return syncSoundness(nil, nil, nil)
	}
	rm, facts := replayParts(tr)
	return syncSoundness(tr, rm, facts)
}

// syncSoundness is SyncSoundness with the trace's removals and write-fact
// cache given (shared with the other checks' server replays).
func syncSoundness(tr *sim.Trace, rm removals, facts map[int]writeFacts) []SignalReport {
	out := make([]SignalReport, 0, len(SignalNames()))
	if tr == nil {
		for _, s := range SignalNames() {
			out = append(out, SignalReport{Signal: s})
		}
		return out
	}
	ix := newSyncIndex(tr, rm, facts)
	fl, present := flips(tr, ix.inc)
	for _, s := range SignalNames() {
		rep := SignalReport{Signal: s, Present: present[s]}
		for _, f := range fl[s] {
			missing, trueSync, ok := ix.judge(f)
			if !ok {
				continue
			}
			rep.Flips++
			if missing != nil {
				rep.Judged = append(rep.Judged, FlipJudgement{Pos: f.rec.Pos, At: f.rec.At, Actor: f.rec.Actor, Missing: missing.writePos})
				rep.FalsePositives++
				rep.Positions = append(rep.Positions, f.rec.Pos, missing.writePos)
				if len(rep.Examples) < 3 {
					what := fmt.Sprintf("%s at RV %d", missing.key, missing.rv)
					if missing.deleted {
						what = fmt.Sprintf("the deletion of %s (RV %d)", missing.key, missing.rv)
					}
					rep.Examples = append(rep.Examples, fmt.Sprintf("at position %d (t=%s) %s of %s flipped to true but %s had not arrived yet",
						f.rec.Pos, f.rec.At, s, f.rec.Actor, what))
				}
				continue
			}
			rep.Judged = append(rep.Judged, FlipJudgement{Pos: f.rec.Pos, At: f.rec.At, Actor: f.rec.Actor, Sound: true, Missing: -1})
			lat := f.rec.At.D() - trueSync
			if lat < 0 {
				lat = 0
			}
			rep.Latencies = append(rep.Latencies, lat)
		}
		out = append(out, rep)
	}
	return out
}

// scope returns the resources and namespace a flip speaks for; ok is false
// when nothing says what the signal covers.
func (ix *syncIndex) scope(f flip) (map[string]bool, string, bool) {
	r := f.rec
	if r.Resource != "" {
		return map[string]bool{normResource(r.Resource): true}, r.Namespace, true
	}
	if (f.signal == SignalHandler || f.signal == SignalFIFO || f.signal == SignalLastSyncRV) && r.Handler != "" {
		if res := ix.handles[r.Actor+"/"+r.Handler]; len(res) > 0 {
			return res, r.Namespace, true
		}
	}
	if res := ix.watched[r.Actor]; len(res) > 0 {
		return res, r.Namespace, true
	}
	return nil, "", false
}

// judge evaluates one flip: the first requirement the subject lacked (nil if
// none), the time of true sync, and ok=false if the flip cannot be judged.
func (ix *syncIndex) judge(f flip) (*requirement, time.Duration, bool) {
	res, ns, ok := ix.scope(f)
	if !ok {
		return nil, 0, false
	}
	actor, flipPos := f.rec.Actor, f.rec.Pos
	start := ix.inc.start(actor, flipPos)
	inScope := func(k key) bool { return res[k.Resource] && (ns == "" || ns == k.Namespace) }
	// The incarnation's first list or watch start of each scoped resource.
	firstList := map[string]listing{}
	for _, l := range ix.listings[actor] {
		if l.pos > start && l.pos < flipPos && res[l.resource] {
			if _, ok := firstList[l.resource]; !ok {
				firstList[l.resource] = l
			}
		}
	}
	trueSync := time.Duration(0)
	if start >= 0 {
		trueSync = recAt(ix.tr, start).At.D()
	}
	for _, l := range firstList {
		if l.at > trueSync {
			trueSync = l.at
		}
	}
	var reqs []requirement
	if initialListSignal(f.signal) {
		srv := newServerWith(ix.rm, ix.facts)
		// State at each resource's initial list start, minus later removals.
		stop := flipPos
		for i := 0; i < len(ix.tr.Records) && ix.tr.Records[i].Pos < stop; i++ {
			r := ix.tr.Records[i]
			if isWrite(r) && inScope(recKey(r)) {
				if l, ok := firstList[recKey(r).Resource]; ok && r.Pos > l.pos {
					continue
				}
				if _, ok := firstList[recKey(r).Resource]; !ok && r.Pos > start {
					continue
				}
			}
			srv.apply(r)
		}
		removedBeforeFlip := map[string]bool{}
		for _, r := range ix.tr.Records {
			if r.Pos >= flipPos {
				break
			}
			if isWrite(r) && srv.factsOf(r).removes {
				removedBeforeFlip[r.UID] = true
			}
		}
		for _, k := range sortedKeys(srv.live) {
			o := srv.live[k]
			if inScope(k) && !removedBeforeFlip[o.UID] {
				reqs = append(reqs, requirement{uid: o.UID, key: k, rv: o.RV, writePos: o.Pos})
			}
		}
	} else {
		srv := ix.serverBefore(flipPos)
		for _, k := range sortedKeys(srv.live) {
			o := srv.live[k]
			if inScope(k) {
				reqs = append(reqs, requirement{uid: o.UID, key: k, rv: o.RV, writePos: o.Pos})
			}
		}
		// Removed objects the subject had received in this incarnation.
		for _, uid := range sortedStrings(srv.removedAt) {
			k := srv.keyOf[uid]
			if !inScope(k) {
				continue
			}
			for _, a := range ix.byUID[actor][uid] {
				if a.pos > start && a.pos < flipPos {
					w := recAt(ix.tr, srv.removedAt[uid])
					reqs = append(reqs, requirement{uid: uid, key: k, rv: w.RV, deleted: true, writePos: w.Pos})
					break
				}
			}
		}
	}
	for i := range reqs {
		at, ok := ix.arrived(f, reqs[i], start, flipPos)
		if !ok {
			return &reqs[i], 0, true
		}
		if at > trueSync {
			trueSync = at
		}
	}
	return nil, trueSync, true
}

// serverBefore returns the server's state replayed from the trace's start
// up to the first record at or after flipPos. It is the index's own
// replay, extended when flips come in order of position (started over
// when one comes before the last): the caller only reads it.
func (ix *syncIndex) serverBefore(flipPos int) *server {
	if ix.prefix == nil || ix.prefixNext > 0 && ix.tr.Records[ix.prefixNext-1].Pos >= flipPos {
		ix.prefix, ix.prefixNext = newServerWith(ix.rm, ix.facts), 0
	}
	for ; ix.prefixNext < len(ix.tr.Records) && ix.tr.Records[ix.prefixNext].Pos < flipPos; ix.prefixNext++ {
		ix.prefix.apply(ix.tr.Records[ix.prefixNext])
	}
	return ix.prefix
}

// arrived reports when requirement q first reached what the flip's signal
// speaks for, between the incarnation's start and the flip.
func (ix *syncIndex) arrived(f flip, q requirement, start, flipPos int) (time.Duration, bool) {
	actor := f.rec.Actor
	handlerOnly := f.signal == SignalHandler || f.signal == SignalFIFO || f.signal == SignalLastSyncRV
	storeOnly := f.signal == SignalInformer
	for _, a := range ix.byUID[actor][q.uid] {
		if a.pos <= start || a.pos >= flipPos {
			continue
		}
		if handlerOnly && (a.store || (f.rec.Handler != "" && a.handler != f.rec.Handler)) {
			continue
		}
		if storeOnly && !a.store {
			continue
		}
		if q.deleted && !a.deleted {
			continue
		}
		if a.rv >= q.rv || a.deleted {
			return a.at, true
		}
	}
	if handlerOnly {
		return 0, false
	}
	// A list at RV >= the state's RV (consistent or not) reached the store:
	// it holds the object (or, for a deletion, no longer does).
	for _, l := range ix.listings[actor] {
		if !l.isList || l.pos <= start || l.pos >= flipPos || l.resource != q.key.Resource {
			continue
		}
		if l.namespace != "" && l.namespace != q.key.Namespace {
			continue
		}
		if l.rv >= q.rv {
			return l.at, true
		}
	}
	return 0, false
}
