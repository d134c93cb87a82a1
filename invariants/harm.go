package invariants

import (
	"fmt"
	"strings"

	"github.com/cachelab/cachelab/sim"
)

const contractStaleHarm = `Sieve (OSDI'22), stale-state bugs: after a restart or a ` +
	`reconnect a controller's informers may list from an API server that is behind, so it ` +
	`sees an object that was deleted (with its deletionTimestamp), a predecessor with the ` +
	`same name and another UID, or an older spec, "and acts on it": it deletes by name ` +
	`what now belongs to the successor, or rolls a child back. client-go: an object's ` +
	`identity is its UID ("delete+recreate may arrive as one update with a new UID").
Checked on every successful delete, update or patch by the subject of an object whose ` +
	`controller owner (by UID) was alive on the server at that moment (present, not ` +
	`terminating), made while a reconcile of the owner's namespace/name was open: it ` +
	`fails when the subject's view of that key, in the current process (its latest ` +
	`handler call of the key), was (a) a predecessor: another UID, alive, terminating or ` +
	`just deleted; or (b) the owner itself at a resourceVersion older than one the ` +
	`subject had already been shown (in an earlier process: time travel), differing from ` +
	`it in more than status and bookkeeping. The harm is judged when it happens, ` +
	`whatever the end state: a controller that recreates the child it deleted still ` +
	`fails. Deleting the children of a predecessor (owned by its UID), and acting on a ` +
	`view that is only behind the server (not behind what the subject saw), pass. ` +
	`Unknown when the subject made no write.`

func noStaleHarm(tr *sim.Trace, opts Options) Verdict {
	const name = NameNoStaleHarm
	subj := subjectActors(tr)
	proc := newProcesses(tr)
	srv := opts.newServer(tr)
	owner := map[string]string{}                         // uid -> controller owner uid
	keyOf := map[string]key{}                            // uid -> key
	versions := map[string]map[int64]map[string]string{} // uid -> rv -> content
	view := map[[2]string]sim.Record{}                   // actor, namespace/name -> latest handler call there, this process
	maxSeen := map[string]sim.Record{}                   // uid -> the newest handler call of it, any process
	open := map[string][]openReconcile{}
	judged, writes := 0, 0
	for _, r := range tr.Records {
		if opts.stopped(r.Pos) {
			return stoppedVerdict(name, r.Pos, len(tr.Records))
		}
		switch r.Kind {
		case sim.RecRestart:
			delete(open, r.Actor)
			for k := range view {
				if k[0] == r.Actor {
					delete(view, k)
				}
			}
		case sim.RecReconcile:
			if subj[r.Actor] {
				trackReconcile(open, r)
			}
		case sim.RecHandler:
			if !subj[r.Actor] || r.Name == "" {
				break
			}
			view[[2]string{r.Actor, recKey(r).String()}] = r
		case sim.RecWrite:
			if !isWrite(r) || r.UID == "" {
				break
			}
			if subj[r.Actor] && !r.ByGC && !isEventsResource(r.Resource) {
				writes++
			}
			if subj[r.Actor] && !r.ByGC && !isEventsResource(r.Resource) && r.Verb != "create" {
				o := r.Owner
				if o == "" {
					o = owner[r.UID]
				}
				if live, ok := srv.live[keyOf[o]]; ok && o != "" && live.UID == o && !live.Terminating {
					judged++
					if v, ok := staleHarm(r, o, keyOf[o], open[r.Actor], view, maxSeen, versions, proc); ok {
						return v
					}
				}
			}
			if r.Owner != "" {
				owner[r.UID] = r.Owner
			}
			keyOf[r.UID] = recKey(r)
			if versions[r.UID] == nil {
				versions[r.UID] = map[int64]map[string]string{}
			}
			versions[r.UID][r.RV] = opts.flatten(tr, r)
			srv.apply(r)
		}
		if r.Kind == sim.RecHandler && subj[r.Actor] && r.UID != "" && r.EventType != "DELETED" && r.RV > maxSeen[r.UID].RV {
			maxSeen[r.UID] = r
		}
	}
	if writes == 0 {
		return notApplicable(name, "no write by the subject", "the subject made no write: no harm to judge")
	}
	return pass(name, fmt.Sprintf("%d write(s) by the subject, %d of them a delete, update or patch of an object with a live owner: none was decided from a view of a predecessor of the owner or of an owner older than the subject had seen", writes, judged))
}

// staleHarm judges one write w of the subject to an object owned by the
// live owner o (key ok).
func staleHarm(w sim.Record, o string, ok key, open []openReconcile, view map[[2]string]sim.Record,
	maxSeen map[string]sim.Record, versions map[string]map[int64]map[string]string, proc incarnations) (Verdict, bool) {
	const name = NameNoStaleHarm
	k := nsName(ok)
	inReconcile := false
	for _, r := range open {
		inReconcile = inReconcile || r.key == k
	}
	if !inReconcile {
		return Verdict{}, false
	}
	read, seen := view[[2]string{w.Actor, ok.String()}]
	if !seen {
		return Verdict{}, false
	}
	what := ""
	switch {
	case read.UID != "" && read.UID != o:
		state := "alive"
		switch {
		case read.EventType == "DELETED":
			state = "deleted"
		case isTerminatingRead(read, versions):
			state = "terminating"
		}
		what = fmt.Sprintf("a predecessor of %s (UID %s, %s; the live owner is UID %s)", ok, read.UID, state, o)
	case read.UID == o && read.EventType != "DELETED":
		newest, had := maxSeen[o]
		if !had || newest.RV <= read.RV || proc.of(newest.Actor, newest.Pos) == proc.of(w.Actor, w.Pos) {
			return Verdict{}, false
		}
		old, cur := versions[o][read.RV], versions[o][newest.RV]
		if old == nil || cur == nil {
			return Verdict{}, false
		}
		diff := decisiveDiff(old, cur)
		if len(diff) == 0 {
			return Verdict{}, false
		}
		what = fmt.Sprintf("%s at RV %d, older than RV %d an earlier process of the subject had been shown (position %d; %s differ)",
			ok, read.RV, newest.RV, newest.Pos, strings.Join(firstStrings(diff, 3), ", "))
	default:
		return Verdict{}, false
	}
	verb := w.Verb
	reason := fmt.Sprintf("%s's %s of %s (owned by the live %s) was decided from a stale view: its handler had last shown it %s (%s at position %d). The harm counts whatever the end state",
		w.Actor, verb, recKey(w), ok, what, read.Kind, read.Pos)
	v := fail(name, reason, w.Pos, read.Pos)
	v.Detail = fmt.Sprintf("the stale read: handler call at position %d, %s %s UID %s RV %d\nthe write it caused: %s %s at RV %d, position %d",
		read.Pos, read.EventType, recKey(read), read.UID, read.RV, verb, recKey(w), w.RV, w.Pos)
	return v, true
}

// isTerminatingRead reports whether the object a handler call showed had a
// deletionTimestamp (from the stored version at that RV).
func isTerminatingRead(read sim.Record, versions map[string]map[int64]map[string]string) bool {
	c := versions[read.UID][read.RV]
	_, ok := c["metadata.deletionTimestamp"]
	return ok
}

// decisiveDiff returns the fields, outside status and bookkeeping, in which
// two versions of an object differ.
func decisiveDiff(a, b map[string]string) []string {
	w := ownWrite{before: a, after: b}
	return w.decisive()
}
