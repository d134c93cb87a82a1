package invariants

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/cachelab/cachelab/sim"
)

const contractLostUpdates = `Kubernetes API concurrency control: "updates ... use ` +
	`resourceVersion to ensure a client does not overwrite changes it has not seen" ` +
	`(optimistic concurrency, 409 Conflict, EDGE 25); a writer that drops the ` +
	`resourceVersion or patches from a stale copy can silently undo another writer's ` +
	`change (EDGE 26).
Checked (an honest approximation: the trace has no read sets): a lost update is an ` +
	`update or patch by the subject that sets some field back to the value it had ` +
	`before another actor's write W changed it, when the subject had not observed W: ` +
	`no handler call, delivered watch event or list of the subject at W's RV or later, ` +
	`no own write after W, and no successful get of the object after W, in the same ` +
	`process (a crashed process's in-flight writes, before the restart, count as ` +
	`its own). Fields are JSON leaves (arrays whole); server-managed metadata ` +
	`(resourceVersion, generation, managedFields, timestamps, uid) is ignored. Writes ` +
	`are compared as stored, so a status-subresource write cannot revert spec. Unknown ` +
	`when the subject made no update or patch.`

// ignoredPaths are server-managed fields a client cannot meaningfully revert.
var ignoredPaths = map[string]bool{
	"metadata.resourceVersion": true, "metadata.generation": true,
	"metadata.managedFields": true, "metadata.creationTimestamp": true,
	"metadata.uid": true, "metadata.selfLink": true,
}

// flatten maps each JSON leaf (arrays whole) of obj to its JSON text.
func flatten(obj json.RawMessage) map[string]string {
	out := map[string]string{}
	var v any
	if len(obj) == 0 || json.Unmarshal(obj, &v) != nil {
		return out
	}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			for k, c := range m {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, c)
			}
			return
		}
		if ignoredPaths[prefix] {
			return
		}
		b, _ := json.Marshal(v)
		out[prefix] = string(b)
	}
	walk("", v)
	return out
}

const absent = "<absent>"

func leaf(m map[string]string, p string) string {
	if v, ok := m[p]; ok {
		return v
	}
	return absent
}

type foreignWrite struct {
	rec    sim.Record
	before map[string]string
	after  map[string]string
}

func noLostUpdates(tr *sim.Trace, opts Options) Verdict {
	const name = NameNoLostUpdates
	subj := subjectActors(tr)
	inc := newProcesses(tr) // a crashing process's last writes rest on what it saw
	srv := opts.newServer(tr)
	current := map[string]map[string]string{} // uid -> flattened latest object
	foreign := map[string][]foreignWrite{}    // uid -> writes by other actors
	observed := map[string]int64{}            // uid -> highest RV the subject saw
	listed := map[string]int64{}              // resource -> highest list RV the subject saw
	lastInc := map[string]int{}
	checked := 0
	observe := func(uid string, rv int64) {
		if uid != "" && rv > observed[uid] {
			observed[uid] = rv
		}
	}
	for _, r := range tr.Records {
		if opts.stopped(r.Pos) {
			return stoppedVerdict(name, r.Pos, len(tr.Records))
		}
		if subj[r.Actor] {
			if n := inc.of(r.Actor, r.Pos); n != lastInc[r.Actor] {
				lastInc[r.Actor] = n
				observed = map[string]int64{}
				listed = map[string]int64{}
			}
		}
		switch r.Kind {
		case sim.RecHandler, sim.RecDelivered:
			if subj[r.Actor] {
				observe(r.UID, r.RV)
			}
		case sim.RecList:
			if subj[r.Actor] && r.RV > listed[normResource(r.Resource)] {
				listed[normResource(r.Resource)] = r.RV
			}
		case sim.RecRequest:
			if subj[r.Actor] && r.Verb == "get" && r.Code == 200 {
				if o, ok := srv.live[recKey(r)]; ok {
					observe(o.UID, o.RV)
				}
			}
		case sim.RecWrite:
			if !isWrite(r) || r.UID == "" {
				break
			}
			after := opts.flatten(tr, r)
			before := current[r.UID]
			switch {
			case subj[r.Actor] && isUpdateVerb(r.Verb) && !isEventsResource(r.Resource):
				checked++
				seen := observed[r.UID]
				if l := listed[normResource(r.Resource)]; l > seen {
					seen = l
				}
				for _, f := range foreign[r.UID] {
					if f.rec.RV <= seen {
						continue
					}
					if p, ok := reverted(f, before, after); ok {
						return fail(name, withFaultNote(tr, fmt.Sprintf("%s's %s of %s set %s back to %s, undoing %s's change to %s at RV %d that %s had never observed (it had seen RV %d at most): a lost update",
							r.Actor, r.Verb, recKey(r), p, leaf(f.before, p), f.rec.Actor, leaf(f.after, p), f.rec.RV, r.Actor, seen)), r.Pos, f.rec.Pos)
					}
				}
				observe(r.UID, r.RV)
			case subj[r.Actor]:
				observe(r.UID, r.RV)
			case !r.ByGC && r.Actor != "gc":
				foreign[r.UID] = append(foreign[r.UID], foreignWrite{rec: r, before: before, after: after})
			}
			current[r.UID] = after
			srv.apply(r)
		}
	}
	if checked == 0 {
		return notApplicable(name, "no update or patch by the subject", "the subject made no update or patch: no write could have lost another's")
	}
	return pass(name, fmt.Sprintf("%d update(s) or patch(es) by the subject: none reverted a change it had not observed", checked))
}

// reverted reports the first field (sorted) that f changed and that the
// subject's write (from before to after) set back to its value before f.
func reverted(f foreignWrite, before, after map[string]string) (string, bool) {
	paths := map[string]bool{}
	for p := range f.before {
		paths[p] = true
	}
	for p := range f.after {
		paths[p] = true
	}
	var hits []string
	for p := range paths {
		old, changed := leaf(f.before, p), leaf(f.after, p)
		if old == changed {
			continue
		}
		if leaf(after, p) == old && leaf(before, p) != old {
			hits = append(hits, p)
		}
	}
	if len(hits) == 0 {
		return "", false
	}
	sort.Strings(hits)
	return hits[0], true
}

// isUpdateVerb reports whether verb rewrites an existing object: update,
// patch, and their subresource forms ("update/status").
func isUpdateVerb(verb string) bool {
	return verb == "update" || verb == "patch" || strings.HasPrefix(verb, "update/") || strings.HasPrefix(verb, "patch/")
}
