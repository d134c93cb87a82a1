package invariants_test

import (
	"strings"
	"testing"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/invariants/tracebuild"
	"github.com/cachelab/cachelab/sim"
)

func TestCreatingExactlyTheDesiredPodsPassesNoDuplicateChildren(t *testing.T) {
	wantStatus(t, invariants.NoDuplicateChildren(newHealthyRun().end().Trace("quiet")), invariants.Pass)
}

func TestThirdPodForTwoReplicasFailsNoDuplicateChildren(t *testing.T) {
	// EDGE 22: the pods cache lags, the subject does not remember its
	// creates (no expectations) and creates again.
	h := newHealthyRun()
	dup := h.b.Create(ctrl, tracebuild.Obj{Resource: "pods", Namespace: "ns", Name: "p-x", Owner: h.parent.UID})
	_ = dup
	dupPos := h.b.Last()
	v := invariants.NoDuplicateChildren(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	if v.Positions[0] != dupPos {
		t.Fatalf("first position %d, want the duplicate create at %d", v.Positions[0], dupPos)
	}
	if !strings.Contains(v.Reason, "spec.replicas=2") {
		t.Fatalf("reason should name the desired count: %q", v.Reason)
	}
}

func TestReplacingADeletedPodPassesNoDuplicateChildren(t *testing.T) {
	h := newHealthyRun()
	h.b.Delete("user", "pods", "ns", "p-1")
	h.b.Create(ctrl, tracebuild.Obj{Resource: "pods", Namespace: "ns", Name: "p-2", Owner: h.parent.UID})
	wantStatus(t, invariants.NoDuplicateChildren(h.end().Trace("quiet")), invariants.Pass)
}

func TestScalingDownIsNotADuplicateButCreatingAfterSeeingItIs(t *testing.T) {
	h := newHealthyRun()
	p := h.parent
	p.Replicas = tracebuild.Int(1)
	p = h.b.Update("user", "update", p)
	// Two live pods for replicas=1 is a scale-down in progress: fine.
	wantStatus(t, invariants.NoDuplicateChildren(h.b.Trace("quiet")), invariants.Pass)
	h.b.Handle(ctrl, "bellerophons", "MODIFIED", p)
	h.b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "start", Key: "ns/p"})
	h.b.Delete(ctrl, "pods", "ns", "p-1")
	h.b.Create(ctrl, tracebuild.Obj{Resource: "pods", Namespace: "ns", Name: "p-3", Owner: h.parent.UID})
	wantStatus(t, invariants.NoDuplicateChildren(h.b.Trace("quiet")), invariants.Fail)
}

func TestCreateRacingWithAnUnseenScaleDownPassesNoDuplicateChildren(t *testing.T) {
	// The reconcile started before the user's scale-down reached ctrl: it
	// acts on replicas=2, which is allowed.
	h := newHealthyRun()
	h.b.Delete("user", "pods", "ns", "p-1")
	h.b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "start", Key: "ns/p"})
	p := h.parent
	p.Replicas = tracebuild.Int(1)
	p = h.b.Update("user", "update", p)
	h.b.Create(ctrl, tracebuild.Obj{Resource: "pods", Namespace: "ns", Name: "p-3", Owner: h.parent.UID})
	wantStatus(t, invariants.NoDuplicateChildren(h.b.Trace("quiet")), invariants.Pass)
	// Had the reconcile started after ctrl saw the scale-down, the same
	// create would be a duplicate.
	h.b.Handle(ctrl, "bellerophons", "MODIFIED", p)
	h.b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "start", Key: "ns/p"})
	h.b.Delete(ctrl, "pods", "ns", "p-3")
	h.b.Create(ctrl, tracebuild.Obj{Resource: "pods", Namespace: "ns", Name: "p-4", Owner: h.parent.UID}) // 2 pods for replicas=1
	wantStatus(t, invariants.NoDuplicateChildren(h.b.Trace("quiet")), invariants.Fail)
}

func TestOwnedConfigMapDoesNotCountAsAReplica(t *testing.T) {
	h := newHealthyRun()
	h.b.Create(ctrl, tracebuild.Obj{Resource: "configmaps", Namespace: "ns", Name: "p-config", Owner: h.parent.UID})
	wantStatus(t, invariants.NoDuplicateChildren(h.end().Trace("quiet")), invariants.Pass)
}

func TestSubjectCreatingNoChildrenIsUnknownForNoDuplicateChildren(t *testing.T) {
	b := tracebuild.New(ctrl)
	o := b.Create("user", tracebuild.Obj{Resource: "configmaps", Name: "a"})
	b.Handle(ctrl, "configmaps", "ADDED", o)
	wantStatus(t, invariants.NoDuplicateChildren(b.Trace("quiet")), invariants.Unknown)
}

// versionRun: the user sets spec.version=v2 on the parent; what ctrl saw of
// it is up to each test.
func versionRun() (*healthyRun, tracebuild.Obj) {
	h := newHealthyRun()
	h.b.At(5 * sec)
	p := h.parent
	p.Spec = map[string]any{"version": "v2"}
	p = h.b.Update("user", "update", p)
	return h, p
}

func TestUpdateAfterObservingTheOtherWritePassesNoLostUpdates(t *testing.T) {
	h, p := versionRun()
	h.b.Handle(ctrl, "bellerophons", "MODIFIED", p)
	p.Status = map[string]any{"readyReplicas": 2}
	h.b.Update(ctrl, "update", p)
	wantStatus(t, invariants.NoLostUpdates(h.end().Trace("quiet")), invariants.Pass)
}

func TestUpdateFromAStaleCopyRevertingTheUsersChangeFailsNoLostUpdates(t *testing.T) {
	// EDGE 25/26: ctrl writes its stale copy (no version field) back
	// without a resourceVersion precondition.
	h, _ := versionRun()
	userWrite := h.b.Last()
	stale := h.parent
	stale.Status = map[string]any{"readyReplicas": 2}
	h.b.Update(ctrl, "update", stale)
	lost := h.b.Last()
	v := invariants.NoLostUpdates(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, lost, userWrite)
	if !strings.Contains(v.Reason, "spec.version") {
		t.Fatalf("reason should name the reverted field: %q", v.Reason)
	}
}

func TestStatusWriteKeepingTheUsersSpecPassesNoLostUpdates(t *testing.T) {
	// A status-subresource write is stored with the server's spec: nothing
	// is reverted even from a stale copy.
	h, p := versionRun()
	p.Status = map[string]any{"readyReplicas": 2}
	h.b.Update(ctrl, "update", p)
	wantStatus(t, invariants.NoLostUpdates(h.end().Trace("quiet")), invariants.Pass)
}

func TestFreshGetBeforeTheWriteCountsAsObservedForNoLostUpdates(t *testing.T) {
	h, _ := versionRun()
	h.b.Request(ctrl, "get", "bellerophons", "ns", "p", 200)
	// A deliberate revert after a fresh read is not a lost update.
	h.b.Update(ctrl, "update", h.parent)
	wantStatus(t, invariants.NoLostUpdates(h.end().Trace("quiet")), invariants.Pass)
}

func TestSubjectWithoutUpdatesIsUnknownForNoLostUpdates(t *testing.T) {
	wantStatus(t, invariants.NoLostUpdates(newHealthyRun().end().Trace("quiet")), invariants.Unknown)
}

const fin = "lab.cachelab.dev/backup"

// finalizerRun: ctrl adds its finalizer to the parent, then the user
// deletes the parent (it becomes terminating).
func finalizerRun() (*healthyRun, tracebuild.Obj) {
	h := newHealthyRun()
	h.b.At(5 * sec)
	p := h.parent
	p.Finalizers = []string{fin}
	h.b.Update(ctrl, "update", p)
	h.b.At(6 * sec)
	p = h.b.Delete("user", "bellerophons", "ns", "p")
	return h, p
}

func TestFinalizerRemovedAfterCleanupPassesFinalizers(t *testing.T) {
	h, p := finalizerRun()
	h.b.Handle(ctrl, "bellerophons", "MODIFIED", p)
	p.Finalizers = nil
	h.b.Update(ctrl, "update", p) // removes the last finalizer: the object goes
	wantStatus(t, invariants.Finalizers(h.end().Trace("quiet")), invariants.Pass)
}

func TestObjectLeftTerminatingOnOurFinalizerFailsFinalizers(t *testing.T) {
	h, _ := finalizerRun()
	marked := h.b.Last()
	v := invariants.Finalizers(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, marked)
}

func TestChildCreatedUnderAnOwnerSeenTerminatingFailsFinalizers(t *testing.T) {
	h, p := finalizerRun()
	marked := h.b.Last()
	h.b.Handle(ctrl, "bellerophons", "MODIFIED", p) // ctrl sees the deletionTimestamp
	h.b.Create(ctrl, tracebuild.Obj{Resource: "pods", Namespace: "ns", Name: "p-9", Owner: p.UID})
	bad := h.b.Last()
	p.Finalizers = nil
	h.b.Update(ctrl, "update", p)
	v := invariants.Finalizers(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, bad, marked)
}

func TestReconcileStartedBeforeTheDeletionWasSeenMayFinishItsCreates(t *testing.T) {
	h, p := finalizerRun()
	// The reconcile started before ctrl heard of the deletion.
	h.b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "start", Key: "ns/p"})
	h.b.Handle(ctrl, "bellerophons", "MODIFIED", p)
	h.b.Create(ctrl, tracebuild.Obj{Resource: "pods", Namespace: "ns", Name: "p-9", Owner: p.UID})
	wantStatus(t, invariants.Finalizers(h.b.Trace("quiet")), invariants.Pass)
	// A reconcile that starts after it is a violation.
	h.b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "start", Key: "ns/p"})
	h.b.Create(ctrl, tracebuild.Obj{Resource: "pods", Namespace: "ns", Name: "p-10", Owner: p.UID})
	wantStatus(t, invariants.Finalizers(h.b.Trace("quiet")), invariants.Fail)
}

func TestChildCreateRacingWithAnUnseenDeletionPassesFinalizers(t *testing.T) {
	h, p := finalizerRun()
	// ctrl had not yet heard of the deletion when it created the Pod.
	h.b.Create(ctrl, tracebuild.Obj{Resource: "pods", Namespace: "ns", Name: "p-9", Owner: p.UID})
	h.b.Handle(ctrl, "bellerophons", "MODIFIED", p)
	p.Finalizers = nil
	h.b.Update(ctrl, "update", p)
	wantStatus(t, invariants.Finalizers(h.end().Trace("quiet")), invariants.Pass)
}

func TestOthersFinalizersLeftTerminatingAreNotOursToRemove(t *testing.T) {
	h := newHealthyRun()
	p := h.parent
	p.Finalizers = []string{"someone.else/hold"}
	h.b.Update("user", "update", p)
	h.b.Delete("user", "bellerophons", "ns", "p")
	wantStatus(t, invariants.Finalizers(h.end().Trace("quiet")), invariants.Pass)
}

func TestNoFinalizerAndNoOwnedCreateIsUnknownForFinalizers(t *testing.T) {
	b := tracebuild.New(ctrl)
	o := b.Create("user", tracebuild.Obj{Resource: "configmaps", Name: "a"})
	b.Handle(ctrl, "configmaps", "ADDED", o)
	b.Final()
	wantStatus(t, invariants.Finalizers(b.Trace("quiet")), invariants.Unknown)
}

func TestRemovalSeenOnlyAsADeletedWatchEventCountsAsARemoval(t *testing.T) {
	// The store records the update that empties a terminating object's
	// finalizers with the object's last stored state (finalizers still
	// listed); only the DELETED event it sends shows the object is gone.
	h, p := finalizerRun()
	gone := h.b.RemoveByUpdate(ctrl, p)
	h.b.Sent(ctrl, "ctrl/bellerophons#1", "DELETED", gone)
	h.b.At(10 * sec)
	h.b.CacheOfServer(ctrl, "pods", "pods")
	snap := h.b.Cache(ctrl, "bellerophons", "bellerophons", gone) // never learned it
	h.b.Final()
	tr := h.b.Trace("quiet")
	v := invariants.NoLostDeletes(tr)
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, snap.Pos)
	wantStatus(t, invariants.Finalizers(tr), invariants.Pass)
}

// backups records a snapshot of ctrl's external backup store holding an
// entry for each of objs (keyed by their UIDs).
func backups(b *tracebuild.Builder, objs ...tracebuild.Obj) sim.Record {
	var st []sim.ObjectState
	for _, o := range objs {
		st = append(st, sim.ObjectState{Resource: "backups", Namespace: o.Namespace, Name: o.Name, UID: o.UID})
	}
	return b.Add(sim.Record{Kind: sim.RecCache, Actor: ctrl, Handler: "backup-store", Objects: st})
}

func TestBackupCleanedBeforeTheFinalizerGoesPassesFinalizers(t *testing.T) {
	h, p := finalizerRun()
	backups(h.b, p)
	h.b.Handle(ctrl, "bellerophons", "MODIFIED", p)
	backups(h.b) // cleaned
	p.Finalizers = nil
	h.b.Update(ctrl, "update", p)
	wantStatus(t, invariants.Finalizers(h.end().Trace("quiet")), invariants.Pass)
}

func TestBackupLeftForADeletedObjectFailsFinalizers(t *testing.T) {
	// The no-uid-check mutant: the old incarnation's backup is never cleaned.
	h, p := finalizerRun()
	snap := backups(h.b, p)
	p.Finalizers = nil
	h.b.Update(ctrl, "update", p)
	gone := h.b.Last()
	v := invariants.Finalizers(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, snap.Pos, gone)
}

func TestBackupLeftBecauseTheUserStrippedOurFinalizerIsNotHeldAgainstTheSubject(t *testing.T) {
	h, p := finalizerRun()
	backups(h.b, p)
	p.Finalizers = nil
	h.b.Update("user", "patch", p) // finalizers: null by hand
	wantStatus(t, invariants.Finalizers(h.end().Trace("quiet")), invariants.Pass)
}

func TestConflictWithItsOwnEarlierWriteIsMeasuredNotFailed(t *testing.T) {
	// EDGE 24: ctrl updates the parent's status from a copy older than its
	// own last status write: the server refuses it (409), nothing was
	// decided from the stale copy. Issue 27: a cost, not a failure.
	h := newHealthyRun()
	p := h.parent
	p.Status = map[string]any{"readyReplicas": 1}
	h.b.Update(ctrl, "update/status", p)
	bad := h.b.Add(sim.Record{Kind: sim.RecRequest, Actor: ctrl, Verb: "update/status", Resource: "bellerophons", Namespace: "ns", Name: "p", Code: 409, Reason: "Conflict"})
	tr := h.end().Trace("quiet")
	wantStatus(t, invariants.ReadYourWrites(tr), invariants.Pass)
	m := invariants.RetriedConflicts(tr)
	wantStatus(t, m, invariants.Pass)
	wantPositions(t, m, bad.Pos)
}

func TestRecreatingWhatItJustCreatedIsMeasuredNotFailed(t *testing.T) {
	h := newHealthyRun()
	h.b.Create(ctrl, tracebuild.Obj{Resource: "configmaps", Namespace: "ns", Name: "p-config", Owner: h.parent.UID})
	bad := h.b.Add(sim.Record{Kind: sim.RecRequest, Actor: ctrl, Verb: "create", Resource: "configmaps", Namespace: "ns", Name: "p-config", Code: 409, Reason: "AlreadyExists"})
	tr := h.end().Trace("quiet")
	wantStatus(t, invariants.ReadYourWrites(tr), invariants.Pass)
	m := invariants.RetriedConflicts(tr)
	wantPositions(t, m, bad.Pos)
	if !strings.Contains(m.Reason, "1 never resolved") {
		t.Fatalf("no retry followed: want it counted unresolved: %s", m.Reason)
	}
}

func TestConflictWithAnotherActorsWritePassesReadYourWrites(t *testing.T) {
	h := newHealthyRun()
	h.b.Request(ctrl, "update", "bellerophons", "ns", "p", 200)
	p := h.parent
	p.Spec = map[string]any{"version": "v2"}
	h.b.Update("user", "update", p)
	h.b.Add(sim.Record{Kind: sim.RecRequest, Actor: ctrl, Verb: "update/status", Resource: "bellerophons", Namespace: "ns", Name: "p", Code: 409, Reason: "Conflict"})
	wantStatus(t, invariants.ReadYourWrites(h.end().Trace("quiet")), invariants.Pass)
}

func TestSubjectSendingNoWritesIsUnknownForReadYourWrites(t *testing.T) {
	b := tracebuild.New(ctrl)
	o := b.Create("user", tracebuild.Obj{Resource: "configmaps", Name: "a"})
	b.Handle(ctrl, "configmaps", "ADDED", o)
	wantStatus(t, invariants.ReadYourWrites(b.Trace("quiet")), invariants.Unknown)
}

func TestMainUpdateRacingItsOwnStatusWritePassesReadYourWrites(t *testing.T) {
	h := newHealthyRun()
	p := h.parent
	p.Status = map[string]any{"readyReplicas": 2}
	h.b.Update(ctrl, "update/status", p)
	h.b.Add(sim.Record{Kind: sim.RecRequest, Actor: ctrl, Verb: "update", Resource: "bellerophons", Namespace: "ns", Name: "p", Code: 409, Reason: "Conflict"})
	wantStatus(t, invariants.ReadYourWrites(h.end().Trace("quiet")), invariants.Pass)
}

func TestRemovalWithNoWatchOpenIsKnownFromTheFinalState(t *testing.T) {
	// No watch was open when the finalizers were emptied: no DELETED event
	// shows the removal, but the object is absent from RecFinal.
	h, p := finalizerRun()
	gone := h.b.RemoveByUpdate("user", p)
	h.b.At(10 * sec)
	h.b.CacheOfServer(ctrl, "pods", "pods")
	snap := h.b.Cache(ctrl, "bellerophons", "bellerophons", gone)
	h.b.Final()
	v := invariants.NoLostDeletes(h.b.Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, snap.Pos)
}

func TestBackupLeftAfterTheUserStrippedATerminatingObjectIsNotHeldAgainstTheSubject(t *testing.T) {
	// kubectl delete, then kubectl patch finalizers: null while the
	// subject was away: the store records the removal with the last state
	// (our finalizer still listed), and the subject never saw the key again.
	h, p := finalizerRun()
	backups(h.b, p)
	h.b.RemoveByUpdate("user", p)
	wantStatus(t, invariants.Finalizers(h.end().Trace("quiet")), invariants.Pass)
}

func TestBackupLeftAfterAStrippedObjectsKeyWasReconciledAgainFailsFinalizers(t *testing.T) {
	// The same, but the subject reconciled the key afterwards (the name was
	// recreated): it had the chance to find the leftover and did not (the
	// no-uid-check mutant).
	h, p := finalizerRun()
	snap := backups(h.b, p)
	h.b.RemoveByUpdate("user", p)
	gone := h.b.Last()
	again := h.b.Create("user", tracebuild.Obj{Resource: "bellerophons", Namespace: "ns", Name: "p"})
	h.b.Handle(ctrl, "bellerophons", "ADDED", again)
	h.b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "start", Key: "ns/p"})
	v := invariants.Finalizers(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, snap.Pos, gone)
}

func TestBackupLeftWhenTheKeyWasReconciledOnlyFromAStaleCopyIsNotHeldAgainstTheSubject(t *testing.T) {
	// random-8214: deliveries held, the subject reconciled the key after
	// the user stripped the object, but its handlers had shown it only the
	// old incarnation, alive: it had no way to find the leftover.
	h, p := finalizerRun()
	backups(h.b, p)
	h.b.RemoveByUpdate("user", p)
	h.b.Add(sim.Record{Kind: sim.RecReconcile, Actor: ctrl, Op: "start", Key: "ns/p"})
	wantStatus(t, invariants.Finalizers(h.end().Trace("quiet")), invariants.Pass)
}

// A Job's spec.parallelism bounds its active Pods as a ReplicaSet's
// spec.replicas does (the Job controller, KEP-5647's other subject): a
// third Pod created for a Job of parallelism 2 is a duplicate.
func TestThirdPodForAJobOfParallelismTwoFailsNoDuplicateChildren(t *testing.T) {
	b := tracebuild.New(ctrl)
	b.At(0)
	b.WatchOpen(ctrl, "ctrl/jobs#1", "jobs", true)
	b.WatchOpen(ctrl, "ctrl/pods#1", "pods", true)
	b.At(1 * sec)
	job := b.Create("user", tracebuild.Obj{Resource: "jobs", Namespace: "ns", Name: "j", Spec: map[string]any{"parallelism": 2}})
	b.At(2 * sec)
	b.Deliver(ctrl, "ctrl/jobs#1", "ADDED", job)
	b.Handle(ctrl, "jobs", "ADDED", job)
	b.At(3 * sec)
	b.Create(ctrl, tracebuild.Obj{Resource: "pods", Namespace: "ns", Name: "j-0", Owner: job.UID})
	b.Create(ctrl, tracebuild.Obj{Resource: "pods", Namespace: "ns", Name: "j-1", Owner: job.UID})
	v := invariants.NoDuplicateChildren(b.Trace("quiet"))
	wantStatus(t, v, invariants.Pass)
	b.Create(ctrl, tracebuild.Obj{Resource: "pods", Namespace: "ns", Name: "j-2", Owner: job.UID})
	v = invariants.NoDuplicateChildren(b.Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	if !strings.Contains(v.Reason, "spec.parallelism=2") {
		t.Fatalf("reason should name the Job's parallelism: %q", v.Reason)
	}
}

func TestUpdateByTheCrashingProcessAfterItObservedTheOtherWritePassesNoLostUpdates(t *testing.T) {
	// random-4873: the crash cancels the process, but the reconcile it had
	// started finishes its write; that process had observed the user's
	// write. Until the restart, the subject's records are that process's.
	h, p := versionRun()
	h.b.Handle(ctrl, "bellerophons", "MODIFIED", p)
	h.b.Add(sim.Record{Kind: sim.RecCrash, Actor: ctrl})
	back := h.parent
	back.Status = map[string]any{"readyReplicas": 2}
	h.b.Update(ctrl, "update", back)
	wantStatus(t, invariants.NoLostUpdates(h.end().Trace("quiet")), invariants.Pass)
}

func TestUpdateByTheRestartedProcessFromAStaleCopyFailsNoLostUpdates(t *testing.T) {
	// The same observation, but the write comes after the restart: the new
	// process had observed nothing, and its write reverts the user's change.
	h, p := versionRun()
	userWrite := h.b.Last()
	h.b.Handle(ctrl, "bellerophons", "MODIFIED", p)
	h.b.Add(sim.Record{Kind: sim.RecCrash, Actor: ctrl})
	h.b.Add(sim.Record{Kind: sim.RecRestart, Actor: ctrl})
	stale := h.parent
	stale.Status = map[string]any{"readyReplicas": 2}
	h.b.Update(ctrl, "update", stale)
	lost := h.b.Last()
	v := invariants.NoLostUpdates(h.end().Trace("quiet"))
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, lost, userWrite)
}
