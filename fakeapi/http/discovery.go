package http

import (
	"encoding/json"
	nethttp "net/http"
	"sort"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/cachelab/cachelab/fakeapi"
)

// resourceVerbs are the verbs every served resource supports.
var resourceVerbs = metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// namespaceVerbs are the namespaces' verbs: no deletecollection, as
// kube-apiserver's namespace storage.
var namespaceVerbs = metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}

// verbsOf returns the verbs of a served resource.
func verbsOf(gvr schema.GroupVersionResource) metav1.Verbs {
	if !hasDeleteCollection(gvr) {
		return namespaceVerbs
	}
	return resourceVerbs
}

// hasDeleteCollection reports whether the resource serves deletecollection
// (every one but namespaces).
func hasDeleteCollection(gvr schema.GroupVersionResource) bool {
	return gvr != schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
}

// statusVerbs are the verbs of a status subresource.
var statusVerbs = metav1.Verbs{"get", "patch", "update"}

// apiVersions is the /api document.
func (h *handler) apiVersions(r *nethttp.Request) *metav1.APIVersions {
	return &metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: []string{"v1"},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host},
		},
	}
}

// groupVersions returns the served versions of each named group, sorted
// as kube-apiserver sorts them (version.CompareKubeAwareVersionStrings:
// GA before beta before alpha, higher first), the preferred one first.
func (h *handler) groupVersions() map[string][]string {
	out := map[string][]string{}
	for _, res := range h.srv.Resources() {
		if res.GVR.Group == "" {
			continue
		}
		vs := out[res.GVR.Group]
		found := false
		for _, v := range vs {
			found = found || v == res.GVR.Version
		}
		if !found {
			out[res.GVR.Group] = append(vs, res.GVR.Version)
		}
	}
	for _, vs := range out {
		sortKubeAware(vs)
	}
	return out
}

// sortKubeAware sorts versions by kube-apiserver's priority, highest first.
func sortKubeAware(vs []string) {
	sort.SliceStable(vs, func(i, j int) bool { return version.CompareKubeAwareVersionStrings(vs[i], vs[j]) > 0 })
}

// group builds the discovery document of one group.
func group(name string, versions []string) metav1.APIGroup {
	g := metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: name}
	for _, v := range versions {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: name + "/" + v, Version: v})
	}
	if len(g.Versions) > 0 {
		g.PreferredVersion = g.Versions[0]
	}
	return g
}

// apiGroupList is the /apis document.
func (h *handler) apiGroupList() *metav1.APIGroupList {
	gvs := h.groupVersions()
	names := make([]string, 0, len(gvs))
	for n := range gvs {
		names = append(names, n)
	}
	sort.Strings(names)
	list := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
	for _, n := range names {
		g := group(n, gvs[n])
		g.TypeMeta = metav1.TypeMeta{}
		list.Groups = append(list.Groups, g)
	}
	return list
}

// apiGroup is the /apis/G document.
func (h *handler) apiGroup(name string) (*metav1.APIGroup, bool) {
	vs, ok := h.groupVersions()[name]
	if !ok {
		return nil, false
	}
	g := group(name, vs)
	return &g, true
}

// shortNames are kube-apiserver's short names for the built-in resources
// served, so `kubectl get cm` works as on a real cluster.
var shortNames = map[schema.GroupVersionResource][]string{
	{Version: "v1", Resource: "configmaps"}:                                     {"cm"},
	{Version: "v1", Resource: "namespaces"}:                                     {"ns"},
	{Version: "v1", Resource: "pods"}:                                           {"po"},
	{Version: "v1", Resource: "events"}:                                         {"ev"},
	{Group: "events.k8s.io", Version: "v1", Resource: "events"}:                 {"ev"},
	{Version: "v1", Resource: "nodes"}:                                          {"no"},
	{Version: "v1", Resource: "services"}:                                       {"svc"},
	{Version: "v1", Resource: "serviceaccounts"}:                                {"sa"},
	{Group: "apps", Version: "v1", Resource: "deployments"}:                     {"deploy"},
	{Group: "apps", Version: "v1", Resource: "replicasets"}:                     {"rs"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"}:                    {"sts"},
	{Group: "apps", Version: "v1", Resource: "daemonsets"}:                      {"ds"},
	{Version: "v1", Resource: "persistentvolumeclaims"}:                         {"pvc"},
	{Version: "v1", Resource: "replicationcontrollers"}:                         {"rc"},
	{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}:          {"pdb"},
	{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}:          {"ing"},
	{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}:    {"netpol"},
	{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}: {"hpa"},
	{Group: "autoscaling", Version: "v1", Resource: "horizontalpodautoscalers"}: {"hpa"},
}

// shortNamesOf returns a resource's short names: a CRD's own, else
// kube-apiserver's for the built-in.
func shortNamesOf(res fakeapi.ResourceInfo) []string {
	if len(res.ShortNames) > 0 {
		return res.ShortNames
	}
	return shortNames[res.GVR]
}

// categoriesOf returns a resource's categories: a CRD's own, else
// kube-apiserver's for the built-in.
func categoriesOf(res fakeapi.ResourceInfo) []string {
	if len(res.Categories) > 0 {
		return res.Categories
	}
	return builtinCategories[res.GVR]
}

// builtinCategories are kube-apiserver's categories for the built-in
// resources served (`kubectl get all` lists pods).
var builtinCategories = map[schema.GroupVersionResource][]string{
	{Version: "v1", Resource: "pods"}:                                           {"all"},
	{Version: "v1", Resource: "services"}:                                       {"all"},
	{Group: "apps", Version: "v1", Resource: "deployments"}:                     {"all"},
	{Group: "apps", Version: "v1", Resource: "replicasets"}:                     {"all"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"}:                    {"all"},
	{Group: "apps", Version: "v1", Resource: "daemonsets"}:                      {"all"},
	{Group: "batch", Version: "v1", Resource: "jobs"}:                           {"all"},
	{Version: "v1", Resource: "replicationcontrollers"}:                         {"all"},
	{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}: {"all"},
	{Group: "autoscaling", Version: "v1", Resource: "horizontalpodautoscalers"}: {"all"},
}

// scaleKind is the kind the scale subresource answers.
var scaleKind = &metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}

// apiResourceList is the /api/v1 or /apis/G/V document.
func (h *handler) apiResourceList(gv schema.GroupVersion, resources []fakeapi.ResourceInfo) *metav1.APIResourceList {
	list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv.String()}
	for _, res := range resources {
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name:         res.GVR.Resource,
			SingularName: strings.ToLower(res.Kind),
			ShortNames:   shortNamesOf(res),
			Categories:   categoriesOf(res),
			Namespaced:   res.Namespaced,
			Kind:         res.Kind,
			Verbs:        verbsOf(res.GVR),
		})
		if res.HasStatus {
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name:       res.GVR.Resource + "/status",
				Namespaced: res.Namespaced,
				Kind:       res.Kind,
				Verbs:      statusVerbs,
			})
		}
		if res.GVR == serviceAccountsGVR {
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name:       res.GVR.Resource + "/token",
				Namespaced: true,
				Group:      tokenRequestKind.Group,
				Version:    tokenRequestKind.Version,
				Kind:       tokenRequestKind.Kind,
				Verbs:      metav1.Verbs{"create"},
			})
		}
		if h.srv.HasScale(res.GVR) {
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name:       res.GVR.Resource + "/scale",
				Namespaced: res.Namespaced,
				Group:      scaleKind.Group,
				Version:    scaleKind.Version,
				Kind:       scaleKind.Kind,
				Verbs:      statusVerbs,
			})
		}
	}
	return list
}

// AggregatedDiscoveryContentType is the Content-Type of aggregated
// discovery responses, which client-go recognises.
const AggregatedDiscoveryContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// wantsAggregated reports whether the best clause of r's Accept header that
// the handler can serve asks for aggregated discovery (apidiscovery.k8s.io/v2).
func wantsAggregated(r *nethttp.Request) bool {
	for _, c := range parseAccept(r.Header.Get("Accept")) {
		switch as := c.params["as"]; {
		case as == "APIGroupDiscoveryList" && c.params["g"] == "apidiscovery.k8s.io" && c.params["v"] == "v2" && c.typ == "application/json":
			return true
		case as == "" && (c.typ == "application/json" || c.typ == "application/yaml" || c.typ == "*/*" || c.typ == "application/*"):
			return false
		}
	}
	return false
}

// aggregatedDiscovery is the aggregated document of /api (core) or /apis
// (every named group).
func (h *handler) aggregatedDiscovery(core bool) *apidiscoveryv2.APIGroupDiscoveryList {
	type gv struct{ group, version string }
	var order []gv
	byGV := map[gv][]apidiscoveryv2.APIResourceDiscovery{}
	for _, res := range h.srv.Resources() {
		if (res.GVR.Group == "") != core {
			continue
		}
		k := gv{res.GVR.Group, res.GVR.Version}
		if _, ok := byGV[k]; !ok {
			order = append(order, k)
		}
		kind := &metav1.GroupVersionKind{Group: res.GVR.Group, Version: res.GVR.Version, Kind: res.Kind}
		scope := apidiscoveryv2.ScopeCluster
		if res.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		rd := apidiscoveryv2.APIResourceDiscovery{
			Resource:         res.GVR.Resource,
			ResponseKind:     kind,
			Scope:            scope,
			SingularResource: strings.ToLower(res.Kind),
			ShortNames:       shortNamesOf(res),
			Categories:       categoriesOf(res),
			Verbs:            verbsOf(res.GVR),
		}
		if res.HasStatus {
			rd.Subresources = []apidiscoveryv2.APISubresourceDiscovery{{Subresource: "status", ResponseKind: kind, Verbs: statusVerbs}}
		}
		if h.srv.HasScale(res.GVR) {
			rd.Subresources = append(rd.Subresources, apidiscoveryv2.APISubresourceDiscovery{Subresource: "scale", ResponseKind: scaleKind, Verbs: statusVerbs})
		}
		if res.GVR == serviceAccountsGVR {
			rd.Subresources = append(rd.Subresources, apidiscoveryv2.APISubresourceDiscovery{Subresource: "token", ResponseKind: tokenRequestKind, Verbs: []string{"create"}})
		}
		byGV[k] = append(byGV[k], rd)
	}
	list := &apidiscoveryv2.APIGroupDiscoveryList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"},
		Items:    []apidiscoveryv2.APIGroupDiscovery{},
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].group != order[j].group {
			return order[i].group < order[j].group
		}
		return version.CompareKubeAwareVersionStrings(order[i].version, order[j].version) > 0
	})
	index := map[string]int{}
	for _, k := range order {
		i, ok := index[k.group]
		if !ok {
			i = len(list.Items)
			index[k.group] = i
			list.Items = append(list.Items, apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: k.group}})
		}
		list.Items[i].Versions = append(list.Items[i].Versions, apidiscoveryv2.APIVersionDiscovery{
			Version: k.version, Resources: byGV[k], Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
		})
	}
	return list
}

// serveAggregated answers aggregated discovery as plain JSON with the
// Content-Type client-go checks for.
func (h *handler) serveAggregated(w nethttp.ResponseWriter, r *nethttp.Request, core bool) {
	data, err := json.Marshal(h.aggregatedDiscovery(core))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", AggregatedDiscoveryContentType)
	w.WriteHeader(nethttp.StatusOK)
	_, _ = w.Write(data)
}
