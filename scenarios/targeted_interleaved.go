package scenarios

import (
	"fmt"
	"strings"
	"time"

	"github.com/cachelab/cachelab/sim"
)

// InterleavedCondition is the condition type an interleaved-writer
// competitor sets in the status it writes (ClassInterleaved).
const InterleavedCondition = "CompetitorChecked"

// interleavedWriter: for the last update or patch of each verb and
// resource the controller makes to a named object in the reference (its
// k-th write), a competitor writes that same object between the
// controller's read of it and its write. The controller reads from its
// informer's cache, so its read is held in place: its watch of the
// resource is held from just before the competitor's write until 1s after
// (the held events are then delivered in order, no relist); the
// competitor writes 1ms before the controller's write of the reference. A
// write of the object's status meets a competitor that sets a condition
// of its own in the status (a merge patch of the status subresource); any
// other write meets a competitor that adds a label. The controller's write
// with the cached resourceVersion is refused 409 (it must read again and
// retry); one without a precondition overwrites the competitor's change.
func interleavedWriter(base *sim.Plan, v *refView) ([]Targeted, []Pruned) {
	var out []Targeted
	var pruned []Pruned
	last := v.lastWrites(nil)
	for _, w := range v.writes {
		verb, sub, _ := strings.Cut(w.verb, "/")
		what := fmt.Sprintf("the controller's write #%d (%s %s %s)", w.k, w.verb, w.resource, w.key)
		desc := "a competitor writes the object between the controller's read and " + what
		switch {
		case verb != "update" && verb != "patch":
			continue // creates and deletes: no object read and written
		case w.key == "":
			continue
		case sub != "" && sub != "status":
			pruned = append(pruned, Pruned{ClassInterleaved, desc, "a write of the " + sub + " subresource: no competitor write of it is generated"})
			continue
		case !v.watched[w.resource]:
			pruned = append(pruned, Pruned{ClassInterleaved, desc, "the subject does not watch " + w.resource + ": it reads the object from the server, not from a cache a hold keeps in place"})
			continue
		case last[w.verb+" "+w.resource] != w.k:
			pruned = append(pruned, Pruned{ClassInterleaved, desc, fmt.Sprintf("the same verb and resource as write #%d (the last is kept)", last[w.verb+" "+w.resource])})
			continue
		}
		ns, name := nsOf(w.key), nameOf(w.key)
		// A write at 0 (the controller's first, on its initial list):
		// the competitor and the hold go first at 0, in that order.
		compAt := max(w.at-time.Millisecond, 0)
		comp := sim.Step{At: sim.Duration(compAt), Actor: "competitor", Op: "patch", Resource: resourceArg(w.resource), Namespace: ns, Name: name}
		if sub == "status" {
			comp.Op = "patch-status"
			comp.Patch = mustJSON(map[string]any{"status": map[string]any{"conditions": []any{map[string]any{
				"type": InterleavedCondition, "status": "True", "reason": "Checked",
				"message": "set by another writer", "lastTransitionTime": "2000-01-01T00:00:01Z",
			}}}})
			desc += ": it sets a condition " + InterleavedCondition + " in the status"
		} else {
			comp.Patch = mustJSON(map[string]any{"metadata": map[string]any{"labels": map[string]any{"cachelab.dev/competitor": fmt.Sprintf("w%d", w.k)}}})
			desc += ": it adds a label"
		}
		from := max(w.at-2*time.Millisecond, 0)
		desc += fmt.Sprintf(" at %s; the controller's watch of %s held %s..%s", sim.Duration(compAt), resourceArg(w.resource), sim.Duration(from), sim.Duration(from+time.Second))
		p := withSteps(base, fmt.Sprintf("interleaved-w%d", w.k),
			sim.Step{At: sim.Duration(from), Actor: sim.ActorFaults, Op: "hold", Resource: resourceArg(w.resource), Target: v.subject, For: sim.Duration(time.Second)},
			comp)
		kind := KindCompetitorLabel
		if sub == "status" {
			kind = KindCompetitorStatus
		}
		out = append(out, Targeted{Class: ClassInterleaved, Perturbation: desc, Plan: p, Kind: kind,
			Target: qualify(w.verb+" "+w.resource, v.repairs[w.k]), Repair: v.repairs[w.k] != ""})
	}
	return out, pruned
}
