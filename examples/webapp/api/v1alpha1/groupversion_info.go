// Package v1alpha1 holds the WebApp API (group webapp.cachelab.dev,
// version v1alpha1), in kubebuilder's layout: types with their validation
// markers, from which controller-gen writes the DeepCopy methods and the
// CRD under config/crd/bases.
//
// +kubebuilder:object:generate=true
// +groupName=webapp.cachelab.dev
package v1alpha1

// Regenerate zz_generated.deepcopy.go and the CRD after changing the types
// (from this folder: go generate).
//go:generate go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0 object crd paths=./... output:crd:artifacts:config=../../config/crd/bases

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of the WebApp API.
	GroupVersion = schema.GroupVersion{Group: "webapp.cachelab.dev", Version: "v1alpha1"}

	// SchemeBuilder adds the API's types to a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
