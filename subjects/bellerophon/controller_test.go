package bellerophon

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/subjects/bellerophon/apis/lab/v1alpha1"
)

func ownedBy(pods []corev1.Pod, uid types.UID) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == uid && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func TestSyncCreatesFinalizerBackupConfigMapPodsAndStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, harnessOptions{objects: []*v1alpha1.Bellerophon{
			bellerophon("a", 3, "1.0", map[string]string{"mode": "fast"}),
		}})
		if err := h.sync("a"); err != nil {
			t.Fatalf("syncHandler: %v", err)
		}
		synctest.Wait()
		b := h.get("a")
		if len(b.Finalizers) != 1 || b.Finalizers[0] != FinalizerName {
			t.Errorf("finalizers = %v, want [%s]", b.Finalizers, FinalizerName)
		}
		pods := ownedBy(h.pods(), b.UID)
		if len(pods) != 3 {
			t.Fatalf("%d Pods owned by a, want 3", len(pods))
		}
		for _, p := range pods {
			if p.Spec.Containers[0].Image != "bellerophon:1.0" || p.Labels[LabelName] != "a" || !strings.HasPrefix(p.Name, "a-") {
				t.Errorf("Pod %s: image %s labels %v; want bellerophon:1.0, labelled a, named a-*", p.Name, p.Spec.Containers[0].Image, p.Labels)
			}
			if ref := metav1.GetControllerOf(&p); ref.Kind != "Bellerophon" || ref.APIVersion != "lab.cachelab.dev/v1alpha1" {
				t.Errorf("Pod %s controller ref = %+v", p.Name, ref)
			}
		}
		cm := h.configMap("a-config")
		if cm == nil || cm.Data["mode"] != "fast" || len(cm.Data) != 1 || metav1.GetControllerOf(cm).UID != b.UID {
			t.Errorf("ConfigMap a-config = %+v, want data {mode: fast} controlled by a", cm)
		}
		if e, ok := h.c.backups.Get(b.UID); !ok || e.Version != "1.0" || e.Config["mode"] != "fast" {
			t.Errorf("backup of %s = %+v, %v; want version 1.0 with the config", b.UID, e, ok)
		}
		if b.Status.ObservedGeneration != b.Generation || b.Status.ReadyReplicas != 0 ||
			!meta.IsStatusConditionFalse(b.Status.Conditions, v1alpha1.ConditionReady) ||
			!meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionProgressing) {
			t.Errorf("status = %+v, want observedGeneration %d, 0 ready, Ready False, Progressing True", b.Status, b.Generation)
		}

		// The kubelet marks the Pods ready; the next reconcile reports it.
		h.markReady()
		synctest.Wait()
		if err := h.sync("a"); err != nil {
			t.Fatalf("syncHandler: %v", err)
		}
		b = h.get("a")
		if b.Status.ReadyReplicas != 3 || !meta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionReady) {
			t.Errorf("status after readiness = %+v, want 3 ready and Ready True", b.Status)
		}
		if ok, why := Desired(h.serverObjects()); !ok {
			t.Errorf("Desired = false (%s) after convergence", why)
		}
		synctest.Wait()
		reasons := map[string]int{}
		for _, e := range h.events() {
			reasons[e.Reason] += int(e.Count)
		}
		if reasons[ReasonCreatedPod] != 3 || reasons[ReasonCreatedConfigMap] != 1 || reasons[ReasonReady] != 1 {
			t.Errorf("Events by reason = %v, want 3 %s, 1 %s, 1 %s", reasons, ReasonCreatedPod, ReasonCreatedConfigMap, ReasonReady)
		}
	})
}

func TestStatusIsWrittenOnlyWhenItChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, harnessOptions{objects: []*v1alpha1.Bellerophon{bellerophon("a", 1, "1", nil)}})
		syncs := func(n int) {
			for range n {
				if err := h.sync("a"); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
			}
		}
		// First: finalizer and status (0 Pods); second: status (1 Pod, not
		// ready).
		syncs(2)
		if n := len(h.requests("update", v1alpha1.Plural)); n != 3 {
			t.Errorf("%d updates of the Bellerophon after creating its Pod, want 3 (finalizer, status twice)", n)
		}
		syncs(3)
		if n := len(h.requests("update", v1alpha1.Plural)); n != 3 {
			t.Errorf("%d updates of the Bellerophon after 3 more reconciles of an unchanged world, want still 3", n)
		}
		h.markReady()
		synctest.Wait()
		syncs(2)
		if n := len(h.requests("update", v1alpha1.Plural)); n != 4 {
			t.Errorf("%d updates of the Bellerophon after its Pod became ready, want 4 (one more status)", n)
		}
	})
}

// TestExpectationsPreventDuplicateCreatesWhileThePodCacheLags holds the
// controller's Pod watch for 10s: the second reconcile cannot see the Pods
// the first one created. The expectations keep it from creating them
// again; without them (the no-expectations mutant) it does.
func TestExpectationsPreventDuplicateCreatesWhileThePodCacheLags(t *testing.T) {
	for _, tc := range []struct {
		bug  Bug
		want int
	}{{NoBug, 3}, {NoExpectations, 6}} {
		t.Run(string(tc.bug)+"correct", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, harnessOptions{bug: tc.bug, delay: map[string]time.Duration{"pods": 10 * time.Second},
					objects: []*v1alpha1.Bellerophon{bellerophon("a", 3, "1", nil)}})
				for range 2 {
					if err := h.sync("a"); err != nil {
						t.Fatal(err)
					}
				}
				if n := len(h.pods()); n != tc.want {
					t.Errorf("bug %q: %d Pods after two reconciles with a lagging Pod cache, want %d", tc.bug, n, tc.want)
				}
				// Once the Pod events arrive, the expectations are met.
				time.Sleep(11 * time.Second)
				synctest.Wait()
				if ok, _ := h.c.expectations.Satisfied("default/a", h.get("a").UID); !ok {
					t.Errorf("expectations unsatisfied after every create was observed")
				}
			})
		})
	}
}

func TestVersionChangeReplacesPods(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, harnessOptions{objects: []*v1alpha1.Bellerophon{bellerophon("a", 2, "1", nil)}})
		if err := h.sync("a"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		b := h.get("a")
		b.Spec.Version = "2"
		u, _ := toUnstructured(b)
		if _, err := h.user.Update(context.Background(), v1alpha1.Resource, "default", u, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if err := h.sync("a"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		pods := ownedBy(h.pods(), b.UID)
		if len(pods) != 2 {
			t.Fatalf("%d live Pods after the version change, want 2", len(pods))
		}
		for _, p := range pods {
			if p.Spec.Containers[0].Image != "bellerophon:2" {
				t.Errorf("Pod %s runs %s after the change to version 2", p.Name, p.Spec.Containers[0].Image)
			}
		}
		if n := len(h.requests("delete", "pods")); n != 2 {
			t.Errorf("%d Pod deletes, want 2 (the version-1 Pods)", n)
		}
	})
}

func TestScaleDownDeletesTheExcessPods(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, harnessOptions{objects: []*v1alpha1.Bellerophon{bellerophon("a", 3, "1", nil)}})
		if err := h.sync("a"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		b := h.get("a")
		b.Spec.Replicas = 1
		u, _ := toUnstructured(b)
		if _, err := h.user.Update(context.Background(), v1alpha1.Resource, "default", u, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if err := h.sync("a"); err != nil {
			t.Fatal(err)
		}
		if n := len(ownedBy(h.pods(), b.UID)); n != 1 {
			t.Errorf("%d Pods after scaling to 1, want 1", n)
		}
	})
}

func TestDeletedBellerophonIsFinalizedAndItsBackupRemoved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, harnessOptions{objects: []*v1alpha1.Bellerophon{bellerophon("a", 1, "1", nil)}})
		if err := h.sync("a"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		uid := h.get("a").UID
		if _, ok := h.c.backups.Get(uid); !ok {
			t.Fatalf("no backup of a after its first reconcile")
		}
		if err := h.user.Delete(context.Background(), v1alpha1.Resource, "default", "a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if b := h.get("a"); b == nil || b.DeletionTimestamp == nil {
			t.Fatalf("a should be terminating, held by its finalizer; got %+v", b)
		}
		if err := h.sync("a"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if b := h.get("a"); b != nil {
			t.Errorf("a still exists after finalization: %+v", b.ObjectMeta)
		}
		if _, ok := h.c.backups.Get(uid); ok {
			t.Errorf("the backup of a survived its deletion")
		}
		snaps := h.rec.where(func(r sim.Record) bool { return r.Kind == sim.RecCache && r.Handler == BackupCacheName })
		if len(snaps) < 2 || len(snaps[len(snaps)-1].Objects) != 0 {
			t.Errorf("backup snapshots = %+v, want the last one empty", snaps)
		}
	})
}

func TestFinalizerNeverRemovedLeavesTheObjectTerminating(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, harnessOptions{bug: FinalizerNeverRemoved, objects: []*v1alpha1.Bellerophon{bellerophon("a", 1, "1", nil)}})
		if err := h.sync("a"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if err := h.user.Delete(context.Background(), v1alpha1.Resource, "default", "a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if err := h.sync("a"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if b := h.get("a"); b == nil || b.DeletionTimestamp == nil {
			t.Errorf("the mutant should leave a terminating; got %+v", b)
		}
		if ok, why := Desired(h.serverObjects()); ok || !strings.Contains(why, "terminating") {
			t.Errorf("Desired = %v (%s), want false naming the terminating object", ok, why)
		}
	})
}

func TestInvalidBellerophonIsRejectedWith422(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, harnessOptions{})
		for _, tc := range []struct {
			b    *v1alpha1.Bellerophon
			want string
		}{
			{bellerophon("neg", -1, "1", nil), "spec.replicas"},
			{bellerophon("empty", 1, "", nil), "spec.version"},
		} {
			u, _ := toUnstructured(tc.b)
			_, err := h.user.Create(context.Background(), v1alpha1.Resource, "default", u, metav1.CreateOptions{})
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("creating %s: err = %v, want 422 Invalid naming %s", tc.b.Name, err, tc.want)
			}
		}
	})
}

// TestBadObjectGetsAWarningEventAndNoPanic serves the CRD without its schema
// (as a server without validation would), creates Bellerophons whose spec
// has the wrong types, and checks the reconciler reports them.
func TestBadObjectGetsAWarningEventAndNoPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, harnessOptions{noValidation: true})
		for name, spec := range map[string]any{
			"wrongtype": map[string]any{"replicas": "three", "version": "1"},
			"nospec":    nil,
			"negative":  map[string]any{"replicas": int64(-2), "version": "1"},
		} {
			u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
			u.SetGroupVersionKind(v1alpha1.GroupVersionKind)
			u.SetNamespace("default")
			u.SetName(name)
			if _, err := h.user.Create(context.Background(), v1alpha1.Resource, "default", u, metav1.CreateOptions{}); err != nil {
				t.Fatalf("creating %s on a server without validation: %v", name, err)
			}
		}
		synctest.Wait()
		for _, name := range []string{"wrongtype", "nospec", "negative"} {
			if err := h.sync(name); err != nil {
				t.Errorf("syncHandler(%s) = %v, want nil (a bad object is reported, not retried)", name, err)
			}
		}
		synctest.Wait()
		warned := map[string]string{}
		for _, e := range h.events() {
			if e.Type == corev1.EventTypeWarning && e.Reason == ReasonInvalidSpec {
				warned[e.InvolvedObject.Name] = e.Message
			}
		}
		for name, field := range map[string]string{"wrongtype": "spec.replicas", "nospec": "spec", "negative": "spec.replicas"} {
			if !strings.Contains(warned[name], field) {
				t.Errorf("Warning %s event for %s = %q, want one naming %s", ReasonInvalidSpec, name, warned[name], field)
			}
		}
		if n := len(h.pods()); n != 0 {
			t.Errorf("%d Pods created for invalid objects", n)
		}
	})
}

func TestConflictIsRetriedWithAFreshRead(t *testing.T) {
	for _, tc := range []struct {
		bug      Bug
		wantErr  bool
		wantDone bool
	}{{NoBug, false, true}, {DropsConflicts, true, false}} {
		t.Run(string(tc.bug)+"correct", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, harnessOptions{bug: tc.bug, delay: map[string]time.Duration{v1alpha1.Plural: time.Minute},
					objects: []*v1alpha1.Bellerophon{bellerophon("a", 1, "1", nil)}})
				// The user labels a: the controller's copy is now stale
				// (its Bellerophon watch lags a minute).
				b := h.get("a")
				b.Labels = map[string]string{"team": "x"}
				u, _ := toUnstructured(b)
				if _, err := h.user.Update(context.Background(), v1alpha1.Resource, "default", u, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				err := h.sync("a")
				if (err != nil) != tc.wantErr || (err != nil && !apierrors.IsConflict(err)) {
					t.Errorf("syncHandler = %v, want error: %v (a 409)", err, tc.wantErr)
				}
				conflicts := 0
				for _, o := range h.requests("update", v1alpha1.Plural) {
					if o.Code == 409 {
						conflicts++
					}
				}
				if conflicts == 0 {
					t.Errorf("no 409 answered: the test does not exercise a conflict")
				}
				got := h.get("a")
				if done := len(got.Finalizers) == 1 && got.Labels["team"] == "x"; done != tc.wantDone {
					t.Errorf("finalizer added keeping the user's label = %v, want %v (object %+v)", done, tc.wantDone, got.ObjectMeta)
				}
			})
		})
	}
}

// TestTombstoneIsUnwrapped delivers a DeletedFinalStateUnknown for a Pod to
// the Pod handler, as a relist after a missed delete does.
func TestTombstoneIsUnwrapped(t *testing.T) {
	for _, tc := range []struct {
		bug         Bug
		wantEnqueue bool
	}{{NoBug, true}, {TombstoneNotUnwrapped, false}} {
		t.Run(string(tc.bug)+"correct", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, harnessOptions{bug: tc.bug, objects: []*v1alpha1.Bellerophon{bellerophon("a", 1, "1", nil)}})
				if err := h.sync("a"); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				for h.c.workqueue.Len() > 0 { // drain what the informers enqueued
					k, _ := h.c.workqueue.Get()
					h.c.workqueue.Done(k)
				}
				pod := h.pods()[0]
				handler := h.c.recordingHandler(ResourcePods, handlerFuncs{h.c.addPod, h.c.updatePod, h.c.deletePod})
				handler.OnDelete(cache.DeletedFinalStateUnknown{Key: "default/" + pod.Name, Obj: &pod})
				if got := h.c.workqueue.Len() == 1; got != tc.wantEnqueue {
					t.Errorf("owner enqueued after a tombstone = %v, want %v", got, tc.wantEnqueue)
				}
				notes := h.rec.where(func(r sim.Record) bool { return r.Kind == sim.RecNote && strings.Contains(r.Detail, "panicked") })
				if (len(notes) > 0) == tc.wantEnqueue {
					t.Errorf("panic notes = %+v; the correct controller must not panic, the mutant must", notes)
				}
				handlerRecs := h.rec.where(func(r sim.Record) bool { return r.Kind == sim.RecHandler && r.Tombstone })
				if len(handlerRecs) != 1 || handlerRecs[0].Name != pod.Name || handlerRecs[0].UID != string(pod.UID) {
					t.Errorf("tombstone handler records = %+v, want one for %s", handlerRecs, pod.Name)
				}
			})
		})
	}
}

// TestRecreatedBellerophonIsANewObject delivers delete+recreate as one
// update (as a relist does) and checks the old incarnation's expectations
// and backup are dropped.
func TestRecreatedBellerophonIsANewObject(t *testing.T) {
	for _, tc := range []struct {
		bug           Bug
		wantOldBackup bool
	}{{NoBug, false}, {NoUIDCheck, true}} {
		t.Run(string(tc.bug)+"correct", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, harnessOptions{bug: tc.bug, objects: []*v1alpha1.Bellerophon{bellerophon("a", 2, "1", nil)}})
				if err := h.sync("a"); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				old := h.get("a")
				// Force-delete: strip the finalizer, delete, recreate.
				old.Finalizers = nil
				u, _ := toUnstructured(old)
				if _, err := h.user.Update(context.Background(), v1alpha1.Resource, "default", u, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := h.user.Delete(context.Background(), v1alpha1.Resource, "default", "a", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				recreated := h.create(bellerophon("a", 2, "1", nil))
				synctest.Wait()
				if err := h.sync("a"); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				if _, ok := h.c.backups.Get(old.UID); ok != tc.wantOldBackup {
					t.Errorf("backup of the deleted incarnation present = %v, want %v", ok, tc.wantOldBackup)
				}
				if _, ok := h.c.backups.Get(recreated.UID); ok == tc.wantOldBackup {
					t.Errorf("backup of the new incarnation present = %v, want %v", ok, !tc.wantOldBackup)
				}
			})
		})
	}
}

func TestUpdateWithANewUIDResetsExpectations(t *testing.T) {
	for _, tc := range []struct {
		bug       Bug
		wantReset bool
	}{{NoBug, true}, {NoUIDCheck, false}} {
		t.Run(string(tc.bug)+"correct", func(t *testing.T) {
			e := newExpectations(tc.bug == NoUIDCheck)
			c := &Controller{bug: tc.bug, expectations: e, lastWritten: map[string]*unstructured.Unstructured{}, vanished: map[string]int{}, holds: map[string]createHold{}, signals: newSignals(recorder{}, time.Second)}
			e.Expect("default/a", "uid1", 3, 0)
			old := &unstructured.Unstructured{}
			old.SetNamespace("default")
			old.SetName("a")
			old.SetUID("uid1")
			old.SetResourceVersion("5")
			nu := old.DeepCopy()
			nu.SetUID("uid2")
			nu.SetResourceVersion("9")
			c.workqueue = recordingQueue{TypedRateLimitingInterface: newTestQueue(t)}
			c.updateBellerophon(old, nu)
			_, found := e.records["default/a"]
			if found == tc.wantReset {
				t.Errorf("expectations record kept = %v after a UID change, want %v", found, !tc.wantReset)
			}
		})
	}
}

func TestExpectationsExpireAfterTheTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newExpectations(false)
		e.Expect("default/a", "u", 1, 0)
		if ok, _ := e.Satisfied("default/a", "u"); ok {
			t.Fatalf("fresh expectations satisfied")
		}
		if ok, _ := e.Satisfied("default/a", "other"); !ok {
			t.Errorf("expectations of another incarnation block this one")
		}
		time.Sleep(ExpectationsTimeout + time.Second)
		if ok, expired := e.Satisfied("default/a", "u"); !ok || !expired {
			t.Errorf("Satisfied after the timeout = %v, %v; want true, expired", ok, expired)
		}
	})
}
