package fakeapi

import (
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
)

// APIResourceLists describes the served resources as kube-apiserver's
// discovery does (/api/v1, /apis/G/V): one list per group version, core
// first then by group and version, each resource with its kind, scope and
// verbs, and "R/status" for resources with a status subresource.
func (s *Server) APIResourceLists() []*metav1.APIResourceList {
	byGV := map[schema.GroupVersion]*metav1.APIResourceList{}
	var gvs []schema.GroupVersion
	for _, res := range s.Resources() {
		gv := res.GVR.GroupVersion()
		list, ok := byGV[gv]
		if !ok {
			list = &metav1.APIResourceList{GroupVersion: gv.String()}
			byGV[gv] = list
			gvs = append(gvs, gv)
		}
		verbs := metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
		if res.GVR == (schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}) {
			// kube-apiserver's namespace storage has no deletecollection.
			verbs = metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}
		}
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name:         res.GVR.Resource,
			SingularName: strings.ToLower(res.Kind),
			ShortNames:   res.ShortNames,
			Categories:   res.Categories,
			Namespaced:   res.Namespaced,
			Kind:         res.Kind,
			Verbs:        verbs,
		})
		if res.HasStatus {
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name: res.GVR.Resource + "/status", Namespaced: res.Namespaced, Kind: res.Kind,
				Verbs: metav1.Verbs{"get", "patch", "update"},
			})
		}
	}
	slices.SortFunc(gvs, func(a, b schema.GroupVersion) int {
		if a.Group != b.Group {
			return strings.Compare(a.Group, b.Group) // "" (core) first
		}
		return strings.Compare(a.Version, b.Version)
	})
	out := make([]*metav1.APIResourceList, 0, len(gvs))
	for _, gv := range gvs {
		out = append(out, byGV[gv])
	}
	return out
}

// Discovery returns client-go's fake discovery client answering from the
// server's served resources: ServerVersion answers ServerVersion() (the
// emulated release, as /version over HTTP does; FakedServerVersion of the
// returned value can replace it), ServerGroups, ServerGroupsAndResources and
// ServerResourcesForGroupVersion list what the server serves (custom
// resources included, as registered when Discovery is called), and an
// unknown group version is 404 NotFound as from kube-apiserver. The
// discovery actions are recorded in Actions() and go through the
// clientset's reactors, as with the fake.
func (cs *Clientset) Discovery() discovery.DiscoveryInterfaces {
	lists := cs.client.s.APIResourceLists()
	f := &cs.Clientset.Fake
	f.Lock()
	if !reflect.DeepEqual(f.Resources, lists) {
		f.Resources = lists
	}
	f.Unlock()
	v := ServerVersion()
	return &fakediscovery.FakeDiscovery{Fake: f, FakedServerVersion: &v}
}

// isDiscoveryAction reports whether action is one of the fake discovery
// client's own (get of "version", "group" or "resource", with no group or
// version), which the fake answers itself.
func isDiscoveryAction(gvr schema.GroupVersionResource, verb string) bool {
	if verb != "get" || gvr.Group != "" || gvr.Version != "" {
		return false
	}
	switch gvr.Resource {
	case "version", "group", "resource":
		return true
	}
	return false
}

// NewSimpleClientset is the one-line replacement for client-go's
// fake.NewSimpleClientset (deprecated there in favour of NewClientset): the
// same as NewClientset, a Clientset on a new Server holding objects.
func NewSimpleClientset(objects ...runtime.Object) *Clientset { return NewClientset(objects...) }
