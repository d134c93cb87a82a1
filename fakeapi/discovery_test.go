package fakeapi_test

import (
	"reflect"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cachelab/cachelab/fakeapi"
)

// sortedGroups sorts a ServerGroupsAndResources answer's groups by name,
// as the fake builds them from a map.
func sortedGroups(gs []*metav1.APIGroup) []*metav1.APIGroup {
	slices.SortFunc(gs, func(a, b *metav1.APIGroup) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return gs
}

// The fake server's Discovery answers as client-go's fake does when that
// fake is told the same resources, and lists what the server serves as
// kube-apiserver does: every method that failed before ("get is not
// supported on resources of kind ...") answers.
func TestDiscoveryAnswersAsClientGosFake(t *testing.T) {
	cs := fakeapi.NewSimpleClientset()
	if err := cs.Server().RegisterCRD(fakeapi.ResourceInfo{
		GVR: schema.GroupVersionResource{Group: "lab.example.com", Version: "v1", Resource: "widgets"}, Kind: "Widget", ListKind: "WidgetList", Namespaced: true, HasStatus: true,
	}); err != nil {
		t.Fatal(err)
	}
	ref := fake.NewSimpleClientset()
	ref.Resources = cs.Server().APIResourceLists()

	// ServerVersion is the one difference: the emulated release, where
	// client-go's fake answers its unset v0.0.0-master+$Format:%H$.
	got, err := cs.Discovery().ServerVersion()
	if want := fakeapi.ServerVersion(); err != nil || !reflect.DeepEqual(*got, want) || got.GitVersion != "v1.37.2-cachelab" {
		t.Errorf("ServerVersion = %+v, %v; want %+v", got, err, want)
	}

	gotG, gotR, err := cs.Discovery().ServerGroupsAndResources()
	wantG, wantR, werr := ref.Discovery().ServerGroupsAndResources()
	if err != nil || werr != nil || !reflect.DeepEqual(sortedGroups(gotG), sortedGroups(wantG)) || !reflect.DeepEqual(gotR, wantR) {
		t.Errorf("ServerGroupsAndResources = %v %v %v; client-go's fake: %v %v %v", gotG, gotR, err, wantG, wantR, werr)
	}

	for _, gv := range []string{"v1", "lab.example.com/v1", "apps/v1", "storage.k8s.io/v1"} {
		got, err := cs.Discovery().ServerResourcesForGroupVersion(gv)
		want, werr := ref.Discovery().ServerResourcesForGroupVersion(gv)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(err, werr) {
			t.Errorf("ServerResourcesForGroupVersion(%q) = %v, %v; client-go's fake: %v, %v", gv, got, err, want, werr)
		}
	}
	if _, err := cs.Discovery().ServerResourcesForGroupVersion("storage.k8s.io/v1"); !apierrors.IsNotFound(err) {
		t.Errorf("an unserved group version: err %v, want 404 NotFound as from kube-apiserver", err)
	}

	// What kube-apiserver lists: configmaps namespaced with every verb,
	// namespaces without deletecollection, the CRD and its status.
	v1, err := cs.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	find := func(l *metav1.APIResourceList, name string) *metav1.APIResource {
		for i := range l.APIResources {
			if l.APIResources[i].Name == name {
				return &l.APIResources[i]
			}
		}
		t.Fatalf("%s: no resource %q in %v", l.GroupVersion, name, l.APIResources)
		return nil
	}
	if cm := find(v1, "configmaps"); !cm.Namespaced || cm.Kind != "ConfigMap" || !slices.Contains(cm.Verbs, "deletecollection") || !slices.Contains(cm.Verbs, "watch") {
		t.Errorf("configmaps: %+v", cm)
	}
	if ns := find(v1, "namespaces"); ns.Namespaced || slices.Contains(ns.Verbs, "deletecollection") {
		t.Errorf("namespaces: %+v", ns)
	}
	w, err := cs.Discovery().ServerResourcesForGroupVersion("lab.example.com/v1")
	if err != nil {
		t.Fatal(err)
	}
	if st := find(w, "widgets/status"); st.Kind != "Widget" || !slices.Equal(st.Verbs, metav1.Verbs{"get", "patch", "update"}) {
		t.Errorf("widgets/status: %+v", st)
	}
	// The discovery actions are recorded, as with the fake.
	n := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "version" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d recorded get-version actions, want 1", n)
	}
}
