package invariants

import (
	"fmt"
	"strings"

	"github.com/cachelab/cachelab/sim"
)

const contractReadYourWrites = `KEP-5647 (stale controller mitigation) and EDGE 24: a ` +
	`controller must not act on a cache older than its own last write: "record the ` +
	`resourceVersion of your writes and do not act until the informer has caught up" ` +
	`(client-go v0.36+: Store.LastStoreSyncResourceVersion). A controller that does ` +
	`recreates what it just created (409 AlreadyExists) or updates from a copy older ` +
	`than its own write (409 Conflict).
Checked: no create by the subject is answered 409 AlreadyExists while the object ` +
	`it collides with is one the subject created itself, and no update or patch by the ` +
	`subject is answered 409 Conflict while the object's latest write is the subject's ` +
	`own through the same subresource (both main, or both status): in both cases the ` +
	`subject read a copy older than its own write. Conflicts with other actors' writes, ` +
	`and a main-resource update racing the subject's own status write (the usual ` +
	`subresource race that RetryOnConflict absorbs), pass. So does a collision with ` +
	`an own write whose request was answered 504 Timeout (applied, outcome unknown to ` +
	`the subject: EDGE 28) when no handler of the subject had been given that write ` +
	`before the colliding reconcile started: the subject had no resourceVersion to ` +
	`wait for. A request does not name its reconcile, so with several workers the ` +
	`colliding reconcile is taken to be the earliest one of the subject still open. ` +
	`Unknown when ` +
	`the subject sent no create, update or patch.`

func readYourWrites(tr *sim.Trace, _ Options) Verdict {
	const name = NameReadYourWrites
	subj := subjectActors(tr)
	srv := newServer(tr)
	creator := map[string]sim.Record{} // uid -> its create
	lastBy := map[key]sim.Record{}     // key -> latest write to it
	// timedOut holds the positions of the subject's writes whose request
	// was answered 504 Timeout; seen, for those, the position of the first
	// handler call that gave the subject the object at that write's RV or
	// later. A collision with such a write counts only if the reconcile
	// that made the colliding request started after that handler call.
	timedOut := map[int]bool{}
	seen := map[int]int{}
	// open holds, per actor, the start position of each reconcile still
	// running, by key: with several workers a request may come from any of
	// them (records do not name the worker).
	open := map[string]map[string]int{}
	unknownToSubject := func(w sim.Record, r sim.Record) bool {
		if !timedOut[w.Pos] {
			return false
		}
		at, ok := seen[w.Pos]
		if !ok {
			return true
		}
		// The earliest read the request may rest on: the start of the
		// earliest open reconcile that began after the write (one that
		// began before it is the one that wrote, and reads again later).
		from := r.Pos
		for _, start := range open[r.Actor] {
			if start >= w.Pos && start < from {
				from = start
			}
		}
		return at > from
	}
	requests := 0
	for _, r := range tr.Records {
		switch r.Kind {
		case sim.RecReconcile:
			switch r.Op {
			case "start":
				if open[r.Actor] == nil {
					open[r.Actor] = map[string]int{}
				}
				open[r.Actor][r.Key] = r.Pos
			case "end":
				delete(open[r.Actor], r.Key)
			}
		case sim.RecWrite:
			if !isWrite(r) {
				continue
			}
			srv.apply(r)
			if r.Verb == "create" {
				creator[r.UID] = r
			}
			lastBy[recKey(r)] = r
		case sim.RecHandler:
			if !subj[r.Actor] {
				continue
			}
			if w, ok := lastBy[recKey(r)]; ok && timedOut[w.Pos] && r.UID == w.UID && r.RV >= w.RV {
				if _, done := seen[w.Pos]; !done {
					seen[w.Pos] = r.Pos
				}
			}
		case sim.RecRequest:
			if !subj[r.Actor] || isEventsResource(r.Resource) || r.Name == "" {
				continue
			}
			verb := r.Verb
			if i := strings.IndexByte(verb, '/'); i >= 0 {
				verb = verb[:i]
			}
			if verb != "create" && verb != "update" && verb != "patch" {
				continue
			}
			requests++
			k := recKey(r)
			if r.Code == 504 {
				if w, ok := lastBy[k]; ok && w.Actor == r.Actor && w.Verb == r.Verb {
					timedOut[w.Pos] = true
				}
				continue
			}
			if r.Code != 409 {
				continue
			}
			switch {
			case verb == "create" && r.Reason == "AlreadyExists":
				live, ok := srv.live[k]
				if c, mine := creator[live.UID]; ok && mine && subj[c.Actor] && !unknownToSubject(c, r) {
					return fail(name, fmt.Sprintf("%s tried to create %s again after its own create at position %d had succeeded: it acted on a cache that did not show its own write yet",
						r.Actor, k, c.Pos), r.Pos, c.Pos)
				}
			case verb != "create" && r.Reason == "Conflict":
				if w, ok := lastBy[k]; ok && subj[w.Actor] && subresource(w.Verb) == subresource(r.Verb) && !unknownToSubject(w, r) {
					return fail(name, fmt.Sprintf("%s's %s of %s conflicted with its own write at position %d (RV %d): it wrote from a copy older than its own last write",
						r.Actor, r.Verb, k, w.Pos, w.RV), r.Pos, w.Pos)
				}
			}
		}
	}
	if requests == 0 {
		return unknown(name, "the subject sent no create, update or patch: no write could have been based on a stale read of its own")
	}
	return pass(name, fmt.Sprintf("%d write request(s) by the subject: none collided with its own earlier write", requests))
}

// subresource returns the subresource of a verb ("update/status" -> "status").
func subresource(verb string) string {
	if i := strings.IndexByte(verb, '/'); i >= 0 {
		return verb[i+1:]
	}
	return ""
}
