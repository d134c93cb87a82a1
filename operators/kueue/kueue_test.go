package kueue_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/controller/core"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/scheduler"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"

	"github.com/cachelab/cachelab/cachelabtest"
)

// TestKueue puts Kueue's core controllers (ResourceFlavor, ClusterQueue,
// LocalQueue, Workload...) and its scheduler under random plans over
// those kinds, wired as Kueue's main.go wires them (no webhooks, no job
// integration, no TAS, no MultiKueue).
func TestKueue(t *testing.T) {
	cachelabtest.Test(t, controller(t), cachelabtest.Random(cachelabtest.Primary("workloads", "localqueues", "clusterqueues", "resourceflavors"), cachelabtest.Examples("testdata/queues.yaml")))
}

// Kueue does not recompute a ClusterQueue's status.pendingWorkloads when a
// LocalQueue holding a pending Workload is deleted: the queue manager
// drops the Workload from the ClusterQueue's queue, but the ClusterQueue
// reconciler watches ClusterQueues, Namespaces and notifications of
// Workload, ResourceFlavor, AdmissionCheck and Topology changes, not
// LocalQueues, so the status keeps its last count until something else
// reconciles the ClusterQueue (docs/real-operators.md, Q4). The plan's
// Workload asks for 2 CPUs of ClusterQueue a's 1, so it stays pending (it
// asked for 600m when the lab had no Namespace default, which kept every
// Workload pending; with the system namespaces it would be admitted). In the plan
// (operators' campaign, -rapid.seed=1, shrunk) the fault-free reference
// ends with pendingWorkloads 1 for a queue that holds none; the faulted
// run, whose restarted process reconciled the ClusterQueue after the
// delete, ends with 0. matches-reference reports the difference; the stale
// count is the reference's.
func TestFindingPendingWorkloadsStaleAfterLocalQueueDelete(t *testing.T) {
	const file = "findings/clusterqueue-pending-stale-after-localqueue-delete.json"
	failures := cachelabtest.Catch(t, controller(t), cachelabtest.Files(file))
	if len(failures) != 1 {
		t.Fatalf("%d failures, want the plan's one", len(failures))
	}
	// go-cmp follows a diff's -/+ with a space or a no-break space, chosen
	// at random per process on purpose: match either.
	for _, v := range failures[0].Failed {
		if v.Invariant == "matches-reference" && strings.Contains(v.Reason, "clusterqueues/a") &&
			regexp.MustCompile(`-[\s\x{a0}]+"pendingWorkloads":\s+float64\(1\)`).MatchString(v.Detail) &&
			regexp.MustCompile(`\+[\s\x{a0}]+"pendingWorkloads":\s+float64\(0\)`).MatchString(v.Detail) {
			return
		}
	}
	t.Errorf("matches-reference should fail on clusterqueues/a, pendingWorkloads 1 in the reference against 0:\n%s", failures[0].Report)
}

// controller is Kueue under the lab.
func controller(t *testing.T) cachelabtest.Controller {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = kueue.AddToScheme(scheme)
	return cachelabtest.Controller{
		Name:   "kueue",
		Scheme: scheme,
		Expect: []cachelabtest.Expectation{{Invariant: "finalizers", Reason: "Kueue keeps kueue.x-k8s.io/resource-in-use on a ResourceFlavor or ClusterQueue that is still referenced (documented deletion protection)"}},
		CRDs:   cachelabtest.CRDs(filepath.Join(moduleDir(t, "sigs.k8s.io/kueue"), "config/components/crd/bases")),
		Setup: func(mgr ctrl.Manager) error {
			cfg, expect := &configapi.Configuration{}, preemptexpectations.New()
			configapi.SetDefaults_Configuration(cfg)
			cache, requeuer := schdcache.New(mgr.GetClient()), qcache.NewRequeuer()
			queues := qcache.NewManager(mgr.GetClient(), cache, requeuer, qcache.WithPreemptionExpectations(expect))
			_, err := core.SetupControllers(mgr, queues, cache, cfg, nil, expect, nil)
			_, rcErr := mgr.GetCache().GetInformer(context.Background(), &nodev1.RuntimeClass{}) // synced before handlers run: see docs/real-operators.md
			return errors.Join(err, rcErr, indexer.Setup(context.Background(), mgr.GetFieldIndexer()), mgr.Add(requeuer),
				mgr.Add(scheduler.New(queues, cache, mgr.GetClient(), mgr.GetEventRecorderFor("kueue-admission"), scheduler.WithPreemptionExpectations(expect))),
				mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
					go cache.CleanUpOnContext(ctx)
					queues.CleanUpOnContext(ctx)
					return nil
				})))
		},
	}
}

// moduleDir is where the go command keeps module mod (its CRDs), as
// `go list -m` finds it.
func moduleDir(t *testing.T, mod string) string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", mod, err)
	}
	return strings.TrimSpace(string(out))
}
