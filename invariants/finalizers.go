package invariants

import (
	"fmt"
	"sort"

	"github.com/cachelab/cachelab/sim"
)

const contractFinalizers = `Kubernetes API, finalizers: "the object is not deleted ` +
	`until all finalizers are removed: deletionTimestamp is set and the object is ` +
	`read-only except for removing finalizers"; the controller that added a finalizer ` +
	`must remove it once its cleanup is done, and must not create new dependents of an ` +
	`object being deleted (EDGE 11).
Checked: (1) the subject's finalizers are those it added in its own writes; no ` +
	`object of RecFinal is terminating with one of them (a deletion younger than ` +
	`Options.Bound at the end of a run cut short by its deadline excepted); (2) the ` +
	`subject never creates an object whose controller owner was terminating when the ` +
	`subject had already observed it terminating when the reconcile making the create ` +
	`started (a handler call at or after the RV that set deletionTimestamp, in the same ` +
	`process incarnation, before the RecReconcile "start"; before the create when there ` +
	`is none): a create racing with a deletion it could not have seen is not held ` +
	`against it, nor is a child of an owner already gone (the garbage collector ` +
	`removes it). Unknown when ` +
	`the subject added no finalizer (or the trace has no RecFinal) and created no owned ` +
	`object. (3) the subject's records outside the cluster (RecCache snapshots of a ` +
	`store the server does not serve, such as Bellerophon's backups, keyed by the UID ` +
	`of the object they belong to) hold nothing, at the end, for an object the server ` +
	`removed: cleaning them is what the finalizer is for. An object whose finalizer ` +
	`another actor removed (a write by another actor that drops it, or that removes ` +
	`the object while it still carries it) is exempt, unless the subject reconciled ` +
	`the object's key again after one of its handlers had shown it the object gone ` +
	`(its DELETED event, or the key with another UID): then it had the chance to find ` +
	`the leftover (the key it reconciles names the record's object, gone or ` +
	`recreated). A reconcile from a cached copy of the old incarnation, alive, had no ` +
	`such chance.`

func finalizers(tr *sim.Trace, opts Options) Verdict {
	v, _ := judgeFinalizers(tr, opts)
	return v
}

// judgeFinalizers is finalizers, also returning how many removed objects
// its handler calls looked at (the work, for the tests that bound it).
func judgeFinalizers(tr *sim.Trace, opts Options) (Verdict, int) {
	const name = NameFinalizers
	looked := 0
	subj := subjectActors(tr)
	ours := map[string]bool{}
	prevFin := map[string]map[string]bool{} // uid -> finalizers of its latest write
	terminatingSince := map[string]int{}    // uid -> position it was first marked
	owners := map[string]sim.Record{}       // uid -> latest write
	removedAt := map[string]int{}
	removedByName := map[string][]string{} // resource/namespace/name -> uids removed there and not yet shown gone, in order
	ownedCreates := 0
	rm := removalsOf(tr)
	obs := newObservations(tr, subj)
	reconcileStart := map[string]int{} // actor -> position of its current reconcile's start
	lastReconcile := map[string]int{}  // namespace/name -> position of the subject's last reconcile start of that key
	termRV := map[string]int64{}       // uid -> RV of the write that marked it terminating
	stripped := map[string]bool{}      // uid -> another actor removed our finalizer
	// goneSeen: uid -> position of the first handler call of the subject,
	// after the object's removal, that showed it gone (its DELETED event, or
	// its key with another UID); a reconcile of the key after that could
	// find the leftover.
	goneSeen := map[string]int{}
	for _, r := range tr.Records {
		if opts.stopped(r.Pos) {
			return stoppedVerdict(name, r.Pos, len(tr.Records)), looked
		}
		obs.see(r)
		if r.Kind == sim.RecHandler && subj[r.Actor] {
			k := normResource(r.Resource) + "/" + r.Namespace + "/" + r.Name
			// Keep only the removed objects no handler call has shown
			// gone yet: a create/collect loop removes thousands under one
			// name, each shown gone once.
			left := removedByName[k][:0]
			for _, uid := range removedByName[k] {
				looked++
				at := removedAt[uid]
				o := owners[uid]
				if _, done := goneSeen[uid]; done {
					continue
				}
				if r.Pos >= at && normResource(r.Resource) == normResource(o.Resource) && r.Namespace == o.Namespace && r.Name == o.Name &&
					(r.UID != uid || r.EventType == "DELETED") {
					goneSeen[uid] = r.Pos
					continue
				}
				left = append(left, uid)
			}
			removedByName[k] = left
		}
		if r.Kind == sim.RecReconcile && r.Op == "start" {
			reconcileStart[r.Actor] = r.Pos
			if subj[r.Actor] {
				lastReconcile[r.Key] = r.Pos
			}
		}
		if !isWrite(r) {
			continue
		}
		if r.Verb == "create" && r.Owner != "" && subj[r.Actor] {
			ownedCreates++
			o, known := owners[r.Owner]
			_, gone := removedAt[r.Owner]
			from, ok := reconcileStart[r.Actor]
			if !ok {
				from = r.Pos
			}
			if t, ok := termRV[r.Owner]; known && ok && !gone && obs.at(r.Owner, from) >= t {
				return fail(name, fmt.Sprintf("%s created %s under owner %s after it had seen the owner being deleted (deletionTimestamp set at RV %d): children must not be created under a terminating owner",
					r.Actor, recKey(r), recKey(o), t), r.Pos, terminatingSince[r.Owner]), looked
			}
		}
		m, _ := parseMeta(r.Object)
		fin := map[string]bool{}
		for _, f := range m.Metadata.Finalizers {
			fin[f] = true
			if subj[r.Actor] && !prevFin[r.UID][f] {
				ours[f] = true
			}
		}
		if !subj[r.Actor] && !r.ByGC {
			for f := range prevFin[r.UID] {
				// Someone else removed our finalizer: the write drops it,
				// or removes the object while listing it (the store
				// records the emptying of a terminating object's
				// finalizers with its last state).
				if ours[f] && (!fin[f] || rm.removes(r)) {
					stripped[r.UID] = true
				}
			}
		}
		prevFin[r.UID] = fin
		owners[r.UID] = r
		if _, ok := terminatingSince[r.UID]; !ok && terminating(r) {
			terminatingSince[r.UID] = r.Pos
			termRV[r.UID] = r.RV
		}
		if rm.removes(r) {
			if _, again := removedAt[r.UID]; !again {
				k := normResource(r.Resource) + "/" + r.Namespace + "/" + r.Name
				removedByName[k] = append(removedByName[k], r.UID)
			}
			removedAt[r.UID] = r.Pos
		}
	}
	final, hasFinal := finalRecord(tr)
	if (len(ours) == 0 || !hasFinal) && ownedCreates == 0 {
		v := unknownBecause(name, "no finalizer added and no owned object created", "the subject added no finalizer (or the trace has no final server state) and created no owned object: nothing to check")
		// Nothing to judge when the subject added no finalizer; a missing
		// final state is a record the trace lacks.
		v.NotApplicable = len(ours) == 0
		return v, looked
	}
	if hasFinal {
		for _, o := range final.Objects {
			if !o.Terminating {
				continue
			}
			for _, f := range o.Finalizers {
				if !ours[f] {
					continue
				}
				since, ok := terminatingSince[o.UID]
				if ok && tr.Outcome != "quiet" && tr.End.D()-recAt(tr, since).At.D() < opts.Bound {
					continue
				}
				pos := []int{final.Pos}
				if ok {
					pos = append([]int{since}, pos...)
				}
				v := fail(name, fmt.Sprintf("%s was left terminating at the end of the run with the subject's finalizer %q: the subject never finished its cleanup and removed it",
					stateKey(o), f), pos...)
				if ok {
					// The mark: the subject's last reconcile of the key after
					// it became terminating, where it should have removed its
					// finalizer; the delete is the trigger.
					if rc := lastReconcileOf(tr, subj, stateKey(o), since); rc >= 0 {
						v = v.at(rc, since)
					}
				}
				return v, looked
			}
		}
	}
	// (3) external records outlive nothing.
	if hasFinal {
		live := map[string]bool{}
		for _, o := range final.Objects {
			live[o.UID] = true
		}
		for _, c := range externalSnapshots(tr, subj) {
			for _, e := range c.Objects {
				pos, removed := removedAt[e.UID]
				if e.UID == "" || live[e.UID] || !removed {
					continue
				}
				if o := owners[e.UID]; stripped[e.UID] {
					seenAt, seen := goneSeen[e.UID]
					if !seen || lastReconcile[o.Namespace+"/"+o.Name] < seenAt {
						continue // not the subject's doing, and it never looked at the key again knowing it gone
					}
				}
				if tr.Outcome != "quiet" && tr.End.D()-recAt(tr, pos).At.D() < opts.Bound {
					continue
				}
				v := fail(name, fmt.Sprintf("the subject's external store %q still holds %s for the object with UID %s, which was deleted at position %d: the finalizer's cleanup was skipped",
					c.Handler, stateKey(e), e.UID, pos), c.Pos, pos)
				return v.at(cleanupSkippedAt(tr, subj, e.UID, pos)), looked
			}
		}
	}
	return pass(name, fmt.Sprintf("the subject's %d finalizer(s) were all removed from deleted objects, and none of its %d owned create(s) was under a terminating owner", len(ours), ownedCreates)), looked
}

// cleanupSkippedAt marks a skipped finalizer cleanup of the object with
// uid, removed at position removed: the subject's first handler call for
// the object's key after the removal (it was told, however disguised, and
// did not clean up), else its last write of the object between its delete
// and its removal, else the delete itself; the delete is the trigger when
// it is not the mark.
func cleanupSkippedAt(tr *sim.Trace, subj map[string]bool, uid string, removed int) (at, trigger int) {
	del := -1
	at = removed
	k := recKey(recAt(tr, removed))
	for _, r := range tr.Records {
		if r.Pos > removed {
			if r.Kind == sim.RecHandler && subj[r.Actor] && recKey(r) == k {
				at = r.Pos
				break
			}
			continue
		}
		if r.Kind != sim.RecWrite || r.UID != uid {
			continue
		}
		if del < 0 && r.Verb == "delete" {
			del, at = r.Pos, r.Pos
			continue
		}
		if del >= 0 && subj[r.Actor] && !r.ByGC {
			at = r.Pos
		}
	}
	if del < 0 || del == at {
		return at, -1
	}
	return at, del
}

// lastReconcileOf returns the position of the subject's last reconcile
// (start or end) of the object of key k after position from, or -1.
func lastReconcileOf(tr *sim.Trace, subj map[string]bool, k key, from int) int {
	want := k.Namespace + "/" + k.Name
	last := -1
	for _, r := range tr.Records {
		if r.Pos > from && r.Kind == sim.RecReconcile && subj[r.Actor] && r.Key == want {
			last = r.Pos
		}
	}
	return last
}

// externalSnapshots returns the last snapshot of each subject store that
// mirrors no server resource (the world outside the cluster), whatever the
// process incarnation: such stores survive crashes.
func externalSnapshots(tr *sim.Trace, subj map[string]bool) []sim.Record {
	served := serverResources(tr)
	external := map[[2]string]bool{}
	for _, r := range tr.Records {
		if r.Kind != sim.RecCache || !subj[r.Actor] {
			continue
		}
		sc := scopeOf(tr, r)
		ext := len(sc.resources) > 0
		for res := range sc.resources {
			ext = ext && !served[res]
		}
		if ext {
			external[[2]string{r.Actor, r.Handler}] = true
		}
	}
	last := map[[2]string]sim.Record{}
	for _, r := range tr.Records {
		if id := [2]string{r.Actor, r.Handler}; r.Kind == sim.RecCache && external[id] {
			last[id] = r
		}
	}
	out := make([]sim.Record, 0, len(last))
	for _, r := range last {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pos < out[j].Pos })
	return out
}
