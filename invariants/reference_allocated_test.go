package invariants_test

import (
	"testing"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/invariants/tracebuild"
	"github.com/cachelab/cachelab/sim"
)

// serviceRun builds a run in which the user creates webs/a and the
// controller gives it a Service with the cluster IP and node port the
// server allocated, and the given port.
func serviceRun(t *testing.T, uid, clusterIP string, nodePort, port int) *sim.Trace {
	t.Helper()
	b := tracebuild.New("ctrl")
	owner := b.Create("user", tracebuild.Obj{Resource: "webs", Namespace: "default", Name: "a", UID: uid + "-web"})
	b.Create("ctrl", tracebuild.Obj{Resource: "services", APIVersion: "v1", Kind: "Service", Namespace: "default", Name: "a",
		UID: uid + "-svc", Owner: owner.UID, Spec: map[string]any{
			"clusterIP": clusterIP, "clusterIPs": []any{clusterIP}, "type": "NodePort",
			"ports": []any{map[string]any{"port": port, "nodePort": nodePort}},
		}})
	b.Final()
	return b.Trace("quiet")
}

// What the server allocates for a Service (a cluster IP, a node port) is
// not the controller's end state: two runs that create the same Services
// in another order hold them swapped (the fake allocates in create order,
// kube-apiserver at random), and pass; a port the controller sets is its
// state, and still fails.
func TestMatchesReferenceLeavesOutWhatTheServerAllocates(t *testing.T) {
	ref := endState(t, serviceRun(t, "r", "10.0.0.17", 30001, 80))
	if v := invariants.MatchesReference(serviceRun(t, "f", "10.0.0.18", 30002, 80), ref, invariants.ReferenceOptions{}); v.Status != invariants.Pass {
		t.Errorf("another cluster IP and node port: %s: %s", v.Status, v.Reason)
	}
	if v := invariants.MatchesReference(serviceRun(t, "f", "10.0.0.18", 30002, 8080), ref, invariants.ReferenceOptions{}); v.Status != invariants.Fail {
		t.Errorf("another port: %s, want fail: %s", v.Status, v.Reason)
	}
}
