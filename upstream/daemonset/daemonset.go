// Package daemonset puts the real DaemonSet controller of
// kube-controller-manager (k8s.io/kubernetes v1.37.1,
// pkg/controller/daemon) under the lab, wired to the lab's recorded typed
// informers over the fake API server, with the KEP-5647 feature gate
// StaleControllerConsistencyDaemonSet on (upstream/daemonset, the default
// since v1.36) or off (upstream/daemonset-nogate).
//
// The lab runs no scheduler: the controller's Pods stay unbound, each
// aimed at its node by the node-affinity term the controller writes (as
// since v1.12, where the default scheduler binds them); the controller
// reads that term back (daemon/util.GetTargetNodeName), so does Desired.
// New Nodes carry the node.kubernetes.io/not-ready:NoSchedule taint
// (the fake's NodeTaint admission); the plans remove it, standing in for
// the node lifecycle controller, when the Node is "ready". Nodes are only
// added: a Node leaving a DaemonSet needs a scheduler the lab does not
// run. The controller has no Node delete handler (the pod garbage
// collector deletes a deleted Node's bound Pods, and that deletion syncs
// the set), and on a Node update (a NoExecute taint, a label no longer
// selected) it finds the Node's Pods by their spec.nodeName index, which
// unbound Pods are not in: it never syncs, and the old Pod stays (tried:
// the story with a NoExecute taint on n1 ended with its Pod still there,
// gate on and off). Desired leaves Pods aimed at a deleted Node aside.
package daemonset

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/kubernetes/pkg/controller/daemon"
	dsutil "k8s.io/kubernetes/pkg/controller/daemon/util"
	"k8s.io/kubernetes/pkg/features"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/upstream/internal/wiring"
)

// Names of the two subjects.
const (
	// Name is the controller with KEP-5647's gate on (the v1.36+ default).
	Name = "upstream/daemonset"
	// NameNoGate is the controller with the gate off.
	NameNoGate = "upstream/daemonset-nogate"
)

// Workers is kube-controller-manager's default
// --concurrent-daemonset-syncs.
const Workers = 2

// Controller returns the real DaemonSet controller as a lab controller,
// with the KEP-5647 gate set to gate, and kube-controller-manager's
// failed-Pod backoff (1 s doubling to 15 min). It is named Name or
// NameNoGate.
func Controller(gate bool) cachelabtest.Controller {
	return wiring.Controller([2]string{Name, NameNoGate}, features.StaleControllerConsistencyDaemonSet, gate, Workers,
		func(ctx context.Context, env *cachelabtest.Env) (*daemon.DaemonSetsController, error) {
			f := env.Informers
			return daemon.NewDaemonSetsController(ctx, f.Apps().V1().DaemonSets(), f.Apps().V1().ControllerRevisions(),
				f.Core().V1().Pods(), f.Core().V1().Nodes(), env.Kube, flowcontrol.NewBackOff(time.Second, 15*time.Minute))
		}, Desired)
}

// Desired holds when every DaemonSet that is not being deleted runs
// exactly one active Pod (not terminating, not finished), Running and
// Ready, on each Node that should run it (no NoSchedule or NoExecute
// taint: the plans' Pods tolerate none but the ones the controller adds),
// with the template's images when the update strategy is RollingUpdate
// (OnDelete leaves old Pods), no Pod on a Node with a NoExecute taint,
// and a status that says so (observedGeneration; desired, current, ready
// and available counts equal to the Nodes that should run it; none
// misscheduled; for RollingUpdate updatedNumberScheduled too). A Node with
// a NoSchedule taint only may keep a Pod it had (the controller's
// shouldContinueRunning): it is left aside, and so are Pods aimed at a
// Node that does not exist.
func Desired(s *cachelabtest.State) error {
	eligible := map[string]bool{}
	exists := map[string]bool{}
	for _, n := range cachelabtest.List[corev1.Node](s, "") {
		exists[n.Name] = true
		has := func(e corev1.TaintEffect) bool {
			return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Effect == e })
		}
		switch {
		case has(corev1.TaintEffectNoExecute):
			eligible[n.Name] = false
		case has(corev1.TaintEffectNoSchedule):
			// left aside: may keep a Pod it had, gets no new one
		default:
			eligible[n.Name] = n.DeletionTimestamp == nil
		}
	}
	pods := map[string]map[string][]*corev1.Pod{} // set uid -> node -> active pods
	for _, p := range cachelabtest.List[corev1.Pod](s, "") {
		ref := metav1.GetControllerOf(p)
		if ref == nil || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		node, err := dsutil.GetTargetNodeName(p)
		if err != nil || !exists[node] {
			continue // aimed at no node, or at a deleted one: the pod GC's
		}
		if pods[string(ref.UID)] == nil {
			pods[string(ref.UID)] = map[string][]*corev1.Pod{}
		}
		pods[string(ref.UID)][node] = append(pods[string(ref.UID)][node], p)
	}
	want := 0
	for _, ok := range eligible {
		if ok {
			want++
		}
	}
	var why []string
	for _, ds := range cachelabtest.List[appsv1.DaemonSet](s, "") {
		if ds.DeletionTimestamp != nil {
			continue
		}
		if err := runs(ds, eligible, pods[string(ds.UID)], int32(want)); err != nil {
			why = append(why, fmt.Sprintf("DaemonSet %s/%s %v", ds.Namespace, ds.Name, err))
		}
	}
	if len(why) > 0 {
		sort.Strings(why)
		return fmt.Errorf("%s", strings.Join(why, "; "))
	}
	return nil
}

// runs says why ds does not run as it should on the nodes (eligible by
// name) with its active Pods by node, nil when it does.
func runs(ds *appsv1.DaemonSet, eligible map[string]bool, byNode map[string][]*corev1.Pod, want int32) error {
	nodes := make([]string, 0, len(eligible))
	for n := range eligible {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	rolling := ds.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType
	for _, n := range nodes {
		ps := byNode[n]
		switch {
		case !eligible[n] && len(ps) > 0:
			return fmt.Errorf("has %d pod(s) on node %s, which should run none (NoExecute taint)", len(ps), n)
		case !eligible[n]:
			continue
		case len(ps) != 1:
			return fmt.Errorf("has %d active pods on node %s, want 1", len(ps), n)
		case !fakeapi.PodRunningReady(ps[0]):
			return fmt.Errorf("has pod %s on node %s not Ready", ps[0].Name, n)
		case rolling && !slices.Equal(images(&ps[0].Spec), images(&ds.Spec.Template.Spec)):
			return fmt.Errorf("has pod %s on node %s with an old template (images %s, want %s)", ps[0].Name, n,
				strings.Join(images(&ps[0].Spec), ","), strings.Join(images(&ds.Spec.Template.Spec), ","))
		}
	}
	st := ds.Status
	if st.ObservedGeneration < ds.Generation || st.DesiredNumberScheduled != want || st.CurrentNumberScheduled != want ||
		st.NumberReady != want || st.NumberAvailable != want || st.NumberMisscheduled != 0 || (rolling && st.UpdatedNumberScheduled != want) {
		return fmt.Errorf("wants %d pods and its status says observedGeneration=%d (generation %d), desired=%d, current=%d, ready=%d, available=%d, updated=%d, misscheduled=%d",
			want, st.ObservedGeneration, ds.Generation, st.DesiredNumberScheduled, st.CurrentNumberScheduled, st.NumberReady,
			st.NumberAvailable, st.UpdatedNumberScheduled, st.NumberMisscheduled)
	}
	return nil
}

// images are a Pod spec's container images, in order.
func images(spec *corev1.PodSpec) []string {
	out := make([]string, len(spec.Containers))
	for i, c := range spec.Containers {
		out[i] = c.Image
	}
	return out
}
