package invariants

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cachelab/cachelab/sim"
)

// subjectKinds are the record kinds only a subject (or the sim on its
// behalf) writes; their actors are the subject's names.
var subjectKinds = map[sim.RecordKind]bool{
	sim.RecHandler: true, sim.RecSignal: true, sim.RecQueue: true,
	sim.RecReconcile: true, sim.RecCache: true, sim.RecCrash: true,
	sim.RecRestart: true, sim.RecDesired: true,
}

// SubjectActors returns the actor names the subject of tr wrote its
// records under: every actor of a handler, signal, queue, reconcile,
// cache, crash, restart or desired-state record, and the plan's subject.
// A write record of one of them is the subject's own write.
func SubjectActors(tr *sim.Trace) map[string]bool { return subjectActors(tr) }

// subjectActors returns the subject's actor names (see the package doc).
func subjectActors(tr *sim.Trace) map[string]bool {
	out := map[string]bool{}
	for _, r := range tr.Records {
		if subjectKinds[r.Kind] && r.Actor != "" {
			out[r.Actor] = true
		}
	}
	if tr.Plan != nil && tr.Plan.Subject != "" {
		out[tr.Plan.Subject] = true
	}
	return out
}

// normResource cuts a resource at its first dot: "bellerophons.lab.x" and
// "bellerophons" name the same resource.
func normResource(res string) string {
	if i := strings.IndexByte(res, '.'); i >= 0 {
		return res[:i]
	}
	return res
}

// key is an object's resource/namespace/name.
type key struct {
	Resource, Namespace, Name string
}

func (k key) String() string {
	if k.Namespace == "" {
		return k.Resource + "/" + k.Name
	}
	return k.Resource + "/" + k.Namespace + "/" + k.Name
}

func recKey(r sim.Record) key {
	return key{normResource(r.Resource), r.Namespace, r.Name}
}

func stateKey(o sim.ObjectState) key {
	return key{normResource(o.Resource), o.Namespace, o.Name}
}

// meta is what the checks read from an object's JSON.
type meta struct {
	Metadata struct {
		DeletionTimestamp *string  `json:"deletionTimestamp"`
		Finalizers        []string `json:"finalizers"`
	} `json:"metadata"`
	Spec struct {
		Replicas *int64 `json:"replicas"`
		// Parallelism is a Job's bound on its active Pods.
		Parallelism *int64 `json:"parallelism"`
	} `json:"spec"`
}

// bound is the most children the object wants: spec.replicas, or a Job's
// spec.parallelism when there is no spec.replicas; field names it.
func (m meta) bound() (n *int64, field string) {
	if m.Spec.Replicas != nil {
		return m.Spec.Replicas, "spec.replicas"
	}
	return m.Spec.Parallelism, "spec.parallelism"
}

// parseMeta reads metadata, spec.replicas and spec.parallelism from an object's JSON; ok is
// false when the JSON is absent or malformed.
func parseMeta(obj json.RawMessage) (meta, bool) {
	var m meta
	if len(obj) == 0 {
		return m, false
	}
	if err := json.Unmarshal(obj, &m); err != nil {
		return m, false
	}
	return m, true
}

func isEventsResource(res string) bool {
	r := normResource(res)
	return r == "events"
}

// isWrite reports whether r is a server write with an object key.
func isWrite(r sim.Record) bool { return r.Kind == sim.RecWrite && r.Name != "" }

// removals holds, per UID, the RV of a DELETED watch event the server sent
// for it: the evidence that the write at that RV removed the object, even
// when the write's own record does not show it (an update that empties the
// finalizers of a terminating object is stored, and sent, with its last
// state: finalizers included).
type removals map[string]int64

// Without a watch open at the time there is no such event; then RecFinal
// decides: an object absent from the server's final state was removed by its
// last write (nothing is written to an object after its removal).
func removalsOf(tr *sim.Trace) removals {
	out := removals{}
	lastRV := map[string]int64{}
	for _, r := range tr.Records {
		if (r.Kind == sim.RecSent || r.Kind == sim.RecDelivered) && r.EventType == "DELETED" && r.UID != "" && !r.Initial {
			out[r.UID] = r.RV
		}
		if isWrite(r) && r.UID != "" {
			lastRV[r.UID] = r.RV
		}
	}
	if final, ok := finalRecord(tr); ok {
		onServer := map[string]bool{}
		for _, o := range final.Objects {
			onServer[o.UID] = true
		}
		for uid, rv := range lastRV {
			if _, ok := out[uid]; !ok && !onServer[uid] {
				out[uid] = rv
			}
		}
	}
	return out
}

// removes reports whether write w takes its object off the server.
func (rm removals) removes(w sim.Record) bool {
	if rv, ok := rm[w.UID]; ok && w.UID != "" && rv == w.RV {
		return true
	}
	return removes(w)
}

// removes reports whether a write takes the object off the server, judged
// from the write record alone (see the package doc for the rule).
func removes(w sim.Record) bool {
	switch w.EventType {
	case "DELETED":
		return true
	case "ADDED", "MODIFIED":
		return false
	}
	m, ok := parseMeta(w.Object)
	if w.Verb == "delete" || w.Verb == "deletecollection" {
		return !ok || len(m.Metadata.Finalizers) == 0
	}
	return ok && m.Metadata.DeletionTimestamp != nil && len(m.Metadata.Finalizers) == 0
}

// terminating reports whether the written object is marked for deletion.
func terminating(w sim.Record) bool {
	m, ok := parseMeta(w.Object)
	if ok && m.Metadata.DeletionTimestamp != nil {
		return true
	}
	return w.Verb == "delete" || w.Verb == "deletecollection"
}

// liveObject is one object of the replayed server state.
type liveObject struct {
	UID         string
	RV          int64
	Pos         int // position of its latest write
	Terminating bool
}

// server replays RecWrite records in order: the server's state as the
// trace saw it.
type server struct {
	live map[key]liveObject
	// lastWrite is the position of each UID's latest write.
	lastWrite map[string]int
	// keyOf is the key each UID was written under.
	keyOf map[string]key
	// removedAt is the position of the write that removed each UID.
	removedAt map[string]int
	// createdAt is the position of each UID's first write.
	createdAt map[string]int
	rm        removals
	// facts caches, by position, what apply reads from a write's JSON;
	// servers replaying one trace may share it (syncIndex replays the
	// trace once per flip judged). nil: no cache (a trace whose records'
	// positions are not their indexes, as some tests write them).
	facts map[int]writeFacts
}

// writeFacts is what a write's JSON says to the server replay: whether
// the write takes the object off the server, and whether the object is
// marked for deletion.
type writeFacts struct {
	removes, terminating bool
}

func newServer(tr *sim.Trace) *server {
	return newServerWith(removalsOf(tr), nil)
}

// newServerWith returns an empty server replay with the trace's removals
// and a cache of write facts, both shared with other replays of the trace.
func newServerWith(rm removals, facts map[int]writeFacts) *server {
	return &server{
		rm:        rm,
		facts:     facts,
		live:      map[key]liveObject{},
		lastWrite: map[string]int{},
		keyOf:     map[string]key{},
		removedAt: map[string]int{},
		createdAt: map[string]int{},
	}
}

// factsOf returns what write r's JSON says, parsed once per position.
func (s *server) factsOf(r sim.Record) writeFacts {
	if f, ok := s.facts[r.Pos]; ok {
		return f
	}
	f := writeFacts{removes: s.rm.removes(r)}
	if !f.removes {
		f.terminating = terminating(r)
	}
	if s.facts != nil {
		s.facts[r.Pos] = f
	}
	return f
}

// replayParts returns what server replays of tr may share: its removals
// and a write-fact cache (nil when positions are not indexes).
func replayParts(tr *sim.Trace) (removals, map[int]writeFacts) {
	if !positionsAreIndexes(tr) {
		return removalsOf(tr), nil
	}
	return removalsOf(tr), map[int]writeFacts{}
}

// positionsAreIndexes reports whether every record's Pos is its index in
// the trace (as the recorder writes them), so a position names one record.
func positionsAreIndexes(tr *sim.Trace) bool {
	for i, r := range tr.Records {
		if r.Pos != i {
			return false
		}
	}
	return true
}

// apply applies one record; non-writes are ignored.
func (s *server) apply(r sim.Record) {
	if !isWrite(r) {
		return
	}
	k := recKey(r)
	if r.UID != "" {
		if _, ok := s.createdAt[r.UID]; !ok {
			s.createdAt[r.UID] = r.Pos
		}
		s.lastWrite[r.UID] = r.Pos
		s.keyOf[r.UID] = k
	}
	f := s.factsOf(r)
	if f.removes {
		if cur, ok := s.live[k]; ok && (r.UID == "" || cur.UID == r.UID) {
			delete(s.live, k)
		}
		if r.UID != "" {
			s.removedAt[r.UID] = r.Pos
		}
		return
	}
	s.live[k] = liveObject{UID: r.UID, RV: r.RV, Pos: r.Pos, Terminating: f.terminating}
}

// finalRecord returns the last RecFinal record, if any.
func finalRecord(tr *sim.Trace) (sim.Record, bool) {
	for i := len(tr.Records) - 1; i >= 0; i-- {
		if tr.Records[i].Kind == sim.RecFinal {
			return tr.Records[i], true
		}
	}
	return sim.Record{}, false
}

// contractBreakingFaults returns the positions of contract-breaking faults.
func contractBreakingFaults(tr *sim.Trace) []int {
	var out []int
	for _, r := range tr.Records {
		if r.Kind == sim.RecFault && r.ContractBreaking {
			out = append(out, r.Pos)
		}
	}
	return out
}

// withFaultNote appends a note on contract-breaking faults to a failing
// reason, so a reader knows the API itself broke its promise.
func withFaultNote(tr *sim.Trace, reason string) string {
	if cb := contractBreakingFaults(tr); len(cb) > 0 {
		return fmt.Sprintf("%s (the run injected %d contract-breaking fault(s), first at position %d)", reason, len(cb), cb[0])
	}
	return reason
}

// incarnation numbers the subject's process starts: 0 until the first
// restart, then 1, ... It is the count of RecRestart records of the actor
// before pos.
type incarnations struct {
	restarts map[string][]int
}

func newIncarnations(tr *sim.Trace) incarnations {
	inc := incarnations{restarts: map[string][]int{}}
	for _, r := range tr.Records {
		if r.Kind == sim.RecRestart || r.Kind == sim.RecCrash {
			inc.restarts[r.Actor] = append(inc.restarts[r.Actor], r.Pos)
		}
	}
	return inc
}

// newProcesses returns the processes of each actor: like newIncarnations,
// but counting restarts only. Between a crash and the restart the actor's
// records are the dying process's in-flight work (a reconcile it had
// started still writes, from what that process had observed).
func newProcesses(tr *sim.Trace) incarnations {
	inc := incarnations{restarts: map[string][]int{}}
	for _, r := range tr.Records {
		if r.Kind == sim.RecRestart {
			inc.restarts[r.Actor] = append(inc.restarts[r.Actor], r.Pos)
		}
	}
	return inc
}

// of returns the incarnation of actor at pos: the number of crashes and
// restarts of actor before pos.
func (inc incarnations) of(actor string, pos int) int {
	return sort.SearchInts(inc.restarts[actor], pos)
}

// start returns the position at which the incarnation of actor current at
// pos started (-1: the run's start).
func (inc incarnations) start(actor string, pos int) int {
	n := inc.of(actor, pos)
	if n == 0 {
		return -1
	}
	return inc.restarts[actor][n-1]
}

// sortedKeys returns m's keys sorted, for deterministic output.
func sortedKeys[V any](m map[key]V) []key {
	out := make([]key, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func sortedStrings[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// firstN keeps at most n positions, for readable verdicts.
func firstN(pos []int, n int) []int {
	if len(pos) > n {
		return pos[:n]
	}
	return pos
}

func pass(name, reason string) Verdict { return Verdict{Invariant: name, Status: Pass, Reason: reason} }

func unknown(name, reason string) Verdict {
	return Verdict{Invariant: name, Status: Unknown, Reason: reason}
}

// notApplicable is unknownBecause for an invariant the subject gave
// nothing to judge (Verdict.NotApplicable).
func notApplicable(name, short, reason string) Verdict {
	v := unknownBecause(name, short, reason)
	v.NotApplicable = true
	return v
}

// unknownBecause is unknown with short, a few words on what the trace
// lacked, for run lines (see UnknownSummary).
func unknownBecause(name, short, reason string) Verdict {
	return Verdict{Invariant: name, Status: Unknown, Reason: reason, Short: short}
}

// fail builds a failed verdict citing pos; the first is where the
// evidence departs (At) unless the caller sets At (see at).
func fail(name, reason string, pos ...int) Verdict {
	v := Verdict{Invariant: name, Status: Fail, Reason: reason, Positions: pos}
	if len(pos) > 0 {
		v.At = ptr(pos[0])
	}
	return v
}

// at sets v's At (and adds it to Positions when missing) and, when
// trigger >= 0, its Trigger.
func (v Verdict) at(pos, trigger int) Verdict {
	v.At = ptr(pos)
	if !slices.Contains(v.Positions, pos) {
		v.Positions = append([]int{pos}, v.Positions...)
	}
	if trigger >= 0 {
		v.Trigger = ptr(trigger)
		if !slices.Contains(v.Positions, trigger) {
			v.Positions = append(v.Positions, trigger)
		}
	}
	return v
}

func ptr(i int) *int { return &i }

// recAt returns the record at position pos (Records[i].Pos == i by the
// Trace contract; a trace that breaks it is searched).
func recAt(tr *sim.Trace, pos int) sim.Record {
	if pos >= 0 && pos < len(tr.Records) && tr.Records[pos].Pos == pos {
		return tr.Records[pos]
	}
	for _, r := range tr.Records {
		if r.Pos == pos {
			return r
		}
	}
	return sim.Record{Pos: pos}
}

// handlerID names one handler of one process incarnation.
type handlerID struct {
	actor, handler string
	inc            int
}

// lastHandlerViews replays the handler calls of the subject: for each
// handler of each actor's last incarnation, the key -> UID it was last
// told of (deleted keys removed).
func lastHandlerViews(tr *sim.Trace) map[handlerID]map[key]known {
	inc := newIncarnations(tr)
	views := map[handlerID]map[key]known{}
	for _, r := range tr.Records {
		if r.Kind != sim.RecHandler || !isObjectEvent(r.EventType) {
			continue
		}
		id := handlerID{r.Actor, r.Handler, inc.of(r.Actor, r.Pos)}
		if id.inc != inc.of(r.Actor, len(tr.Records)) {
			continue
		}
		view := views[id]
		if view == nil {
			view = map[key]known{}
			views[id] = view
		}
		if r.EventType == "DELETED" {
			delete(view, recKey(r))
		} else {
			view[recKey(r)] = known{r.UID, r.Pos}
		}
	}
	return views
}

// sortedHandlerIDs returns the ids sorted, for deterministic verdicts.
func sortedHandlerIDs[V any](m map[handlerID]V) []handlerID {
	ids := make([]handlerID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if ids[i].actor != ids[j].actor {
			return ids[i].actor < ids[j].actor
		}
		if ids[i].handler != ids[j].handler {
			return ids[i].handler < ids[j].handler
		}
		return ids[i].inc < ids[j].inc
	})
	return ids
}

func sortInts(s []int) { sort.Ints(s) }
