package store

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// coordination.k8s.io/v1 Leases, what leader election (client-go's
// resourcelock.LeaseLock) and node heartbeats write: typed (microsecond
// times, as MicroTime decodes and encodes them), validated as
// ValidateLeaseSpec does, and created by an update of a missing one
// (leaseStrategy.AllowCreateOnUpdate), as case lease-take-and-renew
// recorded.
func init() {
	builtins = append(builtins, builtin{gvk: coordinationv1.SchemeGroupVersion.WithKind("Lease"), namespaced: true, rules: kindRules{
		nameFn:         apivalidation.NameIsDNSSubdomain,
		createOnUpdate: true,
		validate:       validateLease,
	}})
}

// validateLease is ValidateLeaseSpec.
func validateLease(obj runtime.Object) field.ErrorList {
	spec := obj.(*coordinationv1.Lease).Spec
	path := field.NewPath("spec")
	var errs field.ErrorList
	if d := spec.LeaseDurationSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(path.Child("leaseDurationSeconds"), *d, "must be greater than 0"))
	}
	if t := spec.LeaseTransitions; t != nil && *t < 0 {
		errs = append(errs, field.Invalid(path.Child("leaseTransitions"), *t, "must be greater than or equal to 0"))
	}
	if s := spec.Strategy; s != nil && *s != coordinationv1.OldestEmulationVersion {
		errs = append(errs, field.NotSupported(path.Child("strategy"), *s, []coordinationv1.CoordinatedLeaseStrategy{coordinationv1.OldestEmulationVersion}))
	}
	if h := spec.PreferredHolder; h != nil && *h != "" && (spec.Strategy == nil || *spec.Strategy == "") {
		errs = append(errs, field.Forbidden(path.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return errs
}
