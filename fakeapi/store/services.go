package store

import (
	"fmt"
	"net"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// Services get what kube-apiserver's service REST gives them before its
// strategy validates them (pkg/registry/core/service/storage/alloc.go):
// IP family fields, a cluster IP from the service range and node ports
// from the node-port range, each from an in-memory allocator that refuses
// an address or port already allocated or out of its range with the real
// server's errors, and releases them when the Service goes (any delete:
// the request's, the garbage collector's, the namespace's). The cluster is
// single-stack IPv4, with kube-apiserver's default ranges (what
// fidelity/realserver runs): 10.0.0.0/24 (10.0.0.1 is the "kubernetes"
// Service's) and 30000-32767. Allocation is deterministic (the lowest free
// address above the static band, the lowest free port above it), where
// kube-apiserver draws at random: the lab's runs must repeat.

var coreServices = corev1.SchemeGroupVersion.WithResource("services")

// The ranges.
var (
	serviceCIDR = &net.IPNet{IP: net.IPv4(10, 0, 0, 0).To4(), Mask: net.CIDRMask(24, 32)}
)

const (
	serviceCIDRString = "10.0.0.0/24"
	// kubernetesServiceIP is the "kubernetes" Service's address.
	kubernetesServiceIP = "10.0.0.1"
	nodePortLow         = 30000
	nodePortHigh        = 32767
	// The static bands, which dynamic allocation prefers not to use
	// (ServiceIPStaticSubrange, ServiceNodePortStaticSubrange):
	// min(max(16, size/16), 256) addresses and min(max(16, size/32), 128)
	// ports.
	ipStaticBand   = 16
	portStaticBand = 86
)

// serviceAllocations are the addresses and ports held by stored Services,
// each with the holder's key.
type serviceAllocations struct {
	ips   map[string]string
	ports map[int32]string
}

func (s *Store) allocations() *serviceAllocations {
	if s.svcAlloc == nil {
		s.svcAlloc = &serviceAllocations{ips: map[string]string{kubernetesServiceIP: "default/kubernetes"}, ports: map[int32]string{}}
	}
	return s.svcAlloc
}

// trackServiceAllocations keeps the allocations up to date for one write
// of the Service at key (commit calls it).
func (s *Store) trackServiceAllocations(key string, prev, cur runtime.Object) {
	a := s.allocations()
	if p, ok := prev.(*corev1.Service); ok {
		for _, ip := range serviceIPs(p) {
			if a.ips[ip] == key {
				delete(a.ips, ip)
			}
		}
		for _, port := range serviceNodePorts(p) {
			if a.ports[port] == key {
				delete(a.ports, port)
			}
		}
	}
	if c, ok := cur.(*corev1.Service); ok {
		for _, ip := range serviceIPs(c) {
			a.ips[ip] = key
		}
		for _, port := range serviceNodePorts(c) {
			a.ports[port] = key
		}
	}
}

func serviceIPs(svc *corev1.Service) []string {
	var out []string
	for _, ip := range append([]string{svc.Spec.ClusterIP}, svc.Spec.ClusterIPs...) {
		if ip != "" && ip != corev1.ClusterIPNone && !slices.Contains(out, ip) {
			out = append(out, ip)
		}
	}
	return out
}

func serviceNodePorts(svc *corev1.Service) []int32 {
	var out []int32
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			out = append(out, p.NodePort)
		}
	}
	if svc.Spec.HealthCheckNodePort != 0 {
		out = append(out, svc.Spec.HealthCheckNodePort)
	}
	return out
}

func externallyAccessible(t corev1.ServiceType) bool {
	return t == corev1.ServiceTypeNodePort || t == corev1.ServiceTypeLoadBalancer
}

// allocateService is the service REST's allocation (kindRules.allocate)
// on create (old nil) or update: IP family fields, cluster IPs and node ports. key is the
// Service's; errors are the allocator's (422).
func (s *Store) allocateService(key string, svc, old *corev1.Service) error {
	errs := s.allocateServiceFields(key, svc, old)
	if len(errs) > 0 {
		return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, errs)
	}
	return nil
}

func (s *Store) allocateServiceFields(key string, svc, old *corev1.Service) field.ErrorList {
	spec := &svc.Spec
	if old != nil {
		// PatchAllocatedValues: what an update leaves out stays.
		if spec.ClusterIP == "" && len(spec.ClusterIPs) == 0 && spec.Type != corev1.ServiceTypeExternalName && old.Spec.Type != corev1.ServiceTypeExternalName {
			spec.ClusterIP, spec.ClusterIPs = old.Spec.ClusterIP, slices.Clone(old.Spec.ClusterIPs)
		}
		if spec.Type != corev1.ServiceTypeExternalName {
			if spec.IPFamilyPolicy == nil {
				spec.IPFamilyPolicy = old.Spec.IPFamilyPolicy
			}
			if len(spec.IPFamilies) == 0 {
				spec.IPFamilies = slices.Clone(old.Spec.IPFamilies)
			}
		}
		if externallyAccessible(spec.Type) && externallyAccessible(old.Spec.Type) {
			for i := range spec.Ports {
				p := &spec.Ports[i]
				if p.NodePort != 0 {
					continue
				}
				for _, op := range old.Spec.Ports {
					if op.Port == p.Port && op.Protocol == p.Protocol {
						p.NodePort = op.NodePort
					}
				}
			}
			if spec.HealthCheckNodePort == 0 {
				spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
			}
		}
	}
	if spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	var errs field.ErrorList
	// initIPFamilyFields on a single-stack IPv4 cluster.
	if p := spec.IPFamilyPolicy; p != nil && *p == corev1.IPFamilyPolicyRequireDualStack && spec.ClusterIP != corev1.ClusterIPNone {
		errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), *p, "this cluster is not configured for dual-stack services"))
	}
	for i, f := range spec.IPFamilies {
		if f != corev1.IPv4Protocol && spec.ClusterIP != corev1.ClusterIPNone {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilies").Index(i), f, "not configured on this cluster"))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if spec.ClusterIP == corev1.ClusterIPNone {
		return nil // headless: the defaults set its families
	}
	if spec.IPFamilyPolicy == nil {
		spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
	}
	if len(spec.IPFamilies) == 0 {
		spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	a := s.allocations()
	ipsPath := field.NewPath("spec", "clusterIPs")
	switch {
	case spec.ClusterIP == "" && len(spec.ClusterIPs) > 0:
		spec.ClusterIP = spec.ClusterIPs[0]
	case len(spec.ClusterIPs) == 0 && spec.ClusterIP != "":
		spec.ClusterIPs = []string{spec.ClusterIP}
	}
	if spec.ClusterIP == "" {
		ip, ok := nextFreeIP(a)
		if !ok {
			return field.ErrorList{field.InternalError(ipsPath, fmt.Errorf("failed to allocate a serviceIP: range is full"))}
		}
		spec.ClusterIP, spec.ClusterIPs = ip, []string{ip}
	} else if old == nil || !slices.Contains(serviceIPs(old), spec.ClusterIP) {
		ip := net.ParseIP(spec.ClusterIP)
		switch {
		case ip == nil:
			// Left to validation (not an IP).
		case !serviceCIDR.Contains(ip):
			errs = append(errs, field.Invalid(ipsPath, spec.ClusterIP, fmt.Sprintf("failed to allocate IP %s: the provided IP (%s) is not in the valid range. The range of valid IPs is %s", spec.ClusterIP, spec.ClusterIP, serviceCIDRString)))
		case a.ips[spec.ClusterIP] != "" && a.ips[spec.ClusterIP] != key:
			errs = append(errs, field.Invalid(ipsPath, spec.ClusterIP, fmt.Sprintf("failed to allocate IP %s: provided IP is already allocated", spec.ClusterIP)))
		}
	}
	if externallyAccessible(spec.Type) {
		if spec.ExternalTrafficPolicy == "" {
			spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
		}
		if spec.Type == corev1.ServiceTypeLoadBalancer && spec.AllocateLoadBalancerNodePorts == nil {
			spec.AllocateLoadBalancerNodePorts = ptr.To(true)
		}
		allocate := spec.Type == corev1.ServiceTypeNodePort || *spec.AllocateLoadBalancerNodePorts
		taken := map[int32]bool{}
		var oldPorts []int32
		if old != nil {
			oldPorts = serviceNodePorts(old)
		}
		for i := range spec.Ports {
			p := &spec.Ports[i]
			path := field.NewPath("spec", "ports").Index(i).Child("nodePort")
			switch {
			case p.NodePort == 0 && allocate:
				// Ports of the same number share a node port (TCP and UDP).
				for j := range i {
					if spec.Ports[j].Port == p.Port && spec.Ports[j].NodePort != 0 {
						p.NodePort = spec.Ports[j].NodePort
					}
				}
				if p.NodePort == 0 {
					port, ok := nextFreePort(a, taken)
					if !ok {
						errs = append(errs, field.InternalError(path, fmt.Errorf("failed to allocate a nodePort: range is full")))
						continue
					}
					p.NodePort = port
				}
			case taken[p.NodePort] && !samePortNumber(spec.Ports[:i], p):
				errs = append(errs, field.Invalid(path, p.NodePort, "provided port is already allocated"))
			case p.NodePort == 0, slices.Contains(oldPorts, p.NodePort), taken[p.NodePort]:
			case p.NodePort < nodePortLow || p.NodePort > nodePortHigh:
				errs = append(errs, field.Invalid(path, p.NodePort, fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %d-%d", nodePortLow, nodePortHigh)))
			case a.ports[p.NodePort] != "" && a.ports[p.NodePort] != key:
				errs = append(errs, field.Invalid(path, p.NodePort, "provided port is already allocated"))
			}
			taken[p.NodePort] = true
		}
		if spec.Type == corev1.ServiceTypeLoadBalancer && spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal && spec.HealthCheckNodePort == 0 {
			if port, ok := nextFreePort(a, taken); ok {
				spec.HealthCheckNodePort = port
			}
		}
	}
	return errs
}

// samePortNumber: an earlier port of the Service with p's number and its
// node port (TCP and UDP of one port share a node port).
func samePortNumber(earlier []corev1.ServicePort, p *corev1.ServicePort) bool {
	for _, e := range earlier {
		if e.Port == p.Port && e.NodePort == p.NodePort {
			return true
		}
	}
	return false
}

// nextFreeIP is the lowest free address above the static band.
func nextFreeIP(a *serviceAllocations) (string, bool) {
	base := serviceCIDR.IP.To4()
	try := func(from, to int) (string, bool) {
		for i := from; i < to; i++ {
			ip := net.IPv4(base[0], base[1], base[2], byte(i)).String()
			if a.ips[ip] == "" {
				return ip, true
			}
		}
		return "", false
	}
	if ip, ok := try(ipStaticBand+1, 255); ok {
		return ip, true
	}
	return try(1, ipStaticBand+1)
}

// nextFreePort is the lowest free node port above the static band (and
// not in taken).
func nextFreePort(a *serviceAllocations, taken map[int32]bool) (int32, bool) {
	try := func(from, to int32) (int32, bool) {
		for p := from; p <= to; p++ {
			if a.ports[p] == "" && !taken[p] {
				return p, true
			}
		}
		return 0, false
	}
	if p, ok := try(nodePortLow+portStaticBand, nodePortHigh); ok {
		return p, true
	}
	return try(nodePortLow, nodePortLow+portStaticBand-1)
}

// supportedServiceTypes and protocols, as ValidateService lists them.
var (
	supportedServiceTypes = []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName}
	supportedProtocols    = []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP}
)

// validateService is the part of ValidateService (pkg/apis/core/validation)
// controllers and users trip: type, ports (numbers, protocols, names,
// target ports, duplicates, node ports), ExternalName, cluster IPs,
// traffic policies, session affinity.
func validateService(svc *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	s := &svc.Spec
	if !slices.Contains(supportedServiceTypes, s.Type) {
		errs = append(errs, field.NotSupported(spec.Child("type"), s.Type, []string{"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}))
	}
	if s.Type == corev1.ServiceTypeExternalName {
		if s.ExternalName == "" {
			errs = append(errs, field.Required(spec.Child("externalName"), ""))
		}
	} else if len(s.Ports) == 0 && s.ClusterIP != corev1.ClusterIPNone {
		errs = append(errs, field.Required(spec.Child("ports"), ""))
	}
	names := map[string]bool{}
	ports := map[string]bool{}
	nodePorts := map[string]bool{}
	for i, p := range s.Ports {
		path := spec.Child("ports").Index(i)
		if len(s.Ports) > 1 && p.Name == "" {
			errs = append(errs, field.Required(path.Child("name"), ""))
		} else if p.Name != "" {
			for _, msg := range utilvalidation.IsDNS1123Label(p.Name) {
				errs = append(errs, field.Invalid(path.Child("name"), p.Name, msg))
			}
			if names[p.Name] {
				errs = append(errs, field.Duplicate(path.Child("name"), p.Name))
			}
			names[p.Name] = true
		}
		for _, msg := range utilvalidation.IsValidPortNum(int(p.Port)) {
			errs = append(errs, field.Invalid(path.Child("port"), p.Port, msg))
		}
		if !slices.Contains(supportedProtocols, p.Protocol) {
			errs = append(errs, field.NotSupported(path.Child("protocol"), p.Protocol, []string{"SCTP", "TCP", "UDP"}))
		}
		switch p.TargetPort.Type {
		case intstr.Int:
			for _, msg := range utilvalidation.IsValidPortNum(p.TargetPort.IntValue()) {
				errs = append(errs, field.Invalid(path.Child("targetPort"), p.TargetPort.IntValue(), msg))
			}
		case intstr.String:
			for _, msg := range utilvalidation.IsValidPortName(p.TargetPort.StrVal) {
				errs = append(errs, field.Invalid(path.Child("targetPort"), p.TargetPort.StrVal, msg))
			}
		}
		id := strconv.Itoa(int(p.Port)) + "/" + string(p.Protocol)
		if ports[id] {
			errs = append(errs, field.Duplicate(path, id))
		}
		ports[id] = true
		if p.NodePort != 0 {
			if !externallyAccessible(s.Type) {
				errs = append(errs, field.Forbidden(path.Child("nodePort"), "may not be used when `type` is '"+string(s.Type)+"'"))
			}
			np := strconv.Itoa(int(p.NodePort)) + "/" + string(p.Protocol)
			if nodePorts[np] {
				errs = append(errs, field.Duplicate(path.Child("nodePort"), p.NodePort))
			}
			nodePorts[np] = true
		}
	}
	if s.ClusterIP != "" && s.ClusterIP != corev1.ClusterIPNone && net.ParseIP(s.ClusterIP) == nil {
		errs = append(errs, field.Invalid(spec.Child("clusterIPs").Index(0), s.ClusterIP, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"))
	}
	if s.ExternalTrafficPolicy != "" {
		switch {
		case !externallyAccessible(s.Type):
			errs = append(errs, field.Invalid(spec.Child("externalTrafficPolicy"), s.ExternalTrafficPolicy, "may only be set for externally-accessible services"))
		case s.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster && s.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal:
			errs = append(errs, field.NotSupported(spec.Child("externalTrafficPolicy"), s.ExternalTrafficPolicy, []string{"Cluster", "Local"}))
		}
	}
	if c := s.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
		if t := *c.ClientIP.TimeoutSeconds; t <= 0 || t > maxClientIPServiceAffinitySeconds {
			errs = append(errs, field.Invalid(spec.Child("sessionAffinityConfig", "clientIP", "timeoutSeconds"), t, "must be greater than 0 and less than 86400"))
		}
	}
	return errs
}

// maxClientIPServiceAffinitySeconds is core.MaxClientIPServiceAffinitySeconds.
const maxClientIPServiceAffinitySeconds = 86400

// validateServiceUpdate is ValidateServiceUpdate's immutable cluster IP.
func validateServiceUpdate(svc, old *corev1.Service) field.ErrorList {
	if old.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if len(old.Spec.ClusterIPs) > 0 && len(svc.Spec.ClusterIPs) > 0 && old.Spec.ClusterIPs[0] != svc.Spec.ClusterIPs[0] {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIPs").Index(0), svc.Spec.ClusterIPs[0], "may not change once set")}
	}
	return nil
}
