package invariants

import (
	"fmt"

	"github.com/cachelab/cachelab/sim"
)

const contractOrder = `kube-apiserver watch contract: events of one watch are ` +
	`delivered in resourceVersion order, and an object's resourceVersion changes on ` +
	`every write. client-go SharedInformer: "the cached states of an object are a ` +
	`subsequence of the states it had on the server" (never an older state after a newer).
Checked: (1) per watch stream (Watcher, reset when that watcher re-opens) and object ` +
	`key, the RVs of delivered ADDED/MODIFIED/DELETED events strictly increase; (2) per ` +
	`subject handler and object key, within one process of the subject (one informer ` +
	`incarnation: from a restart to the next; a crash does not start one), the RV a ` +
	`handler is given never goes down. Across a restart it may: a new process whose ` +
	`informers list from a lagging replica (a list at RV "0", WatchList off) starts ` +
	`from an older state than the old process had seen (time travel, EDGE 12). Each ` +
	`incarnation's states are still a subsequence of the server's, so that is counted ` +
	`in the pass, not failed; what the controller does with the past is no-stale-harm's. An equal RV is allowed: a relist or resync re-delivers what the ` +
	`handler already has (EDGE 10, 21). RVs are global, so a recreated object (new UID) ` +
	`always has a higher RV than its predecessor: no exception is needed. Tombstones ` +
	`(DeletedFinalStateUnknown) carry the last cached copy, stale by design, and are ` +
	`exempt. (3) an update's new object is never older than its old object.`

type seen struct {
	rv  int64
	pos int
}

func perObjectOrder(tr *sim.Trace, _ Options) Verdict {
	const name = NamePerObjectOrder
	proc := newProcesses(tr)
	streams := map[string]map[key]seen{}
	handlers := map[[2]string]map[key]seen{}
	nDelivered, nHandled := 0, 0
	travelled := map[[3]string]bool{} // actor, handler, key: went back across a restart
	for _, r := range tr.Records {
		switch r.Kind {
		case sim.RecWatchOpen:
			delete(streams, r.Watcher)
		case sim.RecDelivered:
			if !isObjectEvent(r.EventType) || r.RV == 0 {
				continue
			}
			nDelivered++
			m := streams[r.Watcher]
			if m == nil {
				m = map[key]seen{}
				streams[r.Watcher] = m
			}
			k := recKey(r)
			if prev, ok := m[k]; ok && r.RV <= prev.rv {
				return fail(name, withFaultNote(tr, fmt.Sprintf("watch stream %q delivered %s %s at RV %d after it had delivered RV %d: a watch must deliver each object's changes in increasing RV order",
					r.Watcher, r.EventType, k, r.RV, prev.rv)), r.Pos, prev.pos)
			}
			m[k] = seen{r.RV, r.Pos}
		case sim.RecHandler:
			if !isObjectEvent(r.EventType) {
				continue
			}
			nHandled++
			k := recKey(r)
			if r.EventType == "MODIFIED" && r.OldUID == r.UID && r.OldRV > r.RV && r.RV != 0 {
				return fail(name, withFaultNote(tr, fmt.Sprintf("handler %q got an update of %s whose new object (RV %d) is older than its old object (RV %d)",
					r.Handler, k, r.RV, r.OldRV)), r.Pos)
			}
			if r.Tombstone || r.RV == 0 {
				continue
			}
			hk := [2]string{r.Actor, r.Handler}
			m := handlers[hk]
			if m == nil {
				m = map[key]seen{}
				handlers[hk] = m
			}
			prev, ok := m[k]
			if ok && proc.of(r.Actor, prev.pos) != proc.of(r.Actor, r.Pos) {
				// The first call of k in a new process: its handler's
				// order starts here, possibly from an older state than
				// the old process had seen (EDGE 12).
				if r.RV < prev.rv {
					travelled[[3]string{r.Actor, r.Handler, k.String()}] = true
				}
				ok = false
			}
			if ok && r.RV < prev.rv {
				return fail(name, withFaultNote(tr, fmt.Sprintf("handler %q of %s saw %s go back in time, from RV %d to RV %d within one process",
					r.Handler, r.Actor, k, prev.rv, r.RV)), r.Pos, prev.pos)
			}
			if !ok || r.RV > prev.rv {
				m[k] = seen{r.RV, r.Pos}
			}
		}
	}
	if nDelivered == 0 && nHandled == 0 {
		return unknownBecause(name, "no delivered event or handler call", "the trace has no delivered watch events and no handler calls: no order to check")
	}
	why := fmt.Sprintf("%d delivered event(s) on %d watch stream(s) and %d handler call(s): no object's RV ever went down within a watch stream or a process", nDelivered, len(streams), nHandled)
	if n := len(travelled); n > 0 {
		why += fmt.Sprintf("; %d object(s) went back in time across a restart (a new process listed older state than the old one had seen, EDGE 12: not an order violation of one informer; what the subject did with it is no-stale-harm's)", n)
	}
	return pass(name, why)
}

func isObjectEvent(t string) bool {
	return t == "ADDED" || t == "MODIFIED" || t == "DELETED"
}
