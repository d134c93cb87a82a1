package bellerophon_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/subjects/bellerophon"
	"github.com/cachelab/cachelab/subjects/bellerophon/apis/lab/v1alpha1"
)

// Each mutant has a Plan that shows its bug; the same Plan run with the
// correct controller must not show it. A verdict reads only the trace.

// mutantCase is a Plan and a verdict on its trace.
type mutantCase struct {
	bug  bellerophon.Bug
	plan func(subject string) *sim.Plan
	// shows reports whether the trace shows the bug, and what was seen.
	shows func(t *testing.T, tr *sim.Trace, subject string) (bool, string)
}

func basePlan(name, subject string, objects ...json.RawMessage) *sim.Plan {
	return &sim.Plan{
		Version: sim.PlanVersion, Name: name, Seed: 1, Subject: subject,
		Objects:  objects,
		Kubelet:  &sim.Kubelet{ReadyAfter: at(time.Second)},
		Deadline: at(3 * time.Minute),
		Quiet:    at(45 * time.Second),
	}
}

func fault(t time.Duration, op, resource string) sim.Step {
	return sim.Step{At: at(t), Actor: "faults", Op: op, Resource: resource}
}

func user(t time.Duration, op, resource, name string) sim.Step {
	return sim.Step{At: at(t), Actor: "user", Op: op, Resource: resource, Namespace: "default", Name: name}
}

// uidsOf returns the UIDs of a's incarnations, in creation order.
func uidsOf(tr *sim.Trace) []string {
	var out []string
	for _, r := range tr.Records {
		if r.Kind == sim.RecWrite && r.Resource == bellerophon.ResourceBellerophons && r.Name == "a" && r.Verb == "create" {
			out = append(out, r.UID)
		}
	}
	return out
}

// lastBackups returns the UIDs in the subject's last backup-store snapshot.
func lastBackups(tr *sim.Trace, subject string) []string {
	var out []string
	for _, r := range tr.Records {
		if r.Kind == sim.RecCache && r.Actor == subject && r.Handler == bellerophon.BackupCacheName {
			out = out[:0]
			for _, o := range r.Objects {
				out = append(out, o.UID)
			}
		}
	}
	return out
}

func desiredAtEnd(tr *sim.Trace) (bool, string) {
	d, ok := desiredBefore(tr, tr.End.D()+time.Second)
	return ok && d.Value, d.Detail
}

var mutantCases = []mutantCase{
	{
		// Reads at resourceVersion 0 are served three revisions behind
		// from 4s; the controller restarts at 6s. Its informers' first list
		// after the restart goes to that replica unless they use WatchList:
		// its handler then sees a older than it had seen before the crash.
		bug: bellerophon.ListsStaleReplica,
		plan: func(subject string) *sim.Plan {
			p := basePlan("restart-on-a-lagging-replica", subject, bphJSON("a", 1, "1", nil))
			p.Faults.Latency = sim.Distribution{Kind: "fixed", Max: at(20 * time.Millisecond)}
			stale := fault(4*time.Second, "stale-replica", "")
			stale.Lag, stale.For = 3, sim.Duration(30*time.Second)
			p.Steps = []sim.Step{
				patchStep(2*time.Second, `{"spec":{"version":"2"}}`),
				patchStep(3*time.Second, `{"spec":{"version":"3"}}`),
				stale,
				{At: at(5 * time.Second), Actor: "controller", Op: "crash"},
				{At: at(6 * time.Second), Actor: "controller", Op: "restart"},
			}
			return p
		},
		shows: func(t *testing.T, tr *sim.Trace, subject string) (bool, string) {
			var maxBefore, back int64
			for _, r := range tr.Records {
				if r.Kind != sim.RecHandler || r.Actor != subject || r.Name != "a" {
					continue
				}
				if r.At.D() < 5*time.Second {
					maxBefore = max(maxBefore, r.RV)
				} else if r.RV < maxBefore && back == 0 {
					back = r.RV
				}
			}
			if back > 0 {
				return true, fmt.Sprintf("after the restart its handler saw a at RV %d, older than RV %d it had seen before", back, maxBefore)
			}
			return false, fmt.Sprintf("a never went back in time (RV %d before the crash)", maxBefore)
		},
	},
	{
		// The controller's first Pod create is applied by the server but
		// reported to it as a timeout; watch events take 20ms, so a retry
		// made before then sees one Pod too few.
		bug: bellerophon.TimeoutAsFailure,
		plan: func(subject string) *sim.Plan {
			p := basePlan("create-with-unknown-outcome", subject)
			p.Faults.Latency = sim.Distribution{Kind: "fixed", Max: at(20 * time.Millisecond)}
			timeout := fault(0, "timeout-next-write", "pods")
			timeout.Verb, timeout.Target = "create", subject
			p.Steps = []sim.Step{
				timeout,
				{At: at(time.Second), Actor: "user", Op: "create", Object: bphJSON("a", 2, "1", nil)},
			}
			return p
		},
		shows: func(t *testing.T, tr *sim.Trace, subject string) (bool, string) {
			n := len(writes(tr, subject, "create", "pods"))
			return n > 2, fmt.Sprintf("%d Pods created for 2 replicas (one create timed out but was applied)", n)
		},
	},
	{
		// The Pod watch is held while a is created and then changed: the
		// second reconcile cannot see the first one's Pods.
		bug: bellerophon.NoExpectations,
		plan: func(subject string) *sim.Plan {
			p := basePlan("lagging-pod-cache", subject)
			p.Steps = []sim.Step{
				fault(time.Second, "hold", "pods"),
				{At: at(2 * time.Second), Actor: "user", Op: "create", Object: bphJSON("a", 3, "1", nil)},
				patchStep(3*time.Second, `{"spec":{"config":{"k":"v"}}}`),
				fault(10*time.Second, "release", "pods"),
			}
			return p
		},
		shows: func(t *testing.T, tr *sim.Trace, subject string) (bool, string) {
			n := len(writes(tr, subject, "create", "pods"))
			return n > 3, fmt.Sprintf("%d Pods created for 3 replicas", n)
		},
	},
	{
		// a is force-deleted (finalizer stripped) and recreated while every
		// watch is held; a 410 closes the watches (dropping what they held)
		// and the relist delivers the pair as one update with a new UID.
		// The hold ends a second after the 410, so nothing held is
		// delivered before it.
		bug: bellerophon.NoUIDCheck,
		plan: func(subject string) *sim.Plan {
			p := basePlan("recreate-in-a-watch-gap", subject, bphJSON("a", 2, "1", nil))
			finalizers := user(11*time.Second, "patch", "bellerophons", "a")
			finalizers.Patch = json.RawMessage(`{"metadata":{"finalizers":null}}`)
			p.Steps = []sim.Step{
				fault(10*time.Second, "hold", ""),
				finalizers,
				user(12*time.Second, "delete", "bellerophons", "a"),
				{At: at(13 * time.Second), Actor: "user", Op: "create", Object: bphJSON("a", 2, "1", nil)},
				fault(14*time.Second, "expire", ""),
				fault(15*time.Second, "release", ""),
			}
			return p
		},
		shows: func(t *testing.T, tr *sim.Trace, subject string) (bool, string) {
			uids, backups := uidsOf(tr), lastBackups(tr, subject)
			if len(uids) != 2 {
				t.Fatalf("a was created %d times, want 2 (the plan did not run as written)", len(uids))
			}
			ok := len(backups) == 1 && backups[0] == uids[1]
			return !ok, fmt.Sprintf("backups %v at the end, incarnations %v", backups, uids)
		},
	},
	{
		// a-config is deleted while the ConfigMap watch is held; the 410
		// makes the relist deliver the delete as a tombstone.
		bug: bellerophon.TombstoneNotUnwrapped,
		plan: func(subject string) *sim.Plan {
			p := basePlan("configmap-deleted-in-a-watch-gap", subject, bphJSON("a", 2, "1", map[string]string{"k": "v"}))
			p.Steps = []sim.Step{
				fault(10*time.Second, "hold", "configmaps"),
				user(11*time.Second, "delete", "configmaps", "a-config"),
				fault(12*time.Second, "expire", "configmaps"),
				fault(13*time.Second, "release", "configmaps"),
			}
			return p
		},
		shows: func(t *testing.T, tr *sim.Trace, subject string) (bool, string) {
			tombstones := 0
			for _, r := range tr.Records {
				if r.Kind == sim.RecHandler && r.Actor == subject && r.Tombstone && r.Resource == "configmaps" {
					tombstones++
				}
			}
			if tombstones == 0 {
				t.Fatalf("no tombstone reached the ConfigMap handler: the plan does not exercise EDGE 7")
			}
			ok, why := desiredAtEnd(tr)
			return !ok, why
		},
	},
	{
		// A restart with a slow handler: the informers' stores are full
		// long before the Pod handler has indexed every Pod.
		bug: bellerophon.InformerSynced,
		plan: func(subject string) *sim.Plan {
			p := basePlan("restart-with-a-slow-handler", subject, bphJSON("a", 3, "1", nil))
			p.SubjectParams = map[string]string{bellerophon.ParamHandlerDelay: "50ms"}
			p.Steps = []sim.Step{
				{At: at(10 * time.Second), Actor: "controller", Op: "crash"},
				{At: at(11 * time.Second), Actor: "controller", Op: "restart"},
			}
			return p
		},
		shows: func(t *testing.T, tr *sim.Trace, subject string) (bool, string) {
			n := len(writes(tr, subject, "create", "pods"))
			return n > 3, fmt.Sprintf("%d Pods created for 3 replicas", n)
		},
	},
	{
		// A competitor writes a's status (a condition of its own) while
		// the controller's Bellerophon watch is held; then the Pods become
		// Ready and the controller writes status from its stale copy.
		bug:  bellerophon.StaleStatus,
		plan: competitorStatusPlan,
		// The lost update: a write by the subject, after the competitor's,
		// that no longer carries the competitor's condition. (A later
		// write from another stale copy may bring it back by chance; the
		// loss happened all the same.)
		shows: func(t *testing.T, tr *sim.Trace, subject string) (bool, string) {
			after, lost := false, 0
			for _, r := range tr.Records {
				if r.Kind != sim.RecWrite || r.Resource != bellerophon.ResourceBellerophons {
					continue
				}
				if r.Actor == "competitor" {
					after = true
					continue
				}
				if !after || r.Actor != subject {
					continue
				}
				b := &v1alpha1.Bellerophon{}
				if err := json.Unmarshal(r.Object, b); err != nil {
					t.Fatal(err)
				}
				if meta.FindStatusCondition(b.Status.Conditions, "BackupVerified") == nil {
					lost++
				}
			}
			if !after {
				t.Fatalf("the competitor never wrote: the plan did not run as written")
			}
			return lost > 0, fmt.Sprintf("%d writes after the competitor's dropped its condition", lost)
		},
	},
	{
		// a is deleted.
		bug: bellerophon.FinalizerNeverRemoved,
		plan: func(subject string) *sim.Plan {
			p := basePlan("delete", subject, bphJSON("a", 1, "1", nil))
			p.Steps = []sim.Step{user(10*time.Second, "delete", "bellerophons", "a")}
			return p
		},
		shows: func(t *testing.T, tr *sim.Trace, subject string) (bool, string) {
			left := final(tr, bellerophon.ResourceBellerophons)
			return len(left) > 0, fmt.Sprintf("left on the server: %+v", left)
		},
	},
	{
		// a is scaled up and deleted while the Bellerophon watch is held;
		// the relist delivers both as one update.
		bug: bellerophon.ChildrenUnderTerminating,
		plan: func(subject string) *sim.Plan {
			p := basePlan("scale-then-delete", subject, bphJSON("a", 2, "1", nil))
			p.Steps = []sim.Step{
				fault(10*time.Second, "hold", "bellerophons"),
				patchStep(11*time.Second, `{"spec":{"replicas":4}}`),
				user(12*time.Second, "delete", "bellerophons", "a"),
				fault(13*time.Second, "expire", "bellerophons"),
				fault(14*time.Second, "release", "bellerophons"),
			}
			return p
		},
		shows: func(t *testing.T, tr *sim.Trace, subject string) (bool, string) {
			late := 0
			for _, w := range writes(tr, subject, "create", "pods") {
				if w.At.D() > 12*time.Second {
					late++
				}
			}
			return late > 0, fmt.Sprintf("%d Pods created after a started terminating", late)
		},
	},
	{
		// A restart while the Pod watch is held: the Bellerophon and
		// ConfigMap events come, then nothing for a while.
		bug: bellerophon.QuiescenceSynced,
		plan: func(subject string) *sim.Plan {
			p := basePlan("restart-with-a-delayed-pod-list", subject, bphJSON("a", 3, "1", nil))
			hold := fault(11*time.Second, "hold", "pods")
			hold.For = at(5 * time.Second)
			p.Steps = []sim.Step{
				{At: at(10 * time.Second), Actor: "controller", Op: "crash"},
				hold,
				{At: at(11 * time.Second), Actor: "controller", Op: "restart"},
			}
			return p
		},
		shows: func(t *testing.T, tr *sim.Trace, subject string) (bool, string) {
			n := len(writes(tr, subject, "create", "pods"))
			return n > 3, fmt.Sprintf("%d Pods created for 3 replicas", n)
		},
	},
	{
		// A competitor labels a while the controller's Bellerophon watch is
		// held; then the Pods become Ready and the status write conflicts.
		bug: bellerophon.DropsConflicts,
		plan: func(subject string) *sim.Plan {
			p := basePlan("competitor-labels", subject, bphJSON("a", 2, "1", nil))
			p.Kubelet.ReadyAfter = at(3 * time.Second)
			label := sim.Step{At: at(2 * time.Second), Actor: "competitor", Op: "patch", Resource: "bellerophons", Namespace: "default", Name: "a",
				Patch: json.RawMessage(`{"metadata":{"labels":{"team":"x"}}}`)}
			hold := fault(time.Second, "hold", "bellerophons")
			hold.For = at(10 * time.Second)
			p.Steps = []sim.Step{hold, label}
			return p
		},
		shows: func(t *testing.T, tr *sim.Trace, subject string) (bool, string) {
			conflicts := 0
			for _, r := range tr.Records {
				if r.Kind == sim.RecRequest && r.Actor == subject && r.Code == 409 {
					conflicts++
				}
			}
			if conflicts == 0 {
				t.Fatalf("no 409 answered to %s: the plan does not exercise a conflict", subject)
			}
			b := lastObject(t, tr)
			return b.Status.ReadyReplicas != 2, fmt.Sprintf("%d 409s; final status.readyReplicas %d of 2", conflicts, b.Status.ReadyReplicas)
		},
	},
	{
		// A failed ConfigMap create marks a Degraded while the controller's
		// Bellerophon watch is held; the retry succeeds and must clear it.
		bug: bellerophon.NoReadYourWrites,
		plan: func(subject string) *sim.Plan {
			p := basePlan("degraded-then-recovered", subject, bphJSON("a", 1, "1", map[string]string{"k": "v"}))
			hold := fault(10*time.Second, "hold", "bellerophons")
			hold.For = at(10 * time.Second)
			fail := fault(11*time.Second, "fail-next", "configmaps")
			fail.Code, fail.Verb = 500, "create"
			p.Steps = []sim.Step{hold, fail, user(11*time.Second, "delete", "configmaps", "a-config")}
			return p
		},
		shows: func(t *testing.T, tr *sim.Trace, subject string) (bool, string) {
			failed := 0
			for _, r := range tr.Records {
				if r.Kind == sim.RecRequest && r.Actor == subject && r.Code == 500 {
					failed++
				}
			}
			if failed != 1 {
				t.Fatalf("%d requests of %s failed with 500, want 1: the plan did not run as written", failed, subject)
			}
			b := lastObject(t, tr)
			degraded := meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionDegraded)
			return degraded, fmt.Sprintf("final status Degraded=%v after the retry succeeded; conditions %v", degraded, conditionTypes(b))
		},
	},
}

// competitorStatusPlan: a competitor writes a's status with a condition of
// its own while the controller's Bellerophon watch is held.
func competitorStatusPlan(subject string) *sim.Plan {
	p := basePlan("competitor-writes-status", subject, bphJSON("a", 2, "1", nil))
	p.Kubelet.ReadyAfter = at(3 * time.Second)
	b := v1alpha1.Bellerophon{Spec: v1alpha1.BellerophonSpec{Replicas: 2, Version: "1"}}
	b.APIVersion, b.Kind, b.Namespace, b.Name = v1alpha1.SchemeGroupVersion.String(), v1alpha1.Kind, "default", "a"
	b.Status.Conditions = []metav1Condition{{Type: "BackupVerified", Status: "True", Reason: "Checked", Message: "verified by the backup service",
		LastTransitionTime: metav1Time}}
	raw, _ := json.Marshal(b)
	hold := fault(time.Second, "hold", "bellerophons")
	hold.For = at(10 * time.Second)
	p.Steps = []sim.Step{hold, {At: at(2 * time.Second), Actor: "competitor", Op: "update-status", Resource: "bellerophons", Object: raw}}
	return p
}

func conditionTypes(b *v1alpha1.Bellerophon) []string {
	var out []string
	for _, c := range b.Status.Conditions {
		out = append(out, c.Type+"="+string(c.Status))
	}
	return out
}

func TestEveryMutantHasAPlanThatShowsItsBugAndThatTheCorrectControllerPasses(t *testing.T) {
	seen := map[bellerophon.Bug]bool{}
	for _, mc := range mutantCases {
		seen[mc.bug] = true
		t.Run(string(mc.bug), func(t *testing.T) {
			for _, subject := range []string{bellerophon.SubjectName, bellerophon.SubjectName + "/" + string(mc.bug)} {
				tr := run(t, mc.plan(subject))
				shows, what := mc.shows(t, tr, subject)
				if want := subject != bellerophon.SubjectName; shows != want {
					t.Errorf("%s on plan %q: bug shown = %v, want %v (%s)", subject, tr.Plan.Name, shows, want, what)
				} else {
					t.Logf("%s: %s", subject, what)
				}
			}
		})
	}
	for _, b := range bellerophon.Bugs {
		if !seen[b.Bug] {
			t.Errorf("mutant %s has no plan", b.Bug)
		}
	}
}

type metav1Condition = metav1.Condition

var metav1Time = metav1.NewTime(time.Date(2000, 1, 1, 0, 0, 1, 0, time.UTC))
