package http_test

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
