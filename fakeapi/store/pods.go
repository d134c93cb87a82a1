package store

import (
	"fmt"
	"hash/fnv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// What kube-apiserver v1.37 does to a Pod that the lab's controllers and
// corpora see, copied (the lab does not depend on k8s.io/kubernetes):
//   - defaulting (SetDefaults_Pod, SetDefaults_PodSpec, the PodIP(s)
//     conversion), on every write;
//   - on create, the default admission plugins that change Pods: Priority
//     (priority and preemptionPolicy), DefaultTolerationSeconds (the
//     not-ready and unreachable tolerations) and ServiceAccount (the
//     default ServiceAccount and its projected token volume), then the
//     strategy's PrepareForCreate (phase Pending, the QoS class);
//   - ValidatePodUpdate: a Pod's spec is immutable but for container
//     images, activeDeadlineSeconds (set, or shortened) and added
//     tolerations;
//   - graceful deletion (podStrategy.CheckGracefulDelete): a Pod is first
//     marked with a deletionTimestamp and deletionGracePeriodSeconds; it
//     goes at once only when the period is 0 (not scheduled, finished, or
//     asked) and no finalizer holds it.

// defaultPod is SetDefaults_Pod and SetDefaults_PodSpec, and the v1
// conversion's podIP/podIPs (and hostIP/hostIPs) agreement.
func defaultPod(obj runtime.Object) {
	p := obj.(*corev1.Pod)
	if p.Spec.EnableServiceLinks == nil {
		p.Spec.EnableServiceLinks = ptr.To(corev1.DefaultEnableServiceLinks)
	}
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			// Limits alone stand for requests too.
			r := &cs[i].Resources
			for name, q := range r.Limits {
				if _, ok := r.Requests[name]; !ok {
					if r.Requests == nil {
						r.Requests = corev1.ResourceList{}
					}
					r.Requests[name] = q.DeepCopy()
				}
			}
		}
	}
	defaultPodSpec(&p.Spec)
	st := &p.Status
	if len(st.PodIPs) > 0 {
		st.PodIP = st.PodIPs[0].IP
	} else if st.PodIP != "" {
		st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
	}
	if len(st.HostIPs) > 0 {
		st.HostIP = st.HostIPs[0].IP
	} else if st.HostIP != "" {
		st.HostIPs = []corev1.HostIP{{IP: st.HostIP}}
	}
}

// systemPriorityClasses are the PriorityClasses kube-apiserver creates.
var systemPriorityClasses = map[string]int32{
	"system-node-critical":    2000001000,
	"system-cluster-critical": 2000000000,
}

// coreServiceAccounts is the core serviceaccounts resource.
var coreServiceAccounts = corev1.SchemeGroupVersion.WithResource("serviceaccounts")

// Token volume constants of ServiceAccount admission.
const (
	tokenVolumePrefix = "kube-api-access-"
	tokenMountPath    = "/var/run/secrets/kubernetes.io/serviceaccount"
	// tokenExpiration is the projected token's expirationSeconds: one
	// hour and 7 s (the plugin's "warn after an hour" allowance).
	tokenExpiration = 3607
	// defaultTolerationSeconds is DefaultTolerationSeconds's 300 s.
	defaultTolerationSeconds = 300
)

// admitPod is the create admission of the default plugins that change a
// Pod: Priority, DefaultTolerationSeconds and ServiceAccount. A
// priorityClassName other than the system ones is refused (403), as
// kube-apiserver refuses a class it does not have: the fake serves no
// PriorityClasses.
func (s *Store) admitPod(obj runtime.Object) error {
	p := obj.(*corev1.Pod)
	// Priority.
	if p.Spec.PriorityClassName == "" {
		p.Spec.Priority = ptr.To[int32](0)
	} else if v, ok := systemPriorityClasses[p.Spec.PriorityClassName]; ok {
		p.Spec.Priority = ptr.To(v)
	} else {
		return apierrors.NewForbidden(corev1.Resource("pods"), p.Name, fmt.Errorf("no PriorityClass with name %s was found", p.Spec.PriorityClassName))
	}
	if p.Spec.PreemptionPolicy == nil {
		p.Spec.PreemptionPolicy = ptr.To(corev1.PreemptLowerPriority)
	}
	// DefaultTolerationSeconds.
	notReady, unreachable := false, false
	for _, t := range p.Spec.Tolerations {
		noExecute := t.Effect == corev1.TaintEffectNoExecute || t.Effect == ""
		notReady = notReady || (noExecute && (t.Key == corev1.TaintNodeNotReady || t.Key == ""))
		unreachable = unreachable || (noExecute && (t.Key == corev1.TaintNodeUnreachable || t.Key == ""))
	}
	for _, add := range []struct {
		missing bool
		key     string
	}{{!notReady, corev1.TaintNodeNotReady}, {!unreachable, corev1.TaintNodeUnreachable}} {
		if add.missing {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: add.key, Operator: corev1.TolerationOpExists,
				Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](defaultTolerationSeconds)})
		}
	}
	// ServiceAccount.
	if p.Spec.ServiceAccountName == "" {
		p.Spec.ServiceAccountName = "default"
	}
	p.Spec.DeprecatedServiceAccount = p.Spec.ServiceAccountName //nolint:staticcheck // the conversion keeps them equal
	if s.automountToken(p) {
		mountToken(p)
	}
	return nil
}

// automountToken is the plugin's shouldAutomount: the Pod's
// automountServiceAccountToken if set, else its ServiceAccount's (when the
// store has it), else true.
func (s *Store) automountToken(p *corev1.Pod) bool {
	if p.Spec.AutomountServiceAccountToken != nil {
		return *p.Spec.AutomountServiceAccountToken
	}
	if r, ok := s.res[coreServiceAccounts]; ok {
		if obj, ok := s.load(r, objectKey(p.Namespace, p.Spec.ServiceAccountName)); ok {
			if sa := obj.(*corev1.ServiceAccount); sa.AutomountServiceAccountToken != nil {
				return *sa.AutomountServiceAccountToken
			}
		}
	}
	return true
}

// mountToken adds the projected token volume and mounts it in every
// container that has nothing mounted at the token path. The volume's name
// ends in five characters of the generated-name alphabet that
// kube-apiserver draws at random; the fake derives them from the Pod's
// namespace and name, so a run repeats.
func mountToken(p *corev1.Pod) {
	h := fnv.New64a()
	h.Write([]byte(p.Namespace + "/" + p.Name + "/" + p.GenerateName))
	n := h.Sum64()
	suffix := make([]byte, 5)
	for i := range suffix {
		suffix[i] = nameAlphabet[n%uint64(len(nameAlphabet))]
		n /= uint64(len(nameAlphabet))
	}
	name := tokenVolumePrefix + string(suffix)
	needed := false
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			mounted := false
			for _, m := range cs[i].VolumeMounts {
				mounted = mounted || m.MountPath == tokenMountPath
			}
			if !mounted {
				cs[i].VolumeMounts = append(cs[i].VolumeMounts, corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: tokenMountPath})
				needed = true
			}
		}
	}
	if !needed {
		return
	}
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](corev1.ProjectedVolumeSourceDefaultMode),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](tokenExpiration)}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}})
}

// preparePodCreate is podStrategy.PrepareForCreate: phase Pending and the
// QoS class.
func preparePodCreate(obj runtime.Object) {
	p := obj.(*corev1.Pod)
	p.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: podQOS(p)}
}

// podQOS is the QoS class of a Pod from its containers' CPU and memory
// requests and limits (qos.GetPodQOS, without pod-level resources).
func podQOS(p *corev1.Pod) corev1.PodQOSClass {
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	guaranteed := true
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for _, c := range cs {
			for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if q, ok := c.Resources.Requests[name]; ok && !q.IsZero() {
					add(requests, name, q)
				}
				q, ok := c.Resources.Limits[name]
				if ok && !q.IsZero() {
					add(limits, name, q)
				} else {
					guaranteed = false
				}
			}
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if guaranteed {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				guaranteed = false
			}
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

func add(l corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
	sum := l[name]
	sum.Add(q)
	l[name] = sum
}

// podUpdateForbidden is ValidatePodUpdate's message.
const podUpdateForbidden = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"

// validatePodUpdate is ValidatePodUpdate's spec part.
func validatePodUpdate(obj, old runtime.Object) field.ErrorList {
	p, o := obj.(*corev1.Pod), old.(*corev1.Pod)
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if a, b := p.Spec.ActiveDeadlineSeconds, o.Spec.ActiveDeadlineSeconds; b != nil {
		switch {
		case a == nil:
			errs = append(errs, field.Invalid(spec.Child("activeDeadlineSeconds"), a, "must not update from a positive integer to nil value"))
		case *a > *b:
			errs = append(errs, field.Invalid(spec.Child("activeDeadlineSeconds"), *a, "must be less than or equal to previous value"))
		}
	}
	for _, t := range o.Spec.Tolerations {
		kept := false
		for _, n := range p.Spec.Tolerations {
			kept = kept || apiequality.Semantic.DeepEqual(t, n)
		}
		if !kept {
			errs = append(errs, field.Forbidden(spec.Child("tolerations"), "existing toleration can not be modified except its tolerationSeconds"))
			break
		}
	}
	// Everything else must stay: compare with the mutable fields taken
	// from the stored spec.
	munged := p.Spec.DeepCopy()
	if len(munged.Containers) == len(o.Spec.Containers) {
		for i := range munged.Containers {
			munged.Containers[i].Image = o.Spec.Containers[i].Image
		}
	}
	if len(munged.InitContainers) == len(o.Spec.InitContainers) {
		for i := range munged.InitContainers {
			munged.InitContainers[i].Image = o.Spec.InitContainers[i].Image
		}
	}
	munged.ActiveDeadlineSeconds = o.Spec.ActiveDeadlineSeconds
	munged.Tolerations = o.Spec.Tolerations
	if g := o.Spec.TerminationGracePeriodSeconds; g != nil && *g < 0 && munged.TerminationGracePeriodSeconds != nil && *munged.TerminationGracePeriodSeconds == 1 {
		munged.TerminationGracePeriodSeconds = g
	}
	if !apiequality.Semantic.DeepEqual(*munged, o.Spec) {
		errs = append(errs, field.Forbidden(spec, podUpdateForbidden))
	}
	return errs
}

// podGracePeriod is podStrategy.CheckGracefulDelete: the grace period a
// delete with grace (nil: none asked) gives the Pod: the asked one, else
// the spec's terminationGracePeriodSeconds; 0 for a Pod on no node or a
// finished one; 1 for a negative one.
func podGracePeriod(obj runtime.Object, grace *int64) int64 {
	p := obj.(*corev1.Pod)
	var period int64
	switch {
	case grace != nil:
		period = *grace
	case p.Spec.TerminationGracePeriodSeconds != nil:
		period = *p.Spec.TerminationGracePeriodSeconds
	}
	if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		period = 0
	}
	if period < 0 {
		period = 1
	}
	return period
}

// markedGracefully returns a copy of cur as a graceful delete marks it
// (rest.BeforeDelete), or false when nothing changes because a graceful
// deletion is pending and grace does not shorten it. policy's GC
// finalizer is added as for any delete.
func (s *Store) markedGracefully(r *resState, cur runtime.Object, policy metav1.DeletionPropagation, grace *int64) (runtime.Object, bool) {
	m := mustAccessor(cur)
	now := s.now()
	o := cur.DeepCopyObject()
	om := mustAccessor(o)
	if ts := m.GetDeletionTimestamp(); ts != nil {
		old := m.GetDeletionGracePeriodSeconds()
		if old == nil || *old == 0 || grace == nil || *grace >= *old {
			return nil, false
		}
		// Only a shorter period: the deadline moves back, never into the
		// past; a graceful one already over is shortened to 1 s.
		period := *grace
		deadline := metav1.NewTime(ts.Add(-time.Duration(*old) * time.Second).Add(time.Duration(period) * time.Second))
		if deadline.Before(&now) {
			deadline = now
			if period != 0 {
				period = 1
			}
		}
		om.SetDeletionTimestamp(&deadline)
		om.SetDeletionGracePeriodSeconds(&period)
		return o, true
	}
	period := r.rules.gracePeriod(cur, grace)
	deadline := metav1.NewTime(now.Add(time.Duration(period) * time.Second))
	om.SetDeletionTimestamp(&deadline)
	om.SetDeletionGracePeriodSeconds(&period)
	if om.GetGeneration() > 0 {
		om.SetGeneration(om.GetGeneration() + 1)
	}
	om.SetFinalizers(withPolicyFinalizer(om.GetFinalizers(), policy))
	return o, true
}

// createDefaultServiceAccount is the serviceaccount controller's work for
// the new namespace ns (Options.DefaultServiceAccounts).
func (s *Store) createDefaultServiceAccount(ns string, events []Event) []Event {
	r, ok := s.res[coreServiceAccounts]
	if !ok {
		return events
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
	_, evs, err := s.create(r, ns, sa, metav1.CreateOptions{FieldManager: "kube-controller-manager"}, nil)
	if err != nil {
		return events // it exists already
	}
	return append(events, evs...)
}
