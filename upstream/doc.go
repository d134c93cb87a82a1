// Package upstream is the root of a nested Go module that puts
// kube-controller-manager's real controllers (k8s.io/kubernetes
// v1.37.1, pkg/controller/...) under the lab, each with its KEP-5647
// stale-controller-mitigation feature gate on and off, and runs random-plan
// campaigns over them (make upstream). It is a module of its own so that the
// main module's build and tests never pull in k8s.io/kubernetes.
package upstream
