package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Bellerophon is a small stateful application: Spec.Replicas Pods running
// image "bellerophon:<Spec.Version>", configured by a ConfigMap rendered from
// Spec.Config. It is namespaced and has a status subresource.
type Bellerophon struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BellerophonSpec   `json:"spec"`
	Status BellerophonStatus `json:"status,omitempty"`
}

// BellerophonSpec is the desired state of a Bellerophon.
type BellerophonSpec struct {
	// Replicas is the number of Pods to run. Minimum 0.
	Replicas int32 `json:"replicas"`
	// Version selects the container image "bellerophon:<Version>". Required,
	// at least one character.
	Version string `json:"version"`
	// Config are the application's settings, rendered into the owned
	// ConfigMap's data.
	Config map[string]string `json:"config,omitempty"`
}

// BellerophonStatus is the observed state of a Bellerophon, written by the
// operator through the status subresource.
type BellerophonStatus struct {
	// ObservedGeneration is the metadata.generation the status was computed
	// from.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// ReadyReplicas counts owned Pods of the wanted version whose Ready
	// condition is True.
	ReadyReplicas int32 `json:"readyReplicas"`
	// Conditions are Ready, Progressing and Degraded (see the Condition*
	// constants).
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// The condition types of a Bellerophon's status.
const (
	// ConditionReady is True when ReadyReplicas == Spec.Replicas.
	ConditionReady = "Ready"
	// ConditionProgressing is True while Pods are being created, replaced or
	// removed, or are not ready yet.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when the last reconcile failed.
	ConditionDegraded = "Degraded"
)

// The reasons of a Bellerophon's conditions.
const (
	// ReasonAllReady: every wanted Pod is Ready.
	ReasonAllReady = "AllReplicasReady"
	// ReasonWaitingForPods: some wanted Pods are missing or not Ready yet.
	ReasonWaitingForPods = "WaitingForPods"
	// ReasonScaling: the number of Pods differs from Spec.Replicas.
	ReasonScaling = "Scaling"
	// ReasonRollingVersion: Pods of an old version are being replaced.
	ReasonRollingVersion = "RollingVersion"
	// ReasonStable: nothing to do.
	ReasonStable = "Stable"
	// ReasonReconcileFailed: the last reconcile returned an error.
	ReasonReconcileFailed = "ReconcileFailed"
	// ReasonReconciled: the last reconcile succeeded.
	ReasonReconciled = "Reconciled"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// BellerophonList is a list of Bellerophons.
type BellerophonList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Bellerophon `json:"items"`
}
