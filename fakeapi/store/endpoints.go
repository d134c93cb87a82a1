package store

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
	"k8s.io/utils/ptr"
)

// CronJobs, Endpoints and EndpointSlices, typed, with what their
// strategies and defaults do that clients see (k8s.io/kubernetes v1.37.1,
// copied), as the fidelity cases cronjob-create-defaults,
// endpoints-create-and-update and endpointslice-create recorded:
//   - CronJob: SetDefaults_CronJob (concurrencyPolicy Allow, suspend false,
//     history limits 3 and 1), its template's Pod defaults, generation, a
//     status subresource, a schedule required (its cron syntax is not
//     checked);
//   - Endpoints: ports default to TCP, addresses must be endpoint IPs,
//     created by an update when missing, no generation;
//   - EndpointSlice: ports default to TCP, a supported addressType and
//     addresses of that type, generation.
func init() {
	builtins = append(builtins,
		builtin{gvk: batchv1.SchemeGroupVersion.WithKind("CronJob"), namespaced: true, hasStatus: true, rules: kindRules{
			nameFn: apivalidation.NameIsDNSSubdomain, generation: true,
			defaults: func(obj runtime.Object) {
				s := &obj.(*batchv1.CronJob).Spec
				if s.ConcurrencyPolicy == "" {
					s.ConcurrencyPolicy = batchv1.AllowConcurrent
				}
				if s.Suspend == nil {
					s.Suspend = ptr.To(false)
				}
				if s.SuccessfulJobsHistoryLimit == nil {
					s.SuccessfulJobsHistoryLimit = ptr.To[int32](3)
				}
				if s.FailedJobsHistoryLimit == nil {
					s.FailedJobsHistoryLimit = ptr.To[int32](1)
				}
				defaultPodSpec(&s.JobTemplate.Spec.Template.Spec)
			},
			validate: func(obj runtime.Object) field.ErrorList {
				c := obj.(*batchv1.CronJob)
				var errs field.ErrorList
				if c.Spec.Schedule == "" {
					errs = append(errs, field.Required(field.NewPath("spec", "schedule"), ""))
				}
				return append(errs, validatePodTemplate(&c.Spec.JobTemplate.Spec.Template)...)
			},
		}},
		builtin{gvk: corev1.SchemeGroupVersion.WithKind("Endpoints"), namespaced: true, rules: kindRules{
			nameFn: apivalidation.NameIsDNSSubdomain, createOnUpdate: true,
			defaults: func(obj runtime.Object) {
				for i := range obj.(*corev1.Endpoints).Subsets {
					for j := range obj.(*corev1.Endpoints).Subsets[i].Ports {
						defaultProtocol(&obj.(*corev1.Endpoints).Subsets[i].Ports[j].Protocol)
					}
				}
			},
			validate: validateEndpoints,
		}},
		builtin{gvk: discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"), namespaced: true, rules: kindRules{
			nameFn: apivalidation.NameIsDNSSubdomain, generation: true,
			defaults: func(obj runtime.Object) {
				for i := range obj.(*discoveryv1.EndpointSlice).Ports {
					if p := &obj.(*discoveryv1.EndpointSlice).Ports[i]; p.Protocol == nil {
						p.Protocol = ptr.To(corev1.ProtocolTCP)
					}
				}
			},
			validate: validateEndpointSlice,
		}},
	)
}

func defaultProtocol(p *corev1.Protocol) {
	if *p == "" {
		*p = corev1.ProtocolTCP
	}
}

// validateEndpoints is ValidateEndpoints's subsets part.
func validateEndpoints(obj runtime.Object) field.ErrorList {
	var errs field.ErrorList
	for i, ss := range obj.(*corev1.Endpoints).Subsets {
		path := field.NewPath("subsets").Index(i)
		for j, a := range ss.Addresses {
			errs = append(errs, validateEndpointIP(path.Child("addresses").Index(j).Child("ip"), a.IP, true)...)
		}
		for j, a := range ss.NotReadyAddresses {
			errs = append(errs, validateEndpointIP(path.Child("notReadyAddresses").Index(j).Child("ip"), a.IP, true)...)
		}
		for j, p := range ss.Ports {
			pp := path.Child("ports").Index(j)
			switch {
			case len(ss.Ports) > 1 && p.Name == "":
				errs = append(errs, field.Required(pp.Child("name"), ""))
			case p.Name != "":
				for _, msg := range validation.IsDNS1123Label(p.Name) {
					errs = append(errs, field.Invalid(pp.Child("name"), p.Name, msg))
				}
			}
			for _, msg := range validation.IsValidPortNum(int(p.Port)) {
				errs = append(errs, field.Invalid(pp.Child("port"), p.Port, msg))
			}
			errs = append(errs, validateProtocol(pp.Child("protocol"), p.Protocol)...)
		}
	}
	return errs
}

// validateEndpointSlice is ValidateEndpointSlice's addressType, addresses
// and ports.
func validateEndpointSlice(obj runtime.Object) field.ErrorList {
	es := obj.(*discoveryv1.EndpointSlice)
	var errs field.ErrorList
	types := []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN}
	known := false
	for _, t := range types {
		known = known || es.AddressType == t
	}
	if !known {
		return append(errs, field.NotSupported(field.NewPath("addressType"), es.AddressType, types))
	}
	for i, ep := range es.Endpoints {
		path := field.NewPath("endpoints").Index(i).Child("addresses")
		if len(ep.Addresses) == 0 {
			errs = append(errs, field.Required(path, "must contain at least 1 address"))
		}
		for j, a := range ep.Addresses {
			switch es.AddressType {
			case discoveryv1.AddressTypeFQDN:
				for _, msg := range validation.IsFullyQualifiedDomainName(path.Index(j), a) {
					errs = append(errs, msg)
				}
			default:
				ip := netutils.ParseIPSloppy(a)
				if ip == nil || (es.AddressType == discoveryv1.AddressTypeIPv4) != (ip.To4() != nil) {
					errs = append(errs, field.Invalid(path.Index(j), a, fmt.Sprintf("must be a valid %s address", es.AddressType)))
					continue
				}
				errs = append(errs, validateEndpointIP(path.Index(j), a, false)...)
			}
		}
	}
	for i, p := range es.Ports {
		path := field.NewPath("ports").Index(i)
		if p.Name != nil && *p.Name != "" {
			for _, msg := range validation.IsDNS1123Label(*p.Name) {
				errs = append(errs, field.Invalid(path.Child("name"), *p.Name, msg))
			}
		}
		if p.Port != nil {
			for _, msg := range validation.IsValidPortNum(int(*p.Port)) {
				errs = append(errs, field.Invalid(path.Child("port"), *p.Port, msg))
			}
		}
		if p.Protocol != nil {
			errs = append(errs, validateProtocol(path.Child("protocol"), *p.Protocol)...)
		}
	}
	return errs
}

// validateEndpointIP is ValidateEndpointIP, preceded for Endpoints by
// IsValidIPForLegacyField (legacy): an address that does not parse is
// refused by both, hence twice.
func validateEndpointIP(path *field.Path, s string, legacy bool) field.ErrorList {
	ip := netutils.ParseIPSloppy(s)
	if ip == nil {
		errs := field.ErrorList{field.Invalid(path, s, "must be a valid IP address")}
		if legacy {
			errs = append(errs, field.Invalid(path, s, "must be a valid IP address"))
		}
		return errs
	}
	var errs field.ErrorList
	if ip.IsUnspecified() {
		errs = append(errs, field.Invalid(path, s, fmt.Sprintf("may not be unspecified (%v)", s)))
	}
	if ip.IsLoopback() {
		errs = append(errs, field.Invalid(path, s, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if ip.IsLinkLocalUnicast() {
		errs = append(errs, field.Invalid(path, s, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if ip.IsLinkLocalMulticast() {
		errs = append(errs, field.Invalid(path, s, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}

// validateProtocol checks a port's protocol (TCP, UDP or SCTP).
func validateProtocol(path *field.Path, p corev1.Protocol) field.ErrorList {
	switch p {
	case corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
		return nil
	}
	return field.ErrorList{field.NotSupported(path, p, []corev1.Protocol{corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP})}
}
