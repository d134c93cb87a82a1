// +k8s:deepcopy-gen=package
// +groupName=lab.cachelab.dev

// Package v1alpha1 holds the Bellerophon custom resource's Go types, version
// v1alpha1 of group lab.cachelab.dev, in the layout of
// k8s.io/sample-controller's pkg/apis. zz_generated.deepcopy.go is generated
// by deepcopy-gen: run subjects/bellerophon/hack/update-codegen.sh after
// changing a type.
package v1alpha1
