package invariants

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cachelab/cachelab/sim"
)

const contractConflicts = `A measurement, not a property: Kubernetes API concurrency ` +
	`control answers a write from a stale copy with 409 Conflict (an update whose ` +
	`resourceVersion is not the object's) or 409 AlreadyExists (a create of a name ` +
	`that exists), and client-go's idiom is to requeue and retry from a fresh read ` +
	`(util/retry.RetryOnConflict, workqueue.AddRateLimited): "optimistic concurrency ` +
	`working as designed". Each retry costs a request and time, so the lab measures it.
Measured: every create, update or patch by the subject answered 409, and how long ` +
	`until the subject's next successful write to the same object (any verb) or, when ` +
	`there is none, the end of its next reconcile that succeeded: the retry that ` +
	`resolved it. A 409 never resolved by the end of the run is counted apart (the ` +
	`state it left is judged by eventual-convergence). Never a failure of the run. ` +
	`Unknown when the subject sent no create, update or patch.`

// conflict is one 409 answered to the subject and what resolved it.
type conflict struct {
	req      sim.Record
	resolved bool
	after    time.Duration
}

func retriedConflicts(tr *sim.Trace, _ Options) Verdict {
	const name = NameRetriedConflicts
	subj := subjectActors(tr)
	var open []*conflict
	var all []*conflict
	requests := 0
	started := map[[2]string]int{} // actor, key -> start of its latest reconcile
	for _, r := range tr.Records {
		switch {
		case r.Kind == sim.RecReconcile && r.Op == "start":
			started[[2]string{r.Actor, r.Key}] = r.Pos
		case r.Kind == sim.RecRequest && subj[r.Actor] && r.Name != "" && !isEventsResource(r.Resource):
			verb := r.Verb
			if i := strings.IndexByte(verb, '/'); i >= 0 {
				verb = verb[:i]
			}
			if verb != "create" && verb != "update" && verb != "patch" && verb != "delete" {
				continue
			}
			requests++
			k := recKey(r)
			if r.Code >= 200 && r.Code < 300 {
				kept := open[:0]
				for _, c := range open {
					if recKey(c.req) == k && c.req.Actor == r.Actor {
						c.resolved, c.after = true, r.At.D()-c.req.At.D()
						continue
					}
					kept = append(kept, c)
				}
				open = kept
			}
			if r.Code == 409 && verb != "delete" {
				c := &conflict{req: r}
				open = append(open, c)
				all = append(all, c)
			}
		case r.Kind == sim.RecReconcile && r.Op == "end" && r.Result == "ok":
			kept := open[:0]
			for _, c := range open {
				if start, ok := started[[2]string{r.Actor, r.Key}]; ok && c.req.Actor == r.Actor && start > c.req.Pos {
					c.resolved, c.after = true, r.At.D()-c.req.At.D()
					continue
				}
				kept = append(kept, c)
			}
			open = kept
		}
	}
	if requests == 0 {
		return unknownBecause(name, "no write by the subject", "the subject sent no create, update, patch or delete: no write could collide")
	}
	if len(all) == 0 {
		v := pass(name, fmt.Sprintf("%d write request(s) by the subject, none answered 409", requests))
		v.Short = "no 409"
		return v
	}
	var reasons = map[string]int{}
	var lat []time.Duration
	unresolved := 0
	var pos []int
	for _, c := range all {
		reasons[c.req.Reason]++
		pos = append(pos, c.req.Pos)
		if c.resolved {
			lat = append(lat, c.after)
		} else {
			unresolved++
		}
	}
	var kinds []string
	for _, k := range sortedStrings(reasons) {
		label := k
		if label == "" {
			label = "no reason"
		}
		kinds = append(kinds, fmt.Sprintf("%d %s", reasons[k], label))
	}
	s := fmt.Sprintf("%d of %d write request(s) by the subject answered 409 (%s)", len(all), requests, strings.Join(kinds, ", "))
	short := fmt.Sprintf("%d retried 409s", len(all))
	if len(all) == 1 {
		short = "1 retried 409"
	}
	if len(lat) > 0 {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		s += fmt.Sprintf("; %d resolved by a retry after %s (median), %s at most", len(lat), lat[len(lat)/2], lat[len(lat)-1])
		short += fmt.Sprintf(", resolved within %s", lat[len(lat)-1])
	}
	if unresolved > 0 {
		s += fmt.Sprintf("; %d never resolved by the end of the run", unresolved)
		short += fmt.Sprintf(", %d unresolved", unresolved)
	}
	v := pass(name, s+": optimistic concurrency working, measured, not a failure")
	v.Positions = firstN(pos, 10)
	v.Short = short
	return v
}
