package invariants

import (
	"fmt"

	"github.com/cachelab/cachelab/sim"
)

const contractLostDeletes = `kube-apiserver watch contract: every deletion is sent to ` +
	`every watch that can see the object, or the watch is closed (410) so that the ` +
	`client relists and learns of it through a tombstone (DeletedFinalStateUnknown). ` +
	`client-go SharedInformer: "the informer's local cache will be eventually ` +
	`consistent with the authoritative state". EDGE 18: a deletion between List and ` +
	`Watch is lost by the fake clientset (k/k#141528).
Checked: no object the server removed (a RecWrite that took it away and no later ` +
	`object with its UID in RecFinal) is in the last snapshot of any subject cache ` +
	`(RecCache) or in the view any subject handler was last given (replayed from ` +
	`RecHandler, last process incarnation). A removal younger than Options.Bound at ` +
	`the end of a run cut short by its deadline is not required.`

func noLostDeletes(tr *sim.Trace, opts Options) Verdict {
	const name = NameNoLostDeletes
	final, ok := finalRecord(tr)
	if !ok {
		return unknownBecause(name, "no final server state", "the trace has no final server state (RecFinal record), so what the server deleted for good is not known")
	}
	subj := subjectActors(tr)
	onServer := map[string]bool{}
	for _, o := range final.Objects {
		onServer[o.UID] = true
	}
	srv := opts.newServer(tr)
	for _, r := range tr.Records {
		if opts.stopped(r.Pos) {
			return stoppedVerdict(name, r.Pos, len(tr.Records))
		}
		srv.apply(r)
	}
	// gone reports whether uid was removed for good early enough to be
	// required absent, and the position of its removal.
	gone := func(uid string) (int, bool) {
		pos, removed := srv.removedAt[uid]
		if !removed || onServer[uid] || uid == "" {
			return 0, false
		}
		if tr.Outcome != "quiet" && tr.End.D()-recAt(tr, pos).At.D() < opts.Bound {
			return 0, false
		}
		return pos, true
	}
	caches := lastCaches(tr, subj)
	views := lastHandlerViews(tr)
	if len(caches) == 0 && len(views) == 0 {
		return unknownBecause(name, "no cache snapshot or handler call", "the trace has no subject cache snapshots and no handler calls: nothing shows what the subject holds")
	}
	nDeleted := 0
	for uid := range srv.removedAt {
		if _, ok := gone(uid); ok {
			nDeleted++
		}
	}
	for _, c := range caches {
		for _, o := range c.Objects {
			if pos, ok := gone(o.UID); ok {
				v := fail(name, withFaultNote(tr, fmt.Sprintf("cache %q of %s still holds %s (UID %s), which the server deleted: the deletion never reached the cache",
					c.Handler, c.Actor, stateKey(o), o.UID)), c.Pos, pos)
				if h := subjectHeard(tr, subj, stateKey(o), pos); h >= 0 {
					return v.at(h, pos)
				}
				return v.at(pos, -1)
			}
		}
	}
	for _, id := range sortedHandlerIDs(views) {
		view := views[id]
		for _, k := range sortedKeys(view) {
			if pos, ok := gone(view[k].uid); ok {
				v := fail(name, withFaultNote(tr, fmt.Sprintf("handler %q of %s was never told that %s (UID %s) was deleted: its last event for it was an add or update",
					id.handler, id.actor, k, view[k].uid)), view[k].pos, pos)
				return v.at(pos, -1)
			}
		}
	}
	return pass(name, fmt.Sprintf("%d object(s) deleted on the server: none is left in %d cache snapshot(s) or %d handler view(s)", nDeleted, len(caches), len(views)))
}
