package invariants

import (
	"fmt"

	"github.com/cachelab/cachelab/sim"
)

const contractChildren = `ReplicaSet controller (pkg/controller/replicaset): ` +
	`"expectations ... prevent the controller from creating more pods than desired ` +
	`while its cache lags" (UIDTrackingControllerExpectations); a controller that acts ` +
	`on a stale cache creates duplicates (EDGE 22, 23; controller-runtime #245, #1464).
Checked at every create by the subject of a child in Options.ReplicaResource ` +
	`(default "pods") with a controller ownerReference: the live children of that ` +
	`owner in that resource, counting the new one (created by anyone, not yet deleted ` +
	`and not terminating), must not exceed the owner's spec.replicas (a Job's ` +
	`spec.parallelism when it has no spec.replicas). Since a reconcile ` +
	`may act on any version of the owner it could have read, the allowed count is the ` +
	`largest spec.replicas among the owner's versions from the newest one the subject ` +
	`had observed when its current reconcile started (RecReconcile "start"; the create ` +
	`itself when there is none; observed = given to one of its handlers) to the latest. Scaling down is not a violation: only ` +
	`creates are judged. ` +
	`Unknown when the subject creates no such child or no owner has spec.replicas.`

func noDuplicateChildren(tr *sim.Trace, opts Options) Verdict {
	const name = NameNoDuplicateChildren
	subj := subjectActors(tr)
	replicaRes := normResource(opts.ReplicaResource)
	lastObj := map[string]sim.Record{}      // uid -> latest write
	versions := map[string][]sim.Record{}   // uid -> its writes
	children := map[string]map[string]int{} // owner uid -> live child uid -> create pos
	obs := newObservations(tr, subj)
	reconcileStart := map[string]int{} // actor -> position of its current reconcile's start
	judged := 0
	rm := removalsOf(tr)
	for _, r := range tr.Records {
		obs.see(r)
		if r.Kind == sim.RecReconcile && r.Op == "start" {
			reconcileStart[r.Actor] = r.Pos
		}
		if !isWrite(r) {
			continue
		}
		isChild := r.Owner != "" && normResource(r.Resource) == replicaRes
		if isChild && r.Verb == "create" && subj[r.Actor] {
			if parent, ok := lastObj[r.Owner]; ok {
				from, ok := reconcileStart[r.Actor]
				if !ok {
					from = r.Pos
				}
				seen := obs.at(r.Owner, from)
				var want *int64
				field := "spec.replicas"
				for _, v := range versions[r.Owner] {
					if v.RV < seen && v.Pos != parent.Pos {
						continue
					}
					m, ok := parseMeta(v.Object)
					if !ok {
						continue
					}
					if b, f := m.bound(); b != nil && (want == nil || *b > *want) {
						n := *b
						want, field = &n, f
					}
				}
				if want != nil {
					judged++
					live := children[r.Owner]
					if int64(len(live)+1) > *want {
						pos := []int{r.Pos, parent.Pos}
						for _, p := range sortedInts(live) {
							pos = append(pos, p)
						}
						return fail(name, withFaultNote(tr, fmt.Sprintf("%s created %s as child %d of %s, which wants %s=%d: a duplicate create (the cache lagged and nothing remembered the earlier creates)",
							r.Actor, recKey(r), len(live)+1, recKey(parent), field, *want)), firstN(pos, 12)...)
					}
				}
			}
		}
		if r.UID != "" {
			versions[r.UID] = append(versions[r.UID], r)
		}
		if r.UID != "" {
			lastObj[r.UID] = r
		}
		if isChild {
			live := children[r.Owner]
			if live == nil {
				live = map[string]int{}
				children[r.Owner] = live
			}
			if rm.removes(r) || terminating(r) {
				delete(live, r.UID)
			} else if _, ok := live[r.UID]; !ok {
				live[r.UID] = r.Pos
			}
		} else if rm.removes(r) {
			// A child whose ownerReference was dropped, or removed without
			// one recorded: forget it under every owner.
			for _, live := range children {
				delete(live, r.UID)
			}
		}
	}
	if judged == 0 {
		return notApplicable(name, "no child create under a known spec.replicas", fmt.Sprintf("the subject created no %s with a controller owner whose spec.replicas (or spec.parallelism) is known: nothing to count", replicaRes))
	}
	return pass(name, fmt.Sprintf("%d child create(s) by the subject: none took an owner above its spec.replicas", judged))
}

// sortedInts returns m's values sorted.
func sortedInts(m map[string]int) []int {
	out := make([]int, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sortInts(out)
	return out
}

// observations tracks, per UID, the highest RV a handler of the subject had
// been given, per process incarnation, with the history needed to ask "as
// of position p". Only handler calls count: the store (and so the lister)
// holds a version before its handler call, not necessarily before the watch
// event is delivered or the subject's own write returns.
type observations struct {
	subj    map[string]bool
	inc     incarnations
	lastInc map[string]int
	hist    map[string][]seen // uid -> increasing (rv, pos)
}

func newObservations(tr *sim.Trace, subj map[string]bool) *observations {
	return &observations{subj: subj, inc: newIncarnations(tr), lastInc: map[string]int{}, hist: map[string][]seen{}}
}

// see records r if it shows the subject an object.
func (o *observations) see(r sim.Record) {
	if !o.subj[r.Actor] {
		return
	}
	if n := o.inc.of(r.Actor, r.Pos); n != o.lastInc[r.Actor] {
		o.lastInc[r.Actor] = n
		// A new process has seen nothing yet.
		for uid, h := range o.hist {
			o.hist[uid] = append(h, seen{rv: 0, pos: r.Pos})
		}
	}
	if r.UID == "" || r.RV == 0 {
		return
	}
	if r.Kind != sim.RecHandler {
		return
	}
	h := o.hist[r.UID]
	if len(h) == 0 || r.RV > h[len(h)-1].rv {
		o.hist[r.UID] = append(h, seen{rv: r.RV, pos: r.Pos})
	}
}

// at returns the highest RV of uid the subject had observed before pos.
func (o *observations) at(uid string, pos int) int64 {
	var rv int64
	for _, s := range o.hist[uid] {
		if s.pos >= pos {
			break
		}
		rv = s.rv
	}
	return rv
}
