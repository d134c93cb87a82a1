package scenarios

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cachelab/cachelab/sim"
)

// Targeted fault classes: Sieve's (OSDI '22) three kinds of perturbation,
// each aimed by a fault-free reference run at the moments the controller
// reads or writes.
const (
	// ClassStale: the controller restarts and its informers list from a
	// replica held at an earlier moment of the run (just before a delete,
	// a deletionTimestamp, a spec change, a recreate under the same name).
	ClassStale = "stale-state"
	// ClassUnobserved: the controller's watch of a resource is held across
	// a change of one object and then expires, so a relist shows only the
	// next state: the intermediate one never reaches it.
	ClassUnobserved = "unobserved-state"
	// ClassIntermediate: the controller crashes right after its k-th write
	// of a reconcile that made more writes, and restarts.
	ClassIntermediate = "intermediate-state"
	// ClassRequest: not one of Sieve's three; the campaign's extension in
	// their spirit. One of the controller's writes, named by the
	// reference, fails (500: nothing applied) or times out after it was
	// applied (504: the outcome unknown to the controller); or one of its
	// reads is slow (an informer's first sync, its watch right after its
	// own write).
	ClassRequest = "request-fault"
	// ClassInterleaved: not one of Sieve's three; another actor's timing
	// rather than the controller's. A competitor writes the object the
	// controller is about to write, after the controller's (cached) read
	// of it and before its write: the write conflicts (409) or, without a
	// precondition, overwrites the competitor's change (a lost update).
	ClassInterleaved = "interleaved-writer"
	// ClassOwnWrites: not one of Sieve's three; the campaign's extension
	// in their spirit (KEP-5647's stale controller). The controller's
	// next reconcile reads its own object right after its own write of it,
	// from a cache that does not show that write yet: its watch lags its
	// own last write; or one of its writes fails while its watch of the
	// objects whose status it writes is held, so that the error it reports
	// in a status and the status that clears it are both writes it cannot
	// read back.
	ClassOwnWrites = "read-own-writes"
)

// TargetedClasses lists the classes in the order the generator emits them.
var TargetedClasses = []string{ClassStale, ClassUnobserved, ClassIntermediate, ClassRequest, ClassInterleaved, ClassOwnWrites}

// The kinds of perturbation (Targeted.Kind), each of one class.
const (
	// KindStaleRestart (stale-state): a restart onto a replica held at a
	// moment of the reference.
	KindStaleRestart = "restart onto a held replica"
	// KindHiddenState (unobserved-state): the watch held across one state
	// of an object, then 410 and a relist.
	KindHiddenState = "state hidden behind a relist"
	// KindTombstone (unobserved-state): a delete learned from a relist.
	KindTombstone = "delete behind a relist"
	// KindRecreateHidden (unobserved-state): an object deleted and created
	// again under the same name while the watch is held, then 410 and a
	// relist: the informer hands the successor over as an update of its
	// predecessor (another UID), and no delete is ever delivered.
	KindRecreateHidden = "recreate behind a relist"
	// KindDownAcross (unobserved-state): the controller down across a
	// change.
	KindDownAcross = "controller down across a change"
	// KindCrashBetween (intermediate-state): a crash between two writes of
	// one reconcile.
	KindCrashBetween = "crash between two writes"
	// KindWriteFails (request-fault): a write fails, nothing applied.
	KindWriteFails = "write fails"
	// KindWriteTimesOut (request-fault): a write applied, answered 504.
	KindWriteTimesOut = "write applied, then 504"
	// KindSlowSync (request-fault): an informer's first sync slow.
	KindSlowSync = "slow first sync"
	// KindSlowResync (request-fault): a restart whose first sync is slow.
	KindSlowResync = "restart with a slow first sync"
	// KindWatchLagsOwnWrite (read-own-writes): the watch lags the
	// controller's own write.
	KindWatchLagsOwnWrite = "watch lags its own write"
	// KindErrorUnseen (read-own-writes): a write fails while the controller's
	// watch of the objects it reports on (status) is held: the error it
	// reports and the status that clears it are both its own writes, and
	// its next reconcile reads neither from its cache.
	KindErrorUnseen = "error reported while its own writes are unseen"
	// KindTimeoutUnseen (read-own-writes): a write applied and answered
	// 504 while the controller's watch of its resource is held: it can
	// neither tell nor see that the write happened.
	KindTimeoutUnseen = "write applied, then 504, its echo late"
	// KindCompetitorLabel (interleaved-writer): a competitor labels the
	// object between the controller's read and write.
	KindCompetitorLabel = "competitor writes the object first"
	// KindCompetitorStatus (interleaved-writer): a competitor sets a status
	// condition between the controller's read and status write.
	KindCompetitorStatus = "competitor writes the status first"
)

// roleOf names actor for a Targeted.Target: "the controller" for the
// subject itself, the actor otherwise.
func roleOf(actor string, v *refView) string {
	if actor == v.subject {
		return "the controller"
	}
	return actor
}

// Targeted is one targeted plan: the base plan's user actions plus one
// perturbation placed where the reference run shows the controller
// reading or writing.
type Targeted struct {
	// Class is one of TargetedClasses.
	Class string
	// Perturbation says what the plan does, and where, in words.
	Perturbation string
	// Plan is the plan to run.
	Plan sim.Plan
	// Kind is the perturbation's shape within its class ("restart onto a
	// held replica", "watch held, then 410", "controller down", "write
	// fails", ...): a campaign takes the next plan of each kind in turn
	// (lab.HuntPlans), so that no class or shape waits for another.
	Kind string
	// Target names the reference moment the perturbation hits, without
	// times or revision numbers (the verb and resource of the write, the
	// resource and kind of change held back): two workloads' plans with
	// the same Kind and Target perturb the same kind of moment, and a
	// campaign runs one of them before the repeats.
	Target string
	// Repair is set when the moment is the controller's repair of another
	// actor's change of an object it made (the user deletes a child, the
	// controller makes it again; Target says so): a campaign runs these
	// first in each kind (lab.HuntOrder).
	Repair bool
	// Duplicates is set on a plan whose write is a create of a name the
	// server generates (metadata.generateName) applied and answered 504
	// (request-fault's KindWriteTimesOut, read-own-writes'
	// KindTimeoutUnseen):
	// made again, it is a second object, which no AlreadyExists stops
	// (EDGE 28: the DaemonSet, ReplicaSet and Job controllers count such a
	// create as made and not yet seen). A campaign runs these first in
	// their kind, before the repairs (lab.HuntOrder).
	Duplicates bool
}

// Pruned is a perturbation the generator did not emit, with why it cannot
// change what the controller sees (Sieve's test-plan pruning).
type Pruned struct {
	Class, Perturbation, Why string
}

// TargetedOptions tunes the generator. The zero value is the default.
type TargetedOptions struct {
	// StaleFor is how long a stale-state plan's replica stays held after
	// the restart. Optional; default 3s.
	StaleFor time.Duration
	// RestartAfter is how long after an intermediate-state crash the
	// controller restarts. Optional; default 1s.
	RestartAfter time.Duration
}

// ReferencePlan returns the plan of p's fault-free reference run: the same
// user actions at the same times (the user's, competitor's and kubelet's
// steps and actors, the initial objects, the seed), without the faults
// actor's steps, the controller's crashes and restarts and every random
// fault of the policy; watch and request latency stay (they are timing,
// not faults).
func ReferencePlan(p *sim.Plan) *sim.Plan {
	ref := p.Clone()
	ref.Steps = []sim.Step{}
	for _, s := range p.Steps {
		if (s.Actor == sim.ActorFaults || s.Actor == "controller") && s.Op != "wait-quiet" {
			continue
		}
		ref.Steps = append(ref.Steps, s)
	}
	ref.Faults = sim.FaultPolicy{Latency: p.Faults.Latency, RequestLatency: p.Faults.RequestLatency}
	ref.Schedule, ref.ShuffleSchedule = nil, 0
	if p.Name != "" && !strings.HasSuffix(p.Name, "-reference") {
		ref.Name = p.Name + "-reference"
	}
	return ref
}

// refView is what the generator reads from a reference trace.
type refView struct {
	subject string
	// writes are the subject's counted write requests (sim.IsCountedWrite),
	// writes[k-1] the k-th.
	writes []refWrite
	// reconciles are the subject's reconciles, in start order.
	reconciles []refReconcile
	// changes are the server writes of other actors (the user, the
	// kubelet, the garbage collector...), in revision order.
	changes []refChange
	// ownDeletes are the subject's writes that removed an object.
	ownDeletes []refChange
	// seen maps "resource ns/name" to the resourceVersions the subject's
	// handlers saw.
	seen map[string]map[int64]bool
	// watched are the resources the subject listed or watched.
	watched map[string]bool
	// lists is true when the subject's informers LIST (no WatchList): a
	// list at resourceVersion "0" may be served by a lagging replica.
	lists bool
	// revs are the trace positions and revisions of every server write,
	// in order (the revision a moment holds a replica at).
	revs []posRV
	// made are the objects ("resource ns/name") the subject created.
	made map[string]bool
	// repairs maps a subject write (its k) that repairs another actor's
	// change of an object the subject made to what it repairs ("the
	// user's delete of one it made"), and replaced marks those changes
	// (by trace position): see findRepairs.
	repairs  map[int]string
	replaced map[int]bool
}

// posRV is a server write's trace position and revision.
type posRV struct {
	pos int
	rv  int64
}

// rvBefore returns the server's revision just before trace position pos.
func (v *refView) rvBefore(pos int) int64 {
	var rv int64
	for _, w := range v.revs {
		if w.pos >= pos {
			break
		}
		rv = w.rv
	}
	return rv
}

// refWrite is one counted write request of the subject.
type refWrite struct {
	k        int
	at       time.Duration
	pos      int
	verb     string
	resource string
	key      string // ns/name ("" for a create with a generated name)
}

// refReconcile is one reconcile of the subject.
type refReconcile struct {
	key        string
	start, end int // trace positions
	writes     []int
}

// refChange is one server write by another actor.
type refChange struct {
	at        time.Duration
	pos       int
	actor     string
	verb      string
	event     string
	resource  string
	key       string
	uid       string
	rv        int64
	step      int // the plan step that made it, -1 if none
	recreated bool
	child     bool // an object the subject created earlier
}

func objKey(resource, ns, name string) string { return resource + " " + ns + "/" + name }

// readReference reads a reference trace.
func readReference(tr *sim.Trace) *refView {
	v := &refView{subject: tr.Plan.Subject, seen: map[string]map[int64]bool{}, watched: map[string]bool{}, made: map[string]bool{}}
	curStep, stepActor, stepAt := -1, "", time.Duration(-1)
	uids := map[string]string{}
	open := map[string]int{} // reconcile key -> index in v.reconciles
	for _, r := range tr.Records {
		switch r.Kind {
		case sim.RecStep:
			curStep, stepActor, stepAt = r.Step, r.Actor, r.At.D()
		case sim.RecReconcile:
			if r.Actor != v.subject {
				continue
			}
			switch r.Op {
			case "start":
				open[r.Key] = len(v.reconciles)
				v.reconciles = append(v.reconciles, refReconcile{key: r.Key, start: r.Pos, end: -1})
			case "end":
				if i, ok := open[r.Key]; ok {
					v.reconciles[i].end = r.Pos
					delete(open, r.Key)
				}
			}
		case sim.RecRequest:
			if r.Actor != v.subject {
				continue
			}
			if r.Verb == "list" {
				v.lists = true
			}
			if r.Verb == "list" || r.Verb == "watch" {
				v.watched[r.Resource] = true
			}
			if sim.IsCountedWrite(true, r.Verb, r.Resource) {
				w := refWrite{k: len(v.writes) + 1, at: r.At.D(), pos: r.Pos, verb: r.Verb, resource: r.Resource}
				if r.Name != "" {
					w.key = r.Namespace + "/" + r.Name
				}
				v.writes = append(v.writes, w)
				// The write belongs to the subject's latest reconcile
				// still open (with one worker, the only one).
				best := -1
				for _, i := range open {
					if best < 0 || v.reconciles[i].start > v.reconciles[best].start {
						best = i
					}
				}
				if best >= 0 {
					v.reconciles[best].writes = append(v.reconciles[best].writes, w.k)
				}
			}
		case sim.RecHandler:
			if r.Actor != v.subject {
				continue
			}
			k := objKey(r.Resource, r.Namespace, r.Name)
			if v.seen[k] == nil {
				v.seen[k] = map[int64]bool{}
			}
			v.seen[k][r.RV] = true
		case sim.RecWrite:
			v.revs = append(v.revs, posRV{r.Pos, r.RV})
			k := objKey(r.Resource, r.Namespace, r.Name)
			recreated := r.Verb == "create" && uids[k] != "" && uids[k] != r.UID
			if r.UID != "" {
				uids[k] = r.UID
			}
			if r.Actor == v.subject {
				if r.Verb == "create" {
					v.made[k] = true
				}
				if r.EventType == "DELETED" {
					// The subject's own deletes: a delete it learns only
					// from a relist is a tombstone (unobservedState).
					v.ownDeletes = append(v.ownDeletes, refChange{at: r.At.D(), pos: r.Pos, actor: r.Actor, verb: r.Verb, event: r.EventType,
						resource: r.Resource, key: r.Namespace + "/" + r.Name, uid: r.UID, rv: r.RV, step: -1})
				}
				continue
			}
			c := refChange{at: r.At.D(), pos: r.Pos, actor: r.Actor, verb: r.Verb, event: r.EventType, resource: r.Resource,
				key: r.Namespace + "/" + r.Name, uid: r.UID, rv: r.RV, step: -1, recreated: recreated, child: v.made[k]}
			if r.Actor == stepActor && r.At.D() == stepAt {
				c.step = curStep
			}
			v.changes = append(v.changes, c)
		}
	}
	v.findRepairs()
	return v
}

// findRepairs marks the subject's repairs in the reference: a plan step of
// another actor (the user, a competitor; not the garbage collector, whose
// deletes follow an owner's) deletes or changes an object the subject
// made, and the subject's reaction to that step (its writes before the
// next step's change) creates an object of the same resource after a
// delete (the child made again, or a replacement), or writes the changed
// object again. A controller's repair of what someone else did to its
// children is where it must notice another actor's change, the moment a
// hidden delete, an unseen own write or a failed write meets (the
// tombstone a relist brings instead of a delete, the status its retry
// clears): HuntOrder runs plans aimed at one first.
func (v *refView) findRepairs() {
	v.repairs, v.replaced = map[int]string{}, map[int]bool{}
	var steps []refChange // the first change of each user step, in order
	for _, c := range v.changes {
		if c.step >= 0 && c.actor != "setup" && (len(steps) == 0 || steps[len(steps)-1].step != c.step) {
			steps = append(steps, c)
		}
	}
	for _, c := range v.changes {
		if c.step < 0 || c.actor == "setup" || c.actor == "gc" || !c.child {
			continue
		}
		deleted := c.verb == "delete"
		if !deleted && c.verb != "update" && c.verb != "patch" {
			continue
		}
		// The window of c's step: until the next step's first change.
		end := int(^uint(0) >> 1)
		for _, s := range steps {
			if s.pos > c.pos && s.step != c.step {
				end = s.pos
				break
			}
		}
		for _, w := range v.writes {
			if w.pos <= c.pos || w.pos >= end || w.resource != c.resource {
				continue
			}
			what := fmt.Sprintf("repairs the %s's change of one it made", roleOf(c.actor, v))
			switch {
			case deleted && w.verb == "create":
				what = fmt.Sprintf("repairs the %s's delete of one it made", roleOf(c.actor, v))
			case deleted || w.key != c.key || strings.HasPrefix(w.verb, "delete"):
				continue
			}
			if _, ok := v.repairs[w.k]; !ok {
				v.repairs[w.k] = what
			}
			v.replaced[c.pos] = true
		}
	}
}

// TargetedPlans generates the targeted plans of base, a plan whose user
// actions drive the subject, from ref, the trace of its reference run
// (ReferencePlan(base) run without faults). It returns the plans, in class
// order, and the perturbations it pruned, each with why it cannot change
// what the controller sees. Each plan is base plus one perturbation; its
// name is base's with the class and the place appended.
func TargetedPlans(base *sim.Plan, ref *sim.Trace, opt TargetedOptions) ([]Targeted, []Pruned) {
	if opt.StaleFor <= 0 {
		opt.StaleFor = 3 * time.Second
	}
	if opt.RestartAfter <= 0 {
		opt.RestartAfter = time.Second
	}
	v := readReference(ref)
	var out []Targeted
	var pruned []Pruned
	s, p := staleState(base, v, opt)
	out, pruned = append(out, s...), append(pruned, p...)
	s, p = unobservedState(base, v, opt)
	out, pruned = append(out, s...), append(pruned, p...)
	s, p = intermediateState(base, v, opt)
	out, pruned = append(out, s...), append(pruned, p...)
	s, p = requestFaults(base, v)
	out, pruned = append(out, busiestFirst(s, v)...), append(pruned, p...)
	s, p = interleavedWriter(base, v)
	out, pruned = append(out, busiestFirst(s, v)...), append(pruned, p...)
	s, p = ownWrites(base, v)
	out, pruned = append(out, busiestFirst(s, v)...), append(pruned, p...)
	return out, pruned
}

// busiestFirst orders plans aimed at one verb and resource of the
// controller's writes (Target "VERB RESOURCE") or at one resource (Target
// "RESOURCE") by how many writes of it the controller made in the
// reference, most first (stably): what a controller writes most is its
// main loop (a ReplicaSet's Pod creates), where a fault is likeliest to
// meet a decision; plans whose target is qualified (the write its kind
// prefers) go before both. Other plans keep their place.
//
// A plan aimed at a resource (an informer's slow first sync) ranks by the
// controller's creates of that resource first: an informer that shows
// nothing yet misleads a controller that decides what to create by what
// it sees (its children: a Pod cache still empty, Pods created again),
// not one whose own objects it only updates. A write applied and
// answered 504 (its outcome unknown) ranks its creates first: a create
// made again is a second object (a duplicate child), an update made again
// the same update or a 409. A create of a generated name answered 504
// (Targeted.Duplicates) goes before every other plan, then repairs
// (Targeted.Repair).
func busiestFirst(ts []Targeted, v *refView) []Targeted {
	count, creates := map[string]int{}, map[string]int{}
	for _, w := range v.writes {
		count[w.verb+" "+w.resource]++
		count[w.resource]++
		if w.verb == "create" {
			creates[w.resource]++
		}
	}
	// A target with a qualifier ("create configmaps (its reconcile wrote
	// no status)") is the moment its kind aims at: before the others.
	key := func(t Targeted) (string, bool) { k, _, q := strings.Cut(t.Target, " ("); return k, q }
	flag := func(a, b bool) int {
		switch {
		case a == b:
			return 0
		case a:
			return -1
		}
		return 1
	}
	slices.SortStableFunc(ts, func(a, b Targeted) int {
		ka, qa := key(a)
		kb, qb := key(b)
		if c := flag(a.Duplicates, b.Duplicates); c != 0 {
			return c
		}
		if c := flag(a.Repair, b.Repair); c != 0 {
			return c
		}
		if c := flag(qa, qb); c != 0 {
			return c
		}
		unknown := func(t Targeted, k string) bool {
			return (t.Kind == KindWriteTimesOut || t.Kind == KindTimeoutUnseen) && strings.HasPrefix(k, "create ")
		}
		if c := flag(unknown(a, ka), unknown(b, kb)); c != 0 {
			return c
		}
		if c := creates[kb] - creates[ka]; c != 0 {
			return c
		}
		return count[kb] - count[ka]
	})
	return ts
}

// generated is the qualifier of a create of a name the server generates
// (its request named none: metadata.generateName), "" for other writes.
func generated(w refWrite) string {
	if w.verb != "create" || w.key != "" {
		return ""
	}
	return "a name the server generates: made again, a second object"
}

// qualify appends qualifiers to a Target: "create configmaps (repairs the
// user's delete of one it made; its reconcile wrote no status)".
func qualify(target string, qualifiers ...string) string {
	var qs []string
	for _, q := range qualifiers {
		if q != "" {
			qs = append(qs, q)
		}
	}
	if len(qs) == 0 {
		return target
	}
	return target + " (" + strings.Join(qs, "; ") + ")"
}

// withSteps returns base with extra steps appended and its name suffixed.
func withSteps(base *sim.Plan, suffix string, extra ...sim.Step) sim.Plan {
	p := *base.Clone()
	p.Steps = append(slices.Clone(p.Steps), extra...)
	// Steps play by At, ties in list order: keep base's order, and put
	// the extra steps at their times (stable sort).
	sort.SliceStable(p.Steps, func(i, j int) bool { return p.Steps[i].At < p.Steps[j].At })
	name := strings.TrimSuffix(base.Name, "-reference")
	if name == "" {
		name = "plan"
	}
	p.Name = name + "-" + suffix
	return p
}

// renumber maps base step indexes to their indexes after withSteps added
// steps (an AsOf "step:N" must name the step in the new plan).
func renumber(p *sim.Plan, base *sim.Plan, i int) int {
	if i < 0 || i >= len(base.Steps) {
		return i
	}
	want := base.Steps[i]
	// The n-th occurrence of an identical step keeps its rank.
	rank := 0
	for j := range i {
		if stepsEqual(base.Steps[j], want) {
			rank++
		}
	}
	for j, s := range p.Steps {
		if stepsEqual(s, want) {
			if rank == 0 {
				return j
			}
			rank--
		}
	}
	return i
}

func stepsEqual(a, b sim.Step) bool {
	return a.At == b.At && a.Actor == b.Actor && a.Op == b.Op && a.Resource == b.Resource && a.Namespace == b.Namespace &&
		a.Name == b.Name && string(a.Object) == string(b.Object) && string(a.Patch) == string(b.Patch)
}

// staleState: for each moment just before a delete, a deletionTimestamp, a
// spec change or a recreate by the user (or a delete by the subject), and
// each later point where the controller has acted (right after its first
// write after the moment; and once its reaction to each later user step
// has settled), a restart at that point onto a replica held at the
// moment: the restarted controller sees the moment's state next to what
// it wrote since (Sieve pairs a staleness point with a later restart
// point: a deleted predecessor's deletionTimestamp next to the children of
// its successor).
func staleState(base *sim.Plan, v *refView, opt TargetedOptions) ([]Targeted, []Pruned) {
	type moment struct {
		asOf, what string
		at         time.Duration
		pos        int
		resource   string
		kind       string // what happens at the moment, for Targeted.Target
	}
	var ms []moment
	for _, c := range v.changes {
		if c.step < 0 || c.actor == "setup" {
			continue
		}
		what, kind := "", ""
		switch {
		case c.verb == "delete" && c.event == "MODIFIED":
			what, kind = "the deletionTimestamp of "+c.key, "deletionTimestamp"
		case c.verb == "delete":
			what, kind = "the delete of "+c.key, "delete"
		case c.recreated:
			what, kind = "the recreate of "+c.key, "recreate"
		case c.verb == "update" || c.verb == "patch":
			what, kind = "the change of "+c.key, "change"
		default:
			continue
		}
		m := moment{asOf: sim.FormatMoment(sim.MomentStep, c.step), what: what + " (" + c.resource + ", step " + fmt.Sprint(c.step) + ")", at: c.at, pos: c.pos, resource: c.resource, kind: kind + " by " + c.actor}
		if len(ms) > 0 && ms[len(ms)-1].asOf == m.asOf {
			continue // one moment per step
		}
		ms = append(ms, m)
	}
	for _, w := range v.writes {
		if w.verb == "delete" {
			ms = append(ms, moment{asOf: sim.FormatMoment(sim.MomentWrite, w.k), what: fmt.Sprintf("the controller's delete of %s (%s, its write #%d)", w.key, w.resource, w.k), at: w.at, pos: w.pos, resource: w.resource, kind: "delete by the controller"})
		}
	}
	// settled[i] is where the controller's reaction to the i-th user step
	// change has settled: its last write after that change and before the
	// next one.
	type point struct {
		pos  int
		at   time.Duration
		what string
		kind string // "first write after" or "settled after CHANGE", for Targeted.Target
	}
	var settled []point
	var stepChanges []refChange
	for _, c := range v.changes {
		if c.step >= 0 && c.actor != "setup" && (len(stepChanges) == 0 || stepChanges[len(stepChanges)-1].step != c.step) {
			stepChanges = append(stepChanges, c)
		}
	}
	for i, c := range stepChanges {
		next := int(^uint(0) >> 1)
		if i+1 < len(stepChanges) {
			next = stepChanges[i+1].pos
		}
		var last *refWrite
		for j := range v.writes {
			if v.writes[j].pos > c.pos && v.writes[j].pos < next {
				last = &v.writes[j]
			}
		}
		if last != nil {
			settled = append(settled, point{pos: last.pos, at: last.at, what: fmt.Sprintf("its reaction to step %d (%s %s) settled", c.step, c.verb, c.key),
				kind: "settled after a " + c.verb + " of " + c.resource})
		}
	}
	var out []Targeted
	var pruned []Pruned
	same := map[string]string{} // held revision and restart time -> the plan that has them
	for _, m := range ms {
		desc := "restart onto a replica held just before " + m.what
		if !v.lists {
			pruned = append(pruned, Pruned{ClassStale, desc, "the subject's informers sync with a WatchList at resourceVersion \"\" (consistent, client-go's default since v0.35): a restart cannot list from a lagging replica; to test an older client, run with WatchList off (KUBE_FEATURE_WatchListClient=false)"})
			continue
		}
		if !v.watched[m.resource] {
			pruned = append(pruned, Pruned{ClassStale, desc, "the subject neither lists nor watches " + m.resource})
			continue
		}
		// Restart points: once the controller has acted on the change
		// (right after its first write after the moment), then each time
		// its reaction to a later user step has settled.
		var points []point
		for i := range v.writes {
			if v.writes[i].pos > m.pos {
				points = append(points, point{pos: v.writes[i].pos, at: v.writes[i].at, what: fmt.Sprintf("its first write after it (#%d)", v.writes[i].k), kind: "at its first write after it"})
				break
			}
		}
		if len(points) == 0 {
			pruned = append(pruned, Pruned{ClassStale, desc, "the controller writes nothing after it: no action to take from a stale view"})
			continue
		}
		for _, sp := range settled {
			if sp.pos > points[0].pos && sp.at > points[len(points)-1].at {
				points = append(points, sp)
			}
		}
		held := v.rvBefore(m.pos)
		for _, pt := range points {
			t := sim.Duration(pt.at + time.Millisecond)
			pdesc := fmt.Sprintf("%s, after %s, at %s", desc, pt.what, t)
			key := fmt.Sprintf("%d %s", held, t)
			if first, dup := same[key]; dup {
				pruned = append(pruned, Pruned{ClassStale, pdesc, fmt.Sprintf("the same held state (revision %d in the reference) and restart time as %q", held, first)})
				continue
			}
			same[key] = pdesc
			suffix := fmt.Sprintf("stale-%s", strings.ReplaceAll(m.asOf, ":", ""))
			if len(points) > 1 && pt != points[0] {
				suffix += fmt.Sprintf("-at%s", t)
			}
			p := withSteps(base, suffix,
				sim.Step{At: t, Actor: "controller", Op: "crash"},
				sim.Step{At: t, Actor: sim.ActorFaults, Op: "stale-replica", AsOf: m.asOf, For: sim.Duration(opt.StaleFor), Target: v.subject},
				sim.Step{At: t, Actor: "controller", Op: "restart"},
			)
			if kind, n, _ := sim.ParseMoment(m.asOf); kind == sim.MomentStep {
				n2 := renumber(&p, base, n)
				for i := range p.Steps {
					if p.Steps[i].Op == "stale-replica" {
						p.Steps[i].AsOf = sim.FormatMoment(sim.MomentStep, n2)
					}
				}
			}
			out = append(out, Targeted{Class: ClassStale, Perturbation: pdesc, Plan: p, Kind: KindStaleRestart,
				Target: fmt.Sprintf("%s %s; restart %s", m.resource, m.kind, pt.kind)})
		}
	}
	return out, pruned
}

// unobservedState: the controller never observes a state its logic may
// need to see:
//   - for each state of an object that the controller saw in the
//     reference and that another actor changed again, its watch of that
//     resource is held from just before that state until just after the
//     next, then expires: the relist shows only the next state;
//   - for each delete of an object the controller saw (its own deletes
//     included), its watch is held across the delete, then expires: the
//     delete reaches it from the relist, as a tombstone
//     (cache.DeletedFinalStateUnknown), never as a watch event;
//   - for each user change of an object the controller had seen, it is
//     down across the change (a crash just before, a restart just after
//     the burst of changes it would have seen one by one): the new process
//     meets the object already changed, and never sees it change.
func unobservedState(base *sim.Plan, v *refView, opt TargetedOptions) ([]Targeted, []Pruned) {
	var out []Targeted
	var pruned []Pruned
	byKey := map[string][]refChange{}
	var keys []string
	for _, c := range v.changes {
		k := objKey(c.resource, "", c.key)
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], c)
	}
	covered := map[string]bool{}
	hold := func(kind, target, suffix, desc, resource string, from, to time.Duration) {
		win := fmt.Sprintf("%s %d %d", resource, from, to)
		if covered[win] {
			return // two states hidden by the same hold and expiry are one plan
		}
		covered[win] = true
		res := resourceArg(resource)
		p := withSteps(base, suffix,
			sim.Step{At: sim.Duration(from), Actor: sim.ActorFaults, Op: "hold", Resource: res, Target: v.subject},
			sim.Step{At: sim.Duration(to), Actor: sim.ActorFaults, Op: "expire", Resource: res, Target: v.subject},
			sim.Step{At: sim.Duration(to), Actor: sim.ActorFaults, Op: "release", Resource: res, Target: v.subject},
		)
		out = append(out, Targeted{Class: ClassUnobserved, Perturbation: fmt.Sprintf("%s: watch of %s held %s..%s, then 410 and relist", desc, res, from, to), Plan: p,
			Kind: kind, Target: target})
	}
	// A recreate behind a relist: the predecessor's removal (its DELETED
	// event, whoever wrote it: the user's delete, or the controller's own
	// finalizer removal after the user's delete) and the successor's
	// create under the same name, hidden by one hold: the informer sees
	// one object change its UID, and no delete.
	for _, c := range v.changes {
		if !c.recreated {
			continue
		}
		var gone *refChange
		for _, d := range append(slices.Clone(v.changes), v.ownDeletes...) {
			if d.event == "DELETED" && d.resource == c.resource && d.key == c.key && d.pos < c.pos && (gone == nil || d.pos > gone.pos) {
				gone = &d
			}
		}
		if gone == nil {
			continue
		}
		desc := fmt.Sprintf("hide the removal of %s %s (by %s) and its create again under the same name (by %s)", c.resource, c.key, gone.actor, c.actor)
		if !v.watched[c.resource] {
			pruned = append(pruned, Pruned{ClassUnobserved, desc, "the subject does not watch " + c.resource})
			continue
		}
		if len(v.seen[objKey(c.resource, nsOf(c.key), nameOf(c.key))]) == 0 {
			pruned = append(pruned, Pruned{ClassUnobserved, desc, "the subject's handlers never saw the predecessor: its recreate changes nothing it sees"})
			continue
		}
		hold(KindRecreateHidden, fmt.Sprintf("%s removed by %s and created again under the same name by %s", c.resource, roleOf(gone.actor, v), roleOf(c.actor, v)),
			fmt.Sprintf("unobserved-recreate-%s-rv%d", nameOf(c.key), c.rv), desc, c.resource, gone.at-time.Millisecond, c.at+time.Millisecond)
	}
	for _, k := range keys {
		cs := byKey[k]
		for i := 0; i+1 < len(cs); i++ {
			a, b := cs[i], cs[i+1]
			if a.actor == "setup" || a.at == 0 {
				continue
			}
			state := fmt.Sprintf("%s %s at rv %d (%s %s by %s)", a.resource, a.key, a.rv, a.verb, strings.ToLower(a.event), a.actor)
			desc := "hide " + state + " until the next change (" + b.verb + " " + strings.ToLower(b.event) + " by " + b.actor + ")"
			if !v.watched[a.resource] {
				pruned = append(pruned, Pruned{ClassUnobserved, desc, "the subject does not watch " + a.resource})
				continue
			}
			if !v.seen[objKey(a.resource, nsOf(a.key), nameOf(a.key))][a.rv] {
				pruned = append(pruned, Pruned{ClassUnobserved, desc, "the subject's handlers never saw that state in the reference: hiding it changes nothing it sees"})
				continue
			}
			hold(KindHiddenState, fmt.Sprintf("%s %s %s by %s, then %s %s by %s", a.resource, a.verb, strings.ToLower(a.event), roleOf(a.actor, v), b.verb, strings.ToLower(b.event), roleOf(b.actor, v)),
				fmt.Sprintf("unobserved-%s-rv%d", nameOf(a.key), a.rv), desc, a.resource, a.at-time.Millisecond, b.at+time.Millisecond)
		}
	}
	// Deletes learned from a relist only.
	deletes := slices.Clone(v.ownDeletes)
	for _, c := range v.changes {
		if c.event == "DELETED" {
			deletes = append(deletes, c)
		}
	}
	sort.SliceStable(deletes, func(i, j int) bool { return deletes[i].pos < deletes[j].pos })
	// One plan per resource, deleter and whether the controller replaced
	// the object (findRepairs): the handler's tombstone path is the same
	// for every object of it. The last such delete is kept, as
	// intermediate-state keeps its last crash point: after an earlier
	// one, the rest of the workload (a later event of the owner) often
	// brings the owner back into the queue, and no end state shows the
	// dropped delete.
	tombKey := func(d refChange) string {
		tk := d.resource + " deleted by " + roleOf(d.actor, v)
		if v.replaced[d.pos] {
			tk += " (the controller replaced it)"
		}
		return tk
	}
	lastTomb := map[string]int{}
	for _, d := range deletes {
		if v.watched[d.resource] && len(v.seen[objKey(d.resource, nsOf(d.key), nameOf(d.key))]) > 0 {
			lastTomb[tombKey(d)] = d.pos
		}
	}
	for _, d := range deletes {
		desc := fmt.Sprintf("hide the delete of %s %s (by %s) behind a relist (a tombstone)", d.resource, d.key, d.actor)
		if !v.watched[d.resource] {
			pruned = append(pruned, Pruned{ClassUnobserved, desc, "the subject does not watch " + d.resource})
			continue
		}
		if len(v.seen[objKey(d.resource, nsOf(d.key), nameOf(d.key))]) == 0 {
			pruned = append(pruned, Pruned{ClassUnobserved, desc, "the subject's handlers never saw the object: its delete changes nothing it sees"})
			continue
		}
		tk := tombKey(d)
		if lastTomb[tk] != d.pos {
			pruned = append(pruned, Pruned{ClassUnobserved, desc, "a tombstone of " + tk + " is generated for a later delete (the last is kept)"})
			continue
		}
		n := len(out)
		hold(KindTombstone, tk, fmt.Sprintf("unobserved-tombstone-%s-rv%d", nameOf(d.key), d.rv), desc, d.resource, d.at-time.Millisecond, d.at+time.Millisecond)
		if len(out) > n {
			out[n].Repair = v.replaced[d.pos]
		}
	}
	// The controller down across a change.
	down := map[string]bool{}
	for _, k := range keys {
		cs := byKey[k]
		for i, c := range cs {
			if c.step < 0 || c.actor == "setup" || c.at == 0 || !(c.verb == "update" || c.verb == "patch" || (c.verb == "delete" && c.event == "MODIFIED")) {
				continue
			}
			desc := fmt.Sprintf("the controller down across the change of %s %s (%s by %s, step %d)", c.resource, c.key, c.verb, c.actor, c.step)
			if !v.watched[c.resource] {
				pruned = append(pruned, Pruned{ClassUnobserved, desc, "the subject does not watch " + c.resource})
				continue
			}
			sawBefore := false
			for rv := range v.seen[objKey(c.resource, nsOf(c.key), nameOf(c.key))] {
				sawBefore = sawBefore || rv < c.rv
			}
			if !sawBefore {
				pruned = append(pruned, Pruned{ClassUnobserved, desc, "the subject's handlers never saw the object before the change: a new process meets it as the old one would"})
				continue
			}
			// The burst: the changes of the object that follow with no
			// write of the controller between them.
			end := c
			for _, n := range cs[i+1:] {
				if slices.ContainsFunc(v.writes, func(w refWrite) bool { return w.pos > end.pos && w.pos < n.pos }) {
					break
				}
				end = n
			}
			from, to := c.at-time.Millisecond, end.at+time.Millisecond
			if w := fmt.Sprintf("%d %d", from, to); down[w] {
				continue
			} else {
				down[w] = true
			}
			p := withSteps(base, fmt.Sprintf("unobserved-down-%s-rv%d", nameOf(c.key), c.rv),
				sim.Step{At: sim.Duration(from), Actor: "controller", Op: "crash"},
				sim.Step{At: sim.Duration(to), Actor: "controller", Op: "restart"},
			)
			out = append(out, Targeted{Class: ClassUnobserved, Perturbation: fmt.Sprintf("%s: crash at %s, restart at %s", desc, from, to), Plan: p,
				Kind: KindDownAcross, Target: fmt.Sprintf("%s %s by %s", c.resource, c.verb, roleOf(c.actor, v))})
		}
	}
	return out, pruned
}

// intermediateState: for each reconcile of the reference with more than
// one write, a crash right after each write but its last, and a restart.
// Crash points whose writes so far and next write have the same verbs and
// resources are one: the last is kept (the one whose half-done state the
// rest of the workload is least likely to replace, so an end state can
// show it), the others are pruned.
func intermediateState(base *sim.Plan, v *refView, opt TargetedOptions) ([]Targeted, []Pruned) {
	type cand struct {
		k         int
		desc, sig string
		at        time.Duration
	}
	var cands []cand
	last := map[string]int{}
	for _, rc := range v.reconciles {
		for j := 0; j+1 < len(rc.writes); j++ {
			k := rc.writes[j]
			w, next := v.writes[k-1], v.writes[rc.writes[j+1]-1]
			var sig []string
			for _, kk := range rc.writes[:j+2] {
				sig = append(sig, v.writes[kk-1].verb+" "+v.writes[kk-1].resource)
			}
			c := cand{k: k, at: w.at, sig: strings.Join(sig, ","),
				desc: fmt.Sprintf("crash right after write #%d (%s %s %s) of the reconcile of %s, before its %s %s", k, w.verb, w.resource, w.key, rc.key, next.verb, next.resource)}
			last[c.sig] = k
			cands = append(cands, c)
		}
	}
	var out []Targeted
	var pruned []Pruned
	for _, c := range cands {
		if kept := last[c.sig]; kept != c.k {
			pruned = append(pruned, Pruned{ClassIntermediate, c.desc, fmt.Sprintf("the same writes so far and next as at write #%d (the last such point is kept)", kept)})
			continue
		}
		k := c.k
		restart := sim.Duration(c.at + opt.RestartAfter)
		p := withSteps(base, fmt.Sprintf("intermediate-w%d", k),
			sim.Step{At: 0, Actor: "controller", Op: "crash", AfterWrite: k},
			sim.Step{At: restart, Actor: "controller", Op: "restart"},
		)
		// The crash is armed first thing at 0, before base's steps.
		i := slices.IndexFunc(p.Steps, func(s sim.Step) bool { return s.AfterWrite == k })
		st := p.Steps[i]
		p.Steps = slices.Insert(slices.Delete(p.Steps, i, i+1), 0, st)
		out = append(out, Targeted{Class: ClassIntermediate, Perturbation: fmt.Sprintf("%s; restart at %s", c.desc, restart), Plan: p,
			Kind: KindCrashBetween, Target: c.sig})
	}
	return out, pruned
}

func nsOf(key string) string   { ns, _, _ := strings.Cut(key, "/"); return ns }
func nameOf(key string) string { _, n, _ := strings.Cut(key, "/"); return n }

// resourceArg turns a trace's resource ("pods", "bellerophons.lab.cachelab.dev")
// into a step's resource argument.
func resourceArg(resource string) string { return resource }

// requestFaults: for the last write of each verb and resource of the
// controller in the reference (the last, as intermediateState keeps its
// last crash point), a plan where that write fails (500: nothing applied)
// and one where it is applied and then times out (504: the controller
// cannot tell whether it happened); each armed for the controller's next
// such write after the write before it in the reference (fail-next /
// timeout-next-write with afterWrite).
func requestFaults(base *sim.Plan, v *refView) ([]Targeted, []Pruned) {
	var out []Targeted
	var pruned []Pruned
	last := v.lastWrites(nil)
	for _, w := range v.writes {
		verb, sub, _ := strings.Cut(w.verb, "/")
		what := fmt.Sprintf("the controller's write #%d (%s %s %s)", w.k, w.verb, w.resource, w.key)
		if kept := last[w.verb+" "+w.resource]; kept != w.k {
			pruned = append(pruned, Pruned{ClassRequest, "fail or time out " + what, fmt.Sprintf("the same verb and resource as write #%d (the last is kept)", kept)})
			continue
		}
		if sub != "" {
			// A status write and a write of the object have one verb:
			// the fault would hit whichever comes first.
			what += " (or its next " + verb + " of " + w.resource + ")"
		}
		arm := func(op string, code int) sim.Step {
			return sim.Step{At: 0, Actor: sim.ActorFaults, Op: op, Code: code, Verb: verb, Resource: resourceArg(w.resource), Target: v.subject, AfterWrite: w.k - 1}
		}
		out = append(out,
			Targeted{Class: ClassRequest, Perturbation: "fail " + what + " with 500 (nothing applied)",
				Plan: withSteps(base, fmt.Sprintf("request-fail-w%d", w.k), arm("fail-next", 500)), Kind: KindWriteFails,
				Target: qualify(w.verb+" "+w.resource, v.repairs[w.k]), Repair: v.repairs[w.k] != ""},
			Targeted{Class: ClassRequest, Perturbation: "apply " + what + ", then answer 504 (timeout: outcome unknown to the controller)",
				Plan: withSteps(base, fmt.Sprintf("request-timeout-w%d", w.k), arm("timeout-next-write", 0)), Kind: KindWriteTimesOut,
				Target: qualify(w.verb+" "+w.resource, generated(w), v.repairs[w.k]), Repair: v.repairs[w.k] != "", Duplicates: generated(w) != ""},
		)
	}
	// The reads: each informer's first sync slow (the watch's deliveries,
	// the initial ones included, held for the first 2s). (The watch
	// lagging the controller's own writes: ownWrites.)
	var watched []string
	for r := range v.watched {
		watched = append(watched, r)
	}
	sort.Strings(watched)
	for _, r := range watched {
		res := resourceArg(r)
		out = append(out, Targeted{Class: ClassRequest, Perturbation: fmt.Sprintf("slow first sync: the controller's watch of %s delivers nothing for its first 2s", res),
			Plan: withSteps(base, "request-slowsync-"+strings.Split(r, ".")[0],
				sim.Step{At: 0, Actor: sim.ActorFaults, Op: "hold", Resource: res, Target: v.subject, For: sim.Duration(2 * time.Second)}),
			Kind: KindSlowSync, Target: r})
	}
	// A restart whose first sync of R is slow: once the controller's
	// reaction to the start has settled (its last write before the first
	// user step), so that its caches have something to miss.
	var settledAt time.Duration = -1
	first := time.Duration(1<<62 - 1)
	for _, c := range v.changes {
		if c.step >= 0 && c.actor != "setup" {
			first = c.at
			break
		}
	}
	for _, w := range v.writes {
		if w.at < first {
			settledAt = w.at
		}
	}
	if settledAt >= 0 {
		t := sim.Duration(settledAt + time.Millisecond)
		for _, r := range watched {
			res := resourceArg(r)
			out = append(out, Targeted{Class: ClassRequest, Perturbation: fmt.Sprintf("a restart at %s whose first sync of %s is slow (its watch delivers nothing for 2s)", t, res),
				Plan: withSteps(base, "request-slowresync-"+strings.Split(r, ".")[0],
					sim.Step{At: t, Actor: "controller", Op: "crash"},
					sim.Step{At: t, Actor: sim.ActorFaults, Op: "hold", Resource: res, Target: v.subject, For: sim.Duration(2 * time.Second)},
					sim.Step{At: t, Actor: "controller", Op: "restart"}),
				Kind: KindSlowResync, Target: r})
		}
	}
	return out, pruned
}

// ownWrites: the controller's next reconcile reads its own object from a
// cache that does not show its own last write of it yet (KEP-5647):
//   - the watch of each resource it writes lagging 1s behind its last
//     write of it (its lister shows the older copy meanwhile);
//   - for one write of each verb and resource that is not a status write
//     (the last of a reconcile that wrote no status, else the last), that
//     write fails (500) while the controller's watch of each
//     resource whose status it writes is held for 2s from just before the
//     write: it reports the error in the status (a Degraded condition, a
//     failed phase), its retry succeeds and computes the status that
//     clears it; a controller that compares that status with its cached
//     copy (which predates both of its writes) finds "unchanged" and
//     leaves the error on the server;
//   - for one write of each verb and resource (the last that was the
//     first write of its verb and resource in its reconcile, else the
//     last), that write applied and answered 504 while the controller's
//     watch of its resource is held for 1s from just before it: the
//     controller cannot tell whether it happened, and its cache does not
//     show it either (a create it makes again is a duplicate). The first
//     of a reconcile's writes: nothing else it made and awaits keeps it
//     from acting again (a ReplicaSet's slow-start batch stops at its
//     first error and lowers its expectations for every create it took as
//     failed or skipped: they are met at once, its Pod cache shows none).
func ownWrites(base *sim.Plan, v *refView) ([]Targeted, []Pruned) {
	var out []Targeted
	var pruned []Pruned
	alone := map[int]bool{} // the first write of its verb and resource in its reconcile
	for _, rc := range v.reconciles {
		n := map[string]bool{}
		for _, k := range rc.writes {
			key := v.writes[k-1].verb + " " + v.writes[k-1].resource
			alone[k] = !n[key]
			n[key] = true
		}
	}
	lastOf := v.lastWrites(func(k int) bool { return alone[k] })
	for _, w := range v.writes {
		if lastOf[w.verb+" "+w.resource] != w.k || !v.watched[w.resource] {
			continue // one per verb and resource; an unwatched resource: nothing cached to lag
		}
		first := ""
		if alone[w.k] {
			first = "the first of its reconcile"
		}
		target := qualify(w.verb+" "+w.resource, generated(w), v.repairs[w.k], first)
		verb, sub, _ := strings.Cut(w.verb, "/")
		what := fmt.Sprintf("the controller's write #%d (%s %s %s)", w.k, w.verb, w.resource, w.key)
		if sub != "" {
			what += " (or its next " + verb + " of " + w.resource + ")"
		}
		from := max(w.at-time.Millisecond, 0)
		res := resourceArg(w.resource)
		out = append(out, Targeted{Class: ClassOwnWrites, Kind: KindTimeoutUnseen, Target: target, Repair: v.repairs[w.k] != "", Duplicates: generated(w) != "",
			Perturbation: fmt.Sprintf("apply %s, then answer 504; the controller's watch of %s held %s..%s: it can neither tell nor see that its write happened",
				what, res, sim.Duration(from), sim.Duration(from+time.Second)),
			Plan: withSteps(base, fmt.Sprintf("ownwrites-timeout-w%d", w.k),
				sim.Step{At: 0, Actor: sim.ActorFaults, Op: "timeout-next-write", Verb: verb, Resource: res, Target: v.subject, AfterWrite: w.k - 1},
				sim.Step{At: sim.Duration(from), Actor: sim.ActorFaults, Op: "hold", Resource: res, Target: v.subject, For: sim.Duration(time.Second)})})
	}
	lagged := map[string]bool{}
	for i := len(v.writes) - 1; i >= 0; i-- {
		w := v.writes[i]
		if lagged[w.resource] || !v.watched[w.resource] {
			continue
		}
		lagged[w.resource] = true
		res := resourceArg(w.resource)
		from := max(w.at-time.Millisecond, 0)
		target := qualify(w.verb+" "+w.resource, v.repairs[w.k])
		wakers := v.wakers(w)
		if len(wakers) == 0 {
			out = append(out, Targeted{Class: ClassOwnWrites, Perturbation: fmt.Sprintf("the controller's watch of %s lags its own write #%d (%s %s) by 1s: held %s..%s", res, w.k, w.verb, w.key, from, from+time.Second),
				Plan: withSteps(base, fmt.Sprintf("ownwrites-lag-w%d", w.k),
					sim.Step{At: sim.Duration(from), Actor: sim.ActorFaults, Op: "hold", Resource: res, Target: v.subject, For: sim.Duration(time.Second)}),
				Kind: KindWatchLagsOwnWrite, Target: target, Repair: v.repairs[w.k] != ""})
			continue
		}
		// The lagging watch's own events wake the key only once they
		// arrive, when the cache shows the write: what makes a reconcile
		// read the stale copy is another wake-up of the same key inside
		// the lag. Without a user action, a relist of the watch of the
		// resource whose object names the key (the primary's) hands that
		// object to the handlers again (client-go's Replace: an update
		// for each object). Its watch expires just after the write (not
		// before: the change that woke the write's reconcile would wait
		// for the relist too); the reflector lists again after its
		// backoff (client-go: 0.8-1.6 s for a first error), inside the
		// 2 s hold.
		after := w.at + time.Millisecond
		steps := []sim.Step{{At: sim.Duration(from), Actor: sim.ActorFaults, Op: "hold", Resource: res, Target: v.subject, For: sim.Duration(lagWoken)}}
		for _, r := range wakers {
			steps = append(steps, sim.Step{At: sim.Duration(after), Actor: sim.ActorFaults, Op: "expire", Resource: resourceArg(r), Target: v.subject})
		}
		out = append(out, Targeted{Class: ClassOwnWrites,
			Perturbation: fmt.Sprintf("the controller's watch of %s lags its own write #%d (%s %s) by %s: held %s..%s; its watch of %s expires at %s, and the relist wakes %s again inside the lag",
				res, w.k, w.verb, w.key, lagWoken, from, from+lagWoken, strings.Join(wakers, ", "), sim.Duration(after), v.keyOf(w)),
			Plan: withSteps(base, fmt.Sprintf("ownwrites-lag-w%d", w.k), steps...),
			Kind: KindWatchLagsOwnWrite, Target: target, Repair: v.repairs[w.k] != ""})
	}
	var reports []string // resources whose status the controller writes
	for _, w := range v.writes {
		if _, sub, _ := strings.Cut(w.verb, "/"); sub == "status" && !slices.Contains(reports, w.resource) {
			reports = append(reports, w.resource)
		}
	}
	sort.Strings(reports)
	// The write to fail, per verb and resource: the last one made by a
	// reconcile that wrote no status (its status was already what it
	// computed: after the error and the retry, it computes that status
	// again, equal to its cached copy that predates both of its writes);
	// without one, the last one.
	quiet := map[int]bool{}
	for _, rc := range v.reconciles {
		if !slices.ContainsFunc(rc.writes, func(k int) bool { return strings.HasSuffix(v.writes[k-1].verb, "/status") }) {
			for _, k := range rc.writes {
				quiet[k] = true
			}
		}
	}
	last := v.lastWrites(func(k int) bool { return quiet[k] })
	for _, w := range v.writes {
		verb, sub, _ := strings.Cut(w.verb, "/")
		what := fmt.Sprintf("the controller's write #%d (%s %s %s)", w.k, w.verb, w.resource, w.key)
		desc := "fail " + what + " with 500 while its own status writes are unseen"
		switch {
		case sub == "status":
			continue // the report itself fails: request-fault's plan
		case last[w.verb+" "+w.resource] != w.k:
			pruned = append(pruned, Pruned{ClassOwnWrites, desc, fmt.Sprintf("the same verb and resource as write #%d (kept: the last of a reconcile that wrote no status, else the last)", last[w.verb+" "+w.resource])})
			continue
		case len(reports) == 0:
			pruned = append(pruned, Pruned{ClassOwnWrites, desc, "the controller writes no status: no report of its own to read back"})
			continue
		}
		var watched []string
		for _, r := range reports {
			if v.watched[r] {
				watched = append(watched, r)
			}
		}
		if len(watched) == 0 {
			pruned = append(pruned, Pruned{ClassOwnWrites, desc, "the subject does not watch " + strings.Join(reports, ", ") + ": it reads its status from the server"})
			continue
		}
		if sub != "" {
			what += " (or its next " + verb + " of " + w.resource + ")"
		}
		from := max(w.at-time.Millisecond, 0)
		steps := []sim.Step{{At: 0, Actor: sim.ActorFaults, Op: "fail-next", Code: 500, Verb: verb, Resource: resourceArg(w.resource), Target: v.subject, AfterWrite: w.k - 1}}
		for _, r := range watched {
			steps = append(steps, sim.Step{At: sim.Duration(from), Actor: sim.ActorFaults, Op: "hold", Resource: resourceArg(r), Target: v.subject, For: sim.Duration(2 * time.Second)})
		}
		noStatus := ""
		if quiet[w.k] {
			// Another kind of moment than the same write in a reconcile
			// that changed the status: HuntOrder runs it in the first tier.
			noStatus = "its reconcile wrote no status"
		}
		target := qualify(w.verb+" "+w.resource, v.repairs[w.k], noStatus)
		out = append(out, Targeted{Class: ClassOwnWrites, Kind: KindErrorUnseen, Target: target, Repair: v.repairs[w.k] != "",
			Perturbation: fmt.Sprintf("fail %s with 500 (nothing applied); the controller's watch of %s held %s..%s: the error it reports and the status that clears it are its own writes it cannot read back",
				what, strings.Join(watched, ", "), sim.Duration(from), sim.Duration(from+2*time.Second)),
			Plan: withSteps(base, fmt.Sprintf("ownwrites-fail-w%d", w.k), steps...)})
	}
	return out, pruned
}

// lagWoken is how long a lag plan with a wake-up holds the lagging watch:
// longer than client-go's reflector waits before it lists again after a
// watch's first 410 (0.8 s, jittered up to 1.6 s).
const lagWoken = 2 * time.Second

// keyOf returns the key of the reconcile that made write w, "" if none.
func (v *refView) keyOf(w refWrite) string {
	for _, rc := range v.reconciles {
		if slices.Contains(rc.writes, w.k) {
			return rc.key
		}
	}
	return ""
}

// wakers returns the resources, other than w's, whose watch wakes the
// reconcile that made write w in the reference: the subject's handlers saw
// an object of that resource named by the reconcile's key (a
// controller-runtime For, a client-go controller keyed by its primary's
// namespace/name), sorted. A resource the subject does not watch, or w's
// own (its relist would show the write), is none.
func (v *refView) wakers(w refWrite) []string {
	key := v.keyOf(w)
	if key == "" {
		return nil
	}
	if !strings.Contains(key, "/") {
		key = "/" + key
	}
	var out []string
	for r := range v.watched {
		if r != w.resource && v.seen[r+" "+key] != nil {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// lastWrites returns, for each verb and resource ("update configmaps"), the
// number k of the reference's last controller write of it; when prefer
// holds for some of them, the last of those instead.
func (v *refView) lastWrites(prefer func(k int) bool) map[string]int {
	last, preferred := map[string]int{}, map[string]int{}
	for _, w := range v.writes {
		key := w.verb + " " + w.resource
		last[key] = w.k
		if prefer != nil && prefer(w.k) {
			preferred[key] = w.k
		}
	}
	maps.Copy(last, preferred)
	return last
}
