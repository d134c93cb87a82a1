package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of the Bellerophon resource.
const GroupName = "lab.cachelab.dev"

// SchemeGroupVersion is the group and version the types are registered under.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// Kind is the kind of the Bellerophon resource; ListKind the kind of its list.
const (
	Kind     = "Bellerophon"
	ListKind = "BellerophonList"
	// Plural is the resource name in URLs.
	Plural = "bellerophons"
)

// Resource is the GroupVersionResource of Bellerophons.
var Resource = SchemeGroupVersion.WithResource(Plural)

// GroupVersionKind is the GroupVersionKind of a Bellerophon.
var GroupVersionKind = SchemeGroupVersion.WithKind(Kind)

var (
	// SchemeBuilder registers the types with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types to a scheme (for example client-go's
	// kubernetes/scheme.Scheme, so the EventRecorder can reference a
	// Bellerophon).
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &Bellerophon{}, &BellerophonList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
