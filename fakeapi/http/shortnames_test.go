package http_test

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/fakeapi"
	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
)

// TestDiscoveryListsKubeAPIServersShortNames: kubectl resolves `get cm`
// through discovery's short names; the fake lists the real server's.
func TestDiscoveryListsKubeAPIServersShortNames(t *testing.T) {
	srv := fakeapi.NewServer(fakeapi.Options{})
	defer srv.Close()
	rr := httptest.NewRecorder()
	fakehttp.NewHandler(srv, fakehttp.Options{}).ServeHTTP(rr, httptest.NewRequest("GET", "/api/v1", nil))
	var list metav1.APIResourceList
	if err := json.Unmarshal(rr.Body.Bytes(), &list); err != nil {
		t.Fatalf("GET /api/v1: %d %s: %v", rr.Code, rr.Body.String(), err)
	}
	want := map[string]string{"configmaps": "cm", "namespaces": "ns", "pods": "po"}
	for _, r := range list.APIResources {
		if short, ok := want[r.Name]; ok {
			if !slices.Contains(r.ShortNames, short) {
				t.Errorf("%s: short names %v, want %q", r.Name, r.ShortNames, short)
			}
			delete(want, r.Name)
		}
	}
	if len(want) != 0 {
		t.Errorf("resources missing from /api/v1: %v", want)
	}
}

// TestDiscoveryListsACRDsShortNamesAndCategories: `kubectl get bph`
// resolves through the CRD's spec.names.shortNames, in both discovery
// documents; built-ins keep kube-apiserver's (events.k8s.io events are
// "ev" too, pods are in the "all" category).
func TestDiscoveryListsACRDsShortNamesAndCategories(t *testing.T) {
	srv := fakeapi.NewServer(fakeapi.Options{})
	defer srv.Close()
	gvr := schema.GroupVersionResource{Group: "lab.example.com", Version: "v1", Resource: "widgets"}
	if err := srv.RegisterCRD(fakeapi.ResourceInfo{GVR: gvr, Kind: "Widget", ListKind: "WidgetList", Namespaced: true,
		ShortNames: []string{"wd"}, Categories: []string{"lab"}}); err != nil {
		t.Fatal(err)
	}
	h := fakehttp.NewHandler(srv, fakehttp.Options{})
	get := func(path, accept string, into any) {
		t.Helper()
		rr := httptest.NewRecorder()
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Accept", accept)
		h.ServeHTTP(rr, req)
		if err := json.Unmarshal(rr.Body.Bytes(), into); err != nil {
			t.Fatalf("GET %s: %d %s: %v", path, rr.Code, rr.Body.String(), err)
		}
	}
	var list metav1.APIResourceList
	get("/apis/lab.example.com/v1", "application/json", &list)
	if len(list.APIResources) != 1 || !slices.Equal(list.APIResources[0].ShortNames, []string{"wd"}) || !slices.Equal(list.APIResources[0].Categories, []string{"lab"}) {
		t.Errorf("/apis/lab.example.com/v1: %+v, want widgets with short names [wd] and categories [lab]", list.APIResources)
	}
	names := map[string]apidiscoveryv2.APIResourceDiscovery{}
	for _, path := range []string{"/api", "/apis"} {
		var doc apidiscoveryv2.APIGroupDiscoveryList
		get(path, fakehttp.AggregatedDiscoveryContentType, &doc)
		for _, g := range doc.Items {
			for _, v := range g.Versions {
				for _, r := range v.Resources {
					names[g.Name+"/"+r.Resource] = r
				}
			}
		}
	}
	for key, want := range map[string][2][]string{
		"lab.example.com/widgets": {{"wd"}, {"lab"}},
		"events.k8s.io/events":    {{"ev"}, nil},
		"/pods":                   {{"po"}, {"all"}},
	} {
		r, ok := names[key]
		if !ok || !slices.Equal(r.ShortNames, want[0]) || !slices.Equal(r.Categories, want[1]) {
			t.Errorf("aggregated discovery %s: %v short names %v categories %v, want %v %v", key, ok, r.ShortNames, r.Categories, want[0], want[1])
		}
	}
	if ns := names["/namespaces"]; slices.Contains(ns.Verbs, "deletecollection") {
		t.Errorf("namespaces verbs %v: kube-apiserver has no deletecollection for namespaces", ns.Verbs)
	}
}

// TestNamespacesHaveNoDeleteCollection: DELETE on the namespaces
// collection is 405 MethodNotAllowed, as on kube-apiserver; nothing goes.
func TestNamespacesHaveNoDeleteCollection(t *testing.T) {
	srv := fakeapi.NewServer(fakeapi.Options{})
	defer srv.Close()
	h := fakehttp.NewHandler(srv, fakehttp.Options{})
	create := httptest.NewRequest("POST", "/api/v1/namespaces", strings.NewReader(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}`))
	create.Header.Set("Content-Type", "application/json")
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, create)
	if rr.Code != 201 {
		t.Fatalf("create namespace: %d %s", rr.Code, rr.Body.String())
	}
	rr = httptest.NewRecorder()
	h.ServeHTTP(rr, httptest.NewRequest("DELETE", "/api/v1/namespaces", nil))
	var st metav1.Status
	if err := json.Unmarshal(rr.Body.Bytes(), &st); err != nil || rr.Code != 405 || st.Reason != metav1.StatusReasonMethodNotAllowed || st.Details != nil {
		t.Errorf("deletecollection of namespaces: %d %s, want 405 MethodNotAllowed without details (fidelity case status-bad-request-and-method)", rr.Code, rr.Body.String())
	}
	rr = httptest.NewRecorder()
	h.ServeHTTP(rr, httptest.NewRequest("GET", "/api/v1/namespaces/x", nil))
	if rr.Code != 200 {
		t.Errorf("namespace x after the refused deletecollection: %d, want 200", rr.Code)
	}
}
