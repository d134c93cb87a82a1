// Package bellerophon is a small CRD operator written the way
// k8s.io/sample-controller teaches, and its mutants: each a named,
// documented single bug a real controller has had. It implements sim.Subject.
package bellerophon
