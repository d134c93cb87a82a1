package invariants

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cachelab/cachelab/sim"
)

const contractConvergence = `client-go, tools/cache SharedInformer: "if an object is ` +
	`updated ... the informer's local cache will be eventually consistent with the ` +
	`authoritative state"; a controller promises that "the actual state of the world ` +
	`eventually converges to the desired state".
Checked: let the last disturbance be the last fault, crash/restart, or write by an ` +
	`actor other than the subject and the garbage collector. Then (1) the last snapshot ` +
	`of every cache of the subject (RecCache) equals the server's final state (RecFinal) ` +
	`restricted to the cache's resource and namespace, comparing key -> UID and RV; ` +
	`(2) the last desired-state record (RecDesired) says desired == actual; and (3) the ` +
	`subject settled (desired held and its handlers went quiet) within Options.Bound of ` +
	`the last disturbance. A run cut short by its deadline or a livelock is judged from ` +
	`its last state: a fight still going on (see stable-reconciliation) is the reason, ` +
	`else the last desired-state record when it says desired != actual, before a ` +
	`cache that differs from the server only by the events in flight at the cut ` +
	`(then shown as detail). Unknown without RecFinal, or with neither caches nor ` +
	`desired records.`

const contractStable = `Anvil (OSDI'24), eventually stable reconciliation: "the ` +
	`controller eventually reaches the desired state and stays there", i.e. once the ` +
	`desired state holds and nothing else changes, the controller issues no further ` +
	`state-changing requests.
Checked, after the later of the last disturbance and the moment desired == actual ` +
	`last became true (RecDesired), on the subject's writes (Event objects excepted): ` +
	`none is a no-op (the object's content, server-managed fields and condition ` +
	`timestamps aside, is what it was; a removal, such as the patch that strips the last ` +
	`finalizer, is never one), none flaps (sets an object back to a content it already ` +
	`had since then, with no handler call of the subject, other than of that object, in ` +
	`between: a status that follows what the informer delivered is not a flap), and ` +
	`the run ended quiet rather than cut short while the subject was still writing (a subject whose last write came ` +
	`the plan's quiet period or longer before the cut settled: a periodic resync's reads and reconciles keep a run ` +
	`from ending quiet). A finite settling write (a condition turning False once ` +
	`all is Ready) is allowed. And, over the whole run, no fight: a run cut short by ` +
	`its deadline or a livelock fails when the subject and another actor (not the ` +
	`garbage collector) each set one field of one object back to their own value at ` +
	`least 3 times (the other's reversals not made by plan steps: a user who changes a ` +
	`field by plan and sees it repaired is not fighting), naming both writers, the ` +
	`field and their counts ("fought with competitor over spec.replicas: 115 writes ` +
	`against 228"); a back-and-forth that ended before the run did is not a fight. ` +
	`Unknown when the subject records no desired state or never converged (and ` +
	`fought no one).`

// disturbance returns the last record that may legitimately set the
// subject to work again: a fault, a crash or restart, a write by another
// actor (not the garbage collector). ok is false if there is none.
func disturbance(tr *sim.Trace, subj map[string]bool) (sim.Record, bool) {
	for i := len(tr.Records) - 1; i >= 0; i-- {
		r := tr.Records[i]
		switch r.Kind {
		case sim.RecFault, sim.RecCrash, sim.RecRestart:
			return r, true
		case sim.RecWrite:
			if !subj[r.Actor] && !r.ByGC && r.Actor != "gc" {
				return r, true
			}
		}
	}
	return sim.Record{}, false
}

// isSync reports whether a handler call only re-delivers what the handler
// already had (a resync or a relist of an unchanged object, EDGE 10, 21).
func isSync(r sim.Record) bool {
	return r.EventType == "MODIFIED" && r.UID == r.OldUID && r.RV == r.OldRV
}

// cacheScope says which part of the server a cache mirrors.
type cacheScope struct {
	resources map[string]bool
	namespace string
}

func (s cacheScope) has(o sim.ObjectState) bool {
	return s.resources[normResource(o.Resource)] && (s.namespace == "" || s.namespace == o.Namespace)
}

func (s cacheScope) String() string {
	res := strings.Join(sortedStrings(s.resources), ",")
	if s.namespace != "" {
		return res + " in " + s.namespace
	}
	return res
}

// scopeOf infers what a cache snapshot mirrors (see the package doc).
func scopeOf(tr *sim.Trace, c sim.Record) cacheScope {
	sc := cacheScope{resources: map[string]bool{}, namespace: c.Namespace}
	if c.Resource != "" {
		sc.resources[normResource(c.Resource)] = true
		return sc
	}
	for _, o := range c.Objects {
		sc.resources[normResource(o.Resource)] = true
	}
	if len(sc.resources) > 0 {
		return sc
	}
	for _, r := range tr.Records {
		if r.Kind == sim.RecHandler && r.Actor == c.Actor && r.Handler == c.Handler && r.Resource != "" {
			sc.resources[normResource(r.Resource)] = true
		}
	}
	return sc
}

// serverResources are the resources the server served or stored in the run.
func serverResources(tr *sim.Trace) map[string]bool {
	out := map[string]bool{}
	for _, r := range tr.Records {
		switch r.Kind {
		case sim.RecWrite, sim.RecList, sim.RecWatchOpen:
			if r.Resource != "" {
				out[normResource(r.Resource)] = true
			}
		case sim.RecFinal:
			for _, o := range r.Objects {
				out[normResource(o.Resource)] = true
			}
		}
	}
	return out
}

// lastCaches returns the last snapshot of every cache of the subject taken
// in the actor's last incarnation, sorted by position. Snapshots of things
// that are not the server's resources (Bellerophon's external "backups"
// store) mirror no server state and are left out.
func lastCaches(tr *sim.Trace, subj map[string]bool) []sim.Record {
	inc := newIncarnations(tr)
	last := map[[2]string]sim.Record{}
	for _, r := range tr.Records {
		if r.Kind == sim.RecCache && subj[r.Actor] {
			last[[2]string{r.Actor, r.Handler}] = r
		}
	}
	served := serverResources(tr)
	var out []sim.Record
	for _, r := range last {
		if inc.of(r.Actor, r.Pos) != inc.of(r.Actor, len(tr.Records)) {
			continue
		}
		mirrors := true
		for res := range scopeOf(tr, r).resources {
			mirrors = mirrors && served[res]
		}
		if mirrors {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pos < out[j].Pos })
	return out
}

// viewDiffWords says, one line per object, how a cache's view differs
// from the server's: only on the server, only in the cache, or a different
// incarnation or revision. Plain words, for reports (no Go syntax).
func viewDiffWords(server, cache map[string]string) string {
	var lines []string
	for _, k := range sortedStrings(server) {
		c, ok := cache[k]
		switch {
		case !ok:
			lines = append(lines, fmt.Sprintf("%s: on the server (%s), missing from the cache", k, server[k]))
		case c != server[k]:
			lines = append(lines, fmt.Sprintf("%s: the server has %s, the cache %s", k, server[k], c))
		}
	}
	for _, k := range sortedStrings(cache) {
		if _, ok := server[k]; !ok {
			lines = append(lines, fmt.Sprintf("%s: in the cache (%s), gone from the server", k, cache[k]))
		}
	}
	return strings.Join(lines, "\n")
}

// firstDiffKey returns the first key (in order) whose state differs between
// the server's objects (those keep accepts) and a cache's.
func firstDiffKey(server, cache []sim.ObjectState, keep func(sim.ObjectState) bool) (key, bool) {
	want := map[key]string{}
	for _, o := range server {
		if keep(o) {
			want[stateKey(o)] = fmt.Sprintf("%s@%d", o.UID, o.RV)
		}
	}
	got := map[key]string{}
	for _, o := range cache {
		got[stateKey(o)] = fmt.Sprintf("%s@%d", o.UID, o.RV)
	}
	var diff []key
	for k, v := range want {
		if got[k] != v {
			diff = append(diff, k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diff = append(diff, k)
		}
	}
	if len(diff) == 0 {
		return key{}, false
	}
	slices.SortFunc(diff, func(a, b key) int { return strings.Compare(a.String(), b.String()) })
	return diff[0], true
}

// stateView maps key -> "uid@rv" for a snapshot, the comparison the
// convergence check makes.
func stateView(objs []sim.ObjectState, keep func(sim.ObjectState) bool) map[string]string {
	out := map[string]string{}
	for _, o := range objs {
		if keep(o) {
			out[stateKey(o).String()] = fmt.Sprintf("uid=%s rv=%d", o.UID, o.RV)
		}
	}
	return out
}

func eventualConvergence(tr *sim.Trace, opts Options) Verdict {
	const name = NameEventualConvergence
	if strings.HasPrefix(tr.Outcome, "error") {
		return unknownBecause(name, "the run itself failed", fmt.Sprintf("the run itself failed (%s), so its end state says nothing about the subject", tr.Outcome))
	}
	final, ok := finalRecord(tr)
	if !ok {
		return unknownBecause(name, "no final server state", "the trace has no final server state (RecFinal record), so caches cannot be compared with the server")
	}
	subj := subjectActors(tr)
	caches := lastCaches(tr, subj)
	var desired []sim.Record
	for _, r := range tr.Records {
		if r.Kind == sim.RecDesired {
			desired = append(desired, r)
		}
	}
	if len(caches) == 0 && len(desired) == 0 {
		return unknownBecause(name, "no cache snapshot or desired-state record", "the trace has neither cache snapshots (RecCache) nor desired-state records (RecDesired): nothing to compare with the server")
	}
	// A run cut short (deadline, livelock) is judged from its last state:
	// a fight still going on, else the last desired-state record, before
	// caches that differ from the server only by the events in flight when
	// it was cut.
	cut := cutShort(tr)
	cacheV, cacheBad := cacheDiff(tr, subj, caches, final)
	if cut {
		if fs := fights(tr, subj); len(fs) > 0 {
			v := fail(name, withFaultNote(tr, fmt.Sprintf("the run was cut short (%s) while %s: the subject never settled", tr.Outcome, fs[0])), fs[0].pos...)
			if cacheBad {
				v.Detail = cacheV.Reason + "\n" + cacheV.Detail
			}
			return v
		}
	}
	lastFalse := len(desired) > 0 && !desired[len(desired)-1].Value
	// (1) every cache equals the server.
	if cacheBad && !(cut && lastFalse) {
		return cacheV
	}
	// (2) desired == actual at the end.
	dist, hasDist := disturbance(tr, subj)
	var settled time.Duration
	settledPos := -1
	if len(desired) > 0 {
		last := desired[len(desired)-1]
		if !last.Value {
			if w, ok := staleDesiredMirror(tr); ok {
				return unknownBecause(name, "the desired-state record missed a removal", fmt.Sprintf("desired == actual is false at the end, but the sim's record of it cannot be trusted: its mirror of the server missed the removal of %s at position %d (an update emptying a terminating object's finalizers is recorded with its last state; only the DELETED watch event shows the removal)",
					recKey(w), w.Pos))
			}
			why := last.Detail
			if final.Detail != "" {
				// The reason at the end of the run, not at the flip.
				why = final.Detail
			}
			if why == "" {
				why = "no reason given"
			}
			v := fail(name, withFaultNote(tr, fmt.Sprintf("the subject's desired state did not hold at the end of the run (%s)", why)), last.Pos)
			if at, trig, ok := stuckAt(tr, subj); ok {
				v = v.at(at, trig)
			}
			if cacheBad {
				v.Detail = cacheV.Reason + "\n" + cacheV.Detail
			}
			return v
		}
		settled, settledPos = last.At.D(), last.Pos
	}
	// (3) settled within the bound: desired held and handlers went quiet.
	for i := len(tr.Records) - 1; i >= 0; i-- {
		r := tr.Records[i]
		if r.Kind == sim.RecHandler && subj[r.Actor] && !isSync(r) {
			if r.At.D() > settled {
				settled, settledPos = r.At.D(), r.Pos
			}
			break
		}
	}
	from := time.Duration(0)
	if hasDist {
		from = dist.At.D()
	}
	if settledPos >= 0 && settled-from > opts.Bound {
		pos := []int{settledPos}
		if hasDist {
			pos = append(pos, dist.Pos)
		}
		return fail(name, withFaultNote(tr, fmt.Sprintf("the subject settled only %s after the last disturbance, more than the bound of %s", settled-from, opts.Bound)), pos...)
	}
	parts := []string{}
	if len(caches) > 0 {
		parts = append(parts, fmt.Sprintf("%d cache(s) equal the server's final state", len(caches)))
	}
	if len(desired) > 0 {
		parts = append(parts, "desired == actual holds at the end")
	}
	lat := settled - from
	if lat < 0 {
		lat = 0
	}
	return pass(name, fmt.Sprintf("%s, settled %s after the last disturbance (bound %s)", strings.Join(parts, " and "), lat, opts.Bound))
}

// cutShort reports whether the run ended on its deadline or in a livelock
// rather than quiet.
func cutShort(tr *sim.Trace) bool {
	return tr.Outcome == "deadline" || strings.HasPrefix(tr.Outcome, "livelock")
}

// cacheDiff returns the failure for the first of caches that differs from
// the server's final state; ok is false when every one equals it.
func cacheDiff(tr *sim.Trace, subj map[string]bool, caches []sim.Record, final sim.Record) (Verdict, bool) {
	for _, c := range caches {
		sc := scopeOf(tr, c)
		if len(sc.resources) == 0 {
			continue // an empty cache of unknown resource: nothing to compare
		}
		want := stateView(final.Objects, sc.has)
		got := stateView(c.Objects, func(sim.ObjectState) bool { return true })
		if diff := cmp.Diff(want, got); diff != "" {
			v := fail(NameEventualConvergence, withFaultNote(tr, fmt.Sprintf("cache %q of %s (%s) does not equal the server's final state: %d object(s) on the server, %d in the cache",
				c.Handler, c.Actor, sc, len(want), len(got))), c.Pos, final.Pos)
			v.Detail = "cache vs server at the end of the run:\n" + viewDiffWords(want, got)
			if k, ok := firstDiffKey(final.Objects, c.Objects, sc.has); ok {
				if at, trig := missedChange(tr, subj, k, c.Pos); at >= 0 {
					v = v.at(at, trig)
				}
			}
			return v, true
		}
	}
	return Verdict{}, false
}

func stableReconciliation(tr *sim.Trace, opts Options) Verdict {
	const name = NameStableReconciliation
	subj := subjectActors(tr)
	var last sim.Record
	found := false
	for _, r := range tr.Records {
		if r.Kind == sim.RecDesired {
			last, found = r, true
		}
	}
	if tr.Outcome != "quiet" {
		if fs := fights(tr, subj); len(fs) > 0 {
			f := fs[0]
			v := fail(name, fmt.Sprintf("%s, until the run was cut short (%s): it never settled", f, tr.Outcome), f.pos...)
			if len(fs) > 1 {
				v.Detail = fmt.Sprintf("%d fights in all:", len(fs))
				for _, g := range fs {
					v.Detail += "\n" + g.String()
				}
			}
			return v
		}
	}
	if !found {
		return unknownBecause(name, "no desired-state record", "the subject records no desired state (RecDesired), so there is no moment of convergence to measure stability from")
	}
	if !last.Value {
		return unknownBecause(name, "never converged", "the subject never converged (desired == actual is false at the end; see eventual-convergence), so stability cannot be judged")
	}
	from := last.Pos
	if dist, ok := disturbance(tr, subj); ok && dist.Pos > from {
		from = dist.Pos
	}
	// The content of every object as of from, then the subject's writes.
	seenContent := map[string]map[string]int{} // uid -> contents since from -> where each was set
	current := map[string]string{}
	for _, r := range tr.Records[:from+1] {
		if isWrite(r) && r.UID != "" {
			current[r.UID] = content(r.Object)
		}
	}
	rm := removalsOf(tr)
	// heard: the subject's handler calls after from, by position: a write
	// that follows what they delivered is not a flap.
	type heardCall struct {
		pos int
		uid string
	}
	var heard []heardCall
	for _, r := range tr.Records[from+1:] {
		if r.Kind == sim.RecHandler && subj[r.Actor] && !isSync(r) {
			heard = append(heard, heardCall{r.Pos, r.UID})
		}
	}
	heardBetween := func(p, q int, uid string) bool {
		i := sort.Search(len(heard), func(i int) bool { return heard[i].pos > p })
		for ; i < len(heard) && heard[i].pos < q; i++ {
			if heard[i].uid != uid {
				return true
			}
		}
		return false
	}
	var writes []int
	for _, r := range tr.Records[from+1:] {
		if !isWrite(r) || r.UID == "" {
			continue
		}
		c := content(r.Object)
		prev, had := current[r.UID]
		current[r.UID] = c
		if !subj[r.Actor] || r.ByGC || isEventsResource(r.Resource) {
			continue
		}
		writes = append(writes, r.Pos)
		if r.Verb == "delete" || rm.removes(r) {
			// A removal (a delete, or the patch that strips the last
			// finalizer, recorded with the object's last state) changes
			// everything: it is neither a no-op nor a flap.
			delete(seenContent, r.UID)
			continue
		}
		if seenContent[r.UID] == nil {
			seenContent[r.UID] = map[string]int{}
			if had {
				seenContent[r.UID][prev] = from
			}
		}
		at, flapped := seenContent[r.UID][c]
		switch {
		case had && c == prev:
			return fail(name, fmt.Sprintf("after it had converged (position %d) the subject made a write that changed nothing: a %q of %s", from, r.Verb, recKey(r)), r.Pos, last.Pos)
		case flapped && !heardBetween(at, r.Pos, r.UID):
			return fail(name, fmt.Sprintf("after it had converged (position %d) the subject flapped: its %q of %s set it back to a content it already had since then (at position %d), though nothing reached its handlers in between", from, r.Verb, recKey(r), at), r.Pos, last.Pos)
		}
		seenContent[r.UID][c] = r.Pos
	}
	if len(writes) > 0 && tr.Outcome != "quiet" && !silentBeforeCut(tr, writes[len(writes)-1]) {
		return fail(name, fmt.Sprintf("after it had converged (position %d) the subject kept writing (%d write(s)) until the run was cut short (%s): it never settled", from, len(writes), tr.Outcome),
			append(firstN(writes, 10), last.Pos)...)
	}
	end := "the run ended quiet"
	switch {
	case tr.Outcome == "quiet":
	case len(writes) > 0:
		end = fmt.Sprintf("it wrote nothing for %s (the plan's quiet period or longer) before the run was cut short (%s): its reads and reconciles went on, its writes had stopped", time.Duration(tr.End-tr.Records[writes[len(writes)-1]].At), tr.Outcome)
	default:
		end = fmt.Sprintf("it made none before the run was cut short (%s)", tr.Outcome)
	}
	return pass(name, fmt.Sprintf("after desired == actual held and nothing else changed (position %d) the subject made %d write(s), none a no-op or a flap, and %s", from, len(writes), end))
}

// silentBeforeCut reports whether the subject's last write (at position
// pos) came at least the plan's quiet period before the end of a run cut
// short: a controller with a periodic resync (the HPA's 15 s) keeps
// reading and reconciling, so the run never ends quiet, though its writes
// stopped as they do in a run that does.
func silentBeforeCut(tr *sim.Trace, pos int) bool {
	quiet := sim.DefaultQuiet
	if tr.Plan != nil && tr.Plan.Quiet > 0 {
		quiet = tr.Plan.Quiet.D()
	}
	return pos >= 0 && pos < len(tr.Records) && time.Duration(tr.End-tr.Records[pos].At) >= quiet
}

// staleDesiredMirror finds a write that removed an object although its
// record looks like an update of a still-terminating object (the removal
// shows only as a DELETED watch event), with no later write to that key:
// the sim's mirror of the server, from which it computes RecDesired, judged
// such writes from the record alone and still holds the object.
func staleDesiredMirror(tr *sim.Trace) (sim.Record, bool) {
	rm := removalsOf(tr)
	stale := map[key]sim.Record{}
	for _, r := range tr.Records {
		if !isWrite(r) {
			continue
		}
		delete(stale, recKey(r))
		if rm.removes(r) && !removes(r) {
			stale[recKey(r)] = r
		}
	}
	for _, k := range sortedKeys(stale) {
		return stale[k], true
	}
	return sim.Record{}, false
}

// volatileKeys are fields whose change alone is not a change of content.
var volatileKeys = map[string]bool{"lastTransitionTime": true, "lastUpdateTime": true, "lastHeartbeatTime": true, "lastProbeTime": true}

// content is an object's JSON without server-managed fields and condition
// timestamps, canonical, for comparing writes.
func content(obj json.RawMessage) string {
	var v any
	if len(obj) == 0 || json.Unmarshal(obj, &v) != nil {
		return string(obj)
	}
	var strip func(v any) any
	strip = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			for k := range t {
				if volatileKeys[k] {
					delete(t, k)
				} else {
					t[k] = strip(t[k])
				}
			}
		case []any:
			for i := range t {
				t[i] = strip(t[i])
			}
		}
		return v
	}
	if m, ok := v.(map[string]any); ok {
		if md, ok := m["metadata"].(map[string]any); ok {
			for _, k := range []string{"resourceVersion", "generation", "managedFields", "creationTimestamp"} {
				delete(md, k)
			}
		}
	}
	b, _ := json.Marshal(strip(v)) // map keys marshal sorted: canonical
	return string(b)
}
