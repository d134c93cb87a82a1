package invariants

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/cachelab/cachelab/sim"
)

const contractReadYourWrites = `KEP-5647 (stale controller mitigation) and EDGE 24: a ` +
	`controller must not act on a cache older than its own last write: "record the ` +
	`resourceVersion of your writes and do not act until the informer has caught up" ` +
	`(client-go v0.36+: Store.LastStoreSyncResourceVersion).
Checked on every successful write (create, update, patch, delete; Events aside) of ` +
	`the subject, made while a reconcile of key K was open (the reconcile of the ` +
	`written object's namespace/name, or of its owner's): the write fails the ` +
	`invariant when the subject's view of an object that reconcile read was older ` +
	`than the subject's own latest write to that object, made earlier in the same ` +
	`process, before the reconcile started, and answered (a write answered 504 leaves ` +
	`the subject no resourceVersion to wait for, EDGE 28). What a reconcile of K read ` +
	`is its primaries (the objects named K, in any resource) and their children (by ` +
	`ownerReference UID). Its view of an object is bounded from above by what had ` +
	`reached the subject by the time of the write: watch events and bookmarks delivered ` +
	`to it (a watch delivers in order, so one at the own write's resourceVersion or ` +
	`later, for that resource, means the write was delivered), DELETED events of the ` +
	`object, lists it was served at that resourceVersion or later, and successful ` +
	`gets; a view is stale only if none of them reached the own write. A stale view ` +
	`counts only where it could decide the write: (1) a write to the object itself that ` +
	`sets a field the own write changed back to its value before it (the subject ` +
	`undid its own write); (2) a write to another object (not a status write) decided ` +
	`from a primary whose own write changed more than status and bookkeeping ` +
	`(resourceVersion, generation, managedFields, finalizers), such as its spec, ` +
	`labels or annotations; (3) a create or delete of a child decided from a view ` +
	`that missed the subject's own create or delete of a sibling of the same owner and ` +
	`resource (a duplicate, or one deletion too many), the own create still on the ` +
	`server (recreating what someone else deleted is repair). A stale view of one's own ` +
	`status write, and a write refused with 409 Conflict or AlreadyExists (optimistic ` +
	`concurrency working: see the retried-conflicts measurement), pass. A request does ` +
	`not name its reconcile: with several workers the reconcile of the written object ` +
	`or of its owner is taken, and a write no open reconcile matches is not judged. ` +
	`Unknown when the subject made no write, and (saying where judging stopped) when ` +
	`a trace needs more than 20,000,000 own writes looked at.`

// ownWrite is the subject's latest write to one object (by UID).
type ownWrite struct {
	rec           sim.Record
	before, after map[string]string
	proc          int
	removed       bool
	timedOut      bool
	// markRV is, for the removal of a graceful delete (a Pod with grace
	// 0: the mark, then the removal, two writes of one request), the RV
	// of its mark: a view that holds the mark has seen the delete.
	markRV int64
}

// changed returns the fields (JSON leaves) the write changed, sorted.
func (w ownWrite) changed() []string {
	paths := map[string]bool{}
	for p := range w.before {
		paths[p] = true
	}
	for p := range w.after {
		paths[p] = true
	}
	var out []string
	for p := range paths {
		if leaf(w.before, p) != leaf(w.after, p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// decisive returns the changed fields a decision about other objects can
// rest on: not status, not bookkeeping metadata.
func (w ownWrite) decisive() []string {
	var out []string
	for _, p := range w.changed() {
		if p == "status" || strings.HasPrefix(p, "status.") || strings.HasPrefix(p, "metadata.finalizers") ||
			strings.HasPrefix(p, "metadata.managedFields") || strings.HasPrefix(p, "metadata.resourceVersion") ||
			p == "metadata.generation" || p == "metadata.uid" || strings.HasPrefix(p, "metadata.creationTimestamp") {
			continue
		}
		out = append(out, p)
	}
	if w.removed && len(out) == 0 {
		out = []string{"(the object's removal)"}
	}
	return out
}

// openReconcile is a reconcile that has started and not ended.
type openReconcile struct {
	key   string // namespace/name
	start int
}

// trackReconcile keeps open, per actor, the reconciles that started and
// have not ended, from one reconcile record r.
func trackReconcile(open map[string][]openReconcile, r sim.Record) {
	switch r.Op {
	case "start":
		open[r.Actor] = append(open[r.Actor], openReconcile{key: r.Key, start: r.Pos})
	case "end":
		rs := open[r.Actor]
		for i := range rs {
			if rs[i].key == r.Key {
				open[r.Actor] = append(rs[:i:i], rs[i+1:]...)
				break
			}
		}
	}
}

// nsName returns an object key's namespace/name, as reconcile keys read.
func nsName(k key) string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// staleView is what the reconstruction of a reconcile's view found.
type staleView struct {
	own    ownWrite
	read   sim.Record // the subject's latest copy of the object before the write (Pos -1: none)
	fields []string
	why    string
}

// readYourWritesBudget bounds the candidate own writes read-your-writes
// looks at in one trace. The index keeps the work near one candidate per
// write and open own write; a trace past the bound (millions of own
// writes, each still unseen when the next is judged) is Unknown, with
// the reason, rather than a judge that never ends.
const readYourWritesBudget = 20_000_000

func readYourWrites(tr *sim.Trace, opts Options) Verdict {
	v, _ := judgeReadYourWrites(tr, false, readYourWritesBudget, opts)
	return v
}

// judgeReadYourWrites judges tr and returns how many candidate own writes
// it looked at (the work, for the tests that bound it). naive looks at
// every own write of the run for each write judged, in UID order (the
// check's first form, quadratic: the tests compare the index with it).
// Past budget candidates it stops with an Unknown verdict.
func judgeReadYourWrites(tr *sim.Trace, naive bool, budget int, opts Options) (Verdict, int) {
	const name = NameReadYourWrites
	subj := subjectActors(tr)
	proc := newProcesses(tr)
	rm := removalsOf(tr)
	current := map[string]map[string]string{} // uid -> latest content
	owner := map[string]string{}              // uid -> controller owner uid
	keyOf := map[string]key{}                 // uid -> key
	byName := map[string]map[string]bool{}    // namespace/name -> uids ever written there
	own := map[string]*ownWrite{}             // uid -> the subject's latest write
	lastOwnAt := map[key]*ownWrite{}          // key -> the subject's latest write (for 504s)
	lastOwnOf := map[[3]string]*ownWrite{}    // actor, verb, resource -> its latest write (504s without a name)
	seen := map[string]int64{}                // uid -> highest RV that reached the subject
	listed := map[string]int64{}              // resource -> highest list RV served to the subject
	watched := map[string]int64{}             // resource -> highest RV a watch delivered to the subject
	lastRead := map[string]sim.Record{}       // uid -> latest handler call (or delivery) of it to the subject
	open := map[string][]openReconcile{}      // actor -> reconciles open
	srv := opts.newServer(tr)
	idx := newOwnIndex()
	judged := 0
	see := func(uid string, rv int64) {
		if uid != "" && rv > seen[uid] {
			seen[uid] = rv
		}
	}
	for _, r := range tr.Records {
		if opts.stopped(r.Pos) {
			return stoppedVerdict(name, r.Pos, len(tr.Records)), idx.checks
		}
		switch r.Kind {
		case sim.RecRestart:
			delete(open, r.Actor)
		case sim.RecReconcile:
			if subj[r.Actor] {
				trackReconcile(open, r)
			}
		case sim.RecHandler, sim.RecDelivered:
			if !subj[r.Actor] {
				break
			}
			if r.Kind == sim.RecDelivered && r.RV > watched[normResource(r.Resource)] {
				// A watch delivers in order: an event or bookmark at RV
				// means every earlier change in its scope was delivered.
				watched[normResource(r.Resource)] = r.RV
			}
			if r.EventType == "DELETED" && r.UID != "" {
				see(r.UID, math.MaxInt64) // the view no longer holds it
			}
			if r.UID != "" {
				see(r.UID, r.RV)
				if r.Kind == sim.RecHandler || lastRead[r.UID].Kind != sim.RecHandler {
					lastRead[r.UID] = r
				}
			}
		case sim.RecList:
			if subj[r.Actor] && r.RV > listed[normResource(r.Resource)] {
				listed[normResource(r.Resource)] = r.RV
			}
		case sim.RecRequest:
			if !subj[r.Actor] {
				break
			}
			// A get of the object or of its subresource (get/scale,
			// get/status) reads the live object.
			if (r.Verb == "get" || strings.HasPrefix(r.Verb, "get/")) && r.Code == 200 && r.Name != "" {
				if o, ok := srv.live[recKey(r)]; ok {
					see(o.UID, o.RV)
				}
			}
			if r.Code == 504 {
				// A create with generateName has no name in its request:
				// the subject's latest write of that verb and resource.
				w := lastOwnAt[recKey(r)]
				if r.Name == "" {
					w = lastOwnOf[[3]string{r.Actor, r.Verb, normResource(r.Resource)}]
				}
				if w != nil && w.rec.Actor == r.Actor && w.rec.Verb == r.Verb {
					w.timedOut = true
				}
			}
		case sim.RecWrite:
			if !isWrite(r) || r.UID == "" {
				break
			}
			after := opts.flatten(tr, r)
			before := current[r.UID]
			k := recKey(r)
			mine := subj[r.Actor] && !r.ByGC && !isEventsResource(r.Resource)
			if mine {
				judged++
				reached := func(uid string, res string, rv int64) bool {
					return seen[uid] >= rv || listed[res] >= rv || watched[res] >= rv
				}
				live := func(uid string) bool {
					o, ok := srv.live[keyOf[uid]]
					return ok && o.UID == uid
				}
				c := candidates{own: own, owner: owner, keyOf: keyOf, byName: byName, reached: reached, live: live, lastRead: lastRead, proc: proc}
				if naive {
					c.all = true
				} else {
					c.idx = idx
				}
				v, ok := staleDecision(r, before, after, open[r.Actor], &c)
				if ok {
					return staleVerdict(tr, name, r, v), idx.checks + c.naiveChecks
				}
				idx.checks += c.naiveChecks
				if idx.checks > budget {
					return unknownBecause(name, "judging stopped (work budget)", fmt.Sprintf("judging stopped after %d candidate own writes looked at, by the subject's write at position %d of %d records (%d writes judged, none stale so far): the trace holds more own writes still unseen by the subject than the check's budget allows", idx.checks, r.Pos, len(tr.Records), judged)), idx.checks
				}
			}
			current[r.UID] = after
			if r.Owner != "" {
				owner[r.UID] = r.Owner
			}
			_, known := keyOf[r.UID]
			keyOf[r.UID] = k
			if byName[nsName(k)] == nil {
				byName[nsName(k)] = map[string]bool{}
			}
			byName[nsName(k)][r.UID] = true
			srv.apply(r)
			if mine {
				w := &ownWrite{rec: r, before: before, after: after, proc: proc.of(r.Actor, r.Pos), removed: rm.removes(r)}
				_, marked := before["metadata.deletionTimestamp"]
				if prev := own[r.UID]; w.removed && marked && r.Verb == "delete" && prev != nil && prev.rec.Verb == "delete" && prev.rec.Actor == r.Actor && prev.rec.RV == r.RV-1 {
					w.markRV = prev.rec.RV
				}
				own[r.UID] = w
				lastOwnAt[k] = w
				lastOwnOf[[3]string{r.Actor, r.Verb, normResource(r.Resource)}] = w
			}
			if !known {
				idx.ownerKnown(r.UID, nsName(k))
			}
			if own[r.UID] != nil {
				idx.add(r.UID, nsName(k), owner[r.UID], keyOf)
			}
		}
	}
	if judged == 0 {
		return notApplicable(name, "no write by the subject", "the subject made no write: no decision of its own could rest on a stale view of its own write"), idx.checks
	}
	return pass(name, fmt.Sprintf("%d write(s) by the subject: none was decided from a view older than its own earlier write (retried 409s are measured apart, see retried-conflicts)", judged)), idx.checks
}

// ownIndex keeps, per reconcile key (namespace/name), the objects whose
// own write a decision in a reconcile of that key could rest on: those
// named so (its primaries) and those owned by one named so (their
// children), each with an own write. An object is dropped from a key once
// its latest own write can decide nothing more there (see dead) and put
// back by its next write: the search stays proportional to what is still
// open, not to every child a create/collect loop ever made under one name.
type ownIndex struct {
	byKey map[string]map[string]bool // reconcile key -> object UIDs
	// waiting holds, per owner UID not yet written in the trace, the
	// own-written objects it owns: they join the owner's key when it is.
	waiting map[string][]string
	// checks counts the candidates looked at.
	checks int
}

func newOwnIndex() *ownIndex {
	return &ownIndex{byKey: map[string]map[string]bool{}, waiting: map[string][]string{}}
}

// add files uid, named nsname and owned by ownerUID, under its own key
// and its owner's.
func (x *ownIndex) add(uid, nsname, ownerUID string, keyOf map[string]key) {
	x.put(nsname, uid)
	if ownerUID == "" {
		return
	}
	if k, ok := keyOf[ownerUID]; ok {
		x.put(nsName(k), uid)
	} else {
		x.waiting[ownerUID] = append(x.waiting[ownerUID], uid)
	}
}

// ownerKnown files the objects waiting for owner uid, now written under
// nsname, under that key.
func (x *ownIndex) ownerKnown(uid, nsname string) {
	for _, c := range x.waiting[uid] {
		x.put(nsname, c)
	}
	delete(x.waiting, uid)
}

func (x *ownIndex) put(k, uid string) {
	if x.byKey[k] == nil {
		x.byKey[k] = map[string]bool{}
	}
	x.byKey[k][uid] = true
}

// candidates is where staleDecision looks for the own writes a decision
// could rest on: the index, or (all) every own write of the run.
type candidates struct {
	idx         *ownIndex
	all         bool
	naiveChecks int
	own         map[string]*ownWrite
	owner       map[string]string
	keyOf       map[string]key
	byName      map[string]map[string]bool
	reached     func(uid, resource string, rv int64) bool
	live        func(uid string) bool
	lastRead    map[string]sim.Record
	proc        incarnations
}

// staleDecision judges one successful write d of the subject (see the
// contract). before and after are d's object before and after it. Of the
// own writes that make d stale, it names the one of the smallest UID.
func staleDecision(d sim.Record, before, after map[string]string, open []openReconcile, c *candidates) (staleView, bool) {
	rec, ok := reconcileOf(d, open, c.owner, c.keyOf)
	if !ok {
		return staleView{}, false
	}
	primaries := c.byName[rec.key]
	dProc := c.proc.of(d.Actor, d.Pos)
	if c.all {
		var uids []string
		for uid := range c.own {
			uids = append(uids, uid)
		}
		sort.Strings(uids)
		for _, uid := range uids {
			c.naiveChecks++
			if v, hit := c.judgeOwn(d, before, after, rec, primaries, dProc, uid); hit {
				return v, true
			}
		}
		return staleView{}, false
	}
	set := c.idx.byKey[rec.key]
	best, found := staleView{}, ""
	for uid := range set {
		c.idx.checks++
		if c.dead(primaries, uid) {
			delete(set, uid)
			continue
		}
		v, hit := c.judgeOwn(d, before, after, rec, primaries, dProc, uid)
		if hit && (found == "" || uid < found) {
			best, found = v, uid
		}
	}
	return best, found != ""
}

// dead reports whether the subject's latest own write of uid can make no
// decision in a reconcile whose primaries are primaries stale any more,
// whatever comes later (until uid is written again, which files it
// anew): it was answered 504, a view has reached it (the views only move
// forward), the object is neither one of the primaries nor their child,
// or, as a child, it is gone (so never written again) and was not
// removed by that write, or a view holds that delete's mark.
func (c *candidates) dead(primaries map[string]bool, uid string) bool {
	w := c.own[uid]
	if w == nil || w.timedOut {
		return true
	}
	isChild := primaries[c.owner[uid]]
	if !isChild && !primaries[uid] {
		return true
	}
	res := normResource(w.rec.Resource)
	if c.reached(uid, res, w.rec.RV) {
		return true
	}
	sawMark := w.removed && w.markRV > 0 && c.reached(uid, res, w.markRV)
	return isChild && !c.live(uid) && (!w.removed || sawMark)
}

// judgeOwn judges d against the subject's latest own write of uid: ok
// when that write makes d a stale decision.
func (c *candidates) judgeOwn(d sim.Record, before, after map[string]string, rec openReconcile, primaries map[string]bool, dProc int, uid string) (staleView, bool) {
	w := c.own[uid]
	if w.rec.Pos >= rec.start || w.proc != dProc || w.timedOut {
		return staleView{}, false
	}
	isChild := primaries[c.owner[uid]]
	if !isChild && !primaries[uid] {
		return staleView{}, false
	}
	if c.reached(uid, normResource(w.rec.Resource), w.rec.RV) {
		return staleView{}, false
	}
	read, ok := c.lastRead[uid]
	if !ok {
		read = sim.Record{Pos: -1}
	}
	v := staleView{own: *w, read: read}
	dRemoves := d.Verb == "delete" || d.Verb == "deletecollection"
	switch {
	case d.UID == uid:
		if dRemoves {
			if f := w.decisive(); len(f) > 0 && !w.removed {
				v.fields, v.why = f, "deleted the object from a copy without its own change"
				return v, true
			}
			return staleView{}, false
		}
		if d.BaseRV >= w.rec.RV {
			// An update sent with a resourceVersion at or after the
			// own write, which the server accepted: the writer built
			// it from a copy holding that write (its own last write,
			// kept while its informer lags), whatever its cache held.
			return staleView{}, false
		}
		if f := undone(*w, before, after); len(f) > 0 {
			v.fields, v.why = f, "set back what its own write had set"
			return v, true
		}
	case !isChild:
		if strings.Contains(d.Verb, "/status") {
			return staleView{}, false // a status write reports what it sees; the next one corrects it
		}
		if f := w.decisive(); len(f) > 0 {
			v.fields, v.why = f, "decided from a copy of its primary without its own change"
			return v, true
		}
	default:
		sibling := d.Owner != "" && d.Owner == c.owner[uid] && normResource(d.Resource) == normResource(w.rec.Resource)
		// A view without an own create that someone else has removed
		// since is not behind the server: recreating it is repair.
		created := w.rec.Verb == "create" && c.live(uid)
		// A view that holds the own delete's mark (deletionTimestamp
		// set by that request) has seen the delete.
		sawMark := w.removed && w.markRV > 0 && c.reached(uid, normResource(w.rec.Resource), w.markRV)
		// A child the controller names itself (no generateName) is
		// not one of interchangeable siblings it counts: creating it
		// while the view still shows a sibling it deleted was not
		// decided from how many there are (the stale view over-counts).
		_, generated := after["metadata.generateName"]
		namedAfterDelete := d.Verb == "create" && !generated && w.removed && !created
		if sibling && (d.Verb == "create" || dRemoves) && (created || w.removed) && !sawMark && !namedAfterDelete {
			v.fields, v.why = []string{"(the set of children)"}, "decided how many children there are from a view without its own "+w.rec.Verb
			if d.Verb == "create" && !generated {
				// Not a duplicate (the server refuses a second create of
				// one name), but what the controller derives from the set
				// (a ControllerRevision's number) may repeat.
				v.why = "created a child it names itself from a set of children without its own " + w.rec.Verb + " (not a duplicate; what it derives from the set, such as a revision number, can repeat)"
			}
			return v, true
		}
	}
	return staleView{}, false
}

// reconcileOf returns the open reconcile d belongs to: the one of d's
// namespace/name, or of its owner's; the only one open when none matches.
func reconcileOf(d sim.Record, open []openReconcile, owner map[string]string, keyOf map[string]key) (openReconcile, bool) {
	want := []string{nsName(recKey(d))}
	o := d.Owner
	if o == "" {
		o = owner[d.UID]
	}
	if k, ok := keyOf[o]; ok && o != "" {
		want = append(want, nsName(k))
	}
	for _, k := range want {
		for _, r := range open {
			if r.key == k {
				return r, true
			}
		}
	}
	return openReconcile{}, false
}

// undone returns the fields own changed that a later write (from before to
// after) set back to their value before own.
func undone(own ownWrite, before, after map[string]string) []string {
	var out []string
	for _, p := range own.changed() {
		old := leaf(own.before, p)
		if leaf(after, p) == old && leaf(before, p) != old {
			out = append(out, p)
		}
	}
	return out
}

func staleVerdict(tr *sim.Trace, name string, d sim.Record, v staleView) Verdict {
	w := v.own.rec
	readWords := fmt.Sprintf("no copy of %s had reached it since", recKey(w))
	pos := []int{d.Pos, w.Pos}
	if v.read.Pos >= 0 {
		readWords = fmt.Sprintf("its copy of %s was at RV %d (%s at position %d)", recKey(w), v.read.RV, v.read.Kind, v.read.Pos)
		pos = append(pos, v.read.Pos)
	}
	fields := strings.Join(firstStrings(v.fields, 3), ", ")
	reason := fmt.Sprintf("%s's %s of %s (RV %d) %s: %s, older than its own %s of it at RV %d (position %d, changing %s)",
		d.Actor, d.Verb, recKey(d), d.RV, v.why, readWords, w.Verb, w.RV, w.Pos, fields)
	out := fail(name, withFaultNote(tr, reason), pos...)
	out.Detail = fmt.Sprintf("the stale read: %s\nthe own write it missed: %s %s at RV %d, position %d (changed %s)\nthe write it caused: %s %s at RV %d, position %d",
		readWords, w.Verb, recKey(w), w.RV, w.Pos, strings.Join(v.fields, ", "), d.Verb, recKey(d), d.RV, d.Pos)
	return out
}

func firstStrings(s []string, n int) []string {
	if len(s) > n {
		return append(append([]string(nil), s[:n]...), fmt.Sprintf("and %d more", len(s)-n))
	}
	return s
}

// subresource returns the subresource of a verb ("update/status" -> "status").
func subresource(verb string) string {
	if i := strings.IndexByte(verb, '/'); i >= 0 {
		return verb[i+1:]
	}
	return ""
}
