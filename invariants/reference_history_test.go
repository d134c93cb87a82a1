package invariants_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/invariants/tracebuild"
	"github.com/cachelab/cachelab/sim"
)

// The end state is what the user's actions ask for, not the path a run
// took to it: what counts the writes (generation, observedGeneration), what
// numbers the rollouts (a revision), what a controller keeps of earlier
// revisions for a rollback, and a condition that records a transition the
// other run never went through. These tests build two runs of one plan by
// hand: a reference and a faulted run that took a shorter path to the same
// state (each passes), and runs that end in another state (each fails).

// child is a replica set of owner at a revision (0: no revision annotation).
type child struct {
	name       string
	replicas   int64
	revision   string
	history    string // the revision-history annotation ("" for none)
	generation int64
	observed   int64 // status.observedGeneration (0: none)
	image      string
}

// rolloutRun builds a run in which the user creates webs/a and the
// controller ends with the owner at ownerRevision and the given children.
func rolloutRun(t *testing.T, uidPrefix, ownerRevision string, children ...child) *sim.Trace {
	t.Helper()
	b := tracebuild.New("ctrl")
	owner := b.Create("user", tracebuild.Obj{Resource: "webs", Namespace: "default", Name: "a", UID: uidPrefix + "-web",
		Spec: map[string]any{"image": "v1"}})
	if ownerRevision != "" {
		owner.Annotations = map[string]string{"example.com/revision": ownerRevision}
		b.Update("ctrl", "update", owner)
	}
	for _, c := range children {
		o := tracebuild.Obj{Resource: "webreplicas", Namespace: "default", Name: c.name, UID: uidPrefix + "-" + c.name,
			Owner: owner.UID, Replicas: tracebuild.Int(c.replicas), Generation: c.generation,
			Spec: map[string]any{"image": c.image}}
		if c.revision != "" {
			o.Annotations = map[string]string{"example.com/revision": c.revision}
			if c.history != "" {
				o.Annotations["example.com/revision-history"] = c.history
			}
		}
		if c.observed != 0 {
			o.Status = map[string]any{"observedGeneration": c.observed, "replicas": c.replicas}
		}
		b.Create("ctrl", o)
	}
	b.Final()
	return b.Trace("quiet")
}

// A child created at its final size (generation 1, observed 1) and one
// scaled to it later (generation 2, observed 2) are the same state; one
// whose status lags its spec (generation 2, observed 1) is not.
func TestMatchesReferenceComparesObservedGenerationAsCurrentOrStale(t *testing.T) {
	ref := rolloutRun(t, "r", "", child{name: "a-1", replicas: 5, generation: 2, observed: 2, image: "v1"})
	got := rolloutRun(t, "f", "", child{name: "a-1", replicas: 5, generation: 1, observed: 1, image: "v1"})
	wantStatus(t, invariants.MatchesReference(got, endState(t, ref), invariants.ReferenceOptions{}), invariants.Pass)

	lagging := rolloutRun(t, "f", "", child{name: "a-1", replicas: 5, generation: 2, observed: 1, image: "v1"})
	v := invariants.MatchesReference(lagging, endState(t, ref), invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Fail)
	if !strings.Contains(v.Detail, "<stale>") || !strings.Contains(v.Detail, "<current>") {
		t.Errorf("detail should show observedGeneration current against stale:\n%s", v.Detail)
	}
}

// The reference rolled out v2 and back to v1 (revisions 1, 2, 3: the v2
// replica set kept at 0 for a rollback); the faulted run never saw v2 and
// ends at revision 1. Same state: v1 running at the latest revision.
func TestMatchesReferenceComparesRevisionsAsLatestOrEarlierAndLeavesOutKeptHistory(t *testing.T) {
	ref := endState(t, rolloutRun(t, "r", "3",
		child{name: "a-v1", replicas: 5, revision: "3", history: "1", image: "v1"},
		child{name: "a-v2", replicas: 0, revision: "2", image: "v2"}))
	got := rolloutRun(t, "f", "1", child{name: "a-v1", replicas: 5, revision: "1", image: "v1"})
	v := invariants.MatchesReference(got, ref, invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Pass)
	if want := "webreplicas/default/a-v2"; !strings.Contains(v.Reason, want) || !strings.Contains(v.Reason, "earlier revision") {
		t.Errorf("reason %q: want the kept earlier revision %s named as left out", v.Reason, want)
	}

	// The faulted run ends on the other template: v2 runs at the latest
	// revision, v1 is kept at an earlier one.
	wrong := rolloutRun(t, "f", "2",
		child{name: "a-v1", replicas: 0, revision: "1", image: "v1"},
		child{name: "a-v2", replicas: 5, revision: "2", image: "v2"})
	v = invariants.MatchesReference(wrong, ref, invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Fail)
	if !strings.Contains(v.Reason, "webreplicas/default/a-v1") {
		t.Errorf("reason %q: want a-v1 (scaled to 0 here, running in the reference)", v.Reason)
	}

	// An earlier revision still running is not history: it is compared.
	running := rolloutRun(t, "f", "1",
		child{name: "a-v1", replicas: 5, revision: "3", image: "v1"},
		child{name: "a-v2", replicas: 2, revision: "2", image: "v2"})
	v = invariants.MatchesReference(running, ref, invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Fail)
	if !strings.Contains(v.Reason, "webreplicas/default/a-v2") {
		t.Errorf("reason %q: want a-v2 (2 replicas of an earlier revision) compared", v.Reason)
	}
}

// conditionRun builds a run in which the user creates webs/a and the
// controller writes its conditions, one status per write, in order.
func conditionRun(t *testing.T, uidPrefix string, writes ...[]any) *sim.Trace {
	t.Helper()
	b := tracebuild.New("ctrl")
	o := b.Create("user", tracebuild.Obj{Resource: "webs", Namespace: "default", Name: "a", UID: uidPrefix + "-web",
		Spec: map[string]any{"image": "v1"}})
	for _, conds := range writes {
		o.Status = map[string]any{"conditions": conds}
		o = b.Update("ctrl", "update", o)
	}
	b.Final()
	return b.Trace("quiet")
}

func cond(typ, status, reason string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "lastTransitionTime": "2026-01-01T00:00:01Z"}
}

// The reference suspended the object and resumed it: Suspended=True, then
// Suspended=False. The faulted run never saw the suspension and has no
// Suspended condition. A False condition that only records a True the
// other run never went through is history; the rest of the status is
// still compared, and a False written from the start, or a True, is not
// history.
func TestMatchesReferenceLeavesOutAConditionThatRecordsATransitionTheOtherRunDidNotTake(t *testing.T) {
	ready := cond("Ready", "True", "Running")
	ref := endState(t, conditionRun(t, "r",
		[]any{ready},
		[]any{ready, cond("Suspended", "True", "Suspended")},
		[]any{ready, cond("Suspended", "False", "Resumed")}))
	got := conditionRun(t, "f", []any{ready})
	v := invariants.MatchesReference(got, ref, invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Pass)
	if want := "webs/default/a condition Suspended"; !strings.Contains(v.Reason, want) {
		t.Errorf("reason %q: want %q named as left out", v.Reason, want)
	}
	// The other way round: the faulted run went through the suspension.
	v = invariants.MatchesReference(conditionRun(t, "f",
		[]any{cond("Suspended", "True", "Suspended")},
		[]any{ready, cond("Suspended", "False", "Resumed")}), endState(t, conditionRun(t, "r", []any{ready})), invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Pass)

	// Another Ready is still a difference.
	notReady := conditionRun(t, "f", []any{cond("Ready", "False", "Failing")})
	wantStatus(t, invariants.MatchesReference(notReady, ref, invariants.ReferenceOptions{}), invariants.Fail)

	// A False condition never True in its run says something the other
	// run does not (absent reads as Unknown): a difference.
	falseFromStart := endState(t, conditionRun(t, "r", []any{ready, cond("Suspended", "False", "NotSuspended")}))
	wantStatus(t, invariants.MatchesReference(got, falseFromStart, invariants.ReferenceOptions{}), invariants.Fail)

	// Suspended=True at the end is the state, not history.
	stillSuspended := endState(t, conditionRun(t, "r", []any{ready, cond("Suspended", "True", "Suspended")}))
	wantStatus(t, invariants.MatchesReference(got, stillSuspended, invariants.ReferenceOptions{}), invariants.Fail)
}

// status.collisionCount counts the hash collisions a run met on its path
// (apps/v1: the controller salts the newest revision's name with it): a
// run that met the old revision of a recreated owner counts 1, a run that
// did not counts none. Its effect, the newest revision's name, is compared
// through that object's name.
func TestMatchesReferenceLeavesOutTheCollisionCount(t *testing.T) {
	run := func(uidPrefix string, status map[string]any, child string) *sim.Trace {
		b := tracebuild.New("ctrl")
		o := b.Create("user", tracebuild.Obj{Resource: "webs", Namespace: "default", Name: "b", UID: uidPrefix + "-web"})
		o.Status = status
		o = b.Update("ctrl", "update/status", o)
		b.Create("ctrl", tracebuild.Obj{Resource: "webreplicas", Namespace: "default", Name: child, UID: uidPrefix + "-rs", Owner: o.UID,
			Replicas: tracebuild.Int(1)})
		b.Final()
		return b.Trace("quiet")
	}
	ref := endState(t, run("r", map[string]any{"collisionCount": 1, "replicas": 1}, "b-54cc869db4"))
	v := invariants.MatchesReference(run("f", map[string]any{"replicas": 1}, "b-54cc869db4"), ref, invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Pass)
	// A newest revision named otherwise is still a difference.
	v = invariants.MatchesReference(run("f", map[string]any{"replicas": 1}, "b-7d49cf6f8f"), ref, invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Fail)
}

// A DaemonSet's Pod carries the DaemonSet's generation at its creation in
// the label pod-template-generation (extensions/v1beta1's
// DaemonSetTemplateGenerationKey): a Pod the reference recreated after
// the user rolled the template away and back (generation 3) and one the
// faulted run kept from generation 1, both of the same revision (the
// controller-revision-hash label), are the same state (upstream/daemonset
// seed 9). A Pod of another revision is not.
func TestMatchesReferenceComparesTheDaemonSetPodsTemplateGenerationAsAGeneration(t *testing.T) {
	run := func(uidPrefix, generation, hash string) *sim.Trace {
		b := tracebuild.New("ctrl")
		o := b.Create("user", tracebuild.Obj{Resource: "daemonsets", Namespace: "default", Name: "a", UID: uidPrefix + "-ds"})
		b.Create("ctrl", tracebuild.Obj{Resource: "pods", Namespace: "default", Name: "a-x", UID: uidPrefix + "-pod", Owner: o.UID,
			Labels: map[string]string{"app": "a", "controller-revision-hash": hash, "pod-template-generation": generation}})
		b.Final()
		return b.Trace("quiet")
	}
	ref := endState(t, run("r", "3", "665db44c75"))
	wantStatus(t, invariants.MatchesReference(run("f", "1", "665db44c75"), ref, invariants.ReferenceOptions{}), invariants.Pass)
	wantStatus(t, invariants.MatchesReference(run("f", "1", "7d49cf6f8f"), ref, invariants.ReferenceOptions{}), invariants.Fail)
}

// confirmRun builds a run in which the user creates webs/a and patches its
// spec (generation 2) at 2s, and the controller writes its Evicted
// condition before the patch (observedGeneration 1, stale at the end) or
// after it (2, current), with message msg. topObserved adds
// status.observedGeneration (0: none).
func confirmRun(t *testing.T, uidPrefix string, afterPatch bool, msg string, topObserved int64) *sim.Trace {
	t.Helper()
	b := tracebuild.New("ctrl")
	o := b.Create("user", tracebuild.Obj{Resource: "webs", Namespace: "default", Name: "a", UID: uidPrefix + "-web",
		Spec: map[string]any{"image": "v1"}, Generation: 1})
	write := func(observed int64) {
		c := cond("Evicted", "True", "LocalQueueStopped")
		c["message"], c["observedGeneration"] = msg, observed
		o.Status = map[string]any{"conditions": []any{cond("Admitted", "True", "Admitted"), c}}
		if topObserved != 0 {
			o.Status["observedGeneration"] = topObserved
		}
		o = b.Update("ctrl", "update/status", o)
	}
	b.At(time.Second)
	if !afterPatch {
		write(1)
	}
	b.At(2 * time.Second)
	o.Spec, o.Generation = map[string]any{"image": "v2"}, 2
	o = b.Update("user", "patch", o)
	if afterPatch {
		b.At(3 * time.Second)
		write(2)
	}
	b.Final()
	return b.Trace("quiet")
}

// A condition records the generation it was last written at: the
// reference's controller wrote Evicted before the user's patch and had no
// reason to write it again (stale at the end), the faulted run's wrote it
// after (current), with the same type, status, reason and message. The
// faulted run confirmed the same condition later: no difference (Kueue's
// Evicted condition, docs/real-operators.md). The other way round (the
// faulted run's condition stale where the reference's is current), another
// message, or a stale status.observedGeneration in the reference is still
// a difference.
func TestMatchesReferencePassesAConditionTheFaultedRunConfirmedAtALaterGeneration(t *testing.T) {
	const msg = "The LocalQueue is stopped"
	staleRef := endState(t, confirmRun(t, "r", false, msg, 0))
	v := invariants.MatchesReference(confirmRun(t, "f", true, msg, 0), staleRef, invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Pass)
	if want := "webs/default/a condition Evicted observedGeneration"; !strings.Contains(v.Reason, want) {
		t.Errorf("reason %q: want %q named as left out", v.Reason, want)
	}

	currentRef := endState(t, confirmRun(t, "r", true, msg, 0))
	v = invariants.MatchesReference(confirmRun(t, "f", false, msg, 0), currentRef, invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Fail)
	if !strings.Contains(v.Detail, "<stale>") || !strings.Contains(v.Detail, "<current>") {
		t.Errorf("detail should show the faulted run's stale condition:\n%s", v.Detail)
	}

	v = invariants.MatchesReference(confirmRun(t, "f", true, "The ClusterQueue is stopped", 0), staleRef, invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Fail)
	if !strings.Contains(v.Detail, "The LocalQueue is stopped") || !strings.Contains(v.Detail, "<current>") {
		t.Errorf("detail should show the message and the observedGeneration:\n%s", v.Detail)
	}

	v = invariants.MatchesReference(confirmRun(t, "f", true, msg, 2), endState(t, confirmRun(t, "r", false, msg, 1)), invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Fail)
}
