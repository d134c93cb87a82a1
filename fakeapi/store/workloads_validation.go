package store

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// More of pkg/apis/apps/validation and pkg/apis/batch/validation, the
// checks issue 29 found missing (recorded in fidelity/cases_issue29.go):
// deployment strategies and deadlines, workload status counts, the
// StatefulSet's forbidden updates, pod management policy and claim
// templates, the restart policies a workload's template may have, and the
// Job's immutable template and manual selector.

// replicaStatus is a workload status's counts, for the status checks
// every workload validation shares.
type replicaStatus struct {
	replicas, ready, available, updated, current, fullyLabeled int32
	observedGeneration                                         int64
	collisionCount                                             *int32
	others                                                     map[string]int32
	// capped names the counts the kind checks against replicas.
	capped []string
}

// validateReplicaStatus is ValidateDeploymentStatus /
// ValidateReplicaSetStatus / ValidateStatefulSetStatus: non-negative
// counts, and no count of ready, available, updated, current or fully
// labeled replicas above replicas (available not above ready).
func validateReplicaStatus(st replicaStatus) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("status")
	errs = append(errs, nonNegative(sp.Child("observedGeneration"), st.observedGeneration)...)
	for _, c := range []struct {
		name string
		v    int32
	}{{"replicas", st.replicas}, {"readyReplicas", st.ready}, {"availableReplicas", st.available}, {"updatedReplicas", st.updated}, {"currentReplicas", st.current}, {"fullyLabeledReplicas", st.fullyLabeled}} {
		errs = append(errs, nonNegative(sp.Child(c.name), int64(c.v))...)
	}
	for name, v := range st.others {
		errs = append(errs, nonNegative(sp.Child(name), int64(v))...)
	}
	if st.collisionCount != nil {
		errs = append(errs, nonNegative(sp.Child("collisionCount"), int64(*st.collisionCount))...)
	}
	msg := "cannot be greater than status.replicas"
	counts := map[string]int32{"readyReplicas": st.ready, "availableReplicas": st.available, "updatedReplicas": st.updated,
		"currentReplicas": st.current, "fullyLabeledReplicas": st.fullyLabeled}
	for _, name := range st.capped {
		if counts[name] > st.replicas {
			errs = append(errs, field.Invalid(sp.Child(name), counts[name], msg))
		}
	}
	if st.available > st.ready {
		errs = append(errs, field.Invalid(sp.Child("availableReplicas"), st.available, "cannot be greater than readyReplicas"))
	}
	return errs
}

// validateDeploymentMore is ValidateDeploymentSpec's strategy,
// revisionHistoryLimit, minReadySeconds and progressDeadlineSeconds, and
// the status checks.
func validateDeploymentMore(d *appsv1.Deployment) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	st := d.Spec.Strategy
	sp := spec.Child("strategy")
	switch st.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if st.RollingUpdate != nil {
			errs = append(errs, field.Forbidden(sp.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'"))
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		if st.RollingUpdate == nil {
			errs = append(errs, field.Required(sp.Child("rollingUpdate"), "this should be defaulted and never be nil"))
			break
		}
		rp := sp.Child("rollingUpdate")
		errs = append(errs, validateIntOrPercent(st.RollingUpdate.MaxUnavailable, rp.Child("maxUnavailable"), true)...)
		errs = append(errs, validateIntOrPercent(st.RollingUpdate.MaxSurge, rp.Child("maxSurge"), false)...)
		if isZero(st.RollingUpdate.MaxUnavailable) && isZero(st.RollingUpdate.MaxSurge) {
			errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), st.RollingUpdate.MaxUnavailable.String(), "may not be 0 when `maxSurge` is 0"))
		}
	default:
		errs = append(errs, field.NotSupported(sp.Child("type"), st.Type, []string{"Recreate", "RollingUpdate"}))
	}
	errs = append(errs, nonNegative(spec.Child("minReadySeconds"), int64(d.Spec.MinReadySeconds))...)
	if d.Spec.RevisionHistoryLimit != nil {
		errs = append(errs, nonNegative(spec.Child("revisionHistoryLimit"), int64(*d.Spec.RevisionHistoryLimit))...)
	}
	if p := d.Spec.ProgressDeadlineSeconds; p != nil {
		errs = append(errs, nonNegative(spec.Child("progressDeadlineSeconds"), int64(*p))...)
		if *p <= d.Spec.MinReadySeconds {
			errs = append(errs, field.Invalid(spec.Child("progressDeadlineSeconds"), *p, "must be greater than minReadySeconds"))
		}
	}
	s := d.Status
	errs = append(errs, validateReplicaStatus(replicaStatus{replicas: s.Replicas, ready: s.ReadyReplicas, available: s.AvailableReplicas, updated: s.UpdatedReplicas,
		observedGeneration: s.ObservedGeneration, collisionCount: s.CollisionCount, others: map[string]int32{"unavailableReplicas": s.UnavailableReplicas},
		capped: []string{"updatedReplicas", "readyReplicas", "availableReplicas"}})...)
	return errs
}

// validateIntOrPercent is ValidatePositiveIntOrPercent plus
// IsNotMoreThan100Percent (maxUnavailable).
func validateIntOrPercent(v *intstr.IntOrString, p *field.Path, at100 bool) field.ErrorList {
	if v == nil {
		return nil
	}
	// validatePositiveIntOrPercent refuses a percentage above 100% too.
	_ = at100
	return validatePositiveIntOrPercent(*v, p)
}

func isZero(v *intstr.IntOrString) bool {
	if v == nil {
		return false
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, 100, false)
	return err == nil && n == 0
}

// validateReplicaSetStatus is ValidateReplicaSetStatus.
func validateReplicaSetStatus(rs *appsv1.ReplicaSet) field.ErrorList {
	s := rs.Status
	return validateReplicaStatus(replicaStatus{replicas: s.Replicas, ready: s.ReadyReplicas, available: s.AvailableReplicas, fullyLabeled: s.FullyLabeledReplicas,
		observedGeneration: s.ObservedGeneration, capped: []string{"fullyLabeledReplicas", "readyReplicas", "availableReplicas"}})
}

// validateStatefulSetMore is ValidateStatefulSetSpec's pod management
// policy, update strategy, restart policy and claim templates, and the
// status checks.
func validateStatefulSetMore(s *appsv1.StatefulSet) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	switch s.Spec.PodManagementPolicy {
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		errs = append(errs, field.Invalid(spec.Child("podManagementPolicy"), s.Spec.PodManagementPolicy, "must be 'OrderedReady' or 'Parallel'"))
	}
	switch s.Spec.UpdateStrategy.Type {
	case appsv1.OnDeleteStatefulSetStrategyType:
		if s.Spec.UpdateStrategy.RollingUpdate != nil {
			errs = append(errs, field.Invalid(spec.Child("updateStrategy", "rollingUpdate"), s.Spec.UpdateStrategy.RollingUpdate, "only allowed for updateStrategy 'RollingUpdate'"))
		}
	case appsv1.RollingUpdateStatefulSetStrategyType:
		if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
			errs = append(errs, nonNegative(spec.Child("updateStrategy", "rollingUpdate", "partition"), int64(*ru.Partition))...)
		}
	default:
		errs = append(errs, field.Invalid(spec.Child("updateStrategy"), s.Spec.UpdateStrategy, "must be 'RollingUpdate' or 'OnDelete'"))
	}
	errs = append(errs, restartPolicyAlways(&s.Spec.Template)...)
	for i := range s.Spec.VolumeClaimTemplates {
		c := &s.Spec.VolumeClaimTemplates[i]
		p := spec.Child("volumeClaimTemplates").Index(i).Child("spec")
		if len(c.Spec.AccessModes) == 0 {
			errs = append(errs, field.Required(p.Child("accessModes"), "at least 1 access mode is required"))
		}
		if _, ok := c.Spec.Resources.Requests[corev1.ResourceStorage]; !ok {
			errs = append(errs, field.Required(p.Child("resources").Key(string(corev1.ResourceStorage)), ""))
		}
	}
	st := s.Status
	errs = append(errs, validateReplicaStatus(replicaStatus{replicas: st.Replicas, ready: st.ReadyReplicas, available: st.AvailableReplicas, updated: st.UpdatedReplicas,
		current: st.CurrentReplicas, observedGeneration: st.ObservedGeneration, collisionCount: st.CollisionCount,
		capped: []string{"readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"}})...)
	return errs
}

// defaultClaimTemplates is the StatefulSet defaulting of its claim
// templates (SetDefaults_PersistentVolumeClaim on each).
func defaultClaimTemplates(s *appsv1.StatefulSet) {
	for i := range s.Spec.VolumeClaimTemplates {
		c := &s.Spec.VolumeClaimTemplates[i]
		c.APIVersion, c.Kind = "v1", "PersistentVolumeClaim"
		defaultPVC(c)
	}
}

// validateStatefulSetUpdate is ValidateStatefulSetUpdate: only replicas,
// ordinals, template, updateStrategy, revisionHistoryLimit,
// persistentVolumeClaimRetentionPolicy and minReadySeconds may change.
func validateStatefulSetUpdate(s, old *appsv1.StatefulSet) field.ErrorList {
	errs := immutableSelector(s.Spec.Selector, old.Spec.Selector)
	restore := old.Spec.DeepCopy()
	restore.Replicas, restore.Ordinals, restore.Template = s.Spec.Replicas, s.Spec.Ordinals, s.Spec.Template
	restore.UpdateStrategy, restore.RevisionHistoryLimit = s.Spec.UpdateStrategy, s.Spec.RevisionHistoryLimit
	restore.PersistentVolumeClaimRetentionPolicy, restore.MinReadySeconds = s.Spec.PersistentVolumeClaimRetentionPolicy, s.Spec.MinReadySeconds
	restore.Selector = s.Spec.Selector // reported above
	spec := field.NewPath("spec")
	immutable := func(name string, a, b any) {
		if !apiequality.Semantic.DeepEqual(a, b) {
			errs = append(errs, field.Invalid(spec.Child(name), a, "field is immutable"))
		}
	}
	immutable("serviceName", s.Spec.ServiceName, old.Spec.ServiceName)
	immutable("podManagementPolicy", s.Spec.PodManagementPolicy, old.Spec.PodManagementPolicy)
	// Claim templates compare without their apiVersion and kind, which the
	// defaults set and the store's protobuf encoding drops (kube-apiserver
	// defaults what it reads from etcd again; the store does not).
	immutable("volumeClaimTemplates", sansTypeMeta(s.Spec.VolumeClaimTemplates), sansTypeMeta(old.Spec.VolumeClaimTemplates))
	restore.ServiceName, restore.PodManagementPolicy, restore.VolumeClaimTemplates = s.Spec.ServiceName, s.Spec.PodManagementPolicy, s.Spec.VolumeClaimTemplates
	if !apiequality.Semantic.DeepEqual(restore, &s.Spec) {
		errs = append(errs, field.Forbidden(spec, "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"))
	}
	return errs
}

// sansTypeMeta is a copy of claim templates without apiVersion and kind.
func sansTypeMeta(in []corev1.PersistentVolumeClaim) []corev1.PersistentVolumeClaim {
	out := make([]corev1.PersistentVolumeClaim, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
		out[i].TypeMeta = metav1.TypeMeta{}
	}
	return out
}

// restartPolicyAlways: the apps workloads' templates must restart Always.
func restartPolicyAlways(t *corev1.PodTemplateSpec) field.ErrorList {
	if t.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		return field.ErrorList{field.NotSupported(field.NewPath("spec", "template", "spec", "restartPolicy"), t.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)})}
	}
	return nil
}

// validateDaemonSetMore is ValidateDaemonSetSpec's restart policy and
// update strategy, and ValidateDaemonSetStatus's non-negative counts.
func validateDaemonSetMore(d *appsv1.DaemonSet) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, restartPolicyAlways(&d.Spec.Template)...)
	us, p := d.Spec.UpdateStrategy, field.NewPath("spec", "updateStrategy")
	switch us.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
	case appsv1.RollingUpdateDaemonSetStrategyType:
		if ru := us.RollingUpdate; ru != nil {
			rp := p.Child("rollingUpdate")
			errs = append(errs, validateIntOrPercent(ru.MaxUnavailable, rp.Child("maxUnavailable"), true)...)
			errs = append(errs, validateIntOrPercent(ru.MaxSurge, rp.Child("maxSurge"), false)...)
			if isZero(ru.MaxUnavailable) && isZero(ru.MaxSurge) {
				errs = append(errs, field.Required(rp.Child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
			}
		}
	default:
		errs = append(errs, field.NotSupported(p, us.Type, []string{"OnDelete", "RollingUpdate"}))
	}
	s, sp := d.Status, field.NewPath("status")
	for name, v := range map[string]int32{"currentNumberScheduled": s.CurrentNumberScheduled, "numberMisscheduled": s.NumberMisscheduled,
		"desiredNumberScheduled": s.DesiredNumberScheduled, "numberReady": s.NumberReady, "updatedNumberScheduled": s.UpdatedNumberScheduled,
		"numberAvailable": s.NumberAvailable, "numberUnavailable": s.NumberUnavailable} {
		errs = append(errs, nonNegative(sp.Child(name), int64(v))...)
	}
	errs = append(errs, nonNegative(sp.Child("observedGeneration"), s.ObservedGeneration)...)
	return errs
}

// validateJobMore is ValidateJobSpec's counts, deadline, completion mode
// and manual selector, and ValidateJobStatus's non-negative counts.
func validateJobMore(j *batchv1.Job) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if j.Spec.Parallelism != nil {
		errs = append(errs, nonNegative(spec.Child("parallelism"), int64(*j.Spec.Parallelism))...)
	}
	if j.Spec.Completions != nil {
		errs = append(errs, nonNegative(spec.Child("completions"), int64(*j.Spec.Completions))...)
	}
	if j.Spec.BackoffLimit != nil {
		errs = append(errs, nonNegative(spec.Child("backoffLimit"), int64(*j.Spec.BackoffLimit))...)
	}
	if d := j.Spec.ActiveDeadlineSeconds; d != nil {
		errs = append(errs, nonNegative(spec.Child("activeDeadlineSeconds"), *d)...)
	}
	if m := j.Spec.CompletionMode; m != nil && *m == batchv1.IndexedCompletion && j.Spec.Completions == nil {
		errs = append(errs, field.Required(spec.Child("completions"), "when completion mode is Indexed"))
	}
	manual := j.Spec.ManualSelector != nil && *j.Spec.ManualSelector
	switch {
	case manual && j.Spec.Selector == nil:
		// A nil selector matches no template labels either.
		errs = append(errs, field.Required(spec.Child("selector"), ""),
			field.Invalid(spec.Child("template", "metadata", "labels"), j.Spec.Template.Labels, "`selector` does not match template `labels`"))
	case !manual && j.Spec.Selector != nil && !generatedSelector(j.Spec.Selector):
		// ValidateGeneratedSelector: without manualSelector the selector
		// is the generated one (controller-uid only).
		errs = append(errs, field.Invalid(spec.Child("selector"), j.Spec.Selector, "`selector` not auto-generated"))
	}
	s, sp := j.Status, field.NewPath("status")
	for name, v := range map[string]int32{"active": s.Active, "succeeded": s.Succeeded, "failed": s.Failed} {
		errs = append(errs, nonNegative(sp.Child(name), int64(v))...)
	}
	if s.Ready != nil {
		errs = append(errs, nonNegative(sp.Child("ready"), int64(*s.Ready))...)
	}
	if s.Terminating != nil {
		errs = append(errs, nonNegative(sp.Child("terminating"), int64(*s.Terminating))...)
	}
	return errs
}

// generatedSelector: a selector of the job's controller-uid label only.
func generatedSelector(sel *metav1.LabelSelector) bool {
	if len(sel.MatchExpressions) > 0 {
		return false
	}
	for k := range sel.MatchLabels {
		if k != batchv1.ControllerUidLabel && k != "controller-uid" {
			return false
		}
	}
	return true
}

// validateJobTemplateUpdate is ValidateJobSpecUpdate's immutable
// template (the fields a suspended Job may change aside: node affinity,
// tolerations, labels, annotations, scheduling gates).
func validateJobTemplateUpdate(j, old *batchv1.Job) field.ErrorList {
	if apiequality.Semantic.DeepEqual(j.Spec.Template, old.Spec.Template) {
		return nil
	}
	suspended := old.Spec.Suspend != nil && *old.Spec.Suspend && old.Status.StartTime == nil
	if suspended {
		t := j.Spec.Template.DeepCopy()
		o := old.Spec.Template
		t.Labels, t.Annotations = o.Labels, o.Annotations
		t.Spec.Affinity, t.Spec.NodeSelector, t.Spec.Tolerations, t.Spec.SchedulingGates = o.Spec.Affinity, o.Spec.NodeSelector, o.Spec.Tolerations, o.Spec.SchedulingGates
		if apiequality.Semantic.DeepEqual(*t, o) {
			return nil
		}
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "template"), "", "field is immutable")}
}
