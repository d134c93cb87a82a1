package invariants

import (
	"sort"
	"strings"

	"github.com/cachelab/cachelab/sim"
)

// Reconcile is one reconcile of the subject in a trace, with what it read
// and wrote: where a targeted fault can hit it (issue 28). A reference
// run's reconciles say where the controller looks: which object, at which
// resourceVersion, and the k-th write of each reconcile.
type Reconcile struct {
	// Actor is the subject's actor name; Process counts its restarts
	// before the reconcile (0: the first process).
	Actor   string
	Process int
	// Key is the reconciled key ("default/a").
	Key string
	// Start is the position of its "start" record; End that of its "end"
	// record, or of the crash that cut it (Crashed), -1 if the trace ended
	// first.
	Start, End int
	Crashed    bool
	// Result is the "end" record's result ("ok" or the error).
	Result string
	// Reads are what it read: the reconciled object as each of the
	// subject's informers last delivered it before the start (Via "cache",
	// Informer the handler's name), then its GET requests (Via "get", at
	// the object's resourceVersion on the server then).
	Reads []Read
	// Writes are its successful writes, in order (Write.K counts from 1).
	Writes []Write
}

// Read is one read of an object by a reconcile.
type Read struct {
	// Pos is the position of the record that shows it: the handler call
	// that left the object in the cache, or the GET request.
	Pos int
	// Via is "cache" or "get"; Informer names the handler of a cache read.
	Via, Informer string
	// The object read: Resource is normalized ("foos"); UID and RV are ""
	// and 0 for an object that did not exist (a GET answered 404, or a
	// cache whose last event deleted it: Deleted).
	Resource, Namespace, Name, UID string
	RV                             int64
	Deleted                        bool
	// Code is a GET's status code.
	Code int
}

// Write is one successful write of a reconcile.
type Write struct {
	// K is its rank in the reconcile, from 1.
	K int
	// Pos is the position of its write record.
	Pos int
	// Verb is the write's verb ("create", "update/status", "delete", ...).
	Verb                                string
	Resource, Namespace, Name, UID, Own string
	RV                                  int64
}

// Reconciles returns the subject's reconciles in tr, in order of start,
// with their reads and writes. A write or GET made while several reconciles
// are open (several workers) goes to the one reconciling its object's key,
// or its owner's; failing that it goes to none (Unattributed counts them).
// Reads through a lister are not requests: the cache reads are the
// reconciled object's last delivered state, not every object the
// reconcile looked at.
func Reconciles(tr *sim.Trace) (out []Reconcile, unattributed int) {
	if tr == nil {
		return nil, 0
	}
	actors := subjectActors(tr)
	ownerName := map[string]key{} // UID -> key
	process := map[string]int{}
	open := map[string][]int{} // actor -> indexes into out
	// The subject's last handler call per informer and object.
	lastSeen := map[string]map[key]sim.Record{} // actor -> resource+handler, ns, name -> last handler call
	cur := map[key]sim.Record{}                 // server's latest write per key
	closeAll := func(actor string, pos int, crashed bool) {
		for _, i := range open[actor] {
			out[i].End, out[i].Crashed = pos, crashed
		}
		open[actor] = nil
	}
	pick := func(actor string, k key, owner string) int {
		ids := open[actor]
		if len(ids) == 1 {
			return ids[0]
		}
		for _, i := range ids {
			if keyOf(out[i].Key) == (key{Namespace: k.Namespace, Name: k.Name}) {
				return i
			}
		}
		if o, ok := ownerName[owner]; ok {
			for _, i := range ids {
				if keyOf(out[i].Key) == (key{Namespace: o.Namespace, Name: o.Name}) {
					return i
				}
			}
		}
		return -1
	}
	for _, r := range tr.Records {
		switch r.Kind {
		case sim.RecWrite:
			if r.UID != "" && r.Name != "" {
				ownerName[r.UID] = recKey(r)
			}
			if r.Name != "" {
				cur[recKey(r)] = r
			}
			if !actors[r.Actor] || r.Name == "" {
				continue
			}
			i := pick(r.Actor, recKey(r), r.Owner)
			if i < 0 {
				unattributed++
				continue
			}
			out[i].Writes = append(out[i].Writes, Write{K: len(out[i].Writes) + 1, Pos: r.Pos, Verb: r.Verb,
				Resource: normResource(r.Resource), Namespace: r.Namespace, Name: r.Name, UID: r.UID, Own: r.Owner, RV: r.RV})
		case sim.RecHandler:
			if !actors[r.Actor] {
				continue
			}
			if lastSeen[r.Actor] == nil {
				lastSeen[r.Actor] = map[key]sim.Record{}
			}
			k := recKey(r)
			k.Resource = normResource(r.Resource) + "\x00" + r.Handler
			lastSeen[r.Actor][k] = r
		case sim.RecRequest:
			if !actors[r.Actor] || r.Verb != "get" || r.Name == "" {
				continue
			}
			i := pick(r.Actor, recKey(r), "")
			if i < 0 {
				if len(open[r.Actor]) > 0 {
					unattributed++
				}
				continue
			}
			rd := Read{Pos: r.Pos, Via: "get", Resource: normResource(r.Resource), Namespace: r.Namespace, Name: r.Name, Code: r.Code}
			if w, ok := cur[recKey(r)]; ok && r.Code < 300 && !removes(w) {
				rd.UID, rd.RV = w.UID, w.RV
			}
			out[i].Reads = append(out[i].Reads, rd)
		case sim.RecReconcile:
			if !actors[r.Actor] {
				continue
			}
			switch r.Op {
			case "start":
				rc := Reconcile{Actor: r.Actor, Process: process[r.Actor], Key: r.Key, Start: r.Pos, End: -1}
				k := keyOf(r.Key)
				var reads []Read
				for vk, v := range lastSeen[r.Actor] {
					if vk.Namespace != k.Namespace || vk.Name != k.Name {
						continue
					}
					res, _, _ := strings.Cut(vk.Resource, "\x00")
					rd := Read{Pos: v.Pos, Via: "cache", Informer: v.Handler, Resource: res, Namespace: vk.Namespace, Name: vk.Name}
					if v.EventType == "DELETED" {
						rd.Deleted = true
					} else {
						rd.UID, rd.RV = v.UID, v.RV
					}
					reads = append(reads, rd)
				}
				sort.Slice(reads, func(i, j int) bool { return reads[i].Pos < reads[j].Pos })
				rc.Reads = reads
				out = append(out, rc)
				open[r.Actor] = append(open[r.Actor], len(out)-1)
			case "end":
				ids := open[r.Actor]
				for j, i := range ids {
					if out[i].Key == r.Key {
						out[i].End, out[i].Result = r.Pos, r.Result
						open[r.Actor] = append(ids[:j:j], ids[j+1:]...)
						break
					}
				}
			}
		case sim.RecCrash:
			if actors[r.Actor] {
				closeAll(r.Actor, r.Pos, true)
			}
		case sim.RecRestart:
			if actors[r.Actor] {
				closeAll(r.Actor, r.Pos, true)
				process[r.Actor]++
				delete(lastSeen, r.Actor)
			}
		}
	}
	return out, unattributed
}

// keyOf reads a reconcile key, "namespace/name" or "name".
func keyOf(k string) key {
	if ns, name, ok := strings.Cut(k, "/"); ok {
		return key{Namespace: ns, Name: name}
	}
	return key{Name: k}
}
