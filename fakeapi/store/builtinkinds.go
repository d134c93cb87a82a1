package store

import (
	"fmt"
	"net"
	"slices"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// The built-in kinds operators create besides workloads (issue 29's
// "kinds 404"): PersistentVolumeClaims and ReplicationControllers (v1),
// RBAC (rbac.authorization.k8s.io/v1), PodDisruptionBudgets (policy/v1),
// Ingresses and NetworkPolicies (networking.k8s.io/v1) and
// HorizontalPodAutoscalers (autoscaling/v2). Each is served with the real
// server's scope, name rule, status subresource, scale subresource and
// generation, the scheme defaults a client observes, and the required-field
// checks of k8s.io/kubernetes pkg/apis/<group>/validation, written from
// those functions (the lab does not import k8s.io/kubernetes): the
// checks an operator's object commonly trips, not every one. See
// docs/builtin-kinds.md for what is not modelled.
// pvcProtectionFinalizer is the finalizer StorageObjectInUseProtection
// adds to every claim.
const pvcProtectionFinalizer = "kubernetes.io/pvc-protection"

func init() {
	builtins = append(builtins,
		builtin{gvk: corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), namespaced: true, hasStatus: true, rules: kindRules{
			nameFn:   apivalidation.NameIsDNSSubdomain,
			defaults: defaultPVC,
			admit: func(_ *Store, obj runtime.Object) error {
				// The StorageObjectInUseProtection admission plugin (on by
				// default): a claim is created with its protection
				// finalizer, which kube-controller-manager's
				// pvc-protection controller removes once no Pod uses it.
				pvc := obj.(*corev1.PersistentVolumeClaim)
				if !slices.Contains(pvc.Finalizers, pvcProtectionFinalizer) {
					pvc.Finalizers = append(pvc.Finalizers, pvcProtectionFinalizer)
				}
				return nil
			},
			validate: func(obj runtime.Object) field.ErrorList {
				return validatePVCSpec(&obj.(*corev1.PersistentVolumeClaim).Spec)
			},
			validateUpdate: validatePVCUpdate,
		}},
		builtin{gvk: corev1.SchemeGroupVersion.WithKind("ReplicationController"), namespaced: true, hasStatus: true, scale: true, rules: kindRules{
			nameFn: apivalidation.NameIsDNSSubdomain, generation: true,
			fields: func(obj runtime.Object, set fields.Set) {
				set["status.replicas"] = itoa32(obj.(*corev1.ReplicationController).Status.Replicas)
			},
			defaults: defaultRC,
			validate: func(obj runtime.Object) field.ErrorList { return validateRC(obj.(*corev1.ReplicationController)) },
		}},
		builtin{gvk: rbacv1.SchemeGroupVersion.WithKind("Role"), namespaced: true, rules: kindRules{
			nameFn: path.ValidatePathSegmentName, // ValidateRBACName
			validate: func(obj runtime.Object) field.ErrorList {
				return validatePolicyRules(obj.(*rbacv1.Role).Rules, true)
			},
		}},
		builtin{gvk: rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), namespaced: false, rules: kindRules{
			nameFn: path.ValidatePathSegmentName,
			validate: func(obj runtime.Object) field.ErrorList {
				cr := obj.(*rbacv1.ClusterRole)
				errs := validatePolicyRules(cr.Rules, false)
				if a := cr.AggregationRule; a != nil {
					p := field.NewPath("aggregationRule", "clusterRoleSelectors")
					if len(a.ClusterRoleSelectors) == 0 {
						errs = append(errs, field.Required(p, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
					}
					for i := range a.ClusterRoleSelectors {
						errs = append(errs, metav1validation.ValidateLabelSelector(&a.ClusterRoleSelectors[i], metav1validation.LabelSelectorValidationOptions{}, p.Index(i))...)
					}
				}
				return errs
			},
		}},
		builtin{gvk: rbacv1.SchemeGroupVersion.WithKind("RoleBinding"), namespaced: true, rules: kindRules{
			nameFn: path.ValidatePathSegmentName,
			defaults: func(obj runtime.Object) {
				b := obj.(*rbacv1.RoleBinding)
				defaultBinding(&b.RoleRef, b.Subjects)
			},
			validate: func(obj runtime.Object) field.ErrorList {
				b := obj.(*rbacv1.RoleBinding)
				return validateBinding(b.RoleRef, b.Subjects, true)
			},
			validateUpdate: func(obj, old runtime.Object) field.ErrorList {
				return immutableRoleRef(obj.(*rbacv1.RoleBinding).RoleRef, old.(*rbacv1.RoleBinding).RoleRef)
			},
		}},
		builtin{gvk: rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"), namespaced: false, rules: kindRules{
			nameFn: path.ValidatePathSegmentName,
			defaults: func(obj runtime.Object) {
				b := obj.(*rbacv1.ClusterRoleBinding)
				defaultBinding(&b.RoleRef, b.Subjects)
			},
			validate: func(obj runtime.Object) field.ErrorList {
				b := obj.(*rbacv1.ClusterRoleBinding)
				return validateBinding(b.RoleRef, b.Subjects, false)
			},
			validateUpdate: func(obj, old runtime.Object) field.ErrorList {
				return immutableRoleRef(obj.(*rbacv1.ClusterRoleBinding).RoleRef, old.(*rbacv1.ClusterRoleBinding).RoleRef)
			},
		}},
		builtin{gvk: policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"), namespaced: true, hasStatus: true, rules: kindRules{
			nameFn: apivalidation.NameIsDNSSubdomain, generation: true,
			validate: func(obj runtime.Object) field.ErrorList { return validatePDB(obj.(*policyv1.PodDisruptionBudget)) },
		}},
		builtin{gvk: networkingv1.SchemeGroupVersion.WithKind("Ingress"), namespaced: true, hasStatus: true, rules: kindRules{
			nameFn: apivalidation.NameIsDNSSubdomain, generation: true,
			validate: func(obj runtime.Object) field.ErrorList {
				return validateIngressSpec(&obj.(*networkingv1.Ingress).Spec)
			},
		}},
		builtin{gvk: networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy"), namespaced: true, rules: kindRules{
			nameFn: apivalidation.NameIsDNSSubdomain, generation: true,
			defaults: defaultNetworkPolicy,
			validate: func(obj runtime.Object) field.ErrorList {
				return validateNetworkPolicySpec(&obj.(*networkingv1.NetworkPolicy).Spec)
			},
		}},
		builtin{gvk: autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"), namespaced: true, hasStatus: true, rules: kindRules{
			// HPAGeneration: generation 1 on create, bumped on spec changes.
			nameFn: apivalidation.NameIsDNSSubdomain, generation: true,
			defaults: defaultHPA,
			validate: func(obj runtime.Object) field.ErrorList {
				return validateHPA(obj.(*autoscalingv2.HorizontalPodAutoscaler))
			},
		}},
	)
}

// defaultPVC is SetDefaults_PersistentVolumeClaim(Spec): a Pending phase
// (the status the claim is answered with until a binder writes one) and a
// Filesystem volumeMode.
func defaultPVC(obj runtime.Object) {
	pvc := obj.(*corev1.PersistentVolumeClaim)
	if pvc.Status.Phase == "" {
		pvc.Status.Phase = corev1.ClaimPending
	}
	if pvc.Spec.VolumeMode == nil {
		pvc.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
}

var pvcAccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod}

// validatePVCSpec is the required part of ValidatePersistentVolumeClaimSpec:
// at least one supported access mode (ReadWriteOncePod alone), a positive
// storage request, a supported volumeMode.
func validatePVCSpec(spec *corev1.PersistentVolumeClaimSpec) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec")
	if len(spec.AccessModes) == 0 {
		errs = append(errs, field.Required(p.Child("accessModes"), "at least 1 access mode is required"))
	}
	for _, m := range spec.AccessModes {
		if !contains(pvcAccessModes, m) {
			errs = append(errs, field.NotSupported(p.Child("accessModes"), m, pvcAccessModes))
		}
	}
	if contains(spec.AccessModes, corev1.ReadWriteOncePod) && len(spec.AccessModes) > 1 {
		errs = append(errs, field.Forbidden(p.Child("accessModes"), "may not use ReadWriteOncePod with other access modes"))
	}
	if spec.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
	}
	storage, ok := spec.Resources.Requests[corev1.ResourceStorage]
	switch {
	case !ok:
		errs = append(errs, field.Required(p.Child("resources").Key(string(corev1.ResourceStorage)), ""))
	case storage.Sign() <= 0:
		errs = append(errs, field.Invalid(p.Child("resources").Key(string(corev1.ResourceStorage)), storage.String(), "must be greater than zero"))
	}
	if m := spec.VolumeMode; m != nil && *m != corev1.PersistentVolumeFilesystem && *m != corev1.PersistentVolumeBlock {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), *m, []corev1.PersistentVolumeMode{corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem}))
	}
	return errs
}

// validatePVCUpdate is ValidatePersistentVolumeClaimUpdate's immutable
// spec: only a bound claim's resources.requests (not shrunk) and
// volumeAttributesClassName, and a volumeName not yet set, may change.
func validatePVCUpdate(obj, old runtime.Object) field.ErrorList {
	n, o := obj.(*corev1.PersistentVolumeClaim), old.(*corev1.PersistentVolumeClaim)
	bound := o.Status.Phase == corev1.ClaimBound
	cp := n.Spec.DeepCopy()
	if bound {
		cp.Resources.Requests = o.Spec.Resources.Requests
	}
	cp.VolumeAttributesClassName = o.Spec.VolumeAttributesClassName
	if o.Spec.VolumeName == "" {
		cp.VolumeName = ""
	}
	var errs field.ErrorList
	if !apiequalitySemantic(*cp, o.Spec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"))
	}
	nq, oq := n.Spec.Resources.Requests[corev1.ResourceStorage], o.Spec.Resources.Requests[corev1.ResourceStorage]
	if bound && nq.Cmp(oq) < 0 {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"))
	}
	return errs
}

// defaultRC is SetDefaults_ReplicationController: selector and labels
// from the template's labels when empty, one replica, and the template's
// pod defaults.
func defaultRC(obj runtime.Object) {
	rc := obj.(*corev1.ReplicationController)
	if t := rc.Spec.Template; t != nil {
		if len(rc.Spec.Selector) == 0 {
			rc.Spec.Selector = t.Labels
		}
		if len(rc.Labels) == 0 {
			rc.Labels = t.Labels
		}
		defaultPodSpec(&t.Spec)
	}
	defaultReplicas(&rc.Spec.Replicas)
}

// validateRC is ValidateReplicationControllerSpec's required fields (a
// selector, a template whose labels it matches, restartPolicy Always, no
// activeDeadlineSeconds, non-negative counts) and the status checks of
// ValidateReplicationControllerStatus.
func validateRC(rc *corev1.ReplicationController) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	errs = append(errs, nonNegative(spec.Child("minReadySeconds"), int64(rc.Spec.MinReadySeconds))...)
	if rc.Spec.Replicas != nil {
		errs = append(errs, nonNegative(spec.Child("replicas"), int64(*rc.Spec.Replicas))...)
	}
	sel := labels.Set(rc.Spec.Selector).AsSelectorPreValidated()
	if sel.Empty() {
		errs = append(errs, field.Required(spec.Child("selector"), ""))
	}
	t := rc.Spec.Template
	if t == nil {
		errs = append(errs, field.Required(spec.Child("template"), ""))
	} else {
		if !sel.Empty() && !sel.Matches(labels.Set(t.Labels)) {
			errs = append(errs, field.Invalid(spec.Child("template", "metadata", "labels"), t.Labels, "selector does not match template labels"))
		}
		errs = append(errs, validatePodTemplate(t)...)
		if t.Spec.RestartPolicy != corev1.RestartPolicyAlways {
			errs = append(errs, field.NotSupported(spec.Child("template", "spec", "restartPolicy"), t.Spec.RestartPolicy, []corev1.RestartPolicy{corev1.RestartPolicyAlways}))
		}
		if t.Spec.ActiveDeadlineSeconds != nil {
			errs = append(errs, field.Forbidden(spec.Child("template", "spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in ReplicationController is not Supported"))
		}
	}
	st, sp := rc.Status, field.NewPath("status")
	errs = append(errs, nonNegative(sp.Child("replicas"), int64(st.Replicas))...)
	errs = append(errs, nonNegative(sp.Child("fullyLabeledReplicas"), int64(st.FullyLabeledReplicas))...)
	errs = append(errs, nonNegative(sp.Child("readyReplicas"), int64(st.ReadyReplicas))...)
	errs = append(errs, nonNegative(sp.Child("availableReplicas"), int64(st.AvailableReplicas))...)
	errs = append(errs, nonNegative(sp.Child("observedGeneration"), st.ObservedGeneration)...)
	if st.FullyLabeledReplicas > st.Replicas {
		errs = append(errs, field.Invalid(sp.Child("fullyLabeledReplicas"), st.FullyLabeledReplicas, "cannot be greater than the number of replicas"))
	}
	if st.ReadyReplicas > st.Replicas {
		errs = append(errs, field.Invalid(sp.Child("readyReplicas"), st.ReadyReplicas, "cannot be greater than the number of replicas"))
	}
	if st.AvailableReplicas > st.Replicas {
		errs = append(errs, field.Invalid(sp.Child("availableReplicas"), st.AvailableReplicas, "cannot be greater than the number of replicas"))
	}
	if st.AvailableReplicas > st.ReadyReplicas {
		errs = append(errs, field.Invalid(sp.Child("availableReplicas"), st.AvailableReplicas, "cannot be greater than readyReplicas"))
	}
	return errs
}

// nonNegative is ValidateNonnegativeField.
func nonNegative(p *field.Path, v int64) field.ErrorList {
	if v < 0 {
		return field.ErrorList{field.Invalid(p, v, "must be greater than or equal to 0")}
	}
	return nil
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// validatePolicyRules is ValidatePolicyRule of each rule: verbs required;
// a non-resource rule only on cluster roles and with nothing else; a
// resource rule needs API groups and resources.
func validatePolicyRules(rules []rbacv1.PolicyRule, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	for i, r := range rules {
		p := field.NewPath("rules").Index(i)
		if len(r.Verbs) == 0 {
			errs = append(errs, field.Required(p.Child("verbs"), "verbs must contain at least one value"))
		}
		if len(r.NonResourceURLs) > 0 {
			if namespaced {
				errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), r.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
			}
			if len(r.APIGroups) > 0 || len(r.Resources) > 0 || len(r.ResourceNames) > 0 {
				errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), r.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
			}
			continue
		}
		if len(r.APIGroups) == 0 {
			errs = append(errs, field.Required(p.Child("apiGroups"), "resource rules must supply at least one api group"))
		}
		if len(r.Resources) == 0 {
			errs = append(errs, field.Required(p.Child("resources"), "resource rules must supply at least one resource"))
		}
	}
	return errs
}

// defaultBinding is rbac/v1's SetDefaults_RoleBinding and
// SetDefaults_Subject: the roleRef's and User/Group subjects' apiGroup is
// rbac.authorization.k8s.io when empty.
func defaultBinding(ref *rbacv1.RoleRef, subjects []rbacv1.Subject) {
	if ref.APIGroup == "" {
		ref.APIGroup = rbacv1.GroupName
	}
	for i := range subjects {
		s := &subjects[i]
		if s.APIGroup == "" && (s.Kind == rbacv1.UserKind || s.Kind == rbacv1.GroupKind) {
			s.APIGroup = rbacv1.GroupName
		}
	}
}

// validateBinding is ValidateRoleBinding and ValidateClusterRoleBinding:
// the roleRef names a Role (bindings only) or ClusterRole of the RBAC
// group, and each subject is a ServiceAccount (with a namespace on cluster
// bindings), User or Group with its apiGroup.
func validateBinding(ref rbacv1.RoleRef, subjects []rbacv1.Subject, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	rp := field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		errs = append(errs, field.NotSupported(rp.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	kinds := []string{"ClusterRole"}
	if namespaced {
		kinds = []string{"Role", "ClusterRole"}
	}
	if !contains(kinds, ref.Kind) {
		errs = append(errs, field.NotSupported(rp.Child("kind"), ref.Kind, kinds))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(rp.Child("name"), ""))
	} else {
		for _, msg := range path.ValidatePathSegmentName(ref.Name, false) {
			errs = append(errs, field.Invalid(rp.Child("name"), ref.Name, msg))
		}
	}
	for i, s := range subjects {
		p := field.NewPath("subjects").Index(i)
		if s.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			if s.Name != "" {
				for _, msg := range apivalidation.NameIsDNSSubdomain(s.Name, false) {
					errs = append(errs, field.Invalid(p.Child("name"), s.Name, msg))
				}
			}
			if s.APIGroup != "" {
				errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{""}))
			}
			if !namespaced && s.Namespace == "" {
				errs = append(errs, field.Required(p.Child("namespace"), ""))
			}
		case rbacv1.UserKind, rbacv1.GroupKind:
			if s.APIGroup != rbacv1.GroupName {
				errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("kind"), s.Kind, []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
		}
	}
	return errs
}

// immutableRoleRef: a binding's roleRef cannot change.
func immutableRoleRef(ref, old rbacv1.RoleRef) field.ErrorList {
	if ref != old {
		return field.ErrorList{field.Invalid(field.NewPath("roleRef"), ref, "cannot change roleRef")}
	}
	return nil
}

// validatePDB is ValidatePodDisruptionBudgetSpec (minAvailable and
// maxUnavailable exclusive, each a non-negative int or percentage, a
// valid selector, a supported unhealthyPodEvictionPolicy) and the
// non-negative counts of its status validation.
func validatePDB(pdb *policyv1.PodDisruptionBudget) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if pdb.Spec.MinAvailable != nil && pdb.Spec.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(spec, pdb.Spec, "minAvailable and maxUnavailable cannot be both set"))
	}
	if v := pdb.Spec.MinAvailable; v != nil {
		errs = append(errs, validatePositiveIntOrPercent(*v, spec.Child("minAvailable"))...)
	}
	if v := pdb.Spec.MaxUnavailable; v != nil {
		errs = append(errs, validatePositiveIntOrPercent(*v, spec.Child("maxUnavailable"))...)
	}
	if pdb.Spec.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(pdb.Spec.Selector, metav1validation.LabelSelectorValidationOptions{}, spec.Child("selector"))...)
	}
	policies := []policyv1.UnhealthyPodEvictionPolicyType{policyv1.IfHealthyBudget, policyv1.AlwaysAllow}
	if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && !contains(policies, *p) {
		errs = append(errs, field.NotSupported(spec.Child("unhealthyPodEvictionPolicy"), *p, policies))
	}
	st, sp := pdb.Status, field.NewPath("status")
	errs = append(errs, nonNegative(sp.Child("disruptionsAllowed"), int64(st.DisruptionsAllowed))...)
	errs = append(errs, nonNegative(sp.Child("currentHealthy"), int64(st.CurrentHealthy))...)
	errs = append(errs, nonNegative(sp.Child("desiredHealthy"), int64(st.DesiredHealthy))...)
	errs = append(errs, nonNegative(sp.Child("expectedPods"), int64(st.ExpectedPods))...)
	return errs
}

// validatePositiveIntOrPercent is the apps validation's
// ValidatePositiveIntOrPercent and IsNotMoreThan100Percent.
func validatePositiveIntOrPercent(v intstr.IntOrString, p *field.Path) field.ErrorList {
	switch v.Type {
	case intstr.String:
		n, ok := strings.CutSuffix(v.StrVal, "%")
		var pct int
		if _, err := fmt.Sscanf(n, "%d", &pct); !ok || err != nil || fmt.Sprint(pct) != n {
			return field.ErrorList{field.Invalid(p, v, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")}
		}
		if pct < 0 {
			return field.ErrorList{field.Invalid(p, v, "must be greater than or equal to 0")}
		}
		if pct > 100 {
			return field.ErrorList{field.Invalid(p, v, "must not be greater than 100%")}
		}
	case intstr.Int:
		return nonNegative(p, int64(v.IntVal))
	}
	return nil
}

var ingressPathTypes = []networkingv1.PathType{networkingv1.PathTypeExact, networkingv1.PathTypePrefix, networkingv1.PathTypeImplementationSpecific}

// validateIngressSpec is ValidateIngressSpec's required fields: a default
// backend or rules, valid hosts, each HTTP path with a supported pathType
// and an absolute path, each backend a service (name and exactly one of
// port name or number) or a resource.
func validateIngressSpec(spec *networkingv1.IngressSpec) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("spec")
	if len(spec.Rules) == 0 && spec.DefaultBackend == nil {
		errs = append(errs, field.Invalid(sp, spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if spec.DefaultBackend != nil {
		errs = append(errs, validateIngressBackend(spec.DefaultBackend, sp.Child("defaultBackend"))...)
	}
	if c := spec.IngressClassName; c != nil {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*c, false) {
			errs = append(errs, field.Invalid(sp.Child("ingressClassName"), *c, msg))
		}
	}
	for i, r := range spec.Rules {
		rp := sp.Child("rules").Index(i)
		if h := r.Host; h != "" {
			if net.ParseIP(h) != nil {
				errs = append(errs, field.Invalid(rp.Child("host"), h, "must be a DNS name, not an IP address"))
			}
			check := validation.IsDNS1123Subdomain
			if strings.Contains(h, "*") {
				check = validation.IsWildcardDNS1123Subdomain
			}
			for _, msg := range check(h) {
				errs = append(errs, field.Invalid(rp.Child("host"), h, msg))
			}
		}
		if r.HTTP == nil {
			continue
		}
		pp := rp.Child("http", "paths")
		if len(r.HTTP.Paths) == 0 {
			errs = append(errs, field.Required(pp, ""))
		}
		for j, hp := range r.HTTP.Paths {
			p := pp.Index(j)
			switch {
			case hp.PathType == nil:
				errs = append(errs, field.Required(p.Child("pathType"), "pathType must be specified"))
			case !contains(ingressPathTypes, *hp.PathType):
				errs = append(errs, field.NotSupported(p.Child("pathType"), *hp.PathType, ingressPathTypes))
			case *hp.PathType != networkingv1.PathTypeImplementationSpecific || hp.Path != "":
				if !strings.HasPrefix(hp.Path, "/") {
					errs = append(errs, field.Invalid(p.Child("path"), hp.Path, "must be an absolute path"))
				}
			}
			errs = append(errs, validateIngressBackend(&hp.Backend, p.Child("backend"))...)
		}
	}
	return errs
}

// validateIngressBackend is validateIngressBackend of the networking
// validation.
func validateIngressBackend(b *networkingv1.IngressBackend, p *field.Path) field.ErrorList {
	switch {
	case b.Resource != nil && b.Service != nil:
		return field.ErrorList{field.Invalid(p, "", "cannot set both resource and service backends")}
	case b.Resource != nil:
		var errs field.ErrorList
		if b.Resource.Kind == "" {
			errs = append(errs, field.Required(p.Child("resource", "kind"), "kind is required"))
		}
		if b.Resource.Name == "" {
			errs = append(errs, field.Required(p.Child("resource", "name"), "name is required"))
		}
		return errs
	case b.Service != nil:
		var errs field.ErrorList
		if b.Service.Name == "" {
			errs = append(errs, field.Required(p.Child("service", "name"), ""))
		} else {
			for _, msg := range apivalidation.NameIsDNS1035Label(b.Service.Name, false) {
				errs = append(errs, field.Invalid(p.Child("service", "name"), b.Service.Name, msg))
			}
		}
		port := b.Service.Port
		switch {
		case port.Name != "" && port.Number != 0:
			errs = append(errs, field.Invalid(p, "", "cannot set both port name & port number"))
		case port.Name != "":
			for _, msg := range validation.IsValidPortName(port.Name) {
				errs = append(errs, field.Invalid(p.Child("service", "port", "name"), port.Name, msg))
			}
		case port.Number != 0:
			for _, msg := range validation.IsValidPortNum(int(port.Number)) {
				errs = append(errs, field.Invalid(p.Child("service", "port", "number"), port.Number, msg))
			}
		default:
			errs = append(errs, field.Required(p, "port name or number is required"))
		}
		return errs
	}
	return field.ErrorList{field.Invalid(p, "", "resource or service backend is required")}
}

// defaultNetworkPolicy is networking/v1's SetDefaults_NetworkPolicy and
// SetDefaults_NetworkPolicyPort: policyTypes Ingress (and Egress when it
// has egress rules); ports TCP.
func defaultNetworkPolicy(obj runtime.Object) {
	np := obj.(*networkingv1.NetworkPolicy)
	for i := range np.Spec.Ingress {
		defaultNPPorts(np.Spec.Ingress[i].Ports)
	}
	for i := range np.Spec.Egress {
		defaultNPPorts(np.Spec.Egress[i].Ports)
	}
	if len(np.Spec.PolicyTypes) == 0 {
		np.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(np.Spec.Egress) != 0 {
			np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
}

func defaultNPPorts(ports []networkingv1.NetworkPolicyPort) {
	for i := range ports {
		if ports[i].Protocol == nil {
			ports[i].Protocol = ptr.To(corev1.ProtocolTCP)
		}
	}
}

var npProtocols = []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP}

// validateNetworkPolicySpec is ValidateNetworkPolicySpec's checks: a
// valid podSelector, ports with a supported protocol and a valid port
// (endPort only with a numeric port not above it), peers naming a
// selector or an ipBlock (a CIDR, except within it), supported policy
// types.
func validateNetworkPolicySpec(spec *networkingv1.NetworkPolicySpec) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("spec")
	opts := metav1validation.LabelSelectorValidationOptions{}
	errs = append(errs, metav1validation.ValidateLabelSelector(&spec.PodSelector, opts, sp.Child("podSelector"))...)
	ports := func(ps []networkingv1.NetworkPolicyPort, p *field.Path) {
		for i, port := range ps {
			pp := p.Index(i)
			if port.Protocol != nil && !contains(npProtocols, *port.Protocol) {
				errs = append(errs, field.NotSupported(pp.Child("protocol"), *port.Protocol, npProtocols))
			}
			if port.Port != nil {
				if port.Port.Type == intstr.Int {
					for _, msg := range validation.IsValidPortNum(int(port.Port.IntVal)) {
						errs = append(errs, field.Invalid(pp.Child("port"), port.Port.IntVal, msg))
					}
					if port.EndPort != nil && *port.EndPort < port.Port.IntVal {
						errs = append(errs, field.Invalid(pp.Child("endPort"), port.Port.IntVal, "must be greater than or equal to `port`"))
					}
				} else {
					if port.EndPort != nil {
						errs = append(errs, field.Invalid(pp.Child("endPort"), *port.EndPort, "may not be specified when `port` is non-numeric"))
					}
					for _, msg := range validation.IsValidPortName(port.Port.StrVal) {
						errs = append(errs, field.Invalid(pp.Child("port"), port.Port.StrVal, msg))
					}
				}
			} else if port.EndPort != nil {
				errs = append(errs, field.Invalid(pp.Child("endPort"), *port.EndPort, "may not be specified when `port` is not specified"))
			}
		}
	}
	peers := func(ps []networkingv1.NetworkPolicyPeer, p *field.Path) {
		for i, peer := range ps {
			pp := p.Index(i)
			n := 0
			if peer.PodSelector != nil {
				n++
				errs = append(errs, metav1validation.ValidateLabelSelector(peer.PodSelector, opts, pp.Child("podSelector"))...)
			}
			if peer.NamespaceSelector != nil {
				n++
				errs = append(errs, metav1validation.ValidateLabelSelector(peer.NamespaceSelector, opts, pp.Child("namespaceSelector"))...)
			}
			if b := peer.IPBlock; b != nil {
				n++
				errs = append(errs, validateIPBlock(b, pp.Child("ipBlock"))...)
			}
			switch {
			case n == 0:
				errs = append(errs, field.Required(pp, "must specify a peer"))
			case n > 1 && peer.IPBlock != nil:
				errs = append(errs, field.Forbidden(pp, "may not specify more than 1 peer"))
			}
		}
	}
	for i, r := range spec.Ingress {
		ports(r.Ports, sp.Child("ingress").Index(i).Child("ports"))
		peers(r.From, sp.Child("ingress").Index(i).Child("from"))
	}
	for i, r := range spec.Egress {
		ports(r.Ports, sp.Child("egress").Index(i).Child("ports"))
		peers(r.To, sp.Child("egress").Index(i).Child("to"))
	}
	types := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
	for i, t := range spec.PolicyTypes {
		if !contains(types, t) {
			errs = append(errs, field.NotSupported(sp.Child("policyTypes").Index(i), t, types))
		}
	}
	if len(spec.PolicyTypes) > len(types) {
		errs = append(errs, field.Invalid(sp.Child("policyTypes"), spec.PolicyTypes, "may not specify more than two policyTypes"))
	}
	return errs
}

// validateIPBlock is ValidateIPBlock: a CIDR, and except entries that are
// CIDRs strictly within it.
func validateIPBlock(b *networkingv1.IPBlock, p *field.Path) field.ErrorList {
	if b.CIDR == "" {
		return field.ErrorList{field.Required(p.Child("cidr"), "")}
	}
	_, outer, err := net.ParseCIDR(b.CIDR)
	if err != nil {
		return field.ErrorList{field.Invalid(p.Child("cidr"), b.CIDR, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")}
	}
	var errs field.ErrorList
	outerOnes, _ := outer.Mask.Size()
	for i, e := range b.Except {
		_, in, err := net.ParseCIDR(e)
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("except").Index(i), e, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"))
			continue
		}
		ones, _ := in.Mask.Size()
		if !outer.Contains(in.IP) || ones <= outerOnes {
			errs = append(errs, field.Invalid(p.Child("except").Index(i), e, "must be a strict subset of `cidr`"))
		}
	}
	return errs
}

// defaultHPA is autoscaling/v2's SetDefaults_HorizontalPodAutoscaler:
// minReplicas 1, a CPU utilization target of 80% when no metric is
// given, and a given behavior's missing rules filled in
// (GenerateHPAScaleUpRules, GenerateHPAScaleDownRules).
func defaultHPA(obj runtime.Object) {
	h := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	if h.Spec.MinReplicas == nil {
		h.Spec.MinReplicas = ptr.To[int32](1)
	}
	if len(h.Spec.Metrics) == 0 {
		h.Spec.Metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name:   corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)},
			},
		}}
	}
	if b := h.Spec.Behavior; b != nil {
		b.ScaleUp = defaultScalingRules(b.ScaleUp, 0, []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		})
		b.ScaleDown = defaultScalingRules(b.ScaleDown, 300, []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		})
	}
}

func defaultScalingRules(r *autoscalingv2.HPAScalingRules, window int32, policies []autoscalingv2.HPAScalingPolicy) *autoscalingv2.HPAScalingRules {
	if r == nil {
		r = &autoscalingv2.HPAScalingRules{}
	}
	if r.StabilizationWindowSeconds == nil {
		r.StabilizationWindowSeconds = ptr.To(window)
	}
	if r.SelectPolicy == nil {
		r.SelectPolicy = ptr.To(autoscalingv2.MaxChangePolicySelect)
	}
	if r.Policies == nil {
		r.Policies = policies
	}
	return r
}

var hpaMetricTypes = []autoscalingv2.MetricSourceType{autoscalingv2.ObjectMetricSourceType, autoscalingv2.PodsMetricSourceType,
	autoscalingv2.ResourceMetricSourceType, autoscalingv2.ContainerResourceMetricSourceType, autoscalingv2.ExternalMetricSourceType}

// metricSourceField is the field of each metric type's source.
var metricSourceField = map[autoscalingv2.MetricSourceType]string{
	autoscalingv2.ObjectMetricSourceType: "object", autoscalingv2.PodsMetricSourceType: "pods", autoscalingv2.ResourceMetricSourceType: "resource",
	autoscalingv2.ContainerResourceMetricSourceType: "containerResource", autoscalingv2.ExternalMetricSourceType: "external",
}

// scalesToZero: an HPA may have minReplicas 0 with an Object or
// External metric.
func scalesToZero(h *autoscalingv2.HorizontalPodAutoscaler) bool {
	for _, m := range h.Spec.Metrics {
		if m.Type == autoscalingv2.ObjectMetricSourceType || m.Type == autoscalingv2.ExternalMetricSourceType {
			return true
		}
	}
	return false
}

// validateHPA is ValidateHorizontalPodAutoscalerSpec's required fields
// (minReplicas at least 1, maxReplicas at least 1 and minReplicas, a
// scaleTargetRef with kind and name, each metric with a supported type and
// its source) and the non-negative counts of the status validation.
func validateHPA(h *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("spec")
	if m := h.Spec.MinReplicas; m != nil && *m < 0 {
		errs = append(errs, field.Invalid(sp.Child("minReplicas"), *m, "must be greater than or equal to 0"))
	} else if m != nil && *m == 0 && !scalesToZero(h) {
		// HPAScaleToZero: zero only with an Object or External metric.
		errs = append(errs, field.Forbidden(sp.Child("metrics"), "must specify at least one Object or External metric to support scaling to zero replicas"))
	}
	switch {
	case h.Spec.MaxReplicas == 0:
		errs = append(errs, field.Required(sp.Child("maxReplicas"), "must be set and greater than 0"))
	case h.Spec.MaxReplicas < 0:
		errs = append(errs, field.Invalid(sp.Child("maxReplicas"), h.Spec.MaxReplicas, "must be greater than or equal to 1"))
	}
	if m := h.Spec.MinReplicas; m != nil && h.Spec.MaxReplicas < *m {
		errs = append(errs, field.Invalid(sp.Child("maxReplicas"), h.Spec.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	ref, rp := h.Spec.ScaleTargetRef, sp.Child("scaleTargetRef")
	if ref.Kind == "" {
		errs = append(errs, field.Required(rp.Child("kind"), ""))
	} else {
		for _, msg := range path.IsValidPathSegmentName(ref.Kind) {
			errs = append(errs, field.Invalid(rp.Child("kind"), ref.Kind, msg))
		}
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(rp.Child("name"), ""))
	} else {
		for _, msg := range path.IsValidPathSegmentName(ref.Name) {
			errs = append(errs, field.Invalid(rp.Child("name"), ref.Name, msg))
		}
	}
	for i, m := range h.Spec.Metrics {
		mp := sp.Child("metrics").Index(i)
		var set int
		for _, s := range []bool{m.Object != nil, m.Pods != nil, m.Resource != nil, m.ContainerResource != nil, m.External != nil} {
			if s {
				set++
			}
		}
		switch {
		case m.Type == "":
			errs = append(errs, field.Required(mp.Child("type"), "must specify a metric source type"))
		case !contains(hpaMetricTypes, m.Type):
			errs = append(errs, field.NotSupported(mp.Child("type"), m.Type, hpaMetricTypes))
		case set == 0:
			errs = append(errs, field.Required(mp.Child(metricSourceField[m.Type]), "must populate information for the given metric source"))
		case set > 1:
			errs = append(errs, field.Forbidden(mp, "must populate information for only one metric source"))
		}
		if r := m.Resource; r != nil {
			if r.Name == "" {
				errs = append(errs, field.Required(mp.Child("resource", "name"), "must specify a resource name"))
			}
			errs = append(errs, validateMetricTarget(r.Target, mp.Child("resource", "target"))...)
		}
	}
	st, stp := h.Status, field.NewPath("status")
	errs = append(errs, nonNegative(stp.Child("currentReplicas"), int64(st.CurrentReplicas))...)
	errs = append(errs, nonNegative(stp.Child("desiredReplicas"), int64(st.DesiredReplicas))...)
	return errs
}

// validateMetricTarget is validateMetricTarget: a supported type, and the
// value its type needs, positive.
func validateMetricTarget(t autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	types := []autoscalingv2.MetricTargetType{autoscalingv2.UtilizationMetricType, autoscalingv2.ValueMetricType, autoscalingv2.AverageValueMetricType}
	if t.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric target type"))
	} else if !contains(types, t.Type) {
		errs = append(errs, field.NotSupported(p.Child("type"), t.Type, types))
	}
	if t.Value != nil && t.Value.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be positive"))
	}
	if t.AverageValue != nil && t.AverageValue.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("averageValue"), t.AverageValue, "must be positive"))
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(p.Child("averageUtilization"), *t.AverageUtilization, "must be greater than 0"))
	}
	if t.Value == nil && t.AverageValue == nil && t.AverageUtilization == nil {
		errs = append(errs, field.Required(p, "must set either a target raw value or a target utilization"))
	}
	return errs
}
