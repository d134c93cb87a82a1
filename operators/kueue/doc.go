// Package kueue holds the test that puts Kueue's core controllers and
// scheduler (sigs.k8s.io/kueue, imported from the module proxy, unchanged)
// under the lab: random plans over Workloads, LocalQueues, ClusterQueues
// and ResourceFlavors drawn from Kueue's CRD schemas, judged by the lab's
// invariants and the differential oracle (matches-reference). See
// docs/real-operators.md.
package kueue
