package invariants

import (
	"fmt"
	"sort"

	"github.com/cachelab/cachelab/sim"
)

const contractDeleteRecreate = `client-go SharedInformer: "if an object is deleted and ` +
	`recreated with the same name while the watch is down, the informer may deliver one ` +
	`update from the old object to the new one" (handlers must compare UIDs, EDGE 8); ` +
	`OnDelete "will get the final state of the item if it is known, otherwise it will ` +
	`get an object of type DeletedFinalStateUnknown" whose Key is the deleted object's ` +
	`key (EDGE 7).
Checked, per subject handler and process incarnation: (1) whenever the UID a handler ` +
	`knows for a key changes, it was told: by a DELETED of the old UID (possibly a ` +
	`tombstone) before the new one, or by an update whose OldUID is the old UID; (2) a ` +
	`DELETED of a UID never arrives after the handler was given a newer UID for that key ` +
	`(a deletion reported after the recreation it precedes); (3) a tombstone's object, ` +
	`when present, is the object the server stored under the tombstone's key; (4) when ` +
	`the run ended quiet (or the recreation is older than Options.Bound), the UID each ` +
	`handler last knew for a key is the server's final UID for it.`

type known struct {
	uid string
	pos int
}

func deleteRecreate(tr *sim.Trace, opts Options) Verdict {
	const name = NameDeleteRecreate
	inc := newIncarnations(tr)
	srv := opts.newServer(tr)
	for _, r := range tr.Records {
		if opts.stopped(r.Pos) {
			return stoppedVerdict(name, r.Pos, len(tr.Records))
		}
		srv.apply(r)
	}
	type hid struct {
		actor, handler string
		inc            int
	}
	views := map[hid]map[key]known{}
	nCalls, nChanges := 0, 0
	// incomplete is the first update record whose old object's UID is
	// missing where the UID changed: it cannot say whether the handler was
	// told, so at best the verdict is Unknown (-1: none).
	incomplete := -1
	for _, r := range tr.Records {
		if opts.stopped(r.Pos) {
			return stoppedVerdict(name, r.Pos, len(tr.Records))
		}
		if r.Kind != sim.RecHandler || !isObjectEvent(r.EventType) {
			continue
		}
		nCalls++
		id := hid{r.Actor, r.Handler, inc.of(r.Actor, r.Pos)}
		view := views[id]
		if view == nil {
			view = map[key]known{}
			views[id] = view
		}
		k := recKey(r)
		cur, has := view[k]
		switch r.EventType {
		case "ADDED", "MODIFIED":
			if has && cur.uid != "" && r.UID != "" && r.UID != cur.uid {
				switch {
				case r.EventType == "MODIFIED" && r.OldUID == cur.uid:
					nChanges++
				case r.EventType == "MODIFIED" && r.OldUID == "":
					if incomplete < 0 {
						incomplete = r.Pos
					}
				default:
					return fail(name, withFaultNote(tr, fmt.Sprintf("handler %q saw %s change from UID %s to UID %s without being told: no DELETED of the old object and no update showing the UID change",
						r.Handler, k, cur.uid, r.UID)), r.Pos, cur.pos)
				}
			}
			view[k] = known{r.UID, r.Pos}
		case "DELETED":
			if r.Tombstone && r.UID != "" {
				if sk, ok := srv.keyOf[r.UID]; ok && sk != k {
					return fail(name, fmt.Sprintf("handler %q got a tombstone keyed %s whose object (UID %s) is the server's %s: a tombstone must carry its object's key",
						r.Handler, k, r.UID, sk), r.Pos, srv.lastWrite[r.UID])
				}
			}
			if has && cur.uid != "" && r.UID != "" && r.UID != cur.uid {
				what := "a DELETED"
				if r.Tombstone {
					what = "a tombstone"
				}
				return fail(name, withFaultNote(tr, fmt.Sprintf("handler %q got %s of %s for UID %s after it had already been given UID %s: the deletion was reported after the recreation it precedes",
					r.Handler, what, k, r.UID, cur.uid)), r.Pos, cur.pos)
			}
			if has {
				nChanges++
			}
			delete(view, k)
		}
	}
	if nCalls == 0 {
		return unknownBecause(name, "no handler call recorded", "the trace has no handler calls: nothing says what the subject learned")
	}
	// (4) the last incarnation of each handler ends knowing the final UIDs.
	if final, ok := finalRecord(tr); ok {
		finalUID := map[key]string{}
		for _, o := range final.Objects {
			finalUID[stateKey(o)] = o.UID
		}
		ids := make([]hid, 0, len(views))
		for id := range views {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool {
			if ids[i].actor != ids[j].actor {
				return ids[i].actor < ids[j].actor
			}
			return ids[i].handler < ids[j].handler
		})
		for _, id := range ids {
			view := views[id]
			if id.inc != inc.of(id.actor, len(tr.Records)) {
				continue
			}
			for _, k := range sortedKeys(view) {
				cur := view[k]
				fu, onServer := finalUID[k]
				if !onServer || fu == cur.uid || cur.uid == "" {
					continue
				}
				created := srv.createdAt[fu]
				if tr.Outcome != "quiet" && tr.End.D()-recAt(tr, created).At.D() < opts.Bound {
					continue // recreated too close to a deadline end to require it
				}
				return fail(name, withFaultNote(tr, fmt.Sprintf("handler %q never learned that %s was recreated: it still knows UID %s, the server has UID %s",
					id.handler, k, cur.uid, fu)), cur.pos, final.Pos)
			}
		}
	}
	if incomplete >= 0 {
		r := tr.Records[incomplete]
		v := unknownBecause(name, "an update record without OldUID", fmt.Sprintf("handler %q's update record of %s has no OldUID (the old object's UID), and the UID it knew changed there: whether the handler was told of the recreation cannot be decided (record the update's old object)",
			r.Handler, recKey(r)))
		v.Positions = []int{incomplete}
		return v
	}
	return pass(name, fmt.Sprintf("%d handler call(s), %d deletion(s) or UID change(s): every UID change was reported, in order, with the right key", nCalls, nChanges))
}
