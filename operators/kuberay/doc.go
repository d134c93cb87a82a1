// Package kuberay holds the test that puts KubeRay's RayCluster reconciler
// (github.com/ray-project/kuberay/ray-operator, imported from the module
// proxy, unchanged) under the lab: random plans drawn from the RayCluster
// CRD's schema, starting from KubeRay's own samples, judged by the lab's
// invariants and the differential oracle (matches-reference). See
// docs/real-operators.md.
package kuberay
