package invariants

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// What an end state records of the path a run took, and how the
// comparison reads it. Two runs of one plan may take different paths to the
// same state: the faulted run misses a rollout the user undid while the
// controller was down, or creates a replica set at its final size where the
// reference scaled it. The API records some of the path, and that record
// is not end state:
//
//   - metadata.generation counts the spec's writes, and every
//     observedGeneration under status (conditions' too) is compared as
//     current or stale against it (normalizer.object);
//   - status.collisionCount counts the hash collisions met on the path:
//     left out (its effect, the newest revision's name, is compared
//     through that object);
//   - a revision number (a top-level "revision", as apps/v1
//     ControllerRevision has, or an annotation "<prefix>/revision", as
//     deployment.kubernetes.io/revision) numbers the rollouts a run made:
//     it is compared as the latest of its family (a primary and what it
//     owns) or an earlier one; "<prefix>/revision-history" (the earlier
//     numbers of a revision that came back) is left out;
//   - an object kept at an earlier revision that runs nothing (spec.replicas
//     0, or no spec at all: a ControllerRevision) is what a controller keeps
//     for a rollback (revisionHistoryLimit): left out, and named;
//   - a condition with status False that this run's object had True before
//     (Suspended=False after a resume), where the other run's object has no
//     such condition, records a transition the other run did not go through:
//     left out, and named. A False condition never True in its run, and a
//     True one, stay compared (an absent condition reads as Unknown).

// revisionKey reports whether an annotation key names a revision number.
func revisionKey(k string) bool { return k == "revision" || strings.HasSuffix(k, "/revision") }

// historyKey reports whether an annotation key lists earlier revision numbers.
func historyKey(k string) bool { return strings.HasSuffix(k, "/revision-history") }

// revisionsOf returns the revision numbers o carries.
func revisionsOf(o map[string]any) []int64 {
	var out []int64
	if n, ok := revisionNumber(o["revision"]); ok {
		out = append(out, n)
	}
	for k, v := range annotations(o) {
		if revisionKey(k) {
			if n, ok := revisionNumber(v); ok {
				out = append(out, n)
			}
		}
	}
	return out
}

func annotations(o map[string]any) map[string]any {
	md, _ := o["metadata"].(map[string]any)
	a, _ := md["annotations"].(map[string]any)
	return a
}

// revisionNumber reads a revision: a JSON number or a decimal string.
func revisionNumber(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		return int64(x), x == float64(int64(x))
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// runsNothing reports whether o has spec.replicas 0 or no spec.
func runsNothing(o map[string]any) bool {
	spec, ok := o["spec"].(map[string]any)
	if !ok {
		return true
	}
	r, ok := spec["replicas"].(float64)
	return ok && r == 0
}

// families returns, for every object of objs (by UID), the UID of the root
// of its ownership family within objs: itself when no owner of it is in
// objs.
func families(objs map[string]EndObject) map[string]string {
	byUID := map[string]EndObject{}
	for _, o := range objs {
		byUID[o.UID] = o
	}
	root := map[string]string{}
	for _, o := range objs {
		cur, seen := o, map[string]bool{}
		for {
			seen[cur.UID] = true
			next, found := EndObject{}, false
			for _, u := range cur.Owners {
				if p, ok := byUID[u]; ok && !seen[u] {
					next, found = p, true
					break
				}
			}
			if !found {
				break
			}
			cur = next
		}
		root[o.UID] = cur.UID
	}
	return root
}

// normalizeRevisions rewrites objs (copying what it changes): every
// revision number reads "<latest>" or "<earlier>" within its family and
// revision histories are dropped. It returns the IDs of the objects kept
// at an earlier revision that run nothing.
func normalizeRevisions(objs map[string]EndObject) map[string]bool {
	root := families(objs)
	latest := map[string]int64{}
	has := map[string]bool{}
	for _, o := range objs {
		for _, n := range revisionsOf(o.Content) {
			r := root[o.UID]
			if !has[r] || n > latest[r] {
				latest[r], has[r] = n, true
			}
		}
	}
	kept := map[string]bool{}
	for id, o := range objs {
		revs := revisionsOf(o.Content)
		hist := false
		for k := range annotations(o.Content) {
			hist = hist || historyKey(k)
		}
		if len(revs) == 0 && !hist {
			continue
		}
		top := latest[root[o.UID]]
		earlier := len(revs) > 0
		for _, n := range revs {
			earlier = earlier && n < top
		}
		if earlier && runsNothing(o.Content) {
			kept[id] = true
		}
		label := func(v any) any {
			if n, ok := revisionNumber(v); ok {
				if n == top {
					return "<latest>"
				}
				return "<earlier>"
			}
			return v
		}
		o.Content = deepCopyJSON(o.Content).(map[string]any)
		if _, ok := o.Content["revision"]; ok {
			o.Content["revision"] = label(o.Content["revision"])
		}
		if a := annotations(o.Content); a != nil {
			for k, v := range a {
				switch {
				case historyKey(k):
					delete(a, k)
				case revisionKey(k):
					a[k] = label(v)
				}
			}
			if len(a) == 0 {
				delete(o.Content["metadata"].(map[string]any), "annotations")
			}
		}
		objs[id] = o
	}
	return kept
}

// leaveOutKeptRevisions normalizes the revisions of got and want (the two
// runs' objects, by ID) and takes out an object kept at an earlier revision
// in one run when the other run has none of that ID or keeps it too
// (an object history in one run and live in the other stays compared, so
// the diff shows it); the IDs left out are added to names.
func leaveOutKeptRevisions(got, want map[string]EndObject, names map[string]bool) {
	kg, kw := normalizeRevisions(got), normalizeRevisions(want)
	var drop []string
	for id := range kg {
		if _, in := want[id]; !in || kw[id] {
			drop = append(drop, id)
		}
	}
	for id := range kw {
		if _, in := got[id]; !in || kg[id] {
			drop = append(drop, id)
		}
	}
	for _, id := range drop {
		delete(got, id)
		delete(want, id)
		names[id] = true
	}
}

// conditionsOf returns status.conditions' entries of o, by type.
func conditionsOf(o map[string]any) map[string]map[string]any {
	st, _ := o["status"].(map[string]any)
	list, _ := st["conditions"].([]any)
	out := map[string]map[string]any{}
	for _, e := range list {
		if c, _ := e.(map[string]any); c != nil {
			if typ, _ := c["type"].(string); typ != "" {
				out[typ] = c
			}
		}
	}
	return out
}

// leaveOutTransitions takes out of a and b (the two runs' objects, by
// ID) every condition with status False that one run's object had True
// before and the other run's object lacks, and adds to names
// "<id> condition <type>".
func leaveOutTransitions(a, b map[string]EndObject, names map[string]bool) {
	for id, oa := range a {
		ob, ok := b[id]
		if !ok {
			continue
		}
		ca, cb := conditionsOf(oa.Content), conditionsOf(ob.Content)
		drop := func(o EndObject, typ string, objs map[string]EndObject) {
			o.Content = deepCopyJSON(o.Content).(map[string]any)
			st := o.Content["status"].(map[string]any)
			list := st["conditions"].([]any)
			kept := list[:0]
			for _, e := range list {
				if c, _ := e.(map[string]any); c != nil && c["type"] == typ {
					continue
				}
				kept = append(kept, e)
			}
			if len(kept) == 0 {
				delete(st, "conditions")
			} else {
				st["conditions"] = kept
			}
			objs[id] = o
			names[id+" condition "+typ] = true
		}
		for typ, c := range ca {
			if _, in := cb[typ]; !in && c["status"] == "False" && oa.wasTrue(typ) {
				drop(oa, typ, a)
				oa = a[id]
			}
		}
		for typ, c := range cb {
			if _, in := ca[typ]; !in && c["status"] == "False" && ob.wasTrue(typ) {
				drop(ob, typ, b)
				ob = b[id]
			}
		}
	}
}

func (o EndObject) wasTrue(typ string) bool {
	for _, t := range o.WasTrue {
		if t == typ {
			return true
		}
	}
	return false
}

// leaveOutLaterConfirmations reads as the reference's (want's) every
// condition of got (the faulted run's objects, by ID) whose
// observedGeneration is current where the reference's condition of that
// type is stale, the two otherwise equal (status, reason, message): a
// condition records the generation it was last written at, and a
// controller has no reason to write again a condition a later spec change
// leaves as it was. The faulted run's controller, later on its path,
// wrote the same condition after the user's last spec change; the
// reference's wrote it before. The other way round (the faulted run's
// condition stale where the reference's is current) is still a
// difference: the faulted run's controller may never have seen the last
// spec. It adds "<id> condition <type> observedGeneration" to names.
func leaveOutLaterConfirmations(got, want map[string]EndObject, names map[string]bool) {
	for id, og := range got {
		ow, ok := want[id]
		if !ok {
			continue
		}
		cg, cw := conditionsOf(og.Content), conditionsOf(ow.Content)
		var later []string
		for typ, c := range cg {
			r, ok := cw[typ]
			if !ok || c["observedGeneration"] != "<current>" || r["observedGeneration"] != "<stale>" {
				continue
			}
			c2, r2 := deepCopyJSON(c).(map[string]any), deepCopyJSON(r).(map[string]any)
			delete(c2, "observedGeneration")
			delete(r2, "observedGeneration")
			if canonical(c2) == canonical(r2) {
				later = append(later, typ)
			}
		}
		if len(later) == 0 {
			continue
		}
		og.Content = deepCopyJSON(og.Content).(map[string]any)
		list := og.Content["status"].(map[string]any)["conditions"].([]any)
		for _, e := range list {
			if c, _ := e.(map[string]any); c != nil && slices.Contains(later, fmt.Sprint(c["type"])) {
				c["observedGeneration"] = "<stale>"
			}
		}
		sort.SliceStable(list, func(i, j int) bool { return canonical(list[i]) < canonical(list[j]) })
		got[id] = og
		for _, typ := range later {
			names[id+" condition "+typ+" observedGeneration"] = true
		}
	}
}
