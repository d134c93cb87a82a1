package http

import (
	nethttp "net/http"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/fakeapi"
)

// resourceVerbs are the verbs every served resource supports.
var resourceVerbs = metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

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

// groupVersions returns the served versions of each named group, sorted.
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
		sort.Strings(vs)
	}
	return out
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

// apiResourceList is the /api/v1 or /apis/G/V document.
func (h *handler) apiResourceList(gv schema.GroupVersion, resources []fakeapi.ResourceInfo) *metav1.APIResourceList {
	list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv.String()}
	for _, res := range resources {
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name:         res.GVR.Resource,
			SingularName: strings.ToLower(res.Kind),
			Namespaced:   res.Namespaced,
			Kind:         res.Kind,
			Verbs:        resourceVerbs,
		})
		if res.HasStatus {
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name:       res.GVR.Resource + "/status",
				Namespaced: res.Namespaced,
				Kind:       res.Kind,
				Verbs:      statusVerbs,
			})
		}
	}
	return list
}
