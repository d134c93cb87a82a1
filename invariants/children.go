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
	`and not terminating), must not exceed the owner's spec.replicas as of its latest ` +
	`write before the create. Scaling down is not a violation: only creates are judged. ` +
	`Unknown when the subject creates no such child or no owner has spec.replicas.`

func noDuplicateChildren(tr *sim.Trace, opts Options) Verdict {
	const name = NameNoDuplicateChildren
	subj := subjectActors(tr)
	replicaRes := normResource(opts.ReplicaResource)
	lastObj := map[string]sim.Record{}      // uid -> latest write
	children := map[string]map[string]int{} // owner uid -> live child uid -> create pos
	judged := 0
	for _, r := range tr.Records {
		if !isWrite(r) {
			continue
		}
		isChild := r.Owner != "" && normResource(r.Resource) == replicaRes
		if isChild && r.Verb == "create" && subj[r.Actor] {
			if parent, ok := lastObj[r.Owner]; ok {
				if m, ok := parseMeta(parent.Object); ok && m.Spec.Replicas != nil {
					judged++
					live := children[r.Owner]
					want := *m.Spec.Replicas
					if int64(len(live)+1) > want {
						pos := []int{r.Pos, parent.Pos}
						for _, p := range sortedInts(live) {
							pos = append(pos, p)
						}
						return fail(name, withFaultNote(tr, fmt.Sprintf("%s created %s as child %d of %s, which wants spec.replicas=%d: a duplicate create (the cache lagged and nothing remembered the earlier creates)",
							r.Actor, recKey(r), len(live)+1, recKey(parent), want)), firstN(pos, 12)...)
					}
				}
			}
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
			if removes(r) || terminating(r) {
				delete(live, r.UID)
			} else if _, ok := live[r.UID]; !ok {
				live[r.UID] = r.Pos
			}
		} else if removes(r) {
			// A child whose ownerReference was dropped, or removed without
			// one recorded: forget it under every owner.
			for _, live := range children {
				delete(live, r.UID)
			}
		}
	}
	if judged == 0 {
		return unknown(name, fmt.Sprintf("the subject created no %s with a controller owner whose spec.replicas is known: nothing to count", replicaRes))
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
