package fakeapi

import (
	goruntime "runtime"

	"k8s.io/apimachinery/pkg/version"
)

// ServerVersion is the version the fake answers as (/version over HTTP,
// Clientset.Discovery().ServerVersion() in process): the Kubernetes
// release of the k8s.io/api and client-go the lab is built with (v0.37.2,
// so v1.37.2), emulating that release with the minimum compatibility
// version one minor below as kube-apiserver reports it. GitVersion carries
// a "-cachelab" suffix, as vendors' builds carry theirs ("-eks-…",
// "-gke.…"), so that a transcript says which server answered; the
// release it names is the one whose API the fake serves.
func ServerVersion() version.Info {
	return version.Info{
		Major:                 "1",
		Minor:                 "37",
		EmulationMajor:        "1",
		EmulationMinor:        "37",
		MinCompatibilityMajor: "1",
		MinCompatibilityMinor: "36",
		GitVersion:            "v1.37.2-cachelab",
		GitTreeState:          "clean",
		GoVersion:             goruntime.Version(),
		Compiler:              goruntime.Compiler,
		Platform:              goruntime.GOOS + "/" + goruntime.GOARCH,
	}
}
