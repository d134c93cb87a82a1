package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WebAppSpec is the web application the user wants: how many replicas of
// which version, on which port, with which configuration.
type WebAppSpec struct {
	// Replicas is the number of Pods of the application's Deployment.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5
	// +kubebuilder:default=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Version is the application's release; the Deployment runs the image
	// of that tag.
	// +kubebuilder:validation:Enum=v1;v2;v3;v4
	// +kubebuilder:default=v1
	// +optional
	Version string `json:"version,omitempty"`

	// Port is the port the application listens on and the Service serves.
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=8080
	// +optional
	Port int32 `json:"port,omitempty"`

	// Greeting is the text the application answers with; it reaches the
	// Pods through the ConfigMap.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[a-z ]*$`
	// +kubebuilder:default=hello
	// +optional
	Greeting string `json:"greeting,omitempty"`

	// LogLevel is the application's log level; it reaches the Pods through
	// the ConfigMap.
	// +kubebuilder:validation:Enum=debug;info;warn
	// +kubebuilder:default=info
	// +optional
	LogLevel string `json:"logLevel,omitempty"`
}

// WebAppStatus is what the operator last saw of the application.
type WebAppStatus struct {
	// ObservedGeneration is the generation of the spec this status
	// describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Replicas is the Deployment's status.replicas (the scale
	// subresource's status replicas).
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// AvailableReplicas is the Deployment's status.availableReplicas.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`

	// Selector is the label selector of the application's Pods, as a
	// string (the scale subresource's label selector).
	// +optional
	Selector string `json:"selector,omitempty"`

	// ConfigHash is the hash of the configuration the Deployment's Pods
	// are rolled to.
	// +optional
	ConfigHash string `json:"configHash,omitempty"`

	// Conditions are the application's conditions: Available (all its
	// replicas are available).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// WebApp is a web application: a Deployment of its version, a Service in
// front of it and a ConfigMap of its configuration, all owned by it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.version`
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.availableReplicas`
type WebApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the application the user wants.
	// +kubebuilder:default={}
	// +optional
	Spec WebAppSpec `json:"spec,omitempty"`
	// Status is what the operator last saw.
	// +optional
	Status WebAppStatus `json:"status,omitempty"`
}

// WebAppList is a list of WebApps.
//
// +kubebuilder:object:root=true
type WebAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the WebApps.
	Items []WebApp `json:"items"`
}

func init() {
	SchemeBuilder.Register(&WebApp{}, &WebAppList{})
}
