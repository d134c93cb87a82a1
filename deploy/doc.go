// Package deploy holds no code: its folder has the Kubernetes manifests
// and the container build recipe that run a cachelab campaign as an
// Indexed Job (campaign-job.yaml, merge-job.yaml, results-pvc.yaml,
// Containerfile), and its test validates the Jobs server-side, a dry-run
// create against `cachelab serve`.
package deploy
