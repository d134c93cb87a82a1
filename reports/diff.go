package reports

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// failureView is what the report shows about the first failure: where it
// happened and how each cache differed from the server there.
type failureView struct {
	// Invariant is the failed invariant whose evidence comes first.
	Invariant string
	// Pos is the first trace position the failed verdicts cite; -1 when
	// they cite none.
	Pos int
	// At is the virtual time of Pos.
	At string
	// Reason and Detail are the verdict's.
	Reason, Detail string
	// Objects names the objects involved ("pods default/web-1").
	Objects []string
	// Caches are the cache-vs-server comparisons, one per cache.
	Caches []cacheDiff
	// Note says why there is no comparison, when there is none.
	Note string
	// What says in words what the marked record is ("handler pods of
	// bellerophon: DELETED default/web-1 (tombstone)").
	What string
	// TriggerPos, TriggerAt and TriggerWhat name what set the failure in
	// motion (Verdict.Trigger); TriggerPos is -1 when there is none.
	TriggerPos             int
	TriggerAt, TriggerWhat string
	// Measurement is true when no property failed and the view shows the
	// first unsound claim of a definition of "synced" instead.
	Measurement bool
}

// cacheDiff compares one cache snapshot with the server at the same
// position.
type cacheDiff struct {
	// Title says which cache, which snapshot and which server state.
	Title string
	// Summary is one line per object in plain words.
	Summary []string
	// Diff is go-cmp's diff (-server +cache), "" when equal.
	Diff string
	// SnapshotPos is the cache record's position.
	SnapshotPos int
	// Compared counts the objects compared (server's plus cache's).
	Compared int
	// Later is how long after the failure the snapshot was taken, "" when
	// it was not later: a cache that agrees there may have caught up since.
	Later string
}

// objKey identifies an object across server and caches:
// "<resource without group> <namespace>/<name>".
func objKey(resource, ns, name string) string {
	if ns == "" {
		return shortResource(resource) + " " + name
	}
	return shortResource(resource) + " " + ns + "/" + name
}

// FirstFailure returns the trace position a report marks as the first
// failure of a run and the invariant it belongs to: among the failed
// properties, the earliest Verdict.Mark (where an invariant's own evidence
// departs from what it must be); a measurement only when no property
// failed. pos is -1 when nothing failed.
func FirstFailure(t *sim.Trace, vs []invariants.Verdict) (pos int, invariant string) {
	fv := firstFailure(t, vs)
	if fv == nil {
		return -1, ""
	}
	return fv.Pos, fv.Invariant
}

// firstFailure finds the first failure: the failed verdict whose most
// telling position (its first) comes earliest in the trace, among the
// properties of the subject when one failed (a sync-soundness verdict
// measures a definition of "synced" the subject may not rely on, so it is
// shown first only when nothing else failed). For the objects
// that verdict's records name (all objects when they name none) it compares
// every cache's snapshot nearest to that position with the server's state
// at the snapshot's own position, so that both sides are the same instant.
// It returns nil when no verdict failed.
func firstFailure(t *sim.Trace, vs []invariants.Verdict) *failureView {
	var fv *failureView
	propertyFailed := false
	for _, v := range vs {
		propertyFailed = propertyFailed || (v.Status == invariants.Fail && !isMeasurement(v.Invariant))
	}
	for _, v := range vs {
		if v.Status != invariants.Fail || (propertyFailed && isMeasurement(v.Invariant)) {
			continue
		}
		// The marked position: where the verdict's own evidence departs
		// (Verdict.At), else its first valid position.
		first := -1
		if m := v.Mark(); m >= 0 && m < len(t.Records) {
			first = m
		} else {
			for _, p := range v.Positions {
				if p >= 0 && p < len(t.Records) {
					first = p
					break
				}
			}
		}
		if fv == nil || (first >= 0 && (fv.Pos < 0 || first < fv.Pos)) {
			fv = &failureView{Invariant: v.Invariant, Pos: first, Reason: v.Reason, Detail: v.Detail, Measurement: !propertyFailed, TriggerPos: -1}
			if first >= 0 {
				fv.At = t.Records[first].At.String()
				fv.What = describeRecord(&t.Records[first])
			}
			if v.Trigger != nil && *v.Trigger >= 0 && *v.Trigger < len(t.Records) && *v.Trigger != first {
				tr := &t.Records[*v.Trigger]
				fv.TriggerPos, fv.TriggerAt, fv.TriggerWhat = tr.Pos, tr.At.String(), describeRecord(tr)
			}
		}
	}
	if fv == nil {
		return nil
	}
	// The objects involved: those named by the failed verdict's records.
	involved := map[string]bool{}
	for _, v := range vs {
		if v.Invariant != fv.Invariant || v.Status != invariants.Fail {
			continue
		}
		for _, p := range v.Positions {
			if p < 0 || p >= len(t.Records) {
				continue
			}
			r := &t.Records[p]
			if r.Name != "" {
				involved[objKey(r.Resource, r.Namespace, r.Name)] = true
			}
		}
		break
	}
	for k := range involved {
		fv.Objects = append(fv.Objects, k)
	}
	sort.Strings(fv.Objects)

	at := fv.Pos
	if at < 0 {
		at = len(t.Records) - 1
	}
	snaps := nearestSnapshots(t, at)
	if len(snaps) == 0 {
		fv.Note = "The trace has no cache snapshot (cache records), so there is no cache to compare with the server."
		return fv
	}
	defer func() {
		if len(fv.Caches) == 0 {
			fv.Note = "The trace's cache snapshots hold no resource the server serves, so there is no cache to compare with the server."
		}
	}()
	served := servedResources(t)
	for _, sp := range snaps {
		snap := &t.Records[sp]
		resources := cacheResources(t, snap)
		mirrors := false
		for res := range resources {
			mirrors = mirrors || served[res]
		}
		if len(resources) > 0 && !mirrors {
			continue // a store of something else (Bellerophon's backups): no server state to compare
		}
		server, from := serverAt(t, sp)
		cache := map[string]sim.ObjectState{}
		for _, o := range snap.Objects {
			k := objKey(o.Resource, o.Namespace, o.Name)
			if len(involved) == 0 || involved[k] {
				cache[k] = o
			}
		}
		srv := map[string]sim.ObjectState{}
		for k, o := range server {
			if len(resources) > 0 && !resources[shortResource(o.Resource)] {
				continue
			}
			if snap.Namespace != "" && o.Namespace != snap.Namespace {
				continue
			}
			if len(involved) == 0 || involved[k] {
				srv[k] = o
			}
		}
		what := fmt.Sprintf("cache %q of %s", snap.Handler, nameOr(snap.Actor, "?"))
		if snap.Detail != "" {
			what += " (" + snap.Detail + ")"
		}
		cd := cacheDiff{
			Title:       fmt.Sprintf("%s, snapshot #%d at %s, against the server %s", what, sp, snap.At, from),
			SnapshotPos: sp,
			Diff:        cmp.Diff(srv, cache, cmpopts.EquateEmpty()),
			Compared:    len(srv) + len(cache),
		}
		if fv.Pos >= 0 && snap.At > t.Records[fv.Pos].At {
			cd.Later = (snap.At - t.Records[fv.Pos].At).D().String()
		}
		cd.Summary = summarize(srv, cache)
		fv.Caches = append(fv.Caches, cd)
	}
	return fv
}

// isMeasurement reports whether an invariant measures a definition of
// "synced" (sync-soundness/...) rather than a property of the subject.
func isMeasurement(invariant string) bool {
	return strings.HasPrefix(invariant, invariants.NameSyncSoundnessPrefix)
}

// describeRecord says in words what a record is, for the first-failure
// card: "handler of bellerophon: DELETED pods default/web-1 (tombstone)".
func describeRecord(r *sim.Record) string {
	obj := ""
	if r.Name != "" {
		obj = " " + objKey(r.Resource, r.Namespace, r.Name)
	} else if r.Key != "" {
		obj = " " + r.Key
	}
	var s string
	switch r.Kind {
	case sim.RecWrite:
		s = fmt.Sprintf("%s by %s%s (RV %d)", r.Verb, r.Actor, obj, r.RV)
	case sim.RecRequest:
		s = fmt.Sprintf("%s request of %s%s answered %d", r.Verb, r.Actor, obj, r.Code)
	case sim.RecHandler:
		s = fmt.Sprintf("handler call of %s: %s%s", r.Actor, r.EventType, obj)
		if r.Tombstone {
			s += " (a tombstone)"
		}
	case sim.RecSent, sim.RecDelivered:
		s = fmt.Sprintf("watch event %s to %s: %s%s", r.Kind, r.Actor, r.EventType, obj)
	case sim.RecReconcile:
		s = fmt.Sprintf("reconcile %s of %s by %s", r.Op, r.Key, r.Actor)
		if r.Result != "" {
			s += ": " + r.Result
		}
	case sim.RecSignal:
		s = fmt.Sprintf("%s of %s flips to %v", r.Signal, r.Actor, r.Value)
	case sim.RecStep:
		s = fmt.Sprintf("plan step %d: %s %s%s", r.Step, r.Actor, r.Op, obj)
	default:
		s = fmt.Sprintf("%s record of %s%s", r.Kind, nameOr(r.Actor, "the run"), obj)
	}
	if r.Detail != "" && r.Kind != sim.RecCache {
		s += " · " + r.Detail
	}
	return s
}

// cacheResources returns the resources (without group) a cache snapshot
// holds: its Resource, its objects' resources, and the resources of the
// handler calls with the same actor and handler name. Empty means unknown.
func cacheResources(t *sim.Trace, snap *sim.Record) map[string]bool {
	out := map[string]bool{}
	if snap.Resource != "" {
		out[shortResource(snap.Resource)] = true
	}
	for _, o := range snap.Objects {
		out[shortResource(o.Resource)] = true
	}
	if len(out) > 0 {
		return out
	}
	for i := range t.Records {
		r := &t.Records[i]
		if r.Kind == sim.RecHandler && r.Actor == snap.Actor && r.Handler == snap.Handler && r.Resource != "" {
			out[shortResource(r.Resource)] = true
		}
	}
	return out
}

// servedResources returns the resources the server wrote or holds at the
// end.
func servedResources(t *sim.Trace) map[string]bool {
	out := map[string]bool{}
	for i := range t.Records {
		r := &t.Records[i]
		switch r.Kind {
		case sim.RecWrite:
			out[shortResource(r.Resource)] = true
		case sim.RecFinal:
			for _, o := range r.Objects {
				out[shortResource(o.Resource)] = true
			}
		}
	}
	return out
}

// nearestSnapshots returns, for every (actor, cache) pair, the position of
// its last snapshot at or before pos, or else its first one after pos.
func nearestSnapshots(t *sim.Trace, pos int) []int {
	type key struct{ actor, cache string }
	type pick struct{ before, after int }
	picks := map[key]*pick{}
	var order []key
	for i := range t.Records {
		r := &t.Records[i]
		if r.Kind != sim.RecCache {
			continue
		}
		k := key{r.Actor, r.Handler}
		p := picks[k]
		if p == nil {
			p = &pick{before: -1, after: -1}
			picks[k] = p
			order = append(order, k)
		}
		switch {
		case i <= pos:
			p.before = i
		case p.after < 0:
			p.after = i
		}
	}
	out := make([]int, 0, len(order))
	for _, k := range order {
		if p := picks[k]; p.before >= 0 {
			out = append(out, p.before)
		} else {
			out = append(out, p.after)
		}
	}
	sort.Ints(out)
	return out
}

// serverAt returns the server's objects at position pos, keyed by objKey:
// the last final snapshot at or before pos if any, else the state rebuilt
// from the write records up to pos. A delete write removes the object
// unless its object still has finalizers (it is then terminating). from
// says which source was used.
func serverAt(t *sim.Trace, pos int) (map[string]sim.ObjectState, string) {
	for i := pos; i >= 0; i-- {
		if t.Records[i].Kind == sim.RecFinal {
			out := map[string]sim.ObjectState{}
			for _, o := range t.Records[i].Objects {
				out[objKey(o.Resource, o.Namespace, o.Name)] = o
			}
			return out, fmt.Sprintf("at the end of the run (final state #%d)", i)
		}
	}
	out := map[string]sim.ObjectState{}
	for i := 0; i <= pos && i < len(t.Records); i++ {
		r := &t.Records[i]
		if r.Kind != sim.RecWrite {
			continue
		}
		k := objKey(r.Resource, r.Namespace, r.Name)
		o := sim.ObjectState{Resource: r.Resource, Namespace: r.Namespace, Name: r.Name, UID: r.UID, RV: r.RV, Owner: r.Owner}
		o.Terminating, o.Finalizers = objectMeta(r.Object)
		if r.Verb == "delete" && len(o.Finalizers) == 0 {
			delete(out, k)
			continue
		}
		out[k] = o
	}
	return out, fmt.Sprintf("rebuilt from its writes up to #%d", pos)
}

// objectMeta reads deletionTimestamp and finalizers from an object's JSON;
// unreadable or absent JSON gives zero values.
func objectMeta(raw json.RawMessage) (terminating bool, finalizers []string) {
	if len(raw) == 0 {
		return false, nil
	}
	var m struct {
		Metadata struct {
			DeletionTimestamp *string  `json:"deletionTimestamp"`
			Finalizers        []string `json:"finalizers"`
		} `json:"metadata"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return false, nil
	}
	return m.Metadata.DeletionTimestamp != nil, m.Metadata.Finalizers
}

// summarize says in words how cache differs from server, one line per
// object that differs.
func summarize(server, cache map[string]sim.ObjectState) []string {
	keys := map[string]bool{}
	for k := range server {
		keys[k] = true
	}
	for k := range cache {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []string
	for _, k := range sorted {
		s, inS := server[k]
		c, inC := cache[k]
		switch {
		case inS && !inC:
			out = append(out, fmt.Sprintf("%s is on the server (uid %s, rv %d) but missing from the cache", k, s.UID, s.RV))
		case inC && !inS:
			out = append(out, fmt.Sprintf("%s is in the cache (uid %s, rv %d) but gone from the server", k, c.UID, c.RV))
		case s.UID != c.UID:
			out = append(out, fmt.Sprintf("%s: the cache holds uid %s, the server a newer incarnation uid %s", k, c.UID, s.UID))
		case !cmp.Equal(s, c, cmpopts.EquateEmpty()):
			var d []string
			if s.RV != c.RV {
				d = append(d, fmt.Sprintf("rv %d in the cache, %d on the server", c.RV, s.RV))
			}
			if s.Terminating != c.Terminating {
				d = append(d, fmt.Sprintf("terminating %v in the cache, %v on the server", c.Terminating, s.Terminating))
			}
			if strings.Join(s.Finalizers, ",") != strings.Join(c.Finalizers, ",") {
				d = append(d, fmt.Sprintf("finalizers %v in the cache, %v on the server", c.Finalizers, s.Finalizers))
			}
			if s.Owner != c.Owner {
				d = append(d, fmt.Sprintf("owner %q in the cache, %q on the server", c.Owner, s.Owner))
			}
			out = append(out, k+": "+strings.Join(d, "; "))
		}
	}
	return out
}
