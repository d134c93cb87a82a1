package invariants

import (
	"time"

	"github.com/cachelab/cachelab/sim"
)

// The invariants' names, as they appear in Verdicts, scenario files and
// `cachelab explain`.
const (
	NameEventualConvergence  = "eventual-convergence"
	NameStableReconciliation = "stable-reconciliation"
	NamePerObjectOrder       = "per-object-order"
	NameDeleteRecreate       = "delete-recreate"
	NameNoLostDeletes        = "no-lost-deletes"
	NameNoDuplicateChildren  = "no-duplicate-children"
	NameNoLostUpdates        = "no-lost-updates"
	NameFinalizers           = "finalizers"
	NameReadYourWrites       = "read-your-writes"
	// NameNoStaleHarm: no delete or overwrite of a live owner's object
	// decided from a view of the owner's predecessor or of its past.
	NameNoStaleHarm = "no-stale-harm"
	// NameRetriedConflicts is a measurement, never a failure: the 409s
	// (Conflict, AlreadyExists) the subject got and how long until a
	// retry resolved each.
	NameRetriedConflicts = "retried-conflicts"
	// NameSyncSoundnessPrefix prefixes the per-signal soundness verdicts:
	// "sync-soundness/informer-synced", ...
	NameSyncSoundnessPrefix = "sync-soundness/"
)

// Options are the checks' parameters. The zero value of a field means its
// default (see DefaultOptions).
type Options struct {
	// Bound is how long, in virtual time, after the last fault and the last
	// write by another actor the subject may take to converge (eventual
	// convergence); deletions and terminations younger than Bound at the
	// end of a run cut short by its deadline are not held against the
	// subject. Default 60s.
	Bound time.Duration
	// ReplicaResource is the child resource whose count must not exceed
	// the parent's spec.replicas (no-duplicate-children). Default "pods".
	ReplicaResource string
	// Stop, when closed, tells a check its judge's limit passed: the
	// checks that take long on large traces (read-your-writes,
	// no-lost-updates, no-stale-harm, no-lost-deletes, finalizers,
	// delete-recreate) look at it as they walk the trace
	// and give up with an Unknown verdict ("judging stopped"). Optional;
	// nil: never stop.
	Stop <-chan struct{}
	// shared is the checks' cache for one trace (see Shared); nil: none.
	shared *shared
}

// DefaultOptions returns the options Check uses.
func DefaultOptions() Options {
	return Options{Bound: 60 * time.Second, ReplicaResource: "pods"}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Bound <= 0 {
		o.Bound = d.Bound
	}
	if o.ReplicaResource == "" {
		o.ReplicaResource = d.ReplicaResource
	}
	return o
}

// Invariant is one named property of a trace.
type Invariant struct {
	// Name is the invariant's name ("per-object-order").
	Name string
	// Summary is one line for `cachelab list`.
	Summary string
	// Contract quotes the client-go or API contract the invariant checks,
	// and says how it is checked, for `cachelab explain`.
	Contract string
	check    func(*sim.Trace, Options) Verdict
}

// Check judges tr with the default options.
func (inv Invariant) Check(tr *sim.Trace) Verdict { return inv.CheckWith(tr, Options{}) }

// CheckWith judges tr with opts. A nil or empty trace is Unknown.
func (inv Invariant) CheckWith(tr *sim.Trace, opts Options) Verdict {
	if tr == nil || len(tr.Records) == 0 {
		v := unknownBecause(inv.Name, "empty trace", "the trace is empty: nothing to judge (run a plan first)")
		v.Measurement = IsMeasurement(inv.Name)
		return v
	}
	if inv.check == nil {
		return unknown(inv.Name, "invariant has no check function")
	}
	v := inv.check(tr, opts.withDefaults())
	v.Invariant = inv.Name
	v.Measurement = IsMeasurement(inv.Name)
	if v.Status == Unknown && !wroteAnObject(tr) {
		// The root cause, the same for every invariant that could not
		// judge: there was nothing to do, so nothing to judge (not a
		// record the trace lacks).
		v.Short = "no object was ever written: the plan creates none, so the subject had nothing to do"
		v.NotApplicable = true
	}
	return v
}

// wroteAnObject reports whether any actor wrote an object (Events aside).
func wroteAnObject(tr *sim.Trace) bool {
	for _, r := range tr.Records {
		if isWrite(r) && !isEventsResource(r.Resource) {
			return true
		}
	}
	return false
}

// All lists every invariant, in the order Check runs them.
func All() []Invariant {
	out := []Invariant{
		{Name: NameEventualConvergence, Summary: "after the last fault and foreign write, every cache equals the server and desired == actual, within a bound", Contract: contractConvergence, check: eventualConvergence},
		{Name: NameStableReconciliation, Summary: "once converged, the subject writes nothing more (Anvil's eventually stable reconciliation)", Contract: contractStable, check: stableReconciliation},
		{Name: NamePerObjectOrder, Summary: "per watch stream and object, delivered RVs strictly increase; a handler never sees an object's RV go down", Contract: contractOrder, check: perObjectOrder},
		{Name: NameDeleteRecreate, Summary: "a handler learns of every UID change of a key; no deletion after the recreation; tombstones carry the right key", Contract: contractDeleteRecreate, check: deleteRecreate},
		{Name: NameNoLostDeletes, Summary: "an object deleted on the server leaves every cache and handler view", Contract: contractLostDeletes, check: noLostDeletes},
		{Name: NameNoDuplicateChildren, Summary: "no create makes the subject's live children exceed the parent's spec.replicas (a Job's spec.parallelism)", Contract: contractChildren, check: noDuplicateChildren},
		{Name: NameNoLostUpdates, Summary: "no subject write reverts another actor's change it never observed", Contract: contractLostUpdates, check: noLostUpdates},
		{Name: NameFinalizers, Summary: "nothing is left terminating on our finalizer or in our external store; no child is created under an owner seen terminating", Contract: contractFinalizers, check: finalizers},
		{Name: NameReadYourWrites, Summary: "no successful write of the subject is decided from a view older than its own earlier write (KEP-5647)", Contract: contractReadYourWrites, check: readYourWrites},
		{Name: NameNoStaleHarm, Summary: "no delete or overwrite of a live owner's object is decided from a view of the owner's predecessor (same name, other UID) or of a past the subject had already seen", Contract: contractStaleHarm, check: noStaleHarm},
		{Name: NameRetriedConflicts, Summary: "measured, not a failure: the subject's 409s (Conflict, AlreadyExists) and how long until a retry resolved each", Contract: contractConflicts, check: retriedConflicts},
	}
	for _, s := range SignalNames() {
		out = append(out, syncInvariant(s))
	}
	return out
}

// SubjectInvariants lists the invariants that judge the subject itself
// (All without the measurements).
func SubjectInvariants() []Invariant {
	var out []Invariant
	for _, inv := range All() {
		if !IsMeasurement(inv.Name) {
			out = append(out, inv)
		}
	}
	return out
}

// Lookup returns the invariant named name.
func Lookup(name string) (Invariant, bool) {
	for _, inv := range All() {
		if inv.Name == name {
			return inv, true
		}
	}
	return Invariant{}, false
}

// Check runs every invariant on tr with the default options. The
// sync-soundness verdicts judge a signal, not the subject: a correct
// subject may record a signal (quiescence, desired == actual) that the lab
// shows to be unsound. SubjectInvariants are the ones a subject is judged by.
func Check(tr *sim.Trace) []Verdict { return CheckWith(tr, Options{}) }

// CheckWith runs every invariant on tr with opts, sharing what one check
// computes that another needs too (Options.Shared).
func CheckWith(tr *sim.Trace, opts Options) []Verdict {
	opts = opts.Shared()
	invs := All()
	out := make([]Verdict, 0, len(invs))
	for _, inv := range invs {
		out = append(out, inv.CheckWith(tr, opts))
	}
	return out
}

// EventualConvergence checks eventual-convergence with the default options.
func EventualConvergence(tr *sim.Trace) Verdict { return mustLookup(NameEventualConvergence).Check(tr) }

// StableReconciliation checks stable-reconciliation with the default options.
func StableReconciliation(tr *sim.Trace) Verdict {
	return mustLookup(NameStableReconciliation).Check(tr)
}

// PerObjectOrder checks per-object-order.
func PerObjectOrder(tr *sim.Trace) Verdict { return mustLookup(NamePerObjectOrder).Check(tr) }

// DeleteRecreate checks delete-recreate.
func DeleteRecreate(tr *sim.Trace) Verdict { return mustLookup(NameDeleteRecreate).Check(tr) }

// NoLostDeletes checks no-lost-deletes with the default options.
func NoLostDeletes(tr *sim.Trace) Verdict { return mustLookup(NameNoLostDeletes).Check(tr) }

// NoDuplicateChildren checks no-duplicate-children with the default options.
func NoDuplicateChildren(tr *sim.Trace) Verdict { return mustLookup(NameNoDuplicateChildren).Check(tr) }

// NoLostUpdates checks no-lost-updates.
func NoLostUpdates(tr *sim.Trace) Verdict { return mustLookup(NameNoLostUpdates).Check(tr) }

// NoStaleHarm checks no-stale-harm.
func NoStaleHarm(tr *sim.Trace) Verdict { return mustLookup(NameNoStaleHarm).Check(tr) }

// RetriedConflicts measures retried-conflicts.
func RetriedConflicts(tr *sim.Trace) Verdict { return mustLookup(NameRetriedConflicts).Check(tr) }

// ReadYourWrites checks read-your-writes.
func ReadYourWrites(tr *sim.Trace) Verdict { return mustLookup(NameReadYourWrites).Check(tr) }

// Finalizers checks finalizers with the default options.
func Finalizers(tr *sim.Trace) Verdict { return mustLookup(NameFinalizers).Check(tr) }

func mustLookup(name string) Invariant {
	inv, _ := Lookup(name)
	return inv
}
