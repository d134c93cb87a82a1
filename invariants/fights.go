package invariants

import (
	"fmt"
	"sort"

	"github.com/cachelab/cachelab/sim"
)

// fightMin is how many times each side must have set a field back to its
// own value for a back-and-forth to count as a fight.
const fightMin = 3

// fight is the subject and another actor setting one field back and forth.
type fight struct {
	uid      string
	key      key
	path     string
	subject  string // the subject's actor
	other    string
	subjRev  int // times the subject set the field back to its value
	otherRev int // times the other did, not at a plan step
	subjSet  int // changes of the field by the subject
	otherSet int // changes of the field by the other
	first    int // position of the first reversal
	last     int // position of the last change of the field by either
	pos      []int
}

// String reads "fought with competitor over spec.replicas of
// deployments/ns/web: 115 writes against 228".
func (f fight) String() string {
	return fmt.Sprintf("%s fought with %s over %s of %s: %d write(s) against %d, each setting it back to its own value (%d and %d times)",
		f.subject, f.other, f.path, f.key, f.subjSet, f.otherSet, f.subjRev, f.otherRev)
}

// fieldChange is the latest change of one field of one object.
type fieldChange struct {
	actor     string
	from, to  string
	pos       int
	sinceStep bool // a plan step of actor ran since the change before
}

// fights finds, over the whole trace, every field of an object that the
// subject and one other actor (not the garbage collector) each set back to
// its own value at least fightMin times, the other actor's reversals not
// being plan steps (a user who changes a field three times by plan, each
// time repaired, is not fighting). Sorted by the most changes.
func fights(tr *sim.Trace, subj map[string]bool) []fight {
	current := map[string]map[string]string{}
	last := map[[2]string]fieldChange{} // uid, path -> latest change
	stepAt := map[string]int{}          // actor -> position of its latest plan step
	found := map[[4]string]*fight{}     // uid, path, subject, other
	for _, r := range tr.Records {
		if r.Kind == sim.RecStep {
			stepAt[r.Actor] = r.Pos
			continue
		}
		if !isWrite(r) || r.UID == "" || isEventsResource(r.Resource) {
			continue
		}
		before := current[r.UID]
		after := flatten(r.Object)
		current[r.UID] = after
		if r.ByGC || r.Actor == "gc" || r.Verb == "create" {
			continue
		}
		paths := map[string]bool{}
		for p := range before {
			paths[p] = true
		}
		for p := range after {
			paths[p] = true
		}
		for p := range paths {
			from, to := leaf(before, p), leaf(after, p)
			if from == to {
				continue
			}
			k := [2]string{r.UID, p}
			prev, ok := last[k]
			step, stepped := stepAt[r.Actor]
			cur := fieldChange{actor: r.Actor, from: from, to: to, pos: r.Pos,
				sinceStep: stepped && ok && step > prev.pos}
			last[k] = cur
			if !ok || prev.actor == r.Actor || to != prev.from || subj[prev.actor] == subj[r.Actor] {
				continue
			}
			s, o := r.Actor, prev.actor
			if !subj[s] {
				s, o = o, s
			}
			fk := [4]string{r.UID, p, s, o}
			f := found[fk]
			if f == nil {
				f = &fight{uid: r.UID, key: recKey(r), path: p, subject: s, other: o, first: r.Pos}
				found[fk] = f
			}
			if subj[r.Actor] {
				f.subjRev++
			} else if !cur.sinceStep {
				f.otherRev++
			}
			if len(f.pos) < 10 {
				f.pos = append(f.pos, r.Pos)
			}
		}
	}
	for fk, f := range found {
		if f.subjRev < fightMin || f.otherRev < fightMin {
			delete(found, fk)
		}
	}
	if len(found) == 0 {
		return nil
	}
	// Count every change of the field by each side.
	current = map[string]map[string]string{}
	for _, r := range tr.Records {
		if !isWrite(r) || r.UID == "" {
			continue
		}
		before := current[r.UID]
		after := flatten(r.Object)
		current[r.UID] = after
		if r.Verb == "create" {
			continue
		}
		for fk, f := range found {
			if fk[0] != r.UID || leaf(before, f.path) == leaf(after, f.path) {
				continue
			}
			switch r.Actor {
			case f.subject:
				f.subjSet++
				f.last = r.Pos
			case f.other:
				f.otherSet++
				f.last = r.Pos
			}
		}
	}
	var out []fight
	for _, f := range found {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := out[i].subjSet+out[i].otherSet, out[j].subjSet+out[j].otherSet; a != b {
			return a > b
		}
		return out[i].first < out[j].first
	})
	return out
}
