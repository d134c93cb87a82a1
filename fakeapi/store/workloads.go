package store

import (
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// The built-ins real controllers need (apps/v1 workloads, batch/v1 Job,
// core Node, Service, ServiceAccount), typed, with the parts of their
// registry strategies a client observes: defaults (the scheme's
// SetDefaults_* functions of k8s.io/kubernetes/pkg/apis, copied: the lab
// does not depend on k8s.io/kubernetes), generation bumped on spec
// changes, status reset on create and kept on update, a status
// subresource, a scale subresource (Scale) and the selector checks the
// workload controllers rely on.
func init() {
	builtins = append(builtins,
		builtin{gvk: appsv1.SchemeGroupVersion.WithKind("Deployment"), namespaced: true, hasStatus: true, scale: true, rules: kindRules{
			nameFn: apivalidation.NameIsDNSSubdomain, generation: true,
			defaults: func(obj runtime.Object) {
				d := obj.(*appsv1.Deployment)
				defaultReplicas(&d.Spec.Replicas)
				st := &d.Spec.Strategy
				if st.Type == "" {
					st.Type = appsv1.RollingUpdateDeploymentStrategyType
				}
				if st.Type == appsv1.RollingUpdateDeploymentStrategyType {
					if st.RollingUpdate == nil {
						st.RollingUpdate = &appsv1.RollingUpdateDeployment{}
					}
					if st.RollingUpdate.MaxUnavailable == nil {
						st.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("25%"))
					}
					if st.RollingUpdate.MaxSurge == nil {
						st.RollingUpdate.MaxSurge = ptr.To(intstr.FromString("25%"))
					}
				}
				if d.Spec.RevisionHistoryLimit == nil {
					d.Spec.RevisionHistoryLimit = ptr.To[int32](10)
				}
				if d.Spec.ProgressDeadlineSeconds == nil {
					d.Spec.ProgressDeadlineSeconds = ptr.To[int32](600)
				}
				defaultPodSpec(&d.Spec.Template.Spec)
			},
			validate: func(obj runtime.Object) field.ErrorList {
				d := obj.(*appsv1.Deployment)
				return append(validateWorkload(d.Spec.Replicas, d.Spec.Selector, &d.Spec.Template), validateDeploymentMore(d)...)
			},
			prepareUpdate: func(obj, old runtime.Object) {
				// The deployment strategy bumps generation on an
				// annotation change too (rollback annotations once).
				d, o := obj.(*appsv1.Deployment), old.(*appsv1.Deployment)
				if !apiequalitySemantic(d.Annotations, o.Annotations) {
					d.Generation = o.Generation + 1
				}
			},
			validateUpdate: func(obj, old runtime.Object) field.ErrorList {
				return immutableSelector(obj.(*appsv1.Deployment).Spec.Selector, old.(*appsv1.Deployment).Spec.Selector)
			},
		}},
		builtin{gvk: appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), namespaced: true, hasStatus: true, scale: true, rules: kindRules{
			nameFn: apivalidation.NameIsDNSSubdomain, generation: true,
			fields: func(obj runtime.Object, set fields.Set) {
				set["status.replicas"] = itoa32(obj.(*appsv1.ReplicaSet).Status.Replicas)
			},
			defaults: func(obj runtime.Object) {
				rs := obj.(*appsv1.ReplicaSet)
				defaultReplicas(&rs.Spec.Replicas)
				defaultPodSpec(&rs.Spec.Template.Spec)
			},
			validate: func(obj runtime.Object) field.ErrorList {
				rs := obj.(*appsv1.ReplicaSet)
				return append(validateWorkload(rs.Spec.Replicas, rs.Spec.Selector, &rs.Spec.Template), validateReplicaSetStatus(rs)...)
			},
			validateUpdate: func(obj, old runtime.Object) field.ErrorList {
				return immutableSelector(obj.(*appsv1.ReplicaSet).Spec.Selector, old.(*appsv1.ReplicaSet).Spec.Selector)
			},
		}},
		builtin{gvk: appsv1.SchemeGroupVersion.WithKind("StatefulSet"), namespaced: true, hasStatus: true, scale: true, rules: kindRules{
			nameFn: apivalidation.NameIsDNSSubdomain, generation: true,
			defaults: func(obj runtime.Object) {
				s := obj.(*appsv1.StatefulSet)
				if s.Spec.PodManagementPolicy == "" {
					s.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
				}
				if s.Spec.UpdateStrategy.Type == "" {
					s.Spec.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
					if s.Spec.UpdateStrategy.RollingUpdate == nil {
						s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
					}
				}
				if s.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && s.Spec.UpdateStrategy.RollingUpdate != nil &&
					s.Spec.UpdateStrategy.RollingUpdate.Partition == nil {
					s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](0)
				}
				// MaxUnavailableStatefulSet is on in v1.37.
				if s.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && s.Spec.UpdateStrategy.RollingUpdate != nil &&
					s.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable == nil {
					s.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
				}
				if s.Spec.PersistentVolumeClaimRetentionPolicy == nil {
					s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
				}
				if p := s.Spec.PersistentVolumeClaimRetentionPolicy; p.WhenDeleted == "" {
					p.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
				}
				if p := s.Spec.PersistentVolumeClaimRetentionPolicy; p.WhenScaled == "" {
					p.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
				}
				defaultReplicas(&s.Spec.Replicas)
				if s.Spec.RevisionHistoryLimit == nil {
					s.Spec.RevisionHistoryLimit = ptr.To[int32](10)
				}
				defaultPodSpec(&s.Spec.Template.Spec)
				defaultClaimTemplates(s)
			},
			validate: func(obj runtime.Object) field.ErrorList {
				s := obj.(*appsv1.StatefulSet)
				return append(validateWorkload(s.Spec.Replicas, s.Spec.Selector, &s.Spec.Template), validateStatefulSetMore(s)...)
			},
			validateUpdate: func(obj, old runtime.Object) field.ErrorList {
				return validateStatefulSetUpdate(obj.(*appsv1.StatefulSet), old.(*appsv1.StatefulSet))
			},
		}},
		builtin{gvk: appsv1.SchemeGroupVersion.WithKind("DaemonSet"), namespaced: true, hasStatus: true, rules: kindRules{
			nameFn: apivalidation.NameIsDNSSubdomain, generation: true,
			defaults: func(obj runtime.Object) {
				d := obj.(*appsv1.DaemonSet)
				us := &d.Spec.UpdateStrategy
				if us.Type == "" {
					us.Type = appsv1.RollingUpdateDaemonSetStrategyType
				}
				if us.Type == appsv1.RollingUpdateDaemonSetStrategyType {
					if us.RollingUpdate == nil {
						us.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
					}
					if us.RollingUpdate.MaxUnavailable == nil {
						us.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
					}
					if us.RollingUpdate.MaxSurge == nil {
						us.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(0))
					}
				}
				if d.Spec.RevisionHistoryLimit == nil {
					d.Spec.RevisionHistoryLimit = ptr.To[int32](10)
				}
				defaultPodSpec(&d.Spec.Template.Spec)
			},
			prepareCreate: func(obj runtime.Object) {
				// The daemonset strategy: templateGeneration 1, kept in
				// the deprecated annotation apps/v1 shows it through.
				d := obj.(*appsv1.DaemonSet)
				setAnnotation(&d.ObjectMeta, daemonSetTemplateGeneration, "1")
			},
			prepareUpdate: func(obj, old runtime.Object) {
				d, o := obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet)
				gen := o.Annotations[daemonSetTemplateGeneration]
				if !apiequalitySemantic(d.Spec.Template, o.Spec.Template) {
					n, _ := strconv.ParseInt(gen, 10, 64)
					gen = strconv.FormatInt(n+1, 10)
				}
				if gen != "" {
					setAnnotation(&d.ObjectMeta, daemonSetTemplateGeneration, gen)
				}
			},
			validate: func(obj runtime.Object) field.ErrorList {
				d := obj.(*appsv1.DaemonSet)
				return append(validateWorkload(nil, d.Spec.Selector, &d.Spec.Template), validateDaemonSetMore(d)...)
			},
			validateUpdate: func(obj, old runtime.Object) field.ErrorList {
				return immutableSelector(obj.(*appsv1.DaemonSet).Spec.Selector, old.(*appsv1.DaemonSet).Spec.Selector)
			},
		}},
		builtin{gvk: appsv1.SchemeGroupVersion.WithKind("ControllerRevision"), namespaced: true, rules: kindRules{
			nameFn: apivalidation.NameIsDNSSubdomain,
			validateUpdate: func(obj, old runtime.Object) field.ErrorList {
				// ValidateControllerRevisionUpdate: data is immutable.
				if !apiequalitySemantic(obj.(*appsv1.ControllerRevision).Data, old.(*appsv1.ControllerRevision).Data) {
					return field.ErrorList{field.Invalid(field.NewPath("data"), "", "field is immutable")}
				}
				return nil
			},
		}},
		builtin{gvk: batchv1.SchemeGroupVersion.WithKind("Job"), namespaced: true, hasStatus: true, rules: kindRules{
			nameFn: apivalidation.NameIsDNSSubdomain, generation: true,
			fields: func(obj runtime.Object, set fields.Set) {
				set["status.successful"] = itoa32(obj.(*batchv1.Job).Status.Succeeded)
			},
			defaults: func(obj runtime.Object) {
				j := obj.(*batchv1.Job)
				if j.Spec.Completions == nil && j.Spec.Parallelism == nil {
					j.Spec.Completions = ptr.To[int32](1)
				}
				if j.Spec.Parallelism == nil {
					j.Spec.Parallelism = ptr.To[int32](1)
				}
				if j.Spec.BackoffLimit == nil {
					j.Spec.BackoffLimit = ptr.To[int32](6)
					if j.Spec.BackoffLimitPerIndex != nil {
						j.Spec.BackoffLimit = ptr.To[int32](1<<31 - 1)
					}
				}
				if j.Spec.Template.Labels != nil && len(j.Labels) == 0 {
					j.Labels = j.Spec.Template.Labels
				}
				if j.Spec.CompletionMode == nil {
					j.Spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
				}
				if j.Spec.Suspend == nil {
					j.Spec.Suspend = ptr.To(false)
				}
				if j.Spec.PodReplacementPolicy == nil {
					j.Spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
					if j.Spec.PodFailurePolicy != nil {
						j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
					}
				}
				if j.Spec.ManualSelector == nil {
					j.Spec.ManualSelector = ptr.To(false)
				}
				defaultPodSpec(&j.Spec.Template.Spec)
			},
			withUID: func(obj runtime.Object) {
				// The job strategy's generateSelector (PrepareForCreate).
				j := obj.(*batchv1.Job)
				if j.Spec.ManualSelector != nil && *j.Spec.ManualSelector {
					return
				}
				if j.Spec.Template.Labels == nil {
					j.Spec.Template.Labels = map[string]string{}
				}
				for _, k := range []string{"job-name", batchv1.JobNameLabel} {
					if _, ok := j.Spec.Template.Labels[k]; !ok {
						j.Spec.Template.Labels[k] = j.Name
					}
				}
				for _, k := range []string{"controller-uid", batchv1.ControllerUidLabel} {
					if _, ok := j.Spec.Template.Labels[k]; !ok {
						j.Spec.Template.Labels[k] = string(j.UID)
					}
				}
				if j.Spec.Selector == nil {
					j.Spec.Selector = &metav1.LabelSelector{}
				}
				if j.Spec.Selector.MatchLabels == nil {
					j.Spec.Selector.MatchLabels = map[string]string{}
				}
				if _, ok := j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel]; !ok {
					j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] = string(j.UID)
				}
			},
			validate: func(obj runtime.Object) field.ErrorList {
				j := obj.(*batchv1.Job)
				errs := validatePodTemplate(&j.Spec.Template)
				if p := j.Spec.Template.Spec.RestartPolicy; p != corev1.RestartPolicyOnFailure && p != corev1.RestartPolicyNever {
					errs = append(errs, field.Required(field.NewPath("spec", "template", "spec", "restartPolicy"), `valid values: "OnFailure", "Never"`))
				}
				return append(errs, validateJobMore(j)...)
			},
			validateUpdate: func(obj, old runtime.Object) field.ErrorList {
				j, o := obj.(*batchv1.Job), old.(*batchv1.Job)
				var errs field.ErrorList
				if !apiequalitySemantic(j.Spec.Completions, o.Spec.Completions) && j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.NonIndexedCompletion {
					errs = append(errs, field.Invalid(field.NewPath("spec", "completions"), j.Spec.Completions, "field is immutable"))
				}
				errs = append(errs, immutableSelector(j.Spec.Selector, o.Spec.Selector)...)
				return append(errs, validateJobTemplateUpdate(j, o)...)
			},
		}},
		builtin{gvk: corev1.SchemeGroupVersion.WithKind("Node"), namespaced: false, hasStatus: true, rules: kindRules{
			nameFn: apivalidation.NameIsDNSSubdomain,
			admit: func(_ *Store, obj runtime.Object) error {
				// The NodeTaint admission plugin (admission, not the node
				// strategy: it runs with a registered Strategy too): a new
				// node is not ready.
				n := obj.(*corev1.Node)
				for _, t := range n.Spec.Taints {
					if t.Key == corev1.TaintNodeNotReady && t.Effect == corev1.TaintEffectNoSchedule {
						return nil
					}
				}
				n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
				return nil
			},
			fields: func(obj runtime.Object, set fields.Set) {
				set["spec.unschedulable"] = boolString(obj.(*corev1.Node).Spec.Unschedulable)
			},
		}},
		builtin{gvk: corev1.SchemeGroupVersion.WithKind("Service"), namespaced: true, hasStatus: true, returnDeleted: true, rules: kindRules{
			nameFn: apivalidation.NameIsDNSLabel, // RelaxedServiceNameValidation, on in v1.37
			fields: func(obj runtime.Object, set fields.Set) {
				set["spec.clusterIP"] = obj.(*corev1.Service).Spec.ClusterIP
				set["spec.type"] = string(obj.(*corev1.Service).Spec.Type)
			},
			defaults: func(obj runtime.Object) {
				s := obj.(*corev1.Service)
				if s.Spec.SessionAffinity == "" {
					s.Spec.SessionAffinity = corev1.ServiceAffinityNone
				}
				if s.Spec.SessionAffinity == corev1.ServiceAffinityNone {
					s.Spec.SessionAffinityConfig = nil
				}
				if s.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
					if s.Spec.SessionAffinityConfig == nil {
						s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{}
					}
					if s.Spec.SessionAffinityConfig.ClientIP == nil {
						s.Spec.SessionAffinityConfig.ClientIP = &corev1.ClientIPConfig{}
					}
					if s.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds == nil {
						s.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds = ptr.To(corev1.DefaultClientIPServiceAffinitySeconds)
					}
				}
				if s.Spec.Type == "" {
					s.Spec.Type = corev1.ServiceTypeClusterIP
				}
				for i := range s.Spec.Ports {
					p := &s.Spec.Ports[i]
					if p.Protocol == "" {
						p.Protocol = corev1.ProtocolTCP
					}
					if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
						p.TargetPort = intstr.FromInt32(p.Port)
					}
				}
				if s.Spec.Type == corev1.ServiceTypeClusterIP || s.Spec.Type == corev1.ServiceTypeNodePort || s.Spec.Type == corev1.ServiceTypeLoadBalancer {
					if s.Spec.InternalTrafficPolicy == nil {
						s.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
					}
				}
			},
			allocate: func(st *Store, obj, old runtime.Object) error {
				// The service REST's IP family defaults of a headless
				// service; the others' families, cluster IPs and node
				// ports come from the allocators of services.go.
				s := obj.(*corev1.Service)
				if s.Spec.ClusterIP == corev1.ClusterIPNone {
					if len(s.Spec.ClusterIPs) == 0 {
						s.Spec.ClusterIPs = []string{corev1.ClusterIPNone}
					}
					// Without a selector (endpoints managed by hand) it
					// requires both families; with one, single stack.
					if s.Spec.IPFamilyPolicy == nil {
						s.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
						if len(s.Spec.Selector) == 0 {
							s.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyRequireDualStack)
						}
					}
					if len(s.Spec.IPFamilies) == 0 {
						s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
						if *s.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
							s.Spec.IPFamilies = append(s.Spec.IPFamilies, corev1.IPv6Protocol)
						}
					}
				}
				var o *corev1.Service
				if old != nil {
					o = old.(*corev1.Service)
				}
				return st.allocateService(objectKey(s.Namespace, s.Name), s, o)
			},
			validate: func(obj runtime.Object) field.ErrorList {
				return validateService(obj.(*corev1.Service)) // services.go
			},
			validateUpdate: func(obj, old runtime.Object) field.ErrorList {
				return validateServiceUpdate(obj.(*corev1.Service), old.(*corev1.Service))
			},
		}},
		builtin{gvk: corev1.SchemeGroupVersion.WithKind("ServiceAccount"), namespaced: true, returnDeleted: true, rules: kindRules{
			nameFn: apivalidation.NameIsDNSSubdomain,
		}},
	)
}

// defaultReplicas is SetDefaults_*'s replicas: 1.
func defaultReplicas(r **int32) {
	if *r == nil {
		*r = ptr.To[int32](1)
	}
}

// defaultPodSpec is SetDefaults_PodSpec and SetDefaults_Container (and
// the ports' protocol) of k8s.io/kubernetes/pkg/apis/core/v1.
func defaultPodSpec(s *corev1.PodSpec) {
	if s.ServiceAccountName == "" {
		s.ServiceAccountName = s.DeprecatedServiceAccount //nolint:staticcheck // kept in sync as the defaults do
	}
	s.DeprecatedServiceAccount = s.ServiceAccountName //nolint:staticcheck // kept in sync as the defaults do
	if s.DNSPolicy == "" {
		s.DNSPolicy = corev1.DNSClusterFirst
	}
	if s.RestartPolicy == "" {
		s.RestartPolicy = corev1.RestartPolicyAlways
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &corev1.PodSecurityContext{}
	}
	if s.TerminationGracePeriodSeconds == nil {
		s.TerminationGracePeriodSeconds = ptr.To[int64](corev1.DefaultTerminationGracePeriodSeconds)
	}
	if s.SchedulerName == "" {
		s.SchedulerName = corev1.DefaultSchedulerName
	}
	for _, cs := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range cs {
			defaultContainer(&cs[i])
		}
	}
}

func defaultContainer(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		if imageTag(c.Image) == "latest" {
			c.ImagePullPolicy = corev1.PullAlways
		} else {
			c.ImagePullPolicy = corev1.PullIfNotPresent
		}
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
}

// imageTag is the tag of an image reference ("latest" when it has none
// and no digest), as parsers.ParseImageName reads it.
func imageTag(image string) string {
	if at := strings.IndexByte(image, '@'); at >= 0 {
		return ""
	}
	slash := strings.LastIndexByte(image, '/')
	if colon := strings.LastIndexByte(image, ':'); colon > slash {
		return image[colon+1:]
	}
	return "latest"
}

// validateWorkload is the part of the apps validation workload
// controllers rely on: a non-negative replicas, a selector that is
// required, non-empty and valid, and that matches the template's labels,
// and a template with containers.
func validateWorkload(replicas *int32, sel *metav1.LabelSelector, tmpl *corev1.PodTemplateSpec) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if replicas != nil && *replicas < 0 {
		errs = append(errs, field.Invalid(spec.Child("replicas"), *replicas, "must be greater than or equal to 0"))
	}
	switch {
	case sel == nil:
		errs = append(errs, field.Required(spec.Child("selector"), ""))
	default:
		errs = append(errs, metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, spec.Child("selector"))...)
		if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
			errs = append(errs, field.Invalid(spec.Child("selector"), sel, "empty selector is invalid for deployment"))
		}
	}
	// ValidatePodTemplateSpecForReplicaSet: a nil selector selects nothing,
	// so it never matches the template either.
	if s, err := metav1.LabelSelectorAsSelector(sel); err == nil && !s.Empty() && !s.Matches(labels.Set(tmpl.Labels)) {
		errs = append(errs, field.Invalid(spec.Child("template", "metadata", "labels"), tmpl.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, validatePodTemplate(tmpl)...)
	return errs
}

// validatePodTemplate checks a template's containers as the pod
// validation does (names and images required).
func validatePodTemplate(tmpl *corev1.PodTemplateSpec) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("spec", "template", "spec", "containers")
	if len(tmpl.Spec.Containers) == 0 {
		errs = append(errs, field.Required(path, ""))
	}
	for i, c := range tmpl.Spec.Containers {
		if c.Name == "" {
			errs = append(errs, field.Required(path.Index(i).Child("name"), ""))
		}
		if c.Image == "" {
			errs = append(errs, field.Required(path.Index(i).Child("image"), ""))
		}
	}
	return errs
}

// immutableSelector: apps/v1 and batch/v1 selectors cannot change.
func immutableSelector(sel, old *metav1.LabelSelector) field.ErrorList {
	if !apiequalitySemantic(sel, old) {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "selector"), sel, "field is immutable")}
	}
	return nil
}

func apiequalitySemantic(a, b any) bool { return apiequality.Semantic.DeepEqual(a, b) }

func itoa32(n int32) string { return strconv.FormatInt(int64(n), 10) }

func boolString(b bool) string { return strconv.FormatBool(b) }

// daemonSetTemplateGeneration is the annotation apps/v1 DaemonSets carry
// their templateGeneration in.
const daemonSetTemplateGeneration = "deprecated.daemonset.template.generation"

func setAnnotation(m *metav1.ObjectMeta, k, v string) {
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[k] = v
}
