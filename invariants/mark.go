package invariants

import (
	"strings"

	"github.com/cachelab/cachelab/sim"
)

// This file finds where a failed invariant's evidence departs from what it
// must be (Verdict.At): the step that broke it, not what set it in motion
// (Verdict.Trigger).

// subjectHeard returns the last record after pos in which a subject actor
// was told about the object of key k (a handler call or a delivered watch
// event), or -1: a subject that was told and still holds a stale view
// mishandled what it was told there.
func subjectHeard(tr *sim.Trace, subj map[string]bool, k key, after int) int {
	last := -1
	for _, r := range tr.Records {
		if r.Pos <= after || !subj[r.Actor] || recKey(r) != k {
			continue
		}
		if r.Kind == sim.RecHandler || r.Kind == sim.RecDelivered {
			last = r.Pos
		}
	}
	return last
}

// lastServerWrite returns the last write of key k at or before pos, or -1.
func lastServerWrite(tr *sim.Trace, k key, before int) int {
	last := -1
	for _, r := range tr.Records {
		if r.Pos > before {
			break
		}
		if isWrite(r) && recKey(r) == k {
			last = r.Pos
		}
	}
	return last
}

// missedChange marks the evidence of a view (cache or handler) of key k that
// differs from the server at the end: the subject's last record of being
// told about k after the server's last write of it (it was told and
// mishandled it), else the subject's first failed request after that write
// (where it failed to hear of it: a reflector that keeps failing its list
// or watch), with the write as the trigger, else the write (the change
// never reached it).
func missedChange(tr *sim.Trace, subj map[string]bool, k key, end int) (at, trigger int) {
	w := lastServerWrite(tr, k, end)
	if h := subjectHeard(tr, subj, k, w); h >= 0 {
		return h, w
	}
	if w >= 0 {
		for _, r := range tr.Records[w+1:] {
			if r.Pos > end {
				break
			}
			if r.Kind == sim.RecRequest && subj[r.Actor] && r.Code >= 400 {
				return r.Pos, w
			}
		}
	}
	return w, -1
}

// subjectMove reports whether r is something a subject did or was told
// that can change what it does: a handler call, a reconcile, a request or
// a write. An informer's own list or watch that succeeded is not one: it
// only keeps the cache fed (what it brings is a handler call).
func subjectMove(r sim.Record, subj map[string]bool) bool {
	if !subj[r.Actor] {
		return false
	}
	switch r.Kind {
	case sim.RecHandler, sim.RecReconcile:
		return true
	case sim.RecRequest:
		return r.Code >= 400 || r.Verb != "list" && r.Verb != "watch"
	case sim.RecWrite:
		return !r.ByGC
	}
	return false
}

// stuckAt marks a desired state that does not hold at the end: the last
// move of the subject after the final streak of desired == false began
// (where it stopped short), with the non-subject write that began the
// streak as the trigger. ok is false when the trace has no such streak.
func stuckAt(tr *sim.Trace, subj map[string]bool) (at, trigger int, ok bool) {
	start := -1
	for _, r := range tr.Records {
		if r.Kind != sim.RecDesired {
			continue
		}
		switch {
		case r.Value:
			start = -1
		case start < 0:
			start = r.Pos
		}
	}
	if start < 0 {
		return -1, -1, false
	}
	trigger = -1
	for i := start - 1; i >= 0; i-- {
		r := tr.Records[i]
		if isWrite(r) {
			if !subj[r.Actor] {
				trigger = r.Pos
			}
			break
		}
	}
	// The last move of the subject in the streak; a move that failed (a
	// request answered with an error, a reconcile that returned one) wins:
	// the subject gave up there.
	at, failed := start, -1
	for _, r := range tr.Records[start:] {
		if !subjectMove(r, subj) {
			continue
		}
		at = r.Pos
		if r.Kind == sim.RecRequest && r.Code >= 400 && writeVerb(r.Verb) || r.Kind == sim.RecReconcile && r.Op == "end" && r.Result != "" && r.Result != "ok" {
			failed = r.Pos
		}
	}
	if failed >= 0 {
		at = failed
	}
	// A reconcile that ended well, after the last failed move, but judged
	// from a copy of its primary older than its own last write to it
	// (KEP-5647) is where the subject stopped short for a reason of its
	// own: it wins over a failure that only set things in motion.
	if stale := staleReconcileEnds(tr, subj, max(start, failed)); len(stale) > 0 {
		at = stale[len(stale)-1]
	}
	return at, trigger, true
}

// staleReconcileEnds returns the positions, after from, of the ends "ok" of
// the subject's reconciles of a key K that started while its view of an
// object named K was older than its own latest write to it, in the same
// process (nothing delivered, listed or got since carried that write).
func staleReconcileEnds(tr *sim.Trace, subj map[string]bool, from int) []int {
	proc := newProcesses(tr)
	type write struct {
		rv   int64
		proc int
		res  string
	}
	own := map[string]write{}       // namespace/name -> the subject's latest write there
	seen := map[string]int64{}      // namespace/name -> highest RV that reached the subject
	watched := map[string]int64{}   // resource -> highest RV delivered to the subject
	started := map[[2]string]bool{} // actor, key -> the open reconcile started stale
	var out []int
	for _, r := range tr.Records {
		switch {
		case r.Kind == sim.RecDelivered && subj[r.Actor]:
			if r.RV > watched[normResource(r.Resource)] {
				watched[normResource(r.Resource)] = r.RV
			}
			if r.Name != "" && r.RV > seen[nsName(recKey(r))] {
				seen[nsName(recKey(r))] = r.RV
			}
		case r.Kind == sim.RecHandler && subj[r.Actor] && r.Name != "":
			if r.RV > seen[nsName(recKey(r))] {
				seen[nsName(recKey(r))] = r.RV
			}
		case r.Kind == sim.RecList && subj[r.Actor]:
			if r.RV > watched[normResource(r.Resource)] {
				watched[normResource(r.Resource)] = r.RV
			}
		case isWrite(r) && subj[r.Actor] && !isEventsResource(r.Resource):
			own[nsName(recKey(r))] = write{r.RV, proc.of(r.Actor, r.Pos), normResource(r.Resource)}
		case r.Kind == sim.RecReconcile && subj[r.Actor] && r.Op == "start":
			w, ok := own[r.Key]
			started[[2]string{r.Actor, r.Key}] = ok && w.proc == proc.of(r.Actor, r.Pos) &&
				seen[r.Key] < w.rv && watched[w.res] < w.rv
		case r.Kind == sim.RecReconcile && subj[r.Actor] && r.Op == "end":
			if started[[2]string{r.Actor, r.Key}] && r.Result == "ok" && r.Pos > from {
				out = append(out, r.Pos)
			}
		}
	}
	return out
}

// writeVerb reports whether verb ("update/status" included) writes.
func writeVerb(verb string) bool {
	v, _, _ := strings.Cut(verb, "/")
	switch v {
	case "create", "update", "patch", "delete":
		return true
	}
	return false
}
