package fidelity

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Leases is coordination.k8s.io/v1 leases, what leader election locks.
var Leases = Resource{GVR: schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, Namespaced: true}

// lease is a Lease named name held by holder for seconds, acquired and
// renewed at the given times (RFC 3339, any precision: the server keeps
// microseconds).
func lease(name, holder string, seconds int, acquired, renewed string) map[string]any {
	spec := map[string]any{"holderIdentity": holder, "leaseDurationSeconds": seconds}
	if acquired != "" {
		spec["acquireTime"] = acquired
	}
	if renewed != "" {
		spec["renewTime"] = renewed
	}
	return map[string]any{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": map[string]any{"name": name}, "spec": spec}
}

// leaseCases are leader election's requests: a Lease taken, renewed with
// the resourceVersion it read, a stale renewal refused, invalid specs.
var leaseCases = []Case{
	{Name: "lease-take-and-renew", Doc: "A Lease is created with microsecond times, renewed by an update at the read resourceVersion; a renewal at a stale one is 409 Conflict; a time without six fractional digits is 400 (MicroTime's format); an update of a missing Lease creates it (leases allow create on update).", Run: func(e *Env) {
		e.Create("take", Leases, lease("leader", "a", 15, "2026-01-02T03:04:05.000000Z", "2026-01-02T03:04:05.123000Z"))
		got := e.Get("get", Leases, "leader")
		e.Update("renew", Leases, "leader", with(lease("leader", "a", 15, "2026-01-02T03:04:05.000000Z", "2026-01-02T03:04:20.500000Z"), got.RV(), "metadata", "resourceVersion"))
		e.Update("renew at the stale resourceVersion", Leases, "leader", with(lease("leader", "b", 15, "", ""), got.RV(), "metadata", "resourceVersion"))
		e.Patch("hand over", Leases, "leader", "", types.MergePatchType, `{"spec":{"holderIdentity":"b","leaseTransitions":1}}`)
		e.Create("take with seconds only", Leases, lease("coarse", "a", 15, "2026-01-02T03:04:05Z", ""))
		e.Update("update a missing lease", Leases, "fresh", lease("fresh", "c", 10, "", ""))
		e.List("list", Leases, metav1.ListOptions{})
	}},
	{Name: "lease-validation", Doc: "A Lease's leaseDurationSeconds and leaseTransitions may not be negative or zero as validation says.", Run: func(e *Env) {
		e.Create("zero duration", Leases, lease("zero", "a", 0, "", ""))
		bad := lease("negative", "a", 15, "", "")
		bad["spec"].(map[string]any)["leaseTransitions"] = -1
		e.Create("negative transitions", Leases, bad)
		e.Create("no spec", Leases, map[string]any{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": map[string]any{"name": "empty"}})
	}},
}

func init() { Cases = append(Cases, leaseCases...) }
