package kueue_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/cachelabtest"
)

// findingDiff runs the finding plan file under Kueue (no webhooks) and
// requires its one failure to be matches-reference on object, with a
// diff line matching each of lines (a regexp after the diff's - or +).
func findingDiff(t *testing.T, file, object string, lines ...string) {
	t.Helper()
	failures := cachelabtest.Catch(t, controller(t), cachelabtest.Files(file))
	if len(failures) != 1 {
		t.Fatalf("%d failures, want the plan's one", len(failures))
	}
	for _, v := range failures[0].Failed {
		if v.Invariant != "matches-reference" || !strings.Contains(v.Reason, object) {
			continue
		}
		all := true
		for _, l := range lines {
			// go-cmp follows a diff's -/+ with a space or a no-break
			// space, chosen at random per process on purpose.
			all = all && regexp.MustCompile(regexp.QuoteMeta(l[:1])+`[\s\x{a0}]+`+l[1:]).MatchString(v.Detail)
		}
		if all {
			return
		}
	}
	t.Errorf("matches-reference should fail on %s with %q:\n%s", object, lines, failures[0].Report)
}

// Q5 (docs/real-operators.md): the user deletes LocalQueue a (its
// finalizer patched away) and creates it again at 10s, while Kueue's
// LocalQueue watch is held for 1s. A Workload of that queue that cannot
// be admitted (b: 600m of ClusterQueue a's 1 CPU, a holds 600m) ends in
// both runs with QuotaReserved=False, Inadmissible, and a message written
// while the queue was gone and never rewritten once it was back: the
// fault-free reference says "LocalQueue a doesn't exist", the faulted run
// (whose workload reconciler read the new LocalQueue before the queue
// manager had it) "ClusterQueue  doesn't exist", with an empty name; both
// queues exist at the end. Found by TestKueueWithItsWebhooks
// -rapid.seed=5 and TestKueue -rapid.seed=5 (-rapid.checks=20), shrunk
// by hand from 13 steps to 4.
func TestFindingPendingMessageStaleAfterLocalQueueRecreate(t *testing.T) {
	findingDiff(t, "findings/pending-message-stale-after-localqueue-recreate.json", "workloads/default/b",
		`-"message":\s+string\("LocalQueue a doesn't exist"\)`,
		`+"message":\s+string\("ClusterQueue  doesn't exist"\)`)
}

// Q6 (docs/real-operators.md): the scheduler finds Workload b
// inadmissible (its namespace does not match ClusterQueue a's selector),
// requeues it, then patches its status (QuotaReserved=False, Pending) and
// only logs the error when the patch fails (Kueue v0.17.0
// pkg/scheduler/scheduler.go:855-866): an injected 500 on that one patch
// leaves b with no status to the end (the Pending Event is still
// recorded), while the fault-free reference writes it. Nothing retries
// until the ClusterQueue changes. Found by TestKueue with -rapid.seed=2,
// 5, 7 and 8 (-rapid.checks=20): the same 2-step plan.
func TestFindingPendingStatusLostToOneFailedPatch(t *testing.T) {
	findingDiff(t, "findings/pending-status-lost-to-one-failed-patch.json", "workloads/default/b",
		`-"status":\s+map\[string\]any\{`,
		`-"message":\s+string\("Workload namespace doesn't match"`)
}

// Q7 (docs/real-operators.md): the user deletes ResourceFlavor a (its
// resource-in-use finalizer patched away) and creates it again at 5s,
// while Kueue's watches are held (3s to 6s) and broken at 5s. The
// informer's relist delivers the new flavor as an update of the old one
// (same name), and Kueue's ResourceFlavor reconciler enqueues an update
// only when the flavor is being deleted (resourceflavor_controller.go:
// 167-181): the new flavor never gets kueue.x-k8s.io/resource-in-use,
// the deletion protection the fault-free reference adds at once. Found by
// TestKueue -rapid.seed=4 (-rapid.checks=20), shrunk by hand from 9 steps
// to 5.
func TestFindingRecreatedResourceFlavorWithoutItsFinalizer(t *testing.T) {
	findingDiff(t, "findings/recreated-resourceflavor-without-its-finalizer.json", "resourceflavors/a",
		`-"finalizers":\s+\[\]any\{string\("kueue.x-k8s.io/resource-in-use"\)\}`)
}
